"""Scenarios for bench/compare.py: the C++ benchmark's suite (bench/scenarios.tsv)
with its floors' bytes and the error bound, as scatterptx-bench --describe
writes them (each defined once, in C++); their inputs on the GPU (the index
is the bench's own, src and out are drawn here), the float64 reference and
the per-element rounding-bound check."""

import dataclasses
import json
import os
import subprocess
import tempfile
import zlib

THOUSAND = 1000
MILLION = 1000 * 1000
# |value| of the random inputs lies in [MIN_MAGNITUDE, 1]: never zero
MIN_MAGNITUDE = 1.0 / 64


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # uniform, high_cont, sorted, few_targets, few_idx, power_law, zipf, moe_topk/E
    src_rows: int  # M
    out_rows: int  # T (out has T rows; the distinct targets may be fewer)
    cols: int  # D
    dtype: str  # f32, f16, bf16, f64
    row_bytes: int
    floors_bytes: dict  # ideal, no_reuse, copy: from the C++ bench's own index

    def shape_text(self):
        return f"{count_text(self.src_rows)} -> {count_text(self.out_rows)}"


def count_text(n):
    for scale, suffix in ((MILLION, "M"), (THOUSAND, "K")):
        if n >= scale and n % (scale // 100) == 0:
            return f"{n / scale:g}{suffix}"
    return str(n)


def describe(bench, quick=False, filters=()):
    """(scenarios, description) from `bench --describe` (no GPU needed), the
    description noting the bench, for load_index; raises RuntimeError with
    the bench's message when it fails."""
    if not os.access(bench, os.X_OK):
        raise RuntimeError(f"no scatterptx-bench at {bench}: build it (make) or pass --bench")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "describe.json")
        command = [bench, "--describe", path] + (["--quick"] if quick else [])
        for f in filters:
            command += ["--scenario", f]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError((done.stderr or done.stdout).strip())
        with open(path) as f:
            description = json.load(f)
    description["bench"] = bench
    fields = {f.name for f in dataclasses.fields(Scenario)}
    scenarios = [Scenario(**{k: v for k, v in s.items() if k in fields}) for s in description["scenarios"]]
    return scenarios, description


# --- everything below needs torch and a CUDA device -------------------------


def torch_dtype(name):
    import torch

    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
            "f64": torch.float64}[name]


def _generator(scenario, role):
    import torch

    g = torch.Generator(device="cuda")
    g.manual_seed(zlib.crc32(f"{role}:{scenario.kind}:{scenario.src_rows}:{scenario.out_rows}:"
                             f"{scenario.cols}:{scenario.dtype}".encode()))
    return g


def load_index(bench, scenario, quick=False):
    """The scenario's int64 index on the GPU: the very index scatterptx-bench
    times, written by its `--describe --index-dir` (each kind is defined once,
    in bench/scenarios.cpp). Raises RuntimeError with the bench's message."""
    import torch

    with tempfile.TemporaryDirectory() as folder:
        command = [bench, "--describe", os.path.join(folder, "describe.json"), "--index-dir", folder,
                   "--scenario", scenario.name] + (["--quick"] if quick else [])
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError((done.stderr or done.stdout).strip())
        path = os.path.join(folder, scenario.name + ".int64")
        expected = scenario.src_rows * 8
        if not os.path.isfile(path) or os.path.getsize(path) != expected:
            raise RuntimeError(f"{bench} wrote no {expected}-byte index for {scenario.name} in {folder}")
        with open(path, "rb") as f:
            data = bytearray(f.read())  # writable, so torch.frombuffer shares it without a warning
    # Raw int64 in the host's byte order: little-endian where both programs run.
    return torch.frombuffer(data, dtype=torch.int64).to("cuda")


def random_nonzero(rows, cols, dtype_name, scenario, role):
    """(rows, cols) uniform in [-1, 1] with |v| >= MIN_MAGNITUDE, rounded to dtype."""
    import torch

    base = torch.float64 if dtype_name == "f64" else torch.float32
    v = torch.rand((rows, cols), generator=_generator(scenario, role), device="cuda", dtype=base)
    v.mul_(2).sub_(1)
    magnitude = v.abs().mul_(1 - MIN_MAGNITUDE).add_(MIN_MAGNITUDE)
    magnitude.copysign_(v)
    del v
    return magnitude if dtype_name == "f64" else magnitude.to(torch_dtype(dtype_name))


def reference(out0, index, src, dtype_name, error_bound, chunk_elems=1 << 27):
    """float64 reference and per-element tolerance on the GPU.

    tol is error_bound's formula (testing/error_bound.hpp, from the bench's
    description), count = additions into that row. Returns (ref, tol, counts)."""
    import torch

    m, d = src.shape
    ref = out0.to(torch.float64, copy=True)  # copies: .double() of an f64 tensor is itself
    absum = out0.to(torch.float64, copy=True).abs_()
    step = max(1, chunk_elems // max(1, d))
    for start in range(0, m, step):
        part = src[start:start + step].to(torch.float64, copy=True)
        rows = index[start:start + step]
        ref.index_add_(0, rows, part)
        absum.index_add_(0, rows, part.abs_())
        del part
    counts = torch.bincount(index, minlength=out0.shape[0])
    u = error_bound["unit_roundoff"][dtype_name] + error_bound["reference_unit_roundoff"]
    absum.mul_(u).add_(error_bound["smallest_normal"][dtype_name])
    absum.mul_(counts.double().add_(1).unsqueeze(1))
    return ref, absum, counts


def check(got, ref, tol):
    """Compare got with ref element by element against tol (NaN counts as a violation)."""
    import torch

    diff = got.to(torch.float64, copy=True).sub_(ref)
    ref_norm = float(ref.norm())
    rel = float(diff.norm()) / ref_norm if ref_norm > 0 else float(diff.norm())
    err = diff.abs_()
    violations = int((~(err <= tol)).sum())
    max_err = float(err.max()) if err.numel() else 0.0
    max_over_tol = float(err.div_(tol).max()) if err.numel() else 0.0
    return {"ok": violations == 0, "violations": violations, "max_abs_err": max_err,
            "max_err_over_tol": max_over_tol, "rel_err": rel}

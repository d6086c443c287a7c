"""Scenarios for bench/compare.py: the C++ benchmark's default suite (same names
and sizes as bench/scenarios.cpp), their inputs on the GPU, the float64
reference and the per-element rounding-bound check."""

import dataclasses
import zlib

THOUSAND = 1000
MILLION = 1000 * 1000
QUICK_DIVISOR = 16  # --quick divides row counts by this (few_idx: its D instead)
INDEX_BYTES = 8  # the index is int64

DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8}
# unit roundoff of each element type
UNIT = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8, "f64": 2.0 ** -53}
# |value| of the random inputs lies in [MIN_MAGNITUDE, 1]: never zero
MIN_MAGNITUDE = 1.0 / 64


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # uniform, high_cont, sorted, few_targets, few_idx
    src_rows: int  # M
    out_rows: int  # T (out has T rows; the distinct targets may be fewer)
    cols: int  # D
    dtype: str  # f32, f16, bf16, f64

    @property
    def row_bytes(self):
        return self.cols * DTYPE_BYTES[self.dtype]

    def shape_text(self):
        return f"{count_text(self.src_rows)} -> {count_text(self.out_rows)}"


def count_text(n):
    for scale, suffix in ((MILLION, "M"), (THOUSAND, "K")):
        if n >= scale and n % (scale // 100) == 0:
            return f"{n / scale:g}{suffix}"
    return str(n)


def _make(kind, m, t, d, dtype, name=None):
    return Scenario(name or f"{kind}-d{d}-{dtype}", kind, m, t, d, dtype)


def _shrink_for_quick(s):
    if s.kind == "few_idx":
        return dataclasses.replace(s, cols=max(1, s.cols // QUICK_DIVISOR))
    m = max(1, s.src_rows // QUICK_DIVISOR)
    t = s.out_rows if s.kind == "few_targets" else max(1, s.out_rows // QUICK_DIVISOR)
    return dataclasses.replace(s, src_rows=m, out_rows=t)


def default_scenarios(quick=False):
    """The suite of bench/scenarios.cpp, in its order."""
    m7, t7 = 7770 * THOUSAND, 1720 * THOUSAND
    m2, t2 = 2 * MILLION, 500 * THOUSAND
    m4, t4 = 4 * MILLION, MILLION
    suite = [
        _make("uniform", m7, t7, 128, "f32"),
        _make("uniform", m7, t7, 128, "bf16"),
        _make("high_cont", m7, t7, 128, "bf16"),
        _make("high_cont", m7, t7, 128, "f32"),
        _make("uniform", m2, t2, 512, "f32"),
        _make("uniform", m2, t2, 1024, "bf16"),
        _make("uniform", m2, t2, 128, "f64"),
        _make("sorted", m4, t4, 256, "f32"),
        _make("few_targets", m4, 100, 256, "f32"),
        _make("uniform", m4, t4, 128, "f16"),
    ]
    small_rows = [(dtype, nbytes) for dtype in ("f32", "bf16") for nbytes in (8, 16, 32, 64, 128)]
    # f16 and f64 over the 32-128 byte rows that the small-row targets name
    small_rows += [(dtype, nbytes) for dtype in ("f16", "f64") for nbytes in (32, 64, 128)]
    for dtype, nbytes in small_rows:
        cols = nbytes // DTYPE_BYTES[dtype]
        suite.append(_make("uniform", m4, t4, cols, dtype, f"small_rows-{nbytes}B-d{cols}-{dtype}"))
    suite.append(_make("few_idx", 100, 100, 640000, "f32"))
    if quick:
        suite = [_shrink_for_quick(s) for s in suite]
    return suite


def select(scenarios, filters):
    """Scenarios whose name contains any of filters (all when filters is empty)."""
    if not filters:
        return list(scenarios)
    return [s for s in scenarios if any(f in s.name for f in filters)]


def floor_bytes(m, distinct_targets, row_bytes):
    streamed = m * row_bytes + m * INDEX_BYTES
    return {"ideal": streamed + 2 * distinct_targets * row_bytes,
            "no_reuse": streamed + 2 * m * row_bytes,
            "copy": 2 * m * row_bytes}


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


def make_index(scenario):
    """int64 index of the scenario's kind, as bench/scenarios.cpp defines the kinds."""
    import torch

    m, t, g = scenario.src_rows, scenario.out_rows, _generator(scenario, "index")
    if scenario.kind in ("uniform", "few_targets"):
        return torch.randint(0, t, (m,), generator=g, device="cuda", dtype=torch.int64)
    if scenario.kind == "high_cont":  # exactly half of the positions hold target 0
        hot = m // 2
        idx = torch.zeros(m, device="cuda", dtype=torch.int64)
        idx[hot:] = torch.randint(0, t, (m - hot,), generator=g, device="cuda", dtype=torch.int64)
        return idx[torch.randperm(m, generator=g, device="cuda")].contiguous()
    if scenario.kind == "sorted":
        idx = torch.randint(0, t, (m,), generator=g, device="cuda", dtype=torch.int64)
        return torch.sort(idx).values.contiguous()
    if scenario.kind == "few_idx":  # src row i -> perm[i % T]
        perm = torch.randperm(t, generator=g, device="cuda")
        return perm[torch.arange(m, device="cuda") % t].contiguous()
    raise ValueError(f"unknown index kind {scenario.kind!r}")


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


def reference(out0, index, src, dtype_name, chunk_elems=1 << 27):
    """float64 reference and per-element tolerance on the GPU.

    tol = 2 * (count + 1) * u * (|out0| + sum |src terms|), count = additions
    into that row. Returns (ref, tol, counts)."""
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
    absum.mul_((counts.double().add_(1).mul_(2 * UNIT[dtype_name])).unsqueeze(1))
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

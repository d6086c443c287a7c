#!/usr/bin/env python3
"""The reduce and weighted-sum operators of scatterptx.torch against torch's
own ops (and PyG's scatter where torch_geometric imports), on one GPU.

  SCATTERPTX_LIBRARY=$PWD/build/libscatterptx.so python3 bench/reduce_compare.py --out DIR
      [--only TEXT ...] [--scale FLOAT] [--reps N] [--warmup N] [--device cuda|cpu] [--list]

Writes DIR/reduce-compare.md (the tables) and DIR/reduce-compare.json (every
figure), and prints the markdown. Cases (--only keeps those whose name
contains one of the texts; --list prints the names):

gnn_weighted-30M-2.45M-d100-f32: a weighted GNN aggregation, 30M edges
  (source rows) into 2.45M nodes, D 100, f32, random positive f32 weights.
  torch: out.index_add_(0, idx, src * w[:, None]) and
  out.scatter_add_(0, idx[:, None].expand(-1, D), src * w[:, None]), the
  multiply inside the timed call; ours: weighted_index_add_(out, idx, src, w)
  and, on the same shape, the unweighted index_add_(out, idx, src).
moe_combine-deepseek_v3-16384x8-d7168-bf16: an MoE combine at DeepSeek-V3's
  size, T = 16384 tokens, top-8, hidden 7168, bf16: 131072 expert rows summed
  back into their tokens, weighted by f32 router gates. torch:
  out.index_add_(0, idx, src * w[:, None].to(src.dtype)) and the dense
  (src_by_token.view(T, k, H) * w_by_token.view(T, k, 1)).sum(1), which is
  given its rows already in token order (sorted outside the timing) and
  returns float32 (torch's type promotion); ours: weighted_index_add_ with
  the f32 gates and with the gates in bf16, and the unweighted index_add_.
  out starts at zero, as a combine does.
reduce-<data>-<mean|amax|amin>-<include_self|exclude_self>: scatter_reduce_
  into out along dim 0, 7.77M -> 1.72M rows, D 128 (the uniform-d128-* and
  high_cont-d128-f32 scenarios of bench/scenarios.tsv), data uniform-d128-f32,
  uniform-d128-bf16 and high_cont-d128-f32. torch:
  out.scatter_reduce_(0, idx[:, None].expand(-1, D), src, reduce, include_self=b);
  ours: scatterptx.torch.scatter_reduce_(out, idx, src, reduce, include_self=b)
  (a 1-D index); in the exclude_self cases also PyG's
  torch_geometric.utils.scatter(src, idx, dim=0, dim_size=N, reduce=mean/max/min),
  which returns a new tensor reduced from zero and is checked against that.

Targets: cases 1 and 2, the bar weighted / (unweighted + weight bytes /
copy bandwidth) <= 1.05 (a weighted call may cost its weights' extra read
and no more); case 3, fastest torch / ours >= 2 with ours bitwise
deterministic (two runs compared).

Inputs, drawn here with torch's generator (the same distributions as
scatterptx-bench's, not the same values): src and out uniform in [-1, 1]
with |v| >= 1/64 (compare_scenarios.random_nonzero); weights uniform in
[1/64, 1]; index "uniform": each entry uniform in [0, targets);
"high_cont": exactly half the entries 0, the rest uniform, shuffled
(bench/scenarios.cpp, make_index); the MoE index: each token id k times,
randomly permuted (rows reach the combine grouped by expert, not by
token); the MoE gates as DeepSeek-V3's: sigmoid scores over 256 experts,
the top 8, normalised to sum 1 per token. Every index is int64.

Timing (as bench/compare.py's, with compare_systems.Timer): CUDA events
around one call, --warmup calls first, the median of --reps runs (fewer,
noted, where runs x a warm-up's time exceed --budget-s), the L2 flushed by
zeroing a buffer of max(2 x L2, --flush-mib) before every run, then a GPU
sleep of --head-start-cycles while the host queues the call. An in-place
call starts every run from the same out (out0 copied in before the flush,
untimed). Each system's first result is checked against the float64
reference: torch's own op in float64 on the same inputs (on the same
device), as rel err = ||got - ref|| / ||ref||; ours runs a second time and
the two results are compared bit for bit. The copy bandwidth is 2 x bytes
/ the median time of a --copy-gib device-to-device copy, timed alike.

--device cpu times with perf_counter, without flush or events, and the
scatterptx operators fall back to torch's there: a smoke test of the script,
its timings meaningless (`--device cpu --scale 0.0005 --reps 2`).
--scale multiplies every row and target count (tokens for the MoE case).
"""

import argparse
import dataclasses
import datetime
import functools
import gc
import os
import platform
import shlex
import statistics
import sys
import time
import traceback
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "python"))

import torch  # noqa: E402

import compare  # noqa: E402  (the commit measured and the GPU's description)
import compare_report  # noqa: E402
import compare_scenarios  # noqa: E402
import compare_systems  # noqa: E402
import scatterptx  # noqa: E402
import scatterptx.torch as spt  # noqa: E402

TORCH, OURS, PYG = "torch", "ours", "PyG"
MIB, GIB = 2**20, 2**30
BAR_TARGET = 1.05
SPEEDUP_TARGET = 2.0
# src is converted to float64 for a reference a slice of this many elements
# at a time, as compare_scenarios.reference does.
CHUNK_ELEMENTS = 1 << 27
REPORT_NAME = "reduce-compare"


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for reduce-compare.md and reduce-compare.json")
    ap.add_argument("--only", action="append", default=[], metavar="TEXT",
                    help="run only the cases whose name contains TEXT (repeatable)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every row and target count")
    ap.add_argument("--reps", type=int, default=20, help="timed runs per system (median)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls per system before the runs")
    ap.add_argument("--budget-s", type=float, default=10.0,
                    help="cap on one system's timed runs: fewer runs (at least 3) where reps x a warm-up's "
                         "time exceed it")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: a smoke test of the script (perf_counter, torch's ops under ours)")
    ap.add_argument("--flush-mib", type=int, default=256, help="L2 flush buffer, at least 2 x L2")
    ap.add_argument("--copy-gib", type=float, default=4.0, help="size of the copy that gives the bandwidth")
    ap.add_argument("--head-start-cycles", type=int, default=200000,
                    help="GPU sleep between the flush and the start event (bench/gpu_sleep.hpp's default)")
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    return ap.parse_args(argv)


def log(text):
    print(text, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Timing

class CpuTimer(compare_systems.Timer):
    """compare_systems.Timer's warm-ups, runs and budget, each call timed by
    perf_counter: no events, no flush. For the smoke test only."""

    def __init__(self, warmup, runs, budget_s):  # no flush buffer, no device
        self.flush_buffer = None
        self.warmup, self.runs, self.budget_s = warmup, runs, budget_s
        self.head_start_cycles = 0

    def once(self, op, before=None):
        if before is not None:
            before()
        start = time.perf_counter()
        op()
        elapsed = time.perf_counter() - start
        return elapsed * 1e3, elapsed


def make_timer(args, device):
    if device.type != "cuda":
        return CpuTimer(args.warmup, args.reps, args.budget_s)
    l2_bytes = torch.cuda.get_device_properties(device).L2_cache_size
    timer = compare_systems.Timer(l2_bytes, args.warmup, args.reps, args.budget_s, args.head_start_cycles)
    if timer.flush_buffer.numel() < args.flush_mib * MIB:  # Timer's own is exactly 2 x L2
        timer.flush_buffer = torch.empty(args.flush_mib * MIB, dtype=torch.uint8, device=device)
    return timer


# ---------------------------------------------------------------------------
# Inputs

def generator(device, role):
    """A generator seeded from the role's name: every run draws the same inputs."""
    g = torch.Generator(device=device)
    g.manual_seed(zlib.crc32(role.encode()))
    return g


def random_nonzero(rows, cols, dtype, device, role):
    """(rows, cols) uniform in [-1, 1] with |v| >= MIN_MAGNITUDE, rounded to
    dtype: compare_scenarios.random_nonzero's distribution, drawn a slice at
    a time so that the float32 draw never doubles a large tensor."""
    g = generator(device, role)
    result = torch.empty(rows, cols, dtype=dtype, device=device)
    step = max(1, CHUNK_ELEMENTS // max(1, cols))
    low = compare_scenarios.MIN_MAGNITUDE
    for start in range(0, rows, step):
        v = torch.rand((min(step, rows - start), cols), generator=g, device=device)
        v.mul_(2).sub_(1)
        magnitude = v.abs().mul_(1 - low).add_(low)
        result[start:start + step] = magnitude.copysign_(v)
        del v, magnitude
    return result


def positive_weights(rows, device, role):
    """float32 uniform in [MIN_MAGNITUDE, 1]."""
    low = compare_scenarios.MIN_MAGNITUDE
    return torch.rand(rows, generator=generator(device, role), device=device).mul_(1 - low).add_(low)


def uniform_index(rows, targets, device, role):
    """scatterptx-bench's "uniform": each entry uniform in [0, targets)."""
    return torch.randint(0, targets, (rows,), generator=generator(device, role), device=device)


def high_cont_index(rows, targets, device, role):
    """scatterptx-bench's "high_cont": exactly half the entries 0, the rest
    uniform in [0, targets), shuffled."""
    g = generator(device, role)
    hot = rows // 2
    index = torch.cat([torch.zeros(hot, dtype=torch.int64, device=device),
                       torch.randint(0, targets, (rows - hot,), generator=g, device=device)])
    return index[torch.randperm(rows, generator=g, device=device)]


def moe_combine_index(tokens, k, device, role):
    """(index, order): row r of the expert output is slot order[r] % k of
    token order[r] // k, so index[r] = order[r] // k. order is a random
    permutation: the rows come grouped by expert, not by token."""
    order = torch.randperm(tokens * k, generator=generator(device, role), device=device)
    return torch.div(order, k, rounding_mode="floor"), order


def router_gates(tokens, k, experts, device, role):
    """(tokens, k) float32 gates as DeepSeek-V3 computes them: sigmoid scores
    over the experts, the k largest, normalised to sum 1 per token."""
    scores = torch.randn(tokens, experts, generator=generator(device, role), device=device).sigmoid_()
    top = scores.topk(k, dim=1).values
    return top / top.sum(1, keepdim=True)


# ---------------------------------------------------------------------------
# References and checks

def weighted_sum_reference(out0, index, src, weights=None):
    """out0 plus weights[i] * src[i] added at row index[i], in float64
    (weights None: the plain sum); src converted a slice at a time."""
    reference = out0.to(torch.float64, copy=True)
    step = max(1, CHUNK_ELEMENTS // max(1, src.shape[1]))
    for start in range(0, src.shape[0], step):
        part = src[start:start + step].to(torch.float64, copy=True)
        if weights is not None:
            part.mul_(weights[start:start + step].to(torch.float64).unsqueeze(1))
        reference.index_add_(0, index[start:start + step], part)
        del part
    return reference


def scatter_reduce_reference(out0, index, src, reduce, include_self):
    """torch's scatter_reduce_ with the expanded index, in float64."""
    reference = out0.to(torch.float64, copy=True)
    wide = src.to(torch.float64, copy=True)
    return reference.scatter_reduce_(0, expanded(index, src.shape[1]), wide, reduce, include_self=include_self)


def expanded(index, cols):
    """The 1-D index as scatter_add_ and scatter_reduce_ take it: one entry per element of src."""
    return index.unsqueeze(1).expand(-1, cols)


def relative_error(got, reference):
    """||got - ref|| / ||ref|| (Frobenius): compare_scenarios.check's rel_err."""
    difference = got.to(torch.float64, copy=True).sub_(reference)
    reference_norm = float(reference.norm())
    return float(difference.norm()) / reference_norm if reference_norm > 0 else float(difference.norm())


_SAME_SIZE_INT = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def bitwise_equal(a, b):
    """Bit for bit, NaNs and signed zeros included (torch.equal on floats compares values)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    as_int = _SAME_SIZE_INT[a.element_size()]
    return torch.equal(a.contiguous().view(as_int), b.contiguous().view(as_int))


# ---------------------------------------------------------------------------
# Cases

@dataclasses.dataclass
class System:
    label: str
    family: str  # TORCH, OURS or PYG
    call: object  # () -> the result; an in-place call writes into the case's out and returns it
    reference: str  # the key of the case's reference it is checked against
    in_place: bool = True  # out0 is copied into out before every call, untimed
    headline: bool = False  # ours doing what the torch forms do: compared with the fastest of them


@dataclasses.dataclass
class Bar:
    """weighted / (unweighted + weight_bytes / copy bandwidth), by system label."""
    weighted: str
    unweighted: str
    weight_bytes: int


@dataclasses.dataclass
class Setup:
    out: torch.Tensor
    out0: torch.Tensor
    systems: list
    references: dict  # key -> () -> the float64 reference
    shape: dict
    target: str  # "bar" or "speedup"
    bars: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Case:
    name: str
    build: object  # (ctx) -> Setup
    uses_copy_bandwidth: bool = False


def gnn_weighted_setup(ctx):
    edges, nodes, cols = ctx.rows(30_000_000), ctx.rows(2_450_000), 100
    device = ctx.device
    src = random_nonzero(edges, cols, torch.float32, device, "gnn:src")
    out0 = random_nonzero(nodes, cols, torch.float32, device, "gnn:out")
    index = uniform_index(edges, nodes, device, "gnn:index")
    weights = positive_weights(edges, device, "gnn:weights")
    out = out0.clone()
    wide_index = expanded(index, cols)
    weighted, unweighted = "ours weighted_index_add_ (f32 w)", "ours index_add_ (unweighted)"
    systems = [
        System("torch index_add_(src * w)", TORCH, lambda: out.index_add_(0, index, src * weights[:, None]),
               "weighted"),
        System("torch scatter_add_(expanded, src * w)", TORCH,
               lambda: out.scatter_add_(0, wide_index, src * weights[:, None]), "weighted"),
        System(weighted, OURS, lambda: spt.weighted_index_add_(out, index, src, weights), "weighted", headline=True),
        System(unweighted, OURS, lambda: spt.index_add_(out, index, src), "unweighted"),
    ]
    references = {"weighted": lambda: weighted_sum_reference(out0, index, src, weights),
                  "unweighted": lambda: weighted_sum_reference(out0, index, src)}
    return Setup(out, out0, systems, references, shape_of(edges, nodes, cols, src.dtype), "bar",
                 bars=[Bar(weighted, unweighted, weights.numel() * weights.element_size())],
                 notes=["torch forms: the multiply src * w[:, None] is inside the timed call"])


def moe_combine_setup(ctx):
    tokens, k, hidden, experts = ctx.rows(16384), 8, 7168, 256
    device = ctx.device
    index, order = moe_combine_index(tokens, k, device, "moe:index")
    gates = router_gates(tokens, k, experts, device, "moe:gates")  # token order
    weights = gates.flatten()[order]  # row order, as index
    weights_bf16 = weights.to(torch.bfloat16)
    src = random_nonzero(tokens * k, hidden, torch.bfloat16, device, "moe:src")
    src_by_token = torch.empty_like(src).index_copy_(0, order, src)  # for the dense form, sorted untimed
    out0 = torch.zeros(tokens, hidden, dtype=src.dtype, device=device)  # a combine starts from zero
    out = out0.clone()
    weighted, weighted_bf16 = "ours weighted_index_add_ (f32 w)", "ours weighted_index_add_ (bf16 w)"
    unweighted = "ours index_add_ (unweighted)"
    systems = [
        System("torch index_add_(src * w.to(bf16))", TORCH,
               lambda: out.index_add_(0, index, src * weights[:, None].to(src.dtype)), "f32 gates"),
        System("torch dense (src.view(T, k, H) * w.view(T, k, 1)).sum(1)", TORCH,
               lambda: (src_by_token.view(tokens, k, hidden) * gates.view(tokens, k, 1)).sum(1), "f32 gates",
               in_place=False),
        System(weighted, OURS, lambda: spt.weighted_index_add_(out, index, src, weights), "f32 gates",
               headline=True),
        System(weighted_bf16, OURS, lambda: spt.weighted_index_add_(out, index, src, weights_bf16), "bf16 gates",
               headline=True),
        System(unweighted, OURS, lambda: spt.index_add_(out, index, src), "unweighted"),
    ]
    references = {"f32 gates": lambda: weighted_sum_reference(out0, index, src, weights),
                  "bf16 gates": lambda: weighted_sum_reference(out0, index, src, weights_bf16),
                  "unweighted": lambda: weighted_sum_reference(out0, index, src)}
    bars = [Bar(weighted, unweighted, weights.numel() * weights.element_size()),
            Bar(weighted_bf16, unweighted, weights_bf16.numel() * weights_bf16.element_size())]
    notes = ["the dense form is given src and the gates already in token order (reordered outside the timing) "
             "and returns float32 (bf16 * f32 promotes); the other forms read the rows in expert order",
             "torch index_add_ form: the gates rounded to bf16 and the multiply inside the timed call",
             f"{tokens} tokens x top-{k} = {tokens * k} rows, hidden {hidden}, gates over {experts} experts; "
             "out starts at zero"]
    return Setup(out, out0, systems, references, shape_of(tokens * k, tokens, hidden, src.dtype), "bar", bars, notes)


# The reduce cases' data: 7.77M -> 1.72M rows, D 128 (bench/scenarios.tsv).
REDUCE_DATA = (("uniform-d128-f32", "uniform", torch.float32), ("uniform-d128-bf16", "uniform", torch.bfloat16),
               ("high_cont-d128-f32", "high_cont", torch.float32))
REDUCES = ("mean", "amax", "amin")
PYG_REDUCE = {"mean": "mean", "amax": "max", "amin": "min"}
INDEX_KINDS = {"uniform": uniform_index, "high_cont": high_cont_index}


def reduce_data(ctx, name, kind, dtype):
    rows, targets, cols = ctx.rows(7_770_000), ctx.rows(1_720_000), 128
    return {"src": random_nonzero(rows, cols, dtype, ctx.device, f"{name}:src"),
            "out0": random_nonzero(targets, cols, dtype, ctx.device, f"{name}:out"),
            "index": INDEX_KINDS[kind](rows, targets, ctx.device, f"{name}:index")}


def reduce_setup(ctx, name, kind, dtype, reduce, include_self):
    data = ctx.shared(name, lambda: reduce_data(ctx, name, kind, dtype))  # the six cases of one data share it
    src, out0, index = data["src"], data["out0"], data["index"]
    out = out0.clone()
    wide_index = expanded(index, src.shape[1])
    systems = [
        System("torch scatter_reduce_(expanded)", TORCH,
               lambda: out.scatter_reduce_(0, wide_index, src, reduce, include_self=include_self), "in place"),
        System("ours scatter_reduce_", OURS,
               lambda: spt.scatter_reduce_(out, index, src, reduce, include_self=include_self), "in place",
               headline=True),
    ]
    references = {"in place": lambda: scatter_reduce_reference(out0, index, src, reduce, include_self)}
    if not include_self and ctx.pyg is not None:
        scatter, targets, pyg_reduce = ctx.pyg.utils.scatter, out0.shape[0], PYG_REDUCE[reduce]
        systems.append(System(f"PyG scatter(reduce={pyg_reduce!r})", PYG,
                              lambda: scatter(src, index, dim=0, dim_size=targets, reduce=pyg_reduce), "from zero",
                              in_place=False))
        # PyG returns a new tensor reduced from zero: rows no index names stay 0.
        references["from zero"] = lambda: scatter_reduce_reference(torch.zeros_like(out0), index, src, reduce, False)
    return Setup(out, out0, systems, references, shape_of(src.shape[0], out0.shape[0], src.shape[1], src.dtype),
                 "speedup")


def shape_of(rows, targets, cols, dtype):
    return {"src_rows": rows, "out_rows": targets, "cols": cols, "dtype": str(dtype).replace("torch.", ""),
            "text": f"{compare_scenarios.count_text(rows)} -> {compare_scenarios.count_text(targets)}, D {cols}, "
                    f"{str(dtype).replace('torch.', '')}"}


def all_cases():
    cases = [Case("gnn_weighted-30M-2.45M-d100-f32", gnn_weighted_setup, uses_copy_bandwidth=True),
             Case("moe_combine-deepseek_v3-16384x8-d7168-bf16", moe_combine_setup, uses_copy_bandwidth=True)]
    for name, kind, dtype in REDUCE_DATA:
        for reduce in REDUCES:
            for include_self in (True, False):
                self_text = "include_self" if include_self else "exclude_self"
                cases.append(Case(f"reduce-{name}-{reduce}-{self_text}",
                                  functools.partial(reduce_setup, name=name, kind=kind, dtype=dtype, reduce=reduce,
                                                    include_self=include_self)))
    return cases


# ---------------------------------------------------------------------------
# Running

class Context:
    """What every case reads: the options, the device, the timer, PyG, and
    the one data set the reduce cases share (freed when another is asked for)."""

    def __init__(self, args, device, timer, pyg, pyg_status):
        self.args, self.device, self.timer = args, device, timer
        self.pyg, self.pyg_status = pyg, pyg_status
        self.copy = None  # measure_copy_bandwidth's, where a case has a bar
        self._shared_name, self._shared = None, None

    def rows(self, count):
        return max(1, round(count * self.args.scale))

    def synchronize(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def shared(self, name, build):
        if name != self._shared_name:
            self.release_shared()
            self._shared, self._shared_name = build(), name
        return self._shared

    def release_shared(self):
        self._shared_name, self._shared = None, None
        free_memory(self.device)


def free_memory(device):
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def measure_copy_bandwidth(ctx):
    """2 x bytes / median time of a device-to-device copy of --copy-gib (scaled)."""
    size = max(MIB, int(ctx.args.copy_gib * GIB * ctx.args.scale))
    source = torch.ones(size, dtype=torch.uint8, device=ctx.device)
    target = torch.empty_like(source)
    timing = ctx.timer.measure(lambda: target.copy_(source))
    median_ms = statistics.median(timing["times_ms"])
    return {"bytes": size, "median_ms": median_ms, "bytes_per_s": 2 * size / (median_ms * 1e-3),
            "runs": timing["runs"]}


def fallbacks_since(before):
    """The fallback_counts() reasons counted since `before`: calls of ours that ran torch's op."""
    after = spt.fallback_counts()
    return {reason: count - before.get(reason, 0) for reason, count in after.items()
            if count != before.get(reason, 0)}


def call_once(ctx, system, restore):
    if restore is not None:
        restore()
    result = system.call()
    ctx.synchronize()
    return result


def measure_system(ctx, setup, system, references):
    """Checks the system's first result, repeats ours for the bitwise
    comparison, then times it."""
    record = {"system": system.label, "family": system.family, "headline": system.headline}
    restore = (lambda: setup.out.copy_(setup.out0)) if system.in_place else None
    fallbacks_before = spt.fallback_counts()
    try:
        if system.reference not in references:
            references[system.reference] = setup.references[system.reference]()
        result = call_once(ctx, system, restore)
        record["rel_err"] = relative_error(result, references[system.reference])
        record["result_dtype"] = str(result.dtype).replace("torch.", "")
        if system.family == OURS:
            first = result.clone()
            del result
            record["deterministic"] = bitwise_equal(first, call_once(ctx, system, restore))
            del first
        else:
            del result
        timing = ctx.timer.measure(system.call, before=restore)
        record.update(timing)
        record["median_ms"] = statistics.median(timing["times_ms"])
        record["status"] = "ok"
    except Exception as e:  # noqa: BLE001 - recorded; the other systems still run
        record.update(status="error", error=f"{type(e).__name__}: {e}".strip()[:2000],
                      traceback=traceback.format_exc())
    if system.family == OURS:
        record["fallbacks"] = fallbacks_since(fallbacks_before)
    return record


def run_case(ctx, case):
    record = {"case": case.name, "systems": []}
    started = time.perf_counter()
    try:
        setup = case.build(ctx)
        record.update(shape=setup.shape, target=setup.target, notes=setup.notes)
        references = {}  # computed when a system first needs one, freed with the case
        for system in setup.systems:
            result = measure_system(ctx, setup, system, references)
            record["systems"].append(result)
            log(f"    {system.label:46s} {system_line(result)}")
        record.update(summarize(setup, record["systems"], ctx.copy))
        del setup, references
    except Exception as e:  # noqa: BLE001 - one case's failure does not end the run
        record["error"] = f"{type(e).__name__}: {e}"[:2000]
        record["traceback"] = traceback.format_exc()
        log(f"    case failed: {record['error']}")
    record["elapsed_s"] = time.perf_counter() - started
    return record


def system_line(result):
    if result["status"] != "ok":
        return f"error: {result['error']}"
    text = f"{compare_report.fmt_ms(result['median_ms'])} ms, rel err {result['rel_err']:.2e}"
    if "deterministic" in result:
        text += f", deterministic: {yes_no(result['deterministic'])}"
    if result.get("fallbacks"):
        text += f", ran torch's op: {', '.join(result['fallbacks'])}"
    return text


def summarize(setup, records, copy):
    """The fastest torch form against each headline ours, and the bars."""
    by_label = {r["system"]: r for r in records}
    timed_torch = [r for r in records if r["family"] == TORCH and r.get("median_ms")]
    fastest = min(timed_torch, key=lambda r: r["median_ms"]) if timed_torch else None
    bars = {}
    for bar in setup.bars:
        weighted, unweighted = by_label.get(bar.weighted, {}), by_label.get(bar.unweighted, {})
        entry = {"weighted": bar.weighted, "unweighted": bar.unweighted, "weight_bytes": bar.weight_bytes,
                 "ratio": None}
        if weighted.get("median_ms") and unweighted.get("median_ms") and copy:
            entry["weight_read_ms"] = bar.weight_bytes / copy["bytes_per_s"] * 1e3
            entry["ratio"] = weighted["median_ms"] / (unweighted["median_ms"] + entry["weight_read_ms"])
        bars[bar.weighted] = entry
    comparisons = []
    for r in records:
        if not r["headline"]:
            continue
        ours_ms = r.get("median_ms")
        entry = {"ours": r["system"], "ours_ms": ours_ms, "fastest_torch": fastest and fastest["system"],
                 "torch_ms": fastest and fastest["median_ms"],
                 "ratio": fastest["median_ms"] / ours_ms if fastest and ours_ms else None,
                 "deterministic": r.get("deterministic"), "bar": bars.get(r["system"])}
        entry["target_met"] = target_met(setup.target, entry)
        comparisons.append(entry)
    return {"comparisons": comparisons, "bars": list(bars.values())}


def target_met(target, comparison):
    if target == "bar":
        bar = comparison["bar"]
        return None if not bar or bar["ratio"] is None else bar["ratio"] <= BAR_TARGET
    if comparison["ratio"] is None:
        return None
    return comparison["ratio"] >= SPEEDUP_TARGET and bool(comparison["deterministic"])


# ---------------------------------------------------------------------------
# Report

TARGET_TEXT = {"bar": f"bar <= {BAR_TARGET}", "speedup": f"torch / ours >= {SPEEDUP_TARGET:g}, deterministic"}


def yes_no(value):
    return "n/a" if value is None else ("yes" if value else "no")


def ratio_text(value):
    return "" if value is None else f"{value:.2f}x"


def summary_rows(results):
    rows = []
    for r in results:
        if r.get("error"):
            rows.append([r["case"], f"error: {r['error']}"] + [""] * 7)
            continue
        for c in r.get("comparisons", []):
            bar = c.get("bar") or {}
            rows.append([r["case"], c["ours"], compare_report.fmt_ms(c["ours_ms"]) or "error",
                         c["fastest_torch"] or "none ran", compare_report.fmt_ms(c["torch_ms"]),
                         ratio_text(c["ratio"]), "" if bar.get("ratio") is None else f"{bar['ratio']:.3f}",
                         TARGET_TEXT[r["target"]], yes_no(c["target_met"])])
    return rows


def system_rows(results):
    rows = []
    for r in results:
        if r.get("error"):
            continue
        headline = next((s for s in r["systems"] if s["headline"] and s.get("median_ms")), None)
        for s in r["systems"]:
            if s["status"] != "ok":
                rows.append([r["case"], s["system"], "error", "", "", "", s["error"][:200]])
                continue
            versus = "" if headline is None or s is headline else ratio_text(s["median_ms"] / headline["median_ms"])
            notes = [s["note"]] if s.get("note") else []
            if s.get("fallbacks"):
                notes.append("**ran torch's op**: " + "; ".join(s["fallbacks"]))
            rows.append([r["case"], s["system"], compare_report.fmt_ms(s["median_ms"]), versus,
                         f"{s['rel_err']:.2e}", yes_no(s.get("deterministic")) if s["family"] == OURS else "",
                         ", ".join(notes)])
    return rows


def markdown(meta, results):
    device = meta.get("device") or {}
    copy = meta.get("copy")
    on_cpu = meta["options"]["device"] == "cpu"
    title_device = "CPU (smoke test)" if on_cpu else device.get("name", "?")
    lines = [f"# scatterptx.torch reduce and weighted-sum operators against torch: {title_device}, {meta['date']}", ""]
    if on_cpu:
        lines += ["**CPU run: the scatterptx operators ran torch's own ops; the timings are a smoke test of the "
                  "script only.**", ""]
    else:
        lines.append(f"- GPU: {device.get('name', '?')} (sm_{device.get('cc', '?')}, {device.get('sms', '?')} SMs, "
                     f"{device.get('l2_bytes', 0) / MIB:.0f} MiB L2, {device.get('memory_bytes', 0) / GIB:.0f} GiB), "
                     f"driver {device.get('driver', '?')}")
    lines += [
        f"- torch {meta['torch']} (CUDA {meta['torch_cuda']}), Python {meta['python']}, "
        f"scatterptx {meta['scatterptx']}; PyG: {meta['pyg']}",
        f"- libscatterptx: {meta['library']}",
        f"- Scale {meta['options']['scale']:g} of the cases' row counts" if meta["options"]["scale"] != 1 else
        "- Full-size cases",
        ("- Timing: perf_counter around one call" if on_cpu else
         f"- Timing: CUDA events around one call, L2 flushed (a {meta['flush_bytes'] / MIB:.0f} MiB buffer zeroed) "
         f"then a GPU sleep of {meta['options']['head_start_cycles']} cycles before every run, both untimed")
        + f"; {meta['options']['warmup']} warm-ups, median of {meta['options']['reps']} runs (fewer where noted: "
        f"a budget of {meta['options']['budget_s']:g} s per system); in-place calls start every run from the "
        "same out, copied in untimed; index int64",
        "- rel err: ||got - ref|| / ||ref|| against torch's op in float64 on the same inputs; deterministic: "
        "ours run twice from the same out, bit for bit equal (required of the reduces)",
    ]
    if meta["pyg_ran"]:
        lines.append("- PyG (the reduce cases without include_self): torch_geometric.utils.scatter returns a new "
                     "tensor reduced from zero (rows no index names stay 0), checked against torch's scatter_reduce_ "
                     "of zeros with include_self=False in float64")
    if copy:
        lines.append(f"- Copy bandwidth: {copy['bytes_per_s'] / 1e9:.0f} GB/s (2 x {copy['bytes'] / GIB:.3g} GiB "
                     f"/ {compare_report.fmt_ms(copy['median_ms'])} ms); bar = weighted ms / (unweighted ms + "
                     "weight bytes / copy bandwidth)")
    lines += [f"- Commit: `{meta['commit']}`", f"- Command: `{meta['command']}`", ""]

    lines += ["## Summary: fastest torch form / ours (> 1: ours is faster)", "",
              compare_report._table(["case", "ours", "ours ms", "fastest torch", "torch ms", "torch / ours",
                                     "bar", "target", "met"], summary_rows(results)), ""]
    lines += ["## Every system (vs ours: this system's time / the case's first ours)", "",
              compare_report._table(["case", "system", "median ms", "vs ours", "rel err", "deterministic", "notes"],
                                    system_rows(results)), ""]
    notes = []
    for r in results:
        notes += [f"- {r['case']}: {note}" for note in r.get("notes", [])]
    if notes:
        lines += ["## Notes", ""] + compare_report._dedupe(notes) + [""]
    return "\n".join(lines)


def write_reports(folder, meta, results):
    """folder/reduce-compare.json and .md; returns the markdown."""
    os.makedirs(folder, exist_ok=True)
    text = markdown(meta, results)
    compare_report.write_json(os.path.join(folder, REPORT_NAME + ".json"), meta, results)
    with open(os.path.join(folder, REPORT_NAME + ".md"), "w") as f:
        f.write(text + "\n")
    return text


# ---------------------------------------------------------------------------

def load_pyg():
    """(torch_geometric or None, what the report says about it)."""
    try:
        import torch_geometric
        import torch_geometric.typing
        import torch_geometric.utils  # noqa: F401
    except Exception as e:  # noqa: BLE001 - PyG is optional
        return None, f"not run ({type(e).__name__}: {e})"
    with_scatter = getattr(torch_geometric.typing, "WITH_TORCH_SCATTER", False)
    return torch_geometric, (f"torch_geometric {torch_geometric.__version__}, "
                             f"torch_scatter {'present' if with_scatter else 'absent'}")


def library_status(device):
    """Where libscatterptx was loaded from, or why not (then ours' systems report the error)."""
    path = os.environ.get("SCATTERPTX_LIBRARY", "(default search)")
    if device.type != "cuda":
        return f"not used on the CPU (SCATTERPTX_LIBRARY: {path})"
    try:
        scatterptx.library()
    except Exception as e:  # noqa: BLE001 - reported; torch's forms still run
        return f"not loaded: {type(e).__name__}: {e}"
    return path


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    cases = [c for c in all_cases() if not args.only or any(text in c.name for text in args.only)]
    if args.list:
        print("\n".join(c.name for c in cases))
        return 0
    if not cases:
        print(f"no case name contains any of {args.only}", file=sys.stderr)
        return 2
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device (--device cpu runs the smoke test)", file=sys.stderr)
        return 2
    if device.type == "cpu":
        print("CPU timings are a smoke test only: the scatterptx operators run torch's own ops there", flush=True)
    pyg, pyg_status = load_pyg()
    if pyg is None:
        print(f"PyG {pyg_status}", flush=True)
    timer = make_timer(args, device)
    ctx = Context(args, device, timer, pyg, pyg_status)
    meta = {
        "date": datetime.date.today().isoformat(),
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]),
        "commit": compare._commit(),  # SCATTERPTX_COMMIT where set, else git's HEAD
        "device": compare.device_info(torch) if device.type == "cuda" else None,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "python": platform.python_version(),
        "scatterptx": scatterptx.__version__,
        "library": library_status(device),
        "pyg": pyg_status,
        "pyg_ran": pyg is not None,
        "options": {k: v for k, v in vars(args).items() if k != "list"},
        "flush_bytes": timer.flush_buffer.numel() if timer.flush_buffer is not None else 0,
        "cases": [c.name for c in cases],
    }
    if any(c.uses_copy_bandwidth for c in cases):
        ctx.copy = meta["copy"] = measure_copy_bandwidth(ctx)
        free_memory(device)  # its buffers
        log(f"copy bandwidth {ctx.copy['bytes_per_s'] / 1e9:.1f} GB/s")
    begun = time.perf_counter()
    results = []
    for n, case in enumerate(cases, 1):
        log(f"[{n}/{len(cases)}] {case.name}")
        results.append(run_case(ctx, case))
        free_memory(device)
        meta["elapsed_s"] = time.perf_counter() - begun
        write_reports(args.out, meta, results)  # kept current as it goes
    ctx.release_shared()
    meta["elapsed_s"] = time.perf_counter() - begun
    meta["fallback_counts"] = spt.fallback_counts()
    text = write_reports(args.out, meta, results)
    print(text)
    log(f"wrote {os.path.join(args.out, REPORT_NAME)}.md and .json in {meta['elapsed_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
import datetime
import gc
import os
import platform
import shlex
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "python"))

import torch  # noqa: E402

import compare  # noqa: E402  (the commit measured and the GPU's description)
import compare_systems  # noqa: E402
import scatterptx  # noqa: E402
import scatterptx.torch as spt  # noqa: E402
from reduce_cases import OURS, REL_ERR_TOLERANCE, all_cases, bitwise_equal, relative_error  # noqa: E402
from reduce_report import GIB, MIB, REPORT_NAME, summarize, system_line, write_reports  # noqa: E402


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
        tolerance = REL_ERR_TOLERANCE[result.dtype]
        if not record["rel_err"] <= tolerance:  # NaN too
            record.update(status="wrong", error=f"rel err {record['rel_err']:.3g} above {tolerance:g} for "
                                                f"{record['result_dtype']}: not timed")
            if system.family == OURS:
                record["fallbacks"] = fallbacks_since(fallbacks_before)
            return record
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
    # A result of ours that is wrong or raised, or a case that did: exit 1 (the reports hold the details).
    failed = [r["case"] for r in results if r.get("error")] + [
        f"{r['case']}: {s['system']}" for r in results for s in r.get("systems", [])
        if s["family"] == OURS and s["status"] != "ok"]
    for what in failed:
        log(f"FAILED: {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

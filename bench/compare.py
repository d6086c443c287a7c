#!/usr/bin/env python3
"""Times libscatterptx against torch's scatter paths and the seed kernel.

In one process, on the same tensors, for every scenario of the C++
benchmark's suite (bench/scenarios.tsv, with the floors' bytes, the error
bound and the head start as `scatterptx-bench --describe` gives them): libscatterptx (AUTO path;
segmented scatter_add_grouped into a preallocated workspace; execute of a
segmented plan built beforehand, whose build time is recorded too; and
deterministic scatter_add_grouped), eager scatter_add_ (expanded index) and
index_add_, both through torch.compile, torch.segment_reduce on rows grouped
by target beforehand, and the seed (CuTeDSL TMA kernel). Each result is
checked against a float64 reference before it is timed; a device copy of src
gives the floors.

  python3 bench/compare.py --out DIR [--scenario NAME ...] [--quick] [--no-compile] [--no-seed] [--deterministic]
                           [--only KEY ...]
                           [--bench build/bench/scatterptx-bench]

Writes DIR/<date>-<gpu>.json, .md and .png and prints the markdown.

The seed is imported from --seed-dir (default .seed/ in the repository root)
with the --seed-site folders (default $SCATTERPTX_SEED_SITE, else /tmp/site,
where the wheels of .whl/ are installed with pip --target) added as site
folders, so that the .pth file of nvidia-cutlass-dsl is read.
"""

import argparse
import dataclasses
import datetime
import gc
import os
import platform
import re
import shlex
import site
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import compare_report  # noqa: E402
import compare_scenarios as sc  # noqa: E402


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the .json, .md and .png")
    ap.add_argument("--scenario", action="append", default=[], metavar="NAME",
                    help="run only scenarios whose name contains NAME (repeatable)")
    ap.add_argument("--quick", action="store_true", help="divide row counts by 16 (few_idx: D)")
    ap.add_argument("--no-compile", action="store_true", help="leave out the torch.compile peers")
    ap.add_argument("--no-seed", action="store_true", help="leave out the seed kernel")
    ap.add_argument("--only", action="append", default=[], metavar="KEY",
                    help="time only the systems whose key starts with KEY (repeatable; keys as in the "
                         "JSON: scatterptx, scatterptx_streaming, index_add, compiled_index_add, ...)")
    ap.add_argument("--deterministic", action="store_true",
                    help="also time calls under torch.use_deterministic_algorithms(True): "
                         "scatterptx.torch.index_add_, torch's index_add_ and scatter_add_")
    ap.add_argument("--runs", type=int, default=20, help="timed runs per system (median)")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up calls per system")
    ap.add_argument("--head-start-cycles", type=int, default=None,
                    help="GPU clock cycles of sleep queued between the flush and the start event, "
                         "so that a call's host time cannot show in its timing (0: none; "
                         "default: the C++ bench's)")
    ap.add_argument("--bench", default=os.path.join(REPO, "build", "bench", "scatterptx-bench"),
                    help="the scatterptx-bench whose --describe gives the scenarios, floors and bound")
    ap.add_argument("--budget-s", type=float, default=5.0,
                    help="cap on the timed runs of one system in one scenario: fewer runs "
                         "(at least 3) when runs x warm-up time exceeds it")
    ap.add_argument("--seed-dir", default=os.path.join(REPO, ".seed"))
    ap.add_argument("--seed-site", action="append", default=None, metavar="DIR",
                    help="site folder holding the seed's packages (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the scenario names and exit")
    return ap.parse_args(argv)


def log(text):
    print(text, file=sys.stderr, flush=True)


def load_scatterptx():
    sys.path.insert(0, os.path.join(REPO, "python"))
    try:
        import scatterptx

        scatterptx.library()
        return scatterptx, {"library": os.environ.get("SCATTERPTX_LIBRARY", "(default search)")}
    except Exception as e:  # noqa: BLE001 - reported, the peers still run
        return None, {"error": f"{type(e).__name__}: {e}"}


def _versions(names):
    from importlib import metadata

    found = []
    for name in names:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except Exception:  # noqa: BLE001
            pass
    return ", ".join(found)


def load_seed(seed_dir, sites):
    """(module or None, status dict); the import error is kept, not raised."""
    for folder in sites:
        if os.path.isdir(folder):
            site.addsitedir(folder)  # also reads nvidia_cutlass_dsl.pth
    seed_dir = os.path.abspath(seed_dir)
    if not os.path.isfile(os.path.join(seed_dir, "seed_tma_scatter.py")):
        return None, {"status": "not run", "error": f"no seed_tma_scatter.py in {seed_dir}"}
    sys.path.insert(0, seed_dir)
    try:
        import seed_tma_scatter
    except Exception as e:  # noqa: BLE001 - reported once, the rest still runs
        return None, {"status": "import failed", "error": f"{type(e).__name__}: {e}",
                      "traceback": traceback.format_exc(), "sites": sites}
    versions = _versions(["nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-cu13",
                          "nvidia-cutlass-dsl-libs-base", "apache-tvm-ffi", "cuda-bindings",
                          "cuda-python", "torch-c-dlpack-ext"])
    return seed_tma_scatter, {"status": "imported", "versions": versions, "dir": seed_dir,
                              "sites": sites}


def device_info(torch):
    p = torch.cuda.get_device_properties(0)
    driver = "?"
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=20).stdout.split("\n")[0].strip() or "?"
    except Exception:  # noqa: BLE001
        pass
    return {"name": p.name, "cc": f"{p.major}{p.minor}", "sms": p.multi_processor_count,
            "l2_bytes": int(p.L2_cache_size), "memory_bytes": int(p.total_memory), "driver": driver}


def gpu_slug(name):
    return re.sub(r"[^a-z0-9._-]", "", name.lower().replace(" ", "-")) or "gpu"


def run_system(torch, timer, system, inputs, ref, tol):
    from compare_systems import Unsupported

    s = inputs.scenario
    reason = system.unsupported(s)
    if reason:
        return {"status": "unsupported", "reason": reason}
    record = {}
    out, out0 = inputs.out, inputs.out0

    def restore():
        out.copy_(out0)

    try:
        t = time.perf_counter()
        op = system.prepare(inputs)
        record["prepare_s"] = time.perf_counter() - t
        record.update(system.details())
        record["compiled_before"] = bool(system.jit and system.reused)
        restore()
        torch.cuda.synchronize()
        first_ms, first_wall = timer.once(lambda: op(out))
        record["first_call_ms"], record["first_call_wall_s"] = first_ms, first_wall
        record["check"] = sc.check(out, ref, tol)
        if not record["check"]["ok"]:
            record["status"] = "wrong"
            c = record["check"]
            record["reason"] = (f"{c['violations']} elements over the bound, max |err|/bound "
                                f"{c['max_err_over_tol']:.3g}, rel err {c['rel_err']:.3g}")
            return record
        timing = timer.measure(lambda: op(out), before=restore,
                               first_ms=None if system.jit and not system.reused else first_ms)
        record["timing"] = timing
        record["median_ms"] = compare_report.median_ms({"status": "ok", "timing": timing})
        record["status"] = "ok"
    except Unsupported as e:
        record.update(status="unsupported", reason=str(e))
    except Exception as e:  # noqa: BLE001 - recorded per system
        record.update(status="error", error=f"{type(e).__name__}: {e}".strip()[:2000],
                      traceback=traceback.format_exc())
    finally:
        system.release()
    return record


def _measure_scenario(torch, timer, systems, s, description, result):
    """Fills result; the scenario's tensors are this frame's locals and go with it."""
    from compare_systems import Inputs

    error_bound = description["error_bound"]
    index = sc.load_index(description["bench"], s, description["quick"])
    src = sc.random_nonzero(s.src_rows, s.cols, s.dtype, s, "src")
    out0 = sc.random_nonzero(s.out_rows, s.cols, s.dtype, s, "out")
    out = out0.clone()
    ref, tol, counts = sc.reference(out0, index, src, s.dtype, error_bound)
    distinct = int((counts > 0).sum())
    result["distinct_targets"] = distinct
    result["max_count"] = int(counts.max())
    del counts
    floors = s.floors_bytes  # the C++ bench's, from the same index
    result["floors_bytes"] = floors

    dst = torch.empty_like(src)
    copy = timer.measure(lambda: dst.copy_(src))
    del dst
    result["copy"] = copy
    copy_ms = compare_report.median_ms({"status": "ok", "timing": copy})
    result["copy_ms"] = copy_ms
    bandwidth = floors["copy"] / (copy_ms * 1e-3)
    result["copy_bandwidth_gbs"] = bandwidth / 1e9
    result["floor_ms"] = {"ideal": floors["ideal"] / bandwidth * 1e3,
                          "no_reuse": floors["no_reuse"] / bandwidth * 1e3}

    inputs = Inputs(s, index, src, out, out0)
    for system in systems:
        t = time.perf_counter()
        record = run_system(torch, timer, system, inputs, ref, tol)
        record["elapsed_s"] = time.perf_counter() - t
        result["systems"][system.key] = record
        ms, status = record.get("median_ms"), record["status"]
        shown = f"{compare_report.fmt_ms(ms)} ms {record['timing'].get('note', '')}" if ms else status
        if status in ("error", "unsupported", "wrong"):
            shown += f" ({record.get('error') or record.get('reason')})"
        log(f"    {system.key:24s} {shown.strip()}  [{record['elapsed_s']:.1f} s]")


def run_scenario(torch, timer, systems, s, description):
    result = {"scenario": dict(dataclasses.asdict(s), shape_text=s.shape_text()),
              "systems": {}}
    started = time.perf_counter()
    try:
        _measure_scenario(torch, timer, systems, s, description, result)
    except Exception as e:  # noqa: BLE001 - one scenario's failure does not end the run
        result["error"] = f"{type(e).__name__}: {e}"[:2000]
        result["traceback"] = traceback.format_exc()
        log(f"    scenario failed: {result['error']}")
    result["elapsed_s"] = time.perf_counter() - started
    return result


def _commit():
    """SCATTERPTX_COMMIT where set (a copied tree's .git may be older than
    its files), else git's HEAD."""
    import subprocess

    if os.environ.get("SCATTERPTX_COMMIT"):
        return os.environ["SCATTERPTX_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("SCATTERPTX_COMMIT", "unknown")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        scenarios, description = sc.describe(args.bench, args.quick, args.scenario)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(s.name for s in scenarios))
        return 0
    if args.head_start_cycles is None:
        args.head_start_cycles = description["head_start_cycles"]

    try:
        import torch
    except ImportError:
        print("needs torch (with CUDA)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    from compare_systems import Timer, make_systems

    begun = time.perf_counter()
    device = device_info(torch)
    scatterptx, scatterptx_status = load_scatterptx()
    if scatterptx is None:
        log(f"libscatterptx not loaded: {scatterptx_status['error']}")
    if args.no_seed:
        seed, seed_status = None, {"status": "not run (--no-seed)"}
    else:
        sites = args.seed_site
        if sites is None:
            env = os.environ.get("SCATTERPTX_SEED_SITE")
            sites = [p for p in env.split(os.pathsep) if p] if env else ["/tmp/site"]
        seed, seed_status = load_seed(args.seed_dir, sites)
        if seed is None:
            log(f"seed not run: {seed_status.get('error')}")
        else:
            log(f"seed imported ({seed_status['versions']})")

    today = datetime.date.today().isoformat()
    timer = Timer(device["l2_bytes"], args.warmup, args.runs, args.budget_s, args.head_start_cycles)
    systems = make_systems(scatterptx, seed, not args.no_compile, timer, args.deterministic)
    if args.only:
        systems = [s for s in systems if any(s.key.startswith(key) for key in args.only)]
    meta = {
        "date": today,
        "command": " ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]),
        # The commit measured: SCATTERPTX_COMMIT (set by whoever copied the
        # tree to the GPU host), else git's HEAD.
        "commit": _commit(),
        "device": device,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "python": platform.python_version(),
        "scatterptx": scatterptx_status,
        "seed": seed_status,
        "systems": [s.key for s in systems],
        "warmup": args.warmup,
        "head_start_cycles": args.head_start_cycles,
        "runs": args.runs,
        "budget_s": args.budget_s,
        "quick": args.quick,
        "flush_bytes": timer.flush_buffer.numel(),
        "index_dtype": "int64",
        "error_bound": description["error_bound"]["formula"],
    }
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"{today}-{gpu_slug(device['name'])}")

    results = []
    for n, s in enumerate(scenarios, 1):
        log(f"[{n}/{len(scenarios)}] {s.name}: {s.shape_text()} rows, D={s.cols}, {s.dtype}")
        result = run_scenario(torch, timer, systems, s, description)
        results.append(result)
        gc.collect()
        torch.cuda.empty_cache()
        log(f"    scenario {result['elapsed_s']:.1f} s, total {time.perf_counter() - begun:.0f} s")
        meta["elapsed_s"] = time.perf_counter() - begun
        compare_report.write_json(stem + ".json", meta, results)  # kept current as it goes
        with open(stem + ".md", "w") as f:
            f.write(compare_report.markdown(meta, results) + "\n")

    meta["elapsed_s"] = time.perf_counter() - begun
    text = compare_report.markdown(meta, results)
    with open(stem + ".md", "w") as f:
        f.write(text + "\n")
    png_error = compare_report.write_png(stem + ".png", meta, results)
    if png_error:
        meta["png_error"] = png_error
        log(f"no chart: {png_error}")
    compare_report.write_json(stem + ".json", meta, results)
    print(text)
    log(f"wrote {stem}.json, .md" + ("" if png_error else ", .png") +
        f" in {meta['elapsed_s']:.0f} s")
    # A scenario that failed, or a result of the library's that is wrong or
    # raised: exit 1 (the peers' statuses are the report's to show).
    failed = [r["scenario"]["name"] for r in results if r.get("error")] + [
        f"{r['scenario']['name']}: {key}" for r in results for key, record in r["systems"].items()
        if key.startswith("scatterptx") and record["status"] in ("error", "wrong")]
    for what in failed:
        log(f"FAILED: {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

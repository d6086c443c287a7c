"""What the drop-in examples measure, each defined once: step times with and
without scatterptx.torch.enable() in one process, alternating; the share of
a step spent in scatter kernels (torch.profiler); how far two results are
apart; and the report (markdown and JSON) in the folder given by --out.
"""

import collections
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import torch

# The examples run from a checkout without pip install too.
CHECKOUT_PYTHON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
if os.path.isdir(os.path.join(CHECKOUT_PYTHON, "scatterptx")):
    sys.path.insert(0, os.path.abspath(CHECKOUT_PYTHON))

import scatterptx.torch as spt  # noqa: E402

TORCH, SCATTERPTX = "torch", "scatterptx"
MODES = (TORCH, SCATTERPTX)

# The operators whose kernels add rows into a target: every GPU kernel
# launched inside one of them (found through the profiler's op -> kernel
# links) is a scatter kernel, whoever runs it, routed or left to torch.
SCATTER_OPS = frozenset({
    "aten::index_add_", "aten::index_add", "aten::scatter_add_", "aten::scatter_add", "aten::scatter_reduce_",
    "aten::scatter_reduce", "aten::index_put_", "aten::index_put", "aten::_index_put_impl_",
})
# The library's kernels by name (ptx/*.ptx.in entries), in case a launch is not linked to its op.
LIBRARY_KERNEL_PREFIXES = ("row_", "group_", "index_record_take")


# Exit status when there is nothing to run on: no check was made, no pass.
EXIT_NOTHING_RUN = 77


def require_device(device, name):
    """Exits EXIT_NOTHING_RUN, saying why, where a CUDA device is asked for
    and there is none."""
    if device.type == "cuda" and not torch.cuda.is_available():
        print(f"{name}: nothing run, no CUDA GPU here (torch {torch.__version__}); run it on an sm_90+ GPU, or "
              "--device cpu for a smoke test of the script", flush=True)
        sys.exit(EXIT_NOTHING_RUN)


def agreement_status(name, figures, precisions):
    """0, or 1 after saying which: every precision whose switched run must
    agree with torch's (agrees_within_rtol) did."""
    disagreeing = [p for p in precisions if figures.get(p, {}).get("agrees_within_rtol") is False]
    for precision in disagreeing:
        print(f"{name}: FAILED: {precision} loss or gradients differ from torch's beyond --rtol", flush=True)
    return 1 if disagreeing else 0


def switch(mode):
    """The drop-in switch for a mode, as a with block."""
    return spt.enable() if mode == SCATTERPTX else spt.disable()


def synchronize(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def alternate(step, modes_steps, warmup, device):
    """Calls step(mode) warmup + modes_steps times for each mode, the modes
    taking turns (which goes first alternates too); returns {mode: [seconds
    of each timed call]} and {mode: [what each call returned]}. A call is
    timed from a drained queue to a drained queue, host gaps included."""
    seconds = {mode: [] for mode in MODES}
    results = {mode: [] for mode in MODES}
    for i in range(warmup + modes_steps):
        for mode in (MODES if i % 2 == 0 else MODES[::-1]):
            with switch(mode):
                synchronize(device)
                start = time.perf_counter()
                result = step(mode)
                synchronize(device)
                elapsed = time.perf_counter() - start
            results[mode].append(result)
            if i >= warmup:
                seconds[mode].append(elapsed)
    return seconds, results


def step_times(seconds):
    """Median, minimum and maximum milliseconds per mode, and torch's median over ours."""
    figures = {mode: {"median_ms": 1e3 * statistics.median(values), "min_ms": 1e3 * min(values),
                      "max_ms": 1e3 * max(values), "steps": len(values)} for mode, values in seconds.items()}
    figures["speedup"] = figures[TORCH]["median_ms"] / figures[SCATTERPTX]["median_ms"]
    return figures


def _scatter_op(event):
    while event is not None:
        if event.name in SCATTER_OPS:
            return event.name
        event = event.cpu_parent
    return None


def kernel_time(step, mode, steps, device):
    """GPU kernel time of `steps` calls of step(mode) under torch.profiler,
    per step: all kernels, the scatter kernels, and the scatter kernels by op
    and by name (microseconds)."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.device(device).type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with switch(mode):
        step(mode)  # nothing first-time in the profile
        synchronize(device)
        with torch.profiler.profile(activities=activities) as profile:
            for _ in range(steps):
                step(mode)
            synchronize(device)
    events = profile.events()
    total = 0.0
    library_named = 0.0
    for event in events:
        if event.device_type == torch.autograd.DeviceType.CUDA:
            total += event.time_range.elapsed_us()
            if event.name.startswith(LIBRARY_KERNEL_PREFIXES):
                library_named += event.time_range.elapsed_us()
    by_op = collections.Counter()
    by_name = collections.Counter()
    library_linked = 0.0
    for event in events:
        if event.device_type != torch.autograd.DeviceType.CPU or not event.kernels:
            continue
        op = _scatter_op(event)
        for kernel in event.kernels:
            is_library = kernel.name.startswith(LIBRARY_KERNEL_PREFIXES)
            library_linked += kernel.duration if is_library else 0.0
            if op is not None or is_library:
                by_op[op or "(library kernels outside a scatter op)"] += kernel.duration
                by_name[kernel.name] += kernel.duration
    if library_named > library_linked + 1e-3:  # launches the profiler did not link to an op
        by_op["(library kernels not linked to an op)"] += library_named - library_linked
        by_name["(library kernels not linked to an op)"] += library_named - library_linked
    scatter = sum(by_op.values())
    return {
        "kernel_us_per_step": total / steps,
        "scatter_us_per_step": scatter / steps,
        "scatter_share_of_kernel_time": scatter / total if total else 0.0,
        "scatter_us_per_step_by_op": {op: us / steps for op, us in by_op.most_common()},
        "scatter_us_per_step_by_kernel": {name[:160]: us / steps for name, us in by_name.most_common(12)},
    }


def scatter_figures(step, steps, device, median_ms):
    """kernel_time for both modes, the share of the median step, and torch's scatter time over ours."""
    figures = {mode: kernel_time(step, mode, steps, device) for mode in MODES}
    for mode in MODES:
        figures[mode]["scatter_share_of_step"] = figures[mode]["scatter_us_per_step"] / (1e3 * median_ms[mode])
    ours = figures[SCATTERPTX]["scatter_us_per_step"]
    figures["scatter_time_ratio"] = figures[TORCH]["scatter_us_per_step"] / ours if ours else None
    return figures


def ratio(value):
    return "n/a" if value is None else f"{value:.2f}x"


def relative_difference(a, b):
    """max |a - b| / max |b|, in float64."""
    a, b = a.detach().double(), b.detach().double()
    scale = b.abs().max().item()
    return (a - b).abs().max().item() / scale if scale else (a - b).abs().max().item()


def error_against(reference, got):
    """Errors of got against a float64 reference: normwise (Frobenius) and
    max-abs, both relative to the reference."""
    reference, got = reference.detach().double(), got.detach().double()
    difference = got - reference
    return {"normwise_relative": (difference.norm() / reference.norm()).item(),
            "max_abs_over_max_ref": (difference.abs().max() / reference.abs().max()).item()}


def environment(device):
    found = {"python": platform.python_version(), "torch": torch.__version__,
             "scatterptx": getattr(sys.modules.get("scatterptx"), "__version__", "?"),
             "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
             "command": " ".join(["python"] + sys.argv)}
    if torch.device(device).type == "cuda":
        found["gpu"] = torch.cuda.get_device_name(device)
        found["capability"] = ".".join(map(str, torch.cuda.get_device_capability(device)))
    # SCATTERPTX_COMMIT where set, as bench/compare.py: a copied tree's .git may be older than its files.
    if os.environ.get("SCATTERPTX_COMMIT"):
        found["commit"] = os.environ["SCATTERPTX_COMMIT"]
        return found
    try:
        found["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                         cwd=os.path.dirname(os.path.abspath(__file__)), check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return found


def write_report(out_dir, name, figures, markdown):
    """out_dir/name.json (the figures) and out_dir/name.md (the markdown); returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    json_path = os.path.join(out_dir, f"{name}.json")
    markdown_path = os.path.join(out_dir, f"{name}.md")
    with open(json_path, "w", encoding="utf-8") as file:
        json.dump(figures, file, indent=2, default=str)
        file.write("\n")
    with open(markdown_path, "w", encoding="utf-8") as file:
        file.write(markdown)
    return json_path, markdown_path


def table(header, rows):
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def timing_markdown(label, times, kernels):
    """The step-time and scatter-kernel rows of one precision."""
    rows = []
    for mode in MODES:
        k = kernels[mode]
        rows.append([label, mode, f"{times[mode]['median_ms']:.2f}",
                     f"{times[mode]['min_ms']:.2f}-{times[mode]['max_ms']:.2f}",
                     f"{k['scatter_us_per_step'] / 1e3:.3f}", f"{100 * k['scatter_share_of_step']:.1f}",
                     f"{100 * k['scatter_share_of_kernel_time']:.1f}"])
    return rows


TIMING_HEADER = ["precision", "switch", "step median ms", "min-max ms", "scatter kernels ms/step",
                 "% of step", "% of kernel time"]


def report_header(title, env, device):
    """A report's title, where and when it ran, and its command."""
    return [f"# {title}", "",
            f"{env.get('gpu', device)}, torch {env['torch']}, scatterptx {env['scatterptx']}"
            f"{', commit ' + env['commit'] if 'commit' in env else ''}, {env['date']}.", "",
            f"Command: `{env['command']}`", ""]


def timing_table(sections):
    """Every precision's step times and scatter-kernel shares, one table."""
    return table(TIMING_HEADER, [row for precision, times, kernels, _ in sections
                                 for row in timing_markdown(precision, times, kernels)])


def scatter_kernel_tables(kernels, digits):
    """The scatter kernels' microseconds per step by op, then each mode's
    largest kernels."""
    by_op = "scatter_us_per_step_by_op"
    ops = sorted(set(kernels[TORCH][by_op]) | set(kernels[SCATTERPTX][by_op]))
    lines = ["", "Scatter kernels per step by op (us):", "",
             table(["op", TORCH, SCATTERPTX],
                   [[op] + [f"{kernels[mode][by_op].get(op, 0):.{digits}f}" for mode in MODES] for op in ops]), ""]
    for mode in MODES:
        lines += [f"Largest scatter kernels, {mode} (us per step):", "",
                  table(["kernel", "us"], [[f"`{name[:100]}`", f"{us:.{digits}f}"] for name, us in
                                           kernels[mode]["scatter_us_per_step_by_kernel"].items()]), ""]
    return lines


def routes_seen(figures):
    """The calls the switch saw, as the report's last lines."""
    return ["Calls the switch saw (routed, or left to torch and why):", "", "```",
            json.dumps(figures["routes_seen"], indent=1), "```", ""]

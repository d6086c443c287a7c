"""Reports of bench/compare.py: JSON (everything raw), markdown tables and a PNG
bar chart. Needs only the standard library (and matplotlib for the PNG)."""

import json
import statistics

OURS_KEYS = ("scatterptx", "scatterptx_streaming", "scatterptx_path_tma", "scatterptx_path_red",
             "scatterptx_path_private", "scatterptx_segmented", "scatterptx_plan",
             "scatterptx_deterministic", "scatterptx_grouped_auto")
# What the default call is held against: every call of ours that takes the
# same inputs and nothing prepared beforehand (a plan's execute has grouped already).
CALL_KEYS = tuple(k for k in OURS_KEYS if k not in ("scatterptx", "scatterptx_plan"))
TORCH_KEYS = ("scatter_add", "index_add", "compiled_scatter_add", "compiled_index_add")
DETERMINISTIC_KEYS = ("scatterptx_torch_deterministic", "torch_deterministic_index_add",
                      "torch_deterministic_scatter_add")
KEYS = OURS_KEYS + TORCH_KEYS + ("segment_reduce", "seed") + DETERMINISTIC_KEYS
HEADERS = {
    "scatterptx": "libscatterptx default call",
    "scatterptx_streaming": "libscatterptx streaming",
    "scatterptx_path_tma": "libscatterptx TMA path",
    "scatterptx_path_red": "libscatterptx RED path",
    "scatterptx_path_private": "libscatterptx private path",
    "default_over_fastest": "default call / fastest other call of ours",
    "scatterptx_segmented": "libscatterptx segmented",
    "scatterptx_plan": "libscatterptx plan execute",
    "scatterptx_deterministic": "libscatterptx deterministic",
    "scatterptx_grouped_auto": "libscatterptx grouped AUTO",
    "plan_build": "plan build",
    "scatter_add": "scatter_add_",
    "index_add": "index_add_",
    "compiled_scatter_add": "compiled scatter_add_",
    "compiled_index_add": "compiled index_add_",
    "best_torch": "best torch",
    "segment_reduce": "segment_reduce (grouped)",
    "seed": "seed",
    "scatterptx_torch_deterministic": "scatterptx.torch.index_add_ deterministic",
    "torch_deterministic_index_add": "index_add_ deterministic",
    "torch_deterministic_scatter_add": "scatter_add_ deterministic",
}


def median_ms(system):
    """The median time of a system result that was timed, else None."""
    if not system or system.get("status") != "ok":
        return None
    times = system.get("timing", {}).get("times_ms") or []
    return statistics.median(times) if times else None


def best_torch(result):
    """(key, median ms) of the fastest correct eager or compiled torch call."""
    best = None
    for key in TORCH_KEYS:
        ms = median_ms(result["systems"].get(key))
        if ms is not None and (best is None or ms < best[1]):
            best = (key, ms)
    return best


def fastest_call(result):
    """(key, median ms) of the fastest correct call of ours other than the default one, else None."""
    timed = [(key, median_ms(result["systems"].get(key))) for key in CALL_KEYS]
    timed = [(key, ms) for key, ms in timed if ms is not None]
    return min(timed, key=lambda kv: kv[1]) if timed else None


def default_over_fastest_cell(result):
    ours, fastest = median_ms(result["systems"].get("scatterptx")), fastest_call(result)
    if ours is None or fastest is None:
        return ""
    return f"{ours / fastest[1]:.3f} ({HEADERS[fastest[0]].removeprefix('libscatterptx ')})"


def fmt_ms(ms):
    if ms is None:
        return ""
    if ms >= 100:
        return f"{ms:,.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    if ms >= 0.1:
        return f"{ms:.3f}"
    return f"{ms:.4f}"


def _status_cell(system):
    if system is None:
        return "not run"
    status = system.get("status")
    if status == "wrong":
        return "**wrong**"
    return {"unsupported": "unsupported", "error": "error", "skipped": "skipped"}.get(status, status)


def _present_keys(results):
    return [k for k in KEYS if any(k in r.get("systems", {}) for r in results)]


def time_cell(result, key, ours):
    system = result["systems"].get(key)
    ms = median_ms(system)
    if ms is None:
        return _status_cell(system)
    text = fmt_ms(ms)
    if key not in OURS_KEYS and ours:
        text += f" ({ms / ours:.2f}x)"
    note = system.get("timing", {}).get("note")
    return f"{text} {note}" if note else text


def plan_build_cell(result):
    """The median plan build time of the plan-execute system, if it got that far."""
    build = (result["systems"].get("scatterptx_plan") or {}).get("plan_build")
    return fmt_ms(build["median_ms"]) if build else ""


def speedup_cell(result, key, best):
    """best torch time / this system's time (> 1: this system is faster)."""
    ms = median_ms(result["systems"].get(key))
    if ms is None:
        return _status_cell(result["systems"].get(key))
    return f"{best[1] / ms:.2f}x" if best else ""


def _floor_ms(result, which):
    return (result.get("floor_ms") or {}).get(which)


def percent_cell(result, key):
    ms = median_ms(result["systems"].get(key))
    ideal, no_reuse = _floor_ms(result, "ideal"), _floor_ms(result, "no_reuse")
    if ms is None or not ideal:
        return _status_cell(result["systems"].get(key)) if ms is None else ""
    return f"{100 * ideal / ms:.1f} / {100 * no_reuse / ms:.1f}"


def accuracy_cell(result, key):
    system = result["systems"].get(key)
    c = (system or {}).get("check")
    if not c:
        return _status_cell(system)
    text = f"{c['rel_err']:.2g} ({c['max_err_over_tol']:.2g})"
    if not c["ok"]:
        text = f"**wrong** {text}, {c['violations']} over"
    return text


def _row_head(result):
    s = result["scenario"]
    return [s["name"], s["shape_text"], str(s["cols"]), s["dtype"]]


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(meta, results):
    keys = _present_keys(results)
    device = meta.get("device", {})
    seed = meta.get("seed", {})
    lines = [
        f"# libscatterptx against torch and the seed: {device.get('name', '?')}, {meta.get('date', '?')}",
        "",
        f"- GPU: {device.get('name', '?')} (sm_{device.get('cc', '?')}, {device.get('sms', '?')} SMs, "
        f"{device.get('l2_bytes', 0) / 2**20:.0f} MiB L2, {device.get('memory_bytes', 0) / 2**30:.0f} GiB), "
        f"driver {device.get('driver', '?')}",
        f"- torch {meta.get('torch', '?')} (CUDA {meta.get('torch_cuda', '?')}), Python {meta.get('python', '?')}",
        f"- libscatterptx: {meta.get('scatterptx', {}).get('library') or meta.get('scatterptx', {}).get('error')}",
        f"- seed: {seed.get('status', '?')}" + (f" ({seed['versions']})" if seed.get("versions") else ""),
        f"- Timing: CUDA events around one call, {meta.get('warmup')} warm-ups, median of "
        f"{meta.get('runs')} runs, L2 flushed (a {meta.get('flush_bytes', 0) / 2**20:.0f} MiB buffer "
        "zeroed) before every run"
        + (f", then a GPU sleep of {meta['head_start_cycles']} cycles (untimed) while the host queues the call"
           if meta.get("head_start_cycles") else ", no head start")
        + "; index int64; every system's result checked against a float64 "
        f"reference before it is timed: {meta.get('error_bound', '')}",
        "- Floors: ideal = M·row + M·8 + 2·T·row bytes, no-reuse = M·row + M·8 + 2·M·row bytes, "
        "each over the copy bandwidth measured in the same scenario (a device copy of src, "
        "bytes read + written); T = distinct targets of the C++ bench's index (scatterptx-bench --describe)",
        "- segment_reduce: index sorted, src reordered and lengths counted once outside the "
        "timing; timed: segment_reduce + out[targets] += sums",
        "- libscatterptx default call: scatter_add_ (grouping where it wins, its workspace from torch's "
        "caching allocator); streaming: scatter_add_ with grouping off; TMA, RED and private path: "
        "the same with that path forced; segmented and deterministic: "
        "scatter_add_grouped (grouping and sums in one call) into a workspace allocated outside the "
        "timing; plan execute: a segmented Plan built outside the timing, executed; plan build: that "
        "Plan's creation (grouping the index, synchronising), median of 5 after a warm-up, into a "
        "preallocated workspace, CUDA events, L2 flushed",
        f"- Commit: `{meta.get('commit', 'unknown')}`",
        f"- Command: `{meta.get('command', '')}`",
        "",
        "## Times (ms); in brackets: peer time / libscatterptx default call's time (> 1: libscatterptx is faster)",
        "",
    ]
    header = ["scenario", "M -> T", "D", "dtype", "copy", "ideal floor", "no-reuse floor"]
    ours_keys = [k for k in keys if k in OURS_KEYS]
    torch_keys = [k for k in keys if k in TORCH_KEYS]
    tail_keys = [k for k in keys if k not in OURS_KEYS + TORCH_KEYS]
    with_build = "scatterptx_plan" in ours_keys
    with_gap = "scatterptx" in ours_keys and any(k in CALL_KEYS for k in ours_keys)
    header += [HEADERS[k] for k in ours_keys] + ([HEADERS["plan_build"]] if with_build else [])
    header += [HEADERS["default_over_fastest"]] if with_gap else []
    header += [HEADERS[k] for k in torch_keys] + [HEADERS["best_torch"]] + [HEADERS[k] for k in tail_keys]
    rows = []
    for r in results:
        if r.get("error"):
            rows.append(_row_head(r) + [f"error: {r['error']}"] + [""] * (len(header) - 5))
            continue
        ours = median_ms(r["systems"].get("scatterptx"))
        row = _row_head(r) + [fmt_ms(r.get("copy_ms")), fmt_ms(_floor_ms(r, "ideal")),
                              fmt_ms(_floor_ms(r, "no_reuse"))]
        row += [time_cell(r, k, ours) for k in ours_keys] + ([plan_build_cell(r)] if with_build else [])
        row += [default_over_fastest_cell(r)] if with_gap else []
        row += [time_cell(r, k, ours) for k in torch_keys]
        best = best_torch(r)
        if best is None:
            row.append("")
        else:
            text = fmt_ms(best[1]) + (f" ({best[1] / ours:.2f}x)" if ours else "")
            row.append(f"{text} {HEADERS[best[0]]}")
        row += [time_cell(r, k, ours) for k in tail_keys]
        rows.append(row)
    lines += [_table(header, rows), ""]

    if ours_keys:
        lines += ["## Speed-up over the best torch call: best torch time / libscatterptx time "
                  "(> 1: libscatterptx is faster)", ""]
        header = ["scenario", "dtype", HEADERS["best_torch"]] + [HEADERS[k] for k in ours_keys]
        rows = []
        for r in results:
            if r.get("error"):
                continue
            best = best_torch(r)
            head = f"{fmt_ms(best[1])} {HEADERS[best[0]]}" if best else "none correct"
            rows.append([r["scenario"]["name"], r["scenario"]["dtype"], head] +
                        [speedup_cell(r, k, best) for k in ours_keys])
        lines += [_table(header, rows), ""]

    lines += ["## % of the ideal floor / % of the no-reuse floor", ""]
    header = ["scenario", "dtype"] + [HEADERS[k] for k in keys]
    rows = [[r["scenario"]["name"], r["scenario"]["dtype"]] + [percent_cell(r, k) for k in keys]
            for r in results if not r.get("error")]
    lines += [_table(header, rows), ""]

    lines += ["## Accuracy: ||got - ref|| / ||ref|| (in brackets: max |got - ref| / bound)", ""]
    rows = [[r["scenario"]["name"], r["scenario"]["dtype"]] + [accuracy_cell(r, k) for k in keys]
            for r in results if not r.get("error")]
    lines += [_table(header, rows), ""]

    notes = []
    if seed.get("error"):
        notes.append(f"- seed not run: {seed['error']}")
    for r in results:
        for key, system in r.get("systems", {}).items():
            reason = system.get("reason") or system.get("error")
            if reason and system.get("status") in ("unsupported", "error", "wrong"):
                notes.append(f"- {r['scenario']['name']}, {HEADERS.get(key, key)}: "
                             f"{system['status']}: {reason}")
    if notes:
        lines += ["## Notes", ""] + _dedupe(notes) + [""]
    return "\n".join(lines)


def _dedupe(items):
    seen, out = set(), []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def write_json(path, meta, results):
    with open(path, "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1, default=str)
        f.write("\n")


def write_png(path, meta, results):
    """Grouped bars of GB/s against the ideal floor's bytes; returns an error text or None."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001 - the chart is optional
        return f"{type(e).__name__}: {e}"
    shown = [r for r in results if not r.get("error")]
    if not shown:
        return "no scenario to draw"
    keys = _present_keys(shown)
    n, width = len(shown), 0.8 / max(1, len(keys))
    fig, ax = plt.subplots(figsize=(max(12.0, 0.85 * n + 3), 7.5))
    for j, key in enumerate(keys):
        xs, ys = [], []
        for i, r in enumerate(shown):
            ms = median_ms(r["systems"].get(key))
            if ms:
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(r["floors_bytes"]["ideal"] / (ms * 1e-3) / 1e9)
        ax.bar(xs, ys, width, label=HEADERS[key])
    bw = [(i, r["copy_bandwidth_gbs"]) for i, r in enumerate(shown) if r.get("copy_bandwidth_gbs")]
    if bw:
        xs = [x for i, _ in bw for x in (i - 0.45, i + 0.45)]
        ys = [y for _, y in bw for y in (y, y)]
        ax.plot(xs, ys, "k-", linewidth=1.5, label="copy bandwidth")
    ax.set_yscale("log")
    ax.set_ylabel("GB/s (ideal floor bytes / time)")
    ax.set_xticks(range(n))
    ax.set_xticklabels([r["scenario"]["name"] for r in shown], rotation=40, ha="right", fontsize=8)
    ax.set_xlim(-0.6, n - 0.4)
    ax.grid(axis="y", which="both", alpha=0.3)
    device = meta.get("device", {}).get("name", "?")
    ax.set_title(f"out[index[i], :] += src[i, :] on {device}, torch {meta.get('torch', '?')}, "
                 f"{meta.get('date', '')}")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.005, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None

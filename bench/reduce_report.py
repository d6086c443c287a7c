"""The reports of bench/reduce_compare.py: each case's comparisons and bars
from its systems' records, the log line of a system, and the markdown and
JSON files."""

import os

import compare_report
from reduce_cases import OURS, TORCH

MIB, GIB = 2**20, 2**30
BAR_TARGET = 1.05
SPEEDUP_TARGET = 2.0
REPORT_NAME = "reduce-compare"


# ---------------------------------------------------------------------------
# Comparisons and bars

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
        entry["target_met"] = target_met(setup.target, entry) if r["status"] == "ok" else False
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

#!/usr/bin/env python3
"""Summarises a scripts/sanitize.sh run: per tool, and launch coverage.

Reads LOG_DIR/<tool>/shard-<i>.{log,sanitizer.log,status,trace} for each
tool: the GoogleTest output (tests run, passed, failed, skipped; a test that
started and never ended), compute-sanitizer's own log (its ERROR SUMMARY,
racecheck's hazard counts, any message of the tool itself), the shard's
exit status and seconds, and the entry names its launches appended
(SCATTERPTX_TRACE_LAUNCHES). Compares the entries launched, over every tool
and shard, with the variants of the kernel manifest the generator wrote
(kernel_manifest.hpp), and names those never launched. A tool's run split
over several commands (LOG_DIR/<tool>/shards holds its shard count) fails
while any shard has left no logs.

Writes LOG_DIR/summary.txt (and prints it). Exit status: 0 when every shard
finished with status 0, no tool reported an error or hazard and every
variant was launched; 1 when something failed; 2 when all is clean but some
variant was never launched. Standard library only.

Usage: sanitize_report.py LOG_DIR --manifest KERNEL_MANIFEST_HPP [--ptx-dir DIR]
                          [--tools "memcheck racecheck ..."] [--error-exitcode N]
"""
import argparse
import collections
import glob
import os
import re
import sys

# GoogleTest's per-test lines; the end-of-run lists repeat the names without
# the "(N ms)" that these carry.
RUN_LINE = re.compile(r"^\[ RUN      \] (\S+)")
ENDED_LINE = re.compile(r"^\[ {2}(FAILED|SKIPPED) {1,2}\] (\S+?)(?:,.*)? \(\d+ ms\)$|^\[ {7}OK \] (\S+) \(\d+ ms\)$")
# compute-sanitizer (2025.3) ends memcheck's, synccheck's and initcheck's
# logs with "========= ERROR SUMMARY: 3 errors", racecheck's with
# "========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)".
ERROR_SUMMARY = re.compile(r"^=+ ERROR SUMMARY: (\d+) errors?")
RACECHECK_SUMMARY = re.compile(r"^=+ RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
TOOL_MESSAGE = re.compile(r"^=+ (Internal Sanitizer Error|Error|Warning): .*")
# The manifest's table: one line per variant, {"name", KernelFamily::..., ..., "entry", ...}.
MANIFEST_ROW = re.compile(r'^\s*\{"([^"]+)",\s*KernelFamily::\w+,.*?"([^"]+)"')

TIMEOUT_STATUS = 124


def parse_manifest(path):
    """The variants' entry names, in the manifest's order."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            match = MANIFEST_ROW.match(line)
            if match:
                entries.append(match.group(2))
    return entries


def parse_test_log(text):
    """Counts of GoogleTest results, and any test that started but never ended."""
    started, ended = [], set()
    counts = collections.Counter()
    for line in text.splitlines():
        run = RUN_LINE.match(line)
        if run:
            started.append(run.group(1))
            continue
        end = ENDED_LINE.match(line)
        if end:
            if end.group(1):
                counts[end.group(1).lower()] += 1
                ended.add(end.group(2))
            else:
                counts["passed"] += 1
                ended.add(end.group(3))
    unfinished = [name for name in started if name not in ended]
    return {"run": len(started), "passed": counts["passed"], "failed": counts["failed"],
            "skipped": counts["skipped"], "unfinished": unfinished}


def parse_sanitizer_log(text):
    """compute-sanitizer's findings: errors, racecheck hazards, its own messages."""
    result = {"errors": 0, "hazards": 0, "hazard_errors": 0, "hazard_warnings": 0,
              "summaries": 0, "messages": []}
    for line in text.splitlines():
        summary = ERROR_SUMMARY.match(line)
        if summary:
            result["errors"] += int(summary.group(1))
            result["summaries"] += 1
            continue
        race = RACECHECK_SUMMARY.match(line)
        if race:
            result["hazards"] += int(race.group(1))
            result["hazard_errors"] += int(race.group(2))
            result["hazard_warnings"] += int(race.group(3))
            result["summaries"] += 1
            continue
        if TOOL_MESSAGE.match(line):
            result["messages"].append(line.strip("= ").strip())
    return result


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return None


def read_status(path):
    """(exit status, seconds) of a shard, or (None, None) when it left none."""
    text = read(path)
    if not text or not text.split():
        return None, None
    fields = text.split()
    return int(fields[0]), (int(fields[1]) if len(fields) > 1 else None)


def shard_indices(tool_dir):
    found = set()
    for path in glob.glob(os.path.join(tool_dir, "shard-*.*")):
        match = re.match(r"shard-(\d+)\.", os.path.basename(path))
        if match:
            found.add(int(match.group(1)))
    return sorted(found)


def describe_status(status, error_exitcode):
    if status is None:
        return "no status (never ended?)"
    if status == 0:
        return "0"
    if status == error_exitcode:
        return f"{status} (sanitizer errors)"
    if status == TIMEOUT_STATUS:
        return f"{status} (timed out)"
    if status == 1:
        return f"{status} (test failures)"
    if status > 128:
        return f"{status} (signal {status - 128})"
    return str(status)


def summarise_tool(log_dir, tool, error_exitcode):
    """One tool's totals over its shards, the launches they traced, and what went wrong."""
    tool_dir = os.path.join(log_dir, tool)
    totals = collections.Counter()
    statuses, problems, messages, notes = [], [], [], []
    launches = collections.Counter()
    slowest = 0
    shards = shard_indices(tool_dir)
    if not shards:
        problems.append(f"{tool}: no shard logs in {tool_dir}")
    expected = read(os.path.join(tool_dir, "shards"))  # written by sanitize.sh: the run's shard count
    if expected and expected.strip().isdigit():
        missing = sorted(set(range(int(expected))) - set(shards))
        if missing:
            problems.append(f"{tool}: shards {', '.join(map(str, missing))} of {int(expected)} not run yet")
    for shard in shards:
        stem = os.path.join(tool_dir, f"shard-{shard}")
        status, seconds = read_status(stem + ".status")
        statuses.append(status)
        slowest = max(slowest, seconds or 0)
        tests = parse_test_log(read(stem + ".log") or "")
        for key in ("run", "passed", "failed", "skipped"):
            totals[key] += tests[key]
        for name in tests["unfinished"]:
            problems.append(f"{tool} shard {shard}: {name} started and never ended")
        sanitizer_text = read(stem + ".sanitizer.log")
        sanitizer = parse_sanitizer_log(sanitizer_text or "")
        for key in ("errors", "hazards", "hazard_errors", "hazard_warnings"):
            totals[key] += sanitizer[key]
        if sanitizer_text is None or sanitizer["summaries"] == 0:
            problems.append(f"{tool} shard {shard}: no compute-sanitizer summary in {stem}.sanitizer.log")
        messages.extend(f"{tool} shard {shard}: {m}" for m in sanitizer["messages"])
        if status != 0:
            problems.append(f"{tool} shard {shard}: exit status {describe_status(status, error_exitcode)}")
        trace = read(stem + ".trace")
        if trace is None:
            notes.append(f"{tool} shard {shard}: launched no kernel (no {stem}.trace)")
        else:
            launches.update(line for line in trace.splitlines() if line)
    found = totals["errors"] + totals["hazards"]
    return {"tool": tool, "shards": len(shards), "totals": totals, "statuses": statuses, "seconds": slowest,
            "found": found, "problems": problems, "messages": messages, "notes": notes,
            "launches": launches}


def format_table(rows):
    header = ["tool", "shards", "tests run", "passed", "failed", "skipped", "errors", "hazards (err/warn)",
              "exit statuses", "longest shard s"]
    body = []
    for r in rows:
        t = r["totals"]
        hazards = f"{t['hazards']} ({t['hazard_errors']}/{t['hazard_warnings']})" if r["tool"] == "racecheck" else "-"
        statuses = ",".join("?" if s is None else str(s) for s in r["statuses"]) or "-"
        body.append([r["tool"], str(r["shards"]), str(t["run"]), str(t["passed"]), str(t["failed"]),
                     str(t["skipped"]), str(t["errors"]), hazards, statuses, str(r["seconds"])])
    widths = [max(len(row[i]) for row in [header] + body) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in [header] + body]
    return lines


def coverage_lines(entries, launches):
    """Which manifest entries were launched how often, and which never."""
    launched = [e for e in entries if launches.get(e)]
    never = [e for e in entries if not launches.get(e)]
    known = set(entries)
    strangers = {name: n for name, n in launches.items() if name not in known}
    lines = [f"Launch coverage: {len(launched)} of {len(entries)} kernel variants launched under the sanitizers"]
    if never:
        lines.append(f"Never launched ({len(never)}):")
        lines.extend(f"  {e}" for e in never)
    else:
        lines.append("Every variant of the manifest was launched.")
    if strangers:
        # "?": a function the library never noted, i.e. the host tests' scripted launches.
        lines.append("Launches of names not in the manifest: " +
                     ", ".join(f"{name} x{n}" for name, n in sorted(strangers.items())) +
                     " ('?' are the host tests' scripted launches)")
    lines.append("Launches per variant:")
    lines.extend(f"  {launches.get(e, 0):>9}  {e}" for e in entries)
    return lines, never


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log_dir")
    parser.add_argument("--manifest", required=True, help="the build tree's kernels/kernel_manifest.hpp")
    parser.add_argument("--ptx-dir", help="the build tree's kernels/ptx: its files must match the manifest")
    parser.add_argument("--tools", default="memcheck racecheck synccheck initcheck")
    parser.add_argument("--error-exitcode", type=int, default=86)
    args = parser.parse_args(argv)

    entries = parse_manifest(args.manifest)
    problems = []
    if not entries:
        problems.append(f"no variants read from {args.manifest}")
    if args.ptx_dir:
        built = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(args.ptx_dir, "*.ptx")))
        if sorted(entries) != built:
            problems.append(f"the manifest's {len(entries)} entries are not the {len(built)} PTX files of "
                            f"{args.ptx_dir}: the manifest parse is out of date")

    rows = [summarise_tool(args.log_dir, tool, args.error_exitcode) for tool in args.tools.split()]
    launches = collections.Counter()
    for r in rows:
        launches.update(r["launches"])
        problems.extend(r["problems"])
    found = sum(r["found"] for r in rows)
    failed_tests = sum(r["totals"]["failed"] for r in rows)

    lines = format_table(rows)
    lines.append("")
    for r in rows:
        lines.extend(r["notes"])
        lines.extend(r["messages"][:20])
        if len(r["messages"]) > 20:
            lines.append(f"{r['tool']}: {len(r['messages']) - 20} more compute-sanitizer messages in its logs")
    coverage, never = coverage_lines(entries, launches)
    lines.extend(coverage)
    lines.append("")
    if problems:
        lines.append("Problems:")
        lines.extend(f"  {p}" for p in problems)
    if found or failed_tests or problems:
        verdict, status = "FAILED", 1
    elif never:
        verdict, status = "CLEAN, but not every variant was launched", 2
    else:
        verdict, status = "CLEAN", 0
    lines.append(f"Sanitizers {verdict}: {found} errors and hazards, {failed_tests} failed tests, "
                 f"{len(entries) - len(never)}/{len(entries)} variants launched")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.log_dir, "summary.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)
    return status


if __name__ == "__main__":
    sys.exit(main())

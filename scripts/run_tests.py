#!/usr/bin/env python3
"""Runs the ctest suite of a build directory and ends with one summary.

ctest's full output goes to BUILD_DIR/Testing/ctest.log; the terminal gets
each failed test's output in full as it happens, then the counts and, once
per distinct reason, why tests were skipped (GoogleTest's GTEST_SKIP()
message). Exits non-zero when a test failed, ctest itself did, or no test ran.

Usage: run_tests.py BUILD_DIR [extra ctest arguments...]
"""
import collections
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

STATUS_LINE = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: ")
START_LINE = re.compile(r"^\s*Start\s+\d+: ")
FAILED_STATUS = re.compile(r"\*\*\*(Failed|Exception|Timeout|Not Run)")
# GoogleTest prints "file:line: Skipped", the message, then "[  SKIPPED ] name".
SKIP_MESSAGE = re.compile(r": Skipped\n(.*?)\n\[  SKIPPED \]", re.DOTALL)


def run_ctest(build_dir, extra_args, log_path, junit_path):
    """Runs ctest, logging everything and echoing failed tests' output."""
    command = ["ctest", "--test-dir", build_dir, "--output-on-failure",
               "--output-junit", junit_path] + extra_args
    echoing = False
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, errors="replace")
        for line in process.stdout:
            log.write(line)
            if START_LINE.match(line) or STATUS_LINE.match(line):
                echoing = bool(STATUS_LINE.match(line) and FAILED_STATUS.search(line))
            if echoing:
                sys.stdout.write(line)
                sys.stdout.flush()
        return process.wait()


def skip_reason(output):
    match = SKIP_MESSAGE.search(output or "")
    if match:
        return " ".join(part.strip() for part in match.group(1).splitlines() if part.strip())
    # A program skipped through ctest's SKIP_RETURN_CODE says why in its last line.
    lines = [line.strip() for line in (output or "").splitlines() if line.strip()]
    return lines[-1] if lines else "no reason given"


def read_results(junit_path):
    """Names of passed, failed and skipped tests, and the skip reasons."""
    passed, failed, skipped = [], [], []
    reasons = collections.Counter()
    for case in ElementTree.parse(junit_path).getroot().iter("testcase"):
        name = case.get("name")
        if case.find("failure") is not None or case.get("status") == "fail":
            failed.append(name)
        elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            skipped.append(name)
            reasons[skip_reason(case.findtext("system-out"))] += 1
        else:
            passed.append(name)
    return passed, failed, skipped, reasons


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build_dir, extra_args = sys.argv[1], sys.argv[2:]
    testing_dir = os.path.join(os.path.abspath(build_dir), "Testing")
    os.makedirs(testing_dir, exist_ok=True)
    log_path = os.path.join(testing_dir, "ctest.log")
    junit_path = os.path.join(testing_dir, "results.xml")
    if os.path.exists(junit_path):
        os.remove(junit_path)
    print(f"Running the tests in {build_dir} (full log: {os.path.relpath(log_path)})")
    started = time.monotonic()
    ctest_status = run_ctest(build_dir, extra_args, log_path, junit_path)
    seconds = time.monotonic() - started

    if not os.path.exists(junit_path):
        with open(log_path, encoding="utf-8") as log:
            sys.stdout.write("".join(log.readlines()[-20:]))
        print(f"ctest exited {ctest_status} without results.")
        return ctest_status or 1
    passed, failed, skipped, reasons = read_results(junit_path)
    total = len(passed) + len(failed) + len(skipped)
    if failed:
        print("Failed:")
        for name in failed:
            print(f"  {name}")
    # One reason (the usual case: no GPU) fits on the summary line itself.
    skips = f"{len(skipped)} skipped"
    if len(reasons) == 1:
        skips += f" ({next(iter(reasons))})"
    else:
        for text, count in reasons.most_common():
            print(f"{count} skipped: {text}")
    verdict = "FAILED" if failed or ctest_status != 0 or total == 0 else "OK"
    print(f"Tests {verdict}: {len(passed)} passed, {len(failed)} failed, {skips}; "
          f"{total} tests in {seconds:.0f} s")
    if failed:
        return 1
    if total == 0:
        print("No test ran: nothing to call a pass (did CTEST_ARGS select none?)")
        return 1
    return ctest_status


if __name__ == "__main__":
    sys.exit(main())

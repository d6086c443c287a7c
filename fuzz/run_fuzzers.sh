#!/usr/bin/env bash
# Runs every fuzz target for a bounded time, side by side, from the committed
# corpus (read only: new inputs go to a scratch copy), and prints one line a
# target. Exits 1 when a target found something; the input that did it is
# kept under the work directory and named in the line.
# Usage: fuzz/run_fuzzers.sh FUZZER_DIR SECONDS [WORK_DIR]
set -uo pipefail
fuzzers="$1"
seconds="$2"
work="${3:-$fuzzers/run}"
corpus="$(cd "$(dirname "$0")" && pwd)/corpus"
targets=(fuzz_validate fuzz_planners)

rm -rf "$work"
for t in "${targets[@]}"; do
  mkdir -p "$work/$t/new" "$work/$t/found"
  # -rss_limit_mb: each input plans one problem; more memory than this is a finding.
  "$fuzzers/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$work/$t/found/" "$work/$t/new" "$corpus/$t" >"$work/$t/log" 2>&1 &
done
wait

status=0
for t in "${targets[@]}"; do
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t/log")
  found=$(ls "$work/$t/found")
  if [ -n "$found" ]; then
    echo "$t: FOUND after ${runs:-?} runs: $work/$t/found/$found (log: $work/$t/log)"
    grep -m 5 -E "ERROR|runtime error|violated|unclear failure" "$work/$t/log"
    status=1
  elif [ -z "$runs" ]; then
    echo "$t: did not finish (log: $work/$t/log)"
    tail -n 5 "$work/$t/log"
    status=1
  else
    echo "$t: no finding in $runs runs over ${seconds} s"
  fi
done
exit $status

#!/usr/bin/env bash
# On a machine with an sm_90+ GPU: build, then run the GoogleTest suite
# (build/test/scatterptx_tests) under each of compute-sanitizer's tools,
# memcheck, racecheck, synccheck and initcheck, each with --error-exitcode.
# Each tool's run is split into shards (GTEST_TOTAL_SHARDS and
# GTEST_SHARD_INDEX), and shards of every tool run side by side, as many at
# once as SANITIZE_JOBS. Every launch is traced (SCATTERPTX_TRACE_LAUNCHES),
# and the summary names the manifest's kernel variants that no sanitized run
# launched (scripts/sanitize_report.py).
#
# Usage: scripts/sanitize.sh LOG_DIR        (or: make sanitize [SANITIZE_LOG_DIR=...])
# Writes LOG_DIR/build.log, LOG_DIR/<tool>/shard-<i>.log (the tests' output),
# shard-<i>.sanitizer.log (compute-sanitizer's), shard-<i>.trace (entries
# launched), shard-<i>.status (exit status, seconds), and LOG_DIR/summary.txt:
# per tool the tests run, passed, failed and skipped, the errors (racecheck:
# hazards) found, each shard's exit status, then the launch coverage.
#
# Environment (defaults in brackets):
#   SANITIZE_TOOLS    the tools to run ["memcheck racecheck synccheck initcheck"]
#   SANITIZE_SHARDS   shards per tool [4]; racecheck, about 3.5 times slower
#                     than the others, takes twice as many
#   SANITIZE_SHARDS_<tool>  shards of that tool alone (SANITIZE_SHARDS_racecheck=12)
#   SANITIZE_JOBS     shard processes at once, over all tools [nproc]
#   SANITIZE_FILTER   a gtest filter of the tests to run ["*"]; the large
#                     tests below are left out whatever it says
#   SANITIZE_TIMEOUT  seconds a shard may run before it is stopped (status 124) [7200]
#   SANITIZE_SHARD_INDICES  FIRST-LAST: only these shards of each tool (those
#                     past a tool's count skipped), keeping the other shards'
#                     logs in LOG_DIR, so that a long run can be split over
#                     several commands; the summary names shards not yet run [all]
#   SANITIZE_ARGS     more compute-sanitizer arguments, for every tool []
#   BUILD_DIR         the build directory [build]
#   SANITIZE_NO_BUILD set to 1 to use the build as it is
# Exit status: 0 clean (no error or hazard, no failed test, every shard ended
# with 0, every variant launched); 1 something failed; 2 clean, but some
# variant was never launched.
set -uo pipefail
log_dir=${1:?usage: scripts/sanitize.sh LOG_DIR}
mkdir -p "$log_dir"
log_dir=$(cd "$log_dir" && pwd)
cd "$(dirname "$0")/.."
command -v compute-sanitizer >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"

tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
shards=${SANITIZE_SHARDS:-4}
jobs_at_once=${SANITIZE_JOBS:-$(nproc 2>/dev/null || echo 4)}
timeout_s=${SANITIZE_TIMEOUT:-7200}
build_dir=${BUILD_DIR:-build}
error_exitcode=86  # not a status the tests or timeout(1) use

# Left out of every tool: the tests that allocate many GiB. The sanitizers
# track every byte the kernels touch, and these add little that the smaller
# tests do not check: what they are for is 64-bit offsets.
large_tests=(
  # test/gpu_large_test.cpp: src of 2^21 + 5 rows of 2080 bytes (4.4 GB) into
  # an out of 2.2 GB, every path and both index types.
  LargeScatterAdd.SourceOver4GiBAnd2Pow31Elements
  # test/gpu_large_test.cpp: an out of 2^27 + 17 rows of 32 bytes (4.3 GB).
  LargeScatterAdd.OutPast2Pow31ElementsWithIndicesNearTheEnd
  # test/gpu_grouped_plan_test.cpp: ten plans in turn, each with a workspace
  # of 15% of the free device memory.
  GroupedPlanDestroy.FreesItsWorkspaceFromAThreadWithNoContext
)
excluded=$(IFS=:; echo "${large_tests[*]}")
filter="${SANITIZE_FILTER:-*}-${excluded}"

command -v compute-sanitizer >/dev/null || { echo "sanitize.sh: compute-sanitizer not found (PATH: $PATH)"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$log_dir/gpu.txt"
compute-sanitizer --version 2>&1 | tail -n 1 | tee -a "$log_dir/gpu.txt"
git rev-parse --short HEAD 2>/dev/null | tee -a "$log_dir/gpu.txt"

if [ "${SANITIZE_NO_BUILD:-0}" != 1 ]; then
  if ! make BUILD_DIR="$build_dir" >"$log_dir/build.log" 2>&1; then
    tail -n 60 "$log_dir/build.log"
    echo "sanitize.sh: BUILD FAILED"
    exit 1
  fi
fi
tests="$build_dir/test/scatterptx_tests"
manifest="$build_dir/kernels/kernel_manifest.hpp"
[ -x "$tests" ] || { echo "sanitize.sh: no $tests (are the tests on? see $build_dir/tests_off.txt)"; exit 1; }

# How many shards a tool's run is split into.
shards_of() {
  local override="SANITIZE_SHARDS_$1"
  if [ -n "${!override:-}" ]; then
    echo "${!override}"
  elif [ "$1" = racecheck ]; then
    echo $((2 * shards))
  else
    echo "$shards"
  fi
}

# One shard of one tool: its own logs, trace and status.
run_shard() {
  local tool=$1 shard=$2 total=$3
  local stem="$log_dir/$tool/shard-$shard"
  local started=$SECONDS
  GTEST_TOTAL_SHARDS=$total GTEST_SHARD_INDEX=$shard SCATTERPTX_TRACE_LAUNCHES="$stem.trace" \
    timeout --kill-after=60 "$timeout_s" \
    compute-sanitizer --tool "$tool" --error-exitcode "$error_exitcode" --log-file "$stem.sanitizer.log" \
      ${SANITIZE_ARGS:-} "$tests" --gtest_filter="$filter" >"$stem.log" 2>&1
  local status=$?
  echo "$status $((SECONDS - started))" >"$stem.status"
  echo "  $tool shard $shard: exit $status after $((SECONDS - started)) s"
}

selected=$("$tests" --gtest_list_tests --gtest_filter="$filter" | grep -c '^  ')
echo "sanitize.sh: $selected tests (filter $filter); tools: $(for tool in $tools; do printf '%s (%s shards) ' "$tool" "$(shards_of "$tool")"; done); $jobs_at_once processes at once"

# The shards this run does: all, or SANITIZE_SHARD_INDICES's range.
first_shard=0
last_shard=-1  # -1: to each tool's last
if [ -n "${SANITIZE_SHARD_INDICES:-}" ]; then
  if ! [[ "$SANITIZE_SHARD_INDICES" =~ ^([0-9]+)-([0-9]+)$ ]]; then
    echo "sanitize.sh: SANITIZE_SHARD_INDICES=$SANITIZE_SHARD_INDICES is not FIRST-LAST"
    exit 1
  fi
  first_shard=${BASH_REMATCH[1]}
  last_shard=${BASH_REMATCH[2]}
fi

# racecheck's shards go first: they take longest.
started=$SECONDS
for tool in $(printf '%s\n' $tools | grep -x racecheck) $(printf '%s\n' $tools | grep -vx racecheck); do
  total=$(shards_of "$tool")
  if [ -z "${SANITIZE_SHARD_INDICES:-}" ]; then
    rm -rf "${log_dir:?}/$tool"  # no shard of an earlier run left to count
  elif [ -f "$log_dir/$tool/shards" ] && [ "$(cat "$log_dir/$tool/shards")" != "$total" ]; then
    echo "sanitize.sh: $log_dir/$tool holds a run of $(cat "$log_dir/$tool/shards") shards, this one has $total"
    exit 1
  fi
  mkdir -p "$log_dir/$tool"
  echo "$total" >"$log_dir/$tool/shards"
  last=$((last_shard < 0 || last_shard >= total ? total - 1 : last_shard))
  for ((shard = first_shard; shard <= last; ++shard)); do
    rm -f "$log_dir/$tool/shard-$shard".*  # this shard's earlier logs
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n; done
    run_shard "$tool" "$shard" "$total" &
  done
done
wait
echo "sanitize.sh: every shard ended after $((SECONDS - started)) s"

python3 scripts/sanitize_report.py "$log_dir" --manifest "$manifest" --ptx-dir "$build_dir/kernels/ptx" \
  --tools "$tools" --error-exitcode "$error_exitcode"

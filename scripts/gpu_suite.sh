#!/usr/bin/env bash
# On a machine with an sm_90+ GPU: build, run the whole test suite, dump the
# TMA kernel's SASS, run the memory checker (and, when asked, the shared-memory
# race checker) on a subset and the benchmark.
# Usage: scripts/gpu_suite.sh LOG_DIR [bench arguments...]
# Writes LOG_DIR/{build,tests,sass,sanitizer,bench}.log and LOG_DIR/bench.json.
set -uo pipefail
log_dir=${1:?usage: scripts/gpu_suite.sh LOG_DIR [bench arguments...]}
shift
mkdir -p "$log_dir"
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$log_dir/gpu.txt"
git rev-parse --short HEAD 2>/dev/null | tee -a "$log_dir/gpu.txt"

if ! make BUILD_DIR=build >"$log_dir/build.log" 2>&1; then
  tail -n 60 "$log_dir/build.log"
  echo "BUILD FAILED"
  exit 1
fi
echo "build ok"

ctest --test-dir build --output-on-failure --timeout 300 ${SCATTERPTX_CTEST_ARGS:-} >"$log_dir/tests.log" 2>&1
tests_rc=$?
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|\*\*\*Exception|Not Run" "$log_dir/tests.log" | tail -n 40
echo "ctest exit $tests_rc"

cuobjdump -sass build/kernels/cubin/row_tma_reduce_f32_i64.cubin >"$log_dir/sass.log" 2>&1
grep -cE "UTMALDG|UBLKRED|SYNCS" "$log_dir/sass.log" | sed 's/^/TMA-related SASS instructions: /'

if [ -z "${SCATTERPTX_SKIP_SANITIZER:-}" ]; then
  compute-sanitizer --tool memcheck --error-exitcode 9 build/test/scatterptx_tests \
    --gtest_filter="${SCATTERPTX_SANITIZER_FILTER:-*IndexError*:*SingleSourceRow*:*PaddedOutRowStride*:*EveryRowToOneTarget*}" >"$log_dir/sanitizer.log" 2>&1
  echo "compute-sanitizer memcheck exit $? ($(grep -c 'Invalid' "$log_dir/sanitizer.log") invalid accesses)"
  tail -n 3 "$log_dir/sanitizer.log"
fi

if [ -n "${SCATTERPTX_RACECHECK_FILTER:-}" ]; then
  compute-sanitizer --tool racecheck --error-exitcode 9 build/test/scatterptx_tests \
    --gtest_filter="$SCATTERPTX_RACECHECK_FILTER" >"$log_dir/racecheck.log" 2>&1
  echo "compute-sanitizer racecheck exit $?"
  tail -n 3 "$log_dir/racecheck.log"
fi

if [ -z "${SCATTERPTX_SKIP_BENCH:-}" ]; then
  build/bench/scatterptx-bench --json "$log_dir/bench.json" "$@" >"$log_dir/bench.log" 2>&1
  echo "bench exit $?"
  tail -n 40 "$log_dir/bench.log"
fi
exit $tests_rc

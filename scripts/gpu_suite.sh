#!/usr/bin/env bash
# On a machine with an sm_90+ GPU: build, then run every test side by side so
# that the whole suite fits a few minutes: the GoogleTest binary in shards
# (one process per shard, so each loads the kernels once), the other ctest
# entries, the Python tests a module per process, and the 1000-call stress.
# Then the TMA kernel's SASS, memcheck on a subset and the benchmark.
# Usage: scripts/gpu_suite.sh LOG_DIR [bench arguments...]
# Writes LOG_DIR/build.log, suite-<i>.log, ctest.log, python-<module>.log,
# stress.log, sass.log, sanitizer.log, bench.log and bench.json.
#
# Environment (defaults in brackets):
#   SUITE_SHARDS               GoogleTest shards at once [nproc]
#   PYTHON                     the Python that holds torch [python3]
#   SCATTERPTX_SKIP_PYTHON     set: no Python tests
#   SCATTERPTX_SKIP_STRESS     set: no stress run
#   SCATTERPTX_SKIP_SANITIZER  set: no memcheck subset
#   SCATTERPTX_SANITIZER_FILTER  the memcheck subset's gtest filter
#   SCATTERPTX_RACECHECK_FILTER  set: racecheck on that filter too
#   SCATTERPTX_SKIP_BENCH      set: no benchmark
# Exit status: 0 when every test passed, else 1: a build, test, sanitizer or
# bench failure, TMA instructions missing from the TMA kernel's SASS, or no
# usable sm_90+ GPU (for the tests, and for torch when the Python tests run),
# where the GPU tests would only skip.
set -uo pipefail
log_dir=${1:?usage: scripts/gpu_suite.sh LOG_DIR [bench arguments...]}
shift
mkdir -p "$log_dir"
log_dir=$(cd "$log_dir" && pwd)
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
shards=${SUITE_SHARDS:-$(nproc 2>/dev/null || echo 8)}
python=${PYTHON:-python3}
failed=0

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$log_dir/gpu.txt"
echo "${SCATTERPTX_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}" | tee -a "$log_dir/gpu.txt"

if ! make BUILD_DIR=build >"$log_dir/build.log" 2>&1; then
  tail -n 60 "$log_dir/build.log"
  echo "BUILD FAILED"
  exit 1
fi
echo "build ok"
export SCATTERPTX_LIBRARY="$PWD/build/libscatterptx.so"

# Without a usable GPU every GPU test skips: that is no pass. The bench's
# smallest run answers 2 where there is none (the Makefile's BENCH_EXIT_NO_GPU).
build/bench/scatterptx-bench --shape uniform:4096:512:64:f32 --runs 1 --warmup 0 >"$log_dir/gpu_probe.log" 2>&1
probe=$?
if [ "$probe" = 2 ]; then
  tail -n 3 "$log_dir/gpu_probe.log"
  echo "gpu_suite: FAILED: no usable sm_90+ GPU, the GPU tests would only skip"
  exit 1
fi
[ "$probe" = 0 ] || { echo "GPU probe (a small bench run) FAILED, exit $probe"; failed=1; }
python_tests=${SCATTERPTX_SKIP_PYTHON:+skip}
if [ -z "$python_tests" ] && ! "$python" -c 'import sys, torch
sys.exit(0 if torch.cuda.is_available() and torch.cuda.get_device_capability(0)[0] >= 9 else 1)' 2>/dev/null; then
  echo "$python has no torch with an sm_90+ GPU: the Python GPU tests would only skip, so they do not run" \
       "and the suite FAILS (PYTHON=..., or SCATTERPTX_SKIP_PYTHON=1); the rest runs"
  python_tests=skip
  failed=1
fi

# The GoogleTest suite, sharded.
for ((shard = 0; shard < shards; ++shard)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard build/test/scatterptx_tests >"$log_dir/suite-$shard.log" 2>&1 &
done
suite_failed=0
for job in $(jobs -p); do wait "$job" || suite_failed=1; done
passed=$(cat "$log_dir"/suite-*.log | grep -E '^\[  PASSED  \] [0-9]+' | awk '{s += $4} END {print s + 0}')
skipped=$(cat "$log_dir"/suite-*.log | grep -E '^\[  SKIPPED \] [0-9]+ test' | awk '{s += $4} END {print s + 0}')
echo "GoogleTest suite, $shards shards: $passed passed, $skipped skipped"
grep -h '^\[  FAILED  \] [A-Za-z]' "$log_dir"/suite-*.log | sort -u
[ "$suite_failed" = 0 ] || { echo "GoogleTest suite FAILED"; failed=1; }

# The ctest entries that are not GoogleTest cases (no '.' in their names),
# python_binding aside where the Python tests run below.
others=$(ctest --test-dir build -N | sed -n 's/^ *Test *#[0-9]*: //p' | grep -v '\.' |
  { if [ -z "$python_tests" ]; then grep -vx python_binding; else cat; fi; } | paste -sd '|')
if [ -n "$others" ]; then
  ctest --test-dir build -R "^($others)\$" --output-on-failure --timeout 600 >"$log_dir/ctest.log" 2>&1 ||
    { echo "ctest entries FAILED"; failed=1; }
  grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|\*\*\*Exception|Not Run" "$log_dir/ctest.log" | tail -n 20
fi

# The Python tests, a module per process.
if [ -z "$python_tests" ]; then
  for module in python/tests/test_*.py; do
    name=$(basename "$module" .py)
    (cd python && "$python" -m unittest discover -s tests -p "$name.py" >"$log_dir/python-$name.log" 2>&1) &
  done
  python_failed=0
  for job in $(jobs -p); do wait "$job" || python_failed=1; done
  for log in "$log_dir"/python-*.log; do
    echo "$(basename "$log" .log): $(grep -E '^(Ran|OK|FAILED)' "$log" | paste -sd ' ')"
  done
  [ "$python_failed" = 0 ] || { echo "Python tests FAILED"; failed=1; }
fi

if [ -z "${SCATTERPTX_SKIP_STRESS:-}" ]; then
  build/test/scatterptx_stress --calls 1000 --threads 4 --streams 4 >"$log_dir/stress.log" 2>&1 ||
    { echo "stress FAILED"; failed=1; }
  tail -n 1 "$log_dir/stress.log"
fi

cuobjdump -sass build/kernels/cubin/row_tma_reduce_f32_i64.cubin >"$log_dir/sass.log" 2>&1 ||
  { echo "cuobjdump FAILED"; failed=1; }
tma_instructions=$(grep -cE "UTMALDG|UBLKRED|SYNCS" "$log_dir/sass.log")
echo "TMA-related SASS instructions: $tma_instructions"
[ "$tma_instructions" -gt 0 ] || { echo "the TMA kernel's SASS has no TMA instruction: FAILED"; failed=1; }

if [ -z "${SCATTERPTX_SKIP_SANITIZER:-}" ]; then
  compute-sanitizer --tool memcheck --error-exitcode 9 build/test/scatterptx_tests \
    --gtest_filter="${SCATTERPTX_SANITIZER_FILTER:-*IndexError*:*SingleSourceRow*:*PaddedOutRowStride*:*EveryRowToOneTarget*}" >"$log_dir/sanitizer.log" 2>&1
  memcheck=$?
  echo "compute-sanitizer memcheck exit $memcheck ($(grep -c 'Invalid' "$log_dir/sanitizer.log") invalid accesses)"
  tail -n 3 "$log_dir/sanitizer.log"
  [ "$memcheck" = 0 ] || { echo "memcheck FAILED"; failed=1; }
fi

if [ -n "${SCATTERPTX_RACECHECK_FILTER:-}" ]; then
  compute-sanitizer --tool racecheck --error-exitcode 9 build/test/scatterptx_tests \
    --gtest_filter="$SCATTERPTX_RACECHECK_FILTER" >"$log_dir/racecheck.log" 2>&1
  racecheck=$?
  echo "compute-sanitizer racecheck exit $racecheck"
  tail -n 3 "$log_dir/racecheck.log"
  [ "$racecheck" = 0 ] || { echo "racecheck FAILED"; failed=1; }
fi

if [ -z "${SCATTERPTX_SKIP_BENCH:-}" ]; then
  build/bench/scatterptx-bench --json "$log_dir/bench.json" "$@" >"$log_dir/bench.log" 2>&1
  bench=$?
  echo "bench exit $bench"
  tail -n 40 "$log_dir/bench.log"
  [ "$bench" = 0 ] || { echo "bench FAILED"; failed=1; }
fi
[ "$failed" = 0 ] && echo "gpu_suite: every test passed" || echo "gpu_suite: FAILED"
exit "$failed"

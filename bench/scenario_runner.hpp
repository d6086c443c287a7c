// Running one scenario end to end: inputs, plan, correctness check, the copy
// and scatter_add timings, and the optional schedule sweep.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "floors.hpp"
#include "inputs.hpp"
#include "reference_check.hpp"
#include "scenarios.hpp"
#include "schedule_sweep.hpp"
#include "timing.hpp"

namespace scatterptx_bench {

struct RunSettings {
  TimingConfig timing;
  scatterptx_path path = SCATTERPTX_PATH_AUTO;
  bool has_schedule = false;
  scatterptx_schedule schedule{};
  bool sweep = false;
  scatterptx_path sweep_path = SCATTERPTX_PATH_TMA;
  int64_t check_rows = 4096;       // src rows the correctness check runs on
  int64_t sweep_check_rows = 512;  // fewer per sweep point: there are ~200 of them
};

struct ScenarioResult {
  Scenario scenario;
  int64_t row_bytes = 0;
  int64_t index_bytes = sizeof(int64_t);
  int64_t distinct_targets = 0;
  scatterptx_path path = SCATTERPTX_PATH_AUTO;
  bool has_schedule = false;
  scatterptx_schedule schedule{};
  std::string plan;         // scatterptx_describe_plan's text
  bool skipped = false;     // the forced path or schedule is not eligible here
  std::string skip_reason;
  CheckResult check;
  TimingResult copy;
  TimingResult scatter;
  FloorBytes floors;
  double copy_bytes_moved = 0;
  FloorComparison comparison;
  std::vector<SweepPoint> sweep;
};

class ScenarioRunner {
 public:
  ScenarioRunner(CUstream stream, L2Flusher& flusher, EventTimer& timer, InputCache& inputs,
                 const RunSettings& settings)
      : stream_(stream), flusher_(flusher), timer_(timer), inputs_(inputs), settings_(settings) {}

  // Throws BenchError when a driver or library call fails unexpectedly.
  ScenarioResult run(const Scenario& scenario);

 private:
  std::vector<SweepPoint> sweep(const scatterptx_scatter_add_args& base, const ProblemInputs& in);

  CUstream stream_;
  L2Flusher& flusher_;
  EventTimer& timer_;
  InputCache& inputs_;
  RunSettings settings_;
};

}  // namespace scatterptx_bench

// Running one scenario end to end: inputs, the copy, then each selected
// mode: streaming (plan, correctness check, scatter_add timing, the
// optional schedule sweep and the optional timing of every forced path) and the grouped modes (grouped_runner.hpp).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

#include "execution_mode.hpp"
#include "floors.hpp"
#include "grouped_runner.hpp"
#include "inputs.hpp"
#include "path_choice.hpp"
#include "reference_check.hpp"
#include "scenarios.hpp"
#include "schedule_sweep.hpp"
#include "timing.hpp"

namespace scatterptx_bench {

struct RunSettings {
  TimingConfig timing;
  TimingConfig plan_build{1, 5};  // grouped modes: warm-up and timed plan builds
  std::vector<ExecutionMode> modes = default_execution_modes();
  scatterptx_path path = SCATTERPTX_PATH_AUTO;  // streaming only, like the schedule
  bool has_schedule = false;
  scatterptx_schedule schedule{};
  bool sweep = false;
  scatterptx_path sweep_path = SCATTERPTX_PATH_TMA;
  bool path_choice = false;        // also time every forced path (streaming)
  int64_t check_rows = 4096;       // src rows the correctness check runs on
  int64_t sweep_check_rows = 512;  // fewer per sweep point: there are ~300 of them
  // ...and at most about this many elements: the float64 reference runs on
  // the CPU, and with few_idx's 640000-column rows a 192-point sweep did not
  // finish in 120 s.
  int64_t sweep_check_elements = int64_t{1} << 20;
};

struct ScenarioResult {
  Scenario scenario;
  int64_t row_bytes = 0;
  int64_t index_bytes = sizeof(int64_t);
  int64_t distinct_targets = 0;
  TimingResult copy;
  FloorBytes floors;
  double copy_bytes_moved = 0;
  // Streaming: scatterptx_scatter_add, when --mode selects it.
  bool streaming_selected = false;
  scatterptx_path path = SCATTERPTX_PATH_AUTO;
  bool has_schedule = false;
  scatterptx_schedule schedule{};
  std::string plan;         // scatterptx_describe_plan's text
  bool skipped = false;     // the forced path or schedule is not eligible here
  std::string skip_reason;
  CheckResult check;
  TimingResult scatter;
  FloorComparison comparison;
  std::vector<SweepPoint> sweep;
  std::vector<PathPoint> paths;  // --path-choice: each forced path
  // The grouped modes --mode selects, in its order.
  std::vector<GroupedResult> grouped;
};

// Every selected execution that ran was correct (a skipped forced path is not
// a failure, a refused grouped mode is).
bool scenario_correct(const ScenarioResult& result);

class ScenarioRunner {
 public:
  ScenarioRunner(CUstream stream, L2Flusher& flusher, EventTimer& timer, InputCache& inputs,
                 const RunSettings& settings)
      : stream_(stream),
        flusher_(flusher),
        timer_(timer),
        inputs_(inputs),
        settings_(settings),
        grouped_(stream, flusher, timer, GroupedSettings{settings.timing, settings.plan_build, settings.check_rows}) {}

  // Throws BenchError when a driver or library call fails unexpectedly.
  ScenarioResult run(const Scenario& scenario);

 private:
  void run_streaming(const scatterptx_scatter_add_args& base, const ProblemInputs& in, ScenarioResult* result);
  std::vector<SweepPoint> sweep(const scatterptx_scatter_add_args& base, const ProblemInputs& in);
  std::vector<PathPoint> time_paths(const scatterptx_scatter_add_args& base, const ProblemInputs& in);

  CUstream stream_;
  L2Flusher& flusher_;
  EventTimer& timer_;
  InputCache& inputs_;
  RunSettings settings_;
  GroupedRunner grouped_;
};

}  // namespace scatterptx_bench

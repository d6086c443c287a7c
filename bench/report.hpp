// What the benchmark prints (device header, results table, grouped table,
// sweep table) and the JSON file with everything in the tables plus the raw
// run times.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "device.hpp"
#include "scenario_runner.hpp"

namespace scatterptx_bench {

// How the measurements were taken, echoed in the header and the JSON.
struct RunDescription {
  int timed_runs = 0;
  int warmup_runs = 0;
  size_t flush_bytes = 0;
  int64_t head_start_cycles = 0;
  bool quick = false;
  bool sweep = false;
  bool path_choice = false;
  std::vector<ExecutionMode> modes;
  TimingConfig plan_build;
};

void print_device_header(std::ostream& stream, const DeviceInfo& device,
                         const RunDescription& run);

// One row per scenario: the copy and the streaming mode; the plan text
// last, as it is the widest.
void print_results_table(std::ostream& stream, const std::vector<ScenarioResult>& results);

// One row per scenario and grouped mode: plan build, single-shot and plan
// execute against the streaming time and the ideal floor.
void print_grouped_table(std::ostream& stream, const std::vector<ScenarioResult>& results);

// One row per swept scenario: the best schedule against the default.
void print_sweep_table(std::ostream& stream, const std::vector<ScenarioResult>& results);

// --path-choice: per scenario, the planner's path and time against the
// fastest forced path (auto / best: 1.00 when the planner picked it).
void print_path_choice_table(std::ostream& stream, const std::vector<ScenarioResult>& results);

// The streaming mode's "ok", "WRONG", "skipped" (a forced path that does
// not apply) or "not run" (not selected).
const char* check_label(const ScenarioResult& result);

// "ok", "WRONG (1-shot)", "WRONG (plan)", "WRONG (both)" or "REFUSED".
const char* check_label(const GroupedResult& result);

// Throws BenchError when the file cannot be written.
void write_json_report(const std::string& path, const DeviceInfo& device, const RunDescription& run,
                       const std::vector<ScenarioResult>& results, bool all_correct);

}  // namespace scatterptx_bench

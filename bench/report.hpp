// What the benchmark prints (device header, results table, sweep table) and
// the JSON file with everything in the tables plus the raw run times.
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
  bool quick = false;
  bool sweep = false;
};

void print_device_header(std::ostream& stream, const DeviceInfo& device,
                         const RunDescription& run);

// One row per scenario; the plan text last, as it is the widest.
void print_results_table(std::ostream& stream, const std::vector<ScenarioResult>& results);

// One row per swept scenario: the best schedule against the default.
void print_sweep_table(std::ostream& stream, const std::vector<ScenarioResult>& results);

// "ok", "WRONG" or "skipped".
const char* check_label(const ScenarioResult& result);

// Throws BenchError when the file cannot be written.
void write_json_report(const std::string& path, const DeviceInfo& device, const RunDescription& run,
                       const std::vector<ScenarioResult>& results, bool all_correct);

}  // namespace scatterptx_bench

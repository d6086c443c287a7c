// scatterptx-bench: times scatterptx_scatter_add and the grouped executions
// (--mode) against a device-to-device copy of src and against the floors of
// bench/floors.hpp.
//
// stdout: the device header first, the results table (then the grouped and
// sweep tables) at the end. stderr: progress while the scenarios run.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "describe.hpp"
#include "device.hpp"
#include "driver.hpp"
#include "inputs.hpp"
#include "options.hpp"
#include "report.hpp"
#include "scenario_runner.hpp"
#include "scenarios.hpp"
#include "timing.hpp"

namespace scatterptx_bench {
namespace {

// The suite (or the --shape cases) narrowed by --scenario.
bool select_scenarios(const Options& options, std::vector<Scenario>* selected, std::string* error) {
  std::vector<Scenario> candidates;
  if (options.shapes.empty()) {
    candidates = default_scenarios(options.quick);
  } else {
    for (const std::string& shape : options.shapes) {
      Scenario scenario;
      if (!parse_shape(shape, &scenario, error)) return false;
      candidates.push_back(scenario);
    }
  }
  for (const Scenario& scenario : candidates) {
    bool matches = options.scenario_filters.empty();
    for (const std::string& filter : options.scenario_filters) {
      matches = matches || scenario.name.find(filter) != std::string::npos;
    }
    if (matches) selected->push_back(scenario);
  }
  if (selected->empty()) {
    *error = "no scenario matches --scenario; the names are:";
    for (const Scenario& scenario : candidates) *error += "\n  " + scenario.name;
    return false;
  }
  return true;
}

RunSettings run_settings(const Options& options) {
  RunSettings settings;
  settings.timing.warmup_runs = options.warmup_runs;
  settings.timing.timed_runs = options.runs;
  settings.modes = options.modes;
  settings.path = options.path;
  settings.has_schedule = options.schedule_given;
  settings.schedule = options.schedule;
  settings.sweep = options.sweep;
  settings.path_choice = options.path_choice;
  // Schedules only steer the TMA path, so a sweep forces it unless told otherwise.
  settings.sweep_path = options.path_given ? options.path : SCATTERPTX_PATH_TMA;
  return settings;
}

int report_no_gpu(const std::string& why) {
  std::printf("scatterptx-bench: no CUDA GPU available: %s\n", why.c_str());
  return kExitNoGpu;
}

int run_benchmark(const Options& options, const std::vector<Scenario>& scenarios) {
  const DeviceProbe probe = probe_device(options.device);
  if (!probe.usable) return report_no_gpu(probe.why_not);
  DeviceInfo device = probe.info;

  // Everything holding device memory is declared after the context, so it
  // is freed before the context is released.
  PrimaryContext context(device.device);
  const scatterptx_status prepared = scatterptx_prepare();
  if (prepared == SCATTERPTX_ERROR_NO_DRIVER || prepared == SCATTERPTX_ERROR_UNSUPPORTED_DEVICE) {
    return report_no_gpu(describe_scatterptx_failure(prepared, "scatterptx_prepare"));
  }
  check_scatterptx(prepared, "scatterptx_prepare");
  size_t free_bytes = 0;
  check_driver(driver().cuMemGetInfo(&free_bytes, &device.total_memory_bytes), "cuMemGetInfo");

  const RunSettings settings = run_settings(options);
  // Blocking: the synchronous host copies then wait for the work queued on it.
  Stream stream(CU_STREAM_DEFAULT);
  L2Flusher flusher(device.l2_bytes);
  EventTimer timer(options.head_start_cycles);
  InputCache inputs(settings.check_rows);
  ScenarioRunner runner(stream.get(), flusher, timer, inputs, settings);

  RunDescription description;
  description.timed_runs = options.runs;
  description.warmup_runs = options.warmup_runs;
  description.flush_bytes = flusher.bytes();
  description.head_start_cycles = options.head_start_cycles;
  description.quick = options.quick;
  description.sweep = options.sweep;
  description.path_choice = options.path_choice;
  description.modes = options.modes;
  description.plan_build = settings.plan_build;
  print_device_header(std::cout, device, description);

  std::vector<ScenarioResult> results;
  bool all_correct = true;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    std::fprintf(stderr, "scatterptx-bench: [%zu/%zu] %s\n", i + 1, scenarios.size(),
                 scenarios[i].name.c_str());
    try {
      results.push_back(runner.run(scenarios[i]));
    } catch (const std::runtime_error&) {  // BenchError or DriverError
      // Show what was measured before the failure, then fail.
      print_results_table(std::cout, results);
      print_grouped_table(std::cout, results);
      throw;
    }
    all_correct = all_correct && scenario_correct(results.back());
  }

  print_results_table(std::cout, results);
  print_grouped_table(std::cout, results);
  print_sweep_table(std::cout, results);
  print_path_choice_table(std::cout, results);
  if (!options.json_path.empty()) {
    write_json_report(options.json_path, device, description, results, all_correct);
    std::fprintf(stderr, "scatterptx-bench: wrote %s\n", options.json_path.c_str());
  }
  if (!all_correct) {
    std::cout << "\nscatterptx-bench: some results are WRONG (see the check column)\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace
}  // namespace scatterptx_bench

int main(int argc, char** argv) {
  using namespace scatterptx_bench;
  Options options;
  std::string error;
  if (!parse_options(argc, argv, &options, &error)) {
    std::fprintf(stderr, "scatterptx-bench: %s\n\n%s", error.c_str(), usage_text().c_str());
    return kExitUsage;
  }
  if (options.help) {
    std::printf("%s", usage_text().c_str());
    return kExitOk;
  }
  std::vector<Scenario> scenarios;
  if (!select_scenarios(options, &scenarios, &error)) {
    std::fprintf(stderr, "scatterptx-bench: %s\n", error.c_str());
    return kExitUsage;
  }
  try {
    if (!options.describe_path.empty()) {
      write_description(options.describe_path, scenarios, options.quick, options.head_start_cycles,
                        options.index_dir);
      return kExitOk;
    }
    return run_benchmark(options, scenarios);
  } catch (const std::exception& failure) {
    std::fflush(stdout);
    std::fprintf(stderr, "scatterptx-bench: error: %s\n", failure.what());
    return kExitFailure;
  }
}

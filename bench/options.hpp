// The command line of scatterptx-bench.
#pragma once

#include <string>
#include <vector>

#include "execution_mode.hpp"
#include "gpu_sleep.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx_bench {

struct Options {
  std::string json_path;                      // --json FILE; empty: no JSON
  std::string describe_path;                  // --describe FILE: write, time nothing
  std::string index_dir;                      // --index-dir DIR: --describe writes the indices there
  std::vector<std::string> scenario_filters;  // --scenario NAME (substring; any may match)
  std::vector<std::string> shapes;            // --shape kind:M:T:D:dtype; replaces the suite
  std::vector<ExecutionMode> modes = default_execution_modes();  // --mode (repeatable)
  scatterptx_path path = SCATTERPTX_PATH_AUTO;
  bool path_given = false;                    // --path was on the command line
  scatterptx_schedule schedule{};             // --chunk-bytes/--stages/--warps/--ctas-per-sm
  bool schedule_given = false;
  int runs = 20;                              // timed runs per measurement
  int warmup_runs = 3;
  int64_t head_start_cycles = kDefaultHeadStartCycles;  // --head-start-cycles; 0: none
  bool quick = false;
  bool sweep = false;
  bool path_choice = false;                   // --path-choice
  int device = 0;
  bool help = false;
};

// Fills *options, or returns false with *error saying what is wrong.
bool parse_options(int argc, char** argv, Options* options, std::string* error);

// The --help text.
std::string usage_text();

const char* path_name(scatterptx_path path);

// Exit statuses.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;   // a call failed or a result was wrong
constexpr int kExitNoGpu = 2;     // no driver, no device, or a GPU below sm_90
constexpr int kExitUsage = 64;    // bad command line

}  // namespace scatterptx_bench

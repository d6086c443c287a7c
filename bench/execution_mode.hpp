// What scatterptx-bench times on each scenario (--mode): the streaming
// scatter_add and the grouped executions of the "Grouped execution" API.
#pragma once

#include <string>
#include <vector>

#include "scatterptx/scatterptx.h"

namespace scatterptx_bench {

enum class ExecutionMode {
  streaming,      // scatterptx_scatter_add: every source row reduced into out on its own
  segmented,      // grouped by target: scatter_add_grouped, plan build and plan execute
  deterministic,  // segmented with bitwise reproducible results
  grouped_auto,   // the grouped API with mode AUTO: whichever mode the planner picks
};

// "streaming", "segmented", "deterministic", "auto".
const char* execution_mode_name(ExecutionMode mode);

// Adds the modes text names ("all": every mode) to *modes, keeping them in
// the enum's order without repeats; false when text names none.
bool add_execution_modes(const std::string& text, std::vector<ExecutionMode>* modes);

// Without --mode: streaming and segmented, so the default report shows both.
std::vector<ExecutionMode> default_execution_modes();

bool has_mode(const std::vector<ExecutionMode>& modes, ExecutionMode mode);

// The group options of a grouped mode.
scatterptx_group_options group_options(ExecutionMode mode);

}  // namespace scatterptx_bench

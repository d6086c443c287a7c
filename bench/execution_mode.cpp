#include "execution_mode.hpp"

#include <algorithm>

namespace scatterptx_bench {
namespace {

constexpr ExecutionMode kAllModes[] = {ExecutionMode::streaming, ExecutionMode::segmented,
                                       ExecutionMode::deterministic, ExecutionMode::grouped_auto};

}  // namespace

const char* execution_mode_name(ExecutionMode mode) {
  switch (mode) {
    case ExecutionMode::streaming: return "streaming";
    case ExecutionMode::segmented: return "segmented";
    case ExecutionMode::deterministic: return "deterministic";
    case ExecutionMode::grouped_auto: return "auto";
  }
  return "?";
}

bool add_execution_modes(const std::string& text, std::vector<ExecutionMode>* modes) {
  bool named = false;
  for (ExecutionMode mode : kAllModes) {
    if (text == "all" || text == execution_mode_name(mode)) {
      modes->push_back(mode);
      named = true;
    }
  }
  std::sort(modes->begin(), modes->end());
  modes->erase(std::unique(modes->begin(), modes->end()), modes->end());
  return named;
}

std::vector<ExecutionMode> default_execution_modes() {
  return {ExecutionMode::streaming, ExecutionMode::segmented};
}

bool has_mode(const std::vector<ExecutionMode>& modes, ExecutionMode mode) {
  return std::find(modes.begin(), modes.end(), mode) != modes.end();
}

scatterptx_group_options group_options(ExecutionMode mode) {
  scatterptx_group_options options;
  scatterptx_group_options_init(&options);
  switch (mode) {
    case ExecutionMode::streaming: options.mode = SCATTERPTX_MODE_STREAMING; break;
    case ExecutionMode::segmented: options.mode = SCATTERPTX_MODE_SEGMENTED; break;
    case ExecutionMode::deterministic:
      options.mode = SCATTERPTX_MODE_SEGMENTED;
      options.deterministic = 1;
      break;
    case ExecutionMode::grouped_auto: options.mode = SCATTERPTX_MODE_AUTO; break;
  }
  return options;
}

}  // namespace scatterptx_bench

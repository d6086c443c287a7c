#include "execution_mode.hpp"

#include <algorithm>

namespace scatterptx_bench {
namespace {

constexpr ExecutionMode kAllModes[] = {ExecutionMode::streaming, ExecutionMode::segmented,
                                       ExecutionMode::deterministic};

}  // namespace

const char* execution_mode_name(ExecutionMode mode) {
  switch (mode) {
    case ExecutionMode::streaming: return "streaming";
    case ExecutionMode::segmented: return "segmented";
    case ExecutionMode::deterministic: return "deterministic";
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
  options.mode = mode == ExecutionMode::streaming ? SCATTERPTX_MODE_STREAMING : SCATTERPTX_MODE_SEGMENTED;
  options.deterministic = mode == ExecutionMode::deterministic ? 1 : 0;
  return options;
}

}  // namespace scatterptx_bench

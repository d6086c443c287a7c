#include "path_choice.hpp"

namespace scatterptx_bench {

const std::vector<scatterptx_path>& forced_paths() {
  static const std::vector<scatterptx_path> paths = {SCATTERPTX_PATH_TMA, SCATTERPTX_PATH_RED,
                                                     SCATTERPTX_PATH_PRIVATE};
  return paths;
}

std::string plan_path_name(const std::string& plan) {
  const std::string prefix = "path=";
  if (plan.compare(0, prefix.size(), prefix) != 0) return "";
  const size_t end = plan.find(' ', prefix.size());
  return plan.substr(prefix.size(), end == std::string::npos ? std::string::npos : end - prefix.size());
}

}  // namespace scatterptx_bench

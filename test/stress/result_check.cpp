#include "result_check.hpp"

#include <algorithm>

namespace scatterptx_stress {
namespace {

std::string first_guard_damage(const std::vector<unsigned char>& guard, const char* where) {
  const auto bad = std::find_if(guard.begin(), guard.end(), [](unsigned char b) { return b != kGuardByte; });
  if (bad == guard.end()) return "";
  return std::string("guard ") + where + " out changed at byte " + std::to_string(bad - guard.begin()) + " of " +
         std::to_string(guard.size());
}

// The first differing byte of two equal-sized matrices as "out[r, c]".
std::string first_difference(const scatterptx_test::HostMatrix& a, const scatterptx_test::HostMatrix& b) {
  if (a.bytes.size() != b.bytes.size()) return "the sizes differ";
  const auto bad = std::mismatch(a.bytes.begin(), a.bytes.end(), b.bytes.begin());
  if (bad.first == a.bytes.end()) return "";
  const size_t byte = static_cast<size_t>(bad.first - a.bytes.begin());
  const size_t row_bytes = a.row_bytes();
  return "out[" + std::to_string(byte / row_bytes) + ", " +
         std::to_string(byte % row_bytes / scatterptx_test::element_bytes(a.dtype)) + "] differs";
}

}  // namespace

std::string guard_damage(const DownloadedOut& got) {
  const std::string before = first_guard_damage(got.guard_before, "before");
  return before.empty() ? first_guard_damage(got.guard_after, "after") : before;
}

std::string check_result(const CaseInputs& inputs, const DownloadedOut& got, int repeats) {
  const scatterptx_test::CheckReport report =
      scatterptx_test::check_scatter_add(inputs.out0, inputs.src, inputs.index, got.values, repeats);
  if (!report.ok) return report.summary();
  return guard_damage(got);
}

std::string check_untouched(const CaseInputs& inputs, const DownloadedOut& got) {
  const std::string difference = first_difference(inputs.out0, got.values);
  if (!difference.empty()) return "a refused call wrote to out: " + difference;
  return guard_damage(got);
}

std::string check_identical(const DownloadedOut& a, const DownloadedOut& b) {
  const std::string difference = first_difference(a.values, b.values);
  return difference.empty() ? "" : "deterministic results differ: " + difference;
}

}  // namespace scatterptx_stress

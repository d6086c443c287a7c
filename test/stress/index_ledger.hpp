// The RECORD-mode index-error record of one context, seen from outside:
// every bad source position a launch was given (noted before the launch)
// and every answer scatterptx_take_index_error gave. Takes race the
// launches, so no single take's answer is known; but each answer is the
// smallest of some launches' bad positions, and none may be lost, so:
// every answer is a noted position, and the smallest answer of all (a last
// take follows the last launch) is the smallest position noted.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace scatterptx_stress {

class IndexLedger {
 public:
  // Before the launch that holds them.
  void expect(const std::vector<int64_t>& bad_positions);
  // A take's answer (-1: none recorded).
  void taken(int64_t position);
  // "" when the answers agree with the launches, else what is wrong.
  std::string verdict() const;
  int64_t takes() const;
  int64_t answers_with_position() const;

 private:
  mutable std::mutex mutex_;
  std::set<int64_t> expected_;
  std::vector<int64_t> strays_;  // answers no launch was given
  int64_t smallest_taken_ = -1;
  int64_t takes_ = 0;
  int64_t answers_with_position_ = 0;
};

}  // namespace scatterptx_stress

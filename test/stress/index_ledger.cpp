#include "index_ledger.hpp"

namespace scatterptx_stress {

void IndexLedger::expect(const std::vector<int64_t>& bad_positions) {
  std::lock_guard<std::mutex> lock(mutex_);
  expected_.insert(bad_positions.begin(), bad_positions.end());
}

void IndexLedger::taken(int64_t position) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++takes_;
  if (position < 0) return;
  ++answers_with_position_;
  // Checked here, not at the end: a position noted later cannot excuse it,
  // since it is noted before its launch.
  if (expected_.count(position) == 0 && strays_.size() < 8) strays_.push_back(position);
  if (smallest_taken_ < 0 || position < smallest_taken_) smallest_taken_ = position;
}

std::string IndexLedger::verdict() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!strays_.empty()) {
    std::string list;
    for (int64_t p : strays_) list += " " + std::to_string(p);
    return "take_index_error answered position(s)" + list + ", which no RECORD launch had as a bad index";
  }
  const int64_t smallest_expected = expected_.empty() ? -1 : *expected_.begin();
  if (smallest_taken_ != smallest_expected) {
    return "the smallest bad position of all RECORD launches was " + std::to_string(smallest_expected) +
           " but the takes' smallest answer was " + std::to_string(smallest_taken_) + " (a record was lost)";
  }
  return "";
}

int64_t IndexLedger::takes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return takes_;
}

int64_t IndexLedger::answers_with_position() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return answers_with_position_;
}

}  // namespace scatterptx_stress

#include "failure_log.hpp"

namespace scatterptx_stress {

void FailureLog::add(Failure failure) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++count_;
  if (first_.size() < kept_) first_.push_back(std::move(failure));
}

std::vector<Failure> FailureLog::first() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return first_;
}

std::string format_failure(const Failure& failure, uint64_t seed) {
  std::string text = "FAILED " + failure.description + "\n";
  for (const std::string& message : failure.messages) text += "  - " + message + "\n";
  if (failure.call >= 0) {
    text += "  replay: scatterptx_stress --seed " + std::to_string(seed) + " --replay " +
            std::to_string(failure.call) + "\n";
  }
  return text;
}

}  // namespace scatterptx_stress

// The run's failures, from every thread: counted, the first few kept in full
// to be printed with a line that replays them.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace scatterptx_stress {

struct Failure {
  int64_t call = -1;         // -1: not one call's (a thread, a take, the ledger, memory)
  std::string description;   // the case, or what ran
  std::vector<std::string> messages;
};

class FailureLog {
 public:
  explicit FailureLog(size_t kept = 5) : kept_(kept) {}
  void add(Failure failure);
  int64_t count() const { return count_.load(); }
  // The first ones, in the order they were added.
  std::vector<Failure> first() const;

 private:
  size_t kept_;
  mutable std::mutex mutex_;
  std::vector<Failure> first_;
  std::atomic<int64_t> count_{0};
};

// The failure as printed: its description, each message indented, and for a
// call the command line that replays it alone.
std::string format_failure(const Failure& failure, uint64_t seed);

}  // namespace scatterptx_stress

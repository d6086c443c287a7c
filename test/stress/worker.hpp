// One host thread's share of a run: streams of its own in each context, and
// up to one call in flight per stream. A stream's call is collected and
// checked when the stream comes round again (or at the end), so the GPU
// runs the other streams' calls while this thread draws inputs and checks.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "failure_log.hpp"
#include "gpu_setup.hpp"
#include "run_shared.hpp"
#include "stress_call.hpp"

namespace scatterptx_stress {

constexpr uint64_t kNoCall = UINT64_MAX;

class Worker {
 public:
  Worker(int id, int streams_per_context, uint64_t seed, const StressContexts& contexts, RunShared& shared,
         FailureLog& failures);

  // Runs every call next() hands out (case_for_call of the seed), then waits
  // for and checks the ones in flight. Creates its streams first and
  // destroys them last. Never throws: its own failures go to the log.
  void run(const std::function<bool(uint64_t* call)>& next);

  // The call this thread is starting or checking, kNoCall when none: for a
  // hang report.
  uint64_t current_call() const { return current_call_.load(); }

 private:
  struct Slot {
    int context = 0;
    CUstream stream = nullptr;
    std::unique_ptr<StressCall> call;
  };

  void create_streams();
  void destroy_streams();
  void retire(Slot& slot);
  void fail(const std::string& what);

  int id_;
  int streams_;
  uint64_t seed_;
  const StressContexts& contexts_;
  RunShared& shared_;
  FailureLog& failures_;
  std::vector<Slot> slots_;  // context-major: slots_[context * streams_ + k]
  uint64_t turns_[kContexts] = {};
  std::atomic<uint64_t> current_call_{kNoCall};
};

}  // namespace scatterptx_stress

#include "worker.hpp"

#include <exception>
#include <utility>

#include "gpu_resources.hpp"

namespace scatterptx_stress {

using scatterptx_testing::check_driver;
using scatterptx_testing::driver;

Worker::Worker(int id, int streams_per_context, uint64_t seed, const StressContexts& contexts, RunShared& shared,
               FailureLog& failures)
    : id_(id), streams_(streams_per_context), seed_(seed), contexts_(contexts), shared_(shared), failures_(failures) {}

void Worker::fail(const std::string& what) {
  failures_.add({-1, "thread " + std::to_string(id_), {what}});
}

// Streams are made and destroyed, and a failed call's leftovers freed, under
// the gate like every other driver call: no capture is under way meanwhile.
void Worker::create_streams() {
  GateCall gate(shared_.gate);
  slots_.resize(static_cast<size_t>(kContexts * streams_));
  for (size_t k = 0; k < slots_.size(); ++k) {
    Slot& slot = slots_[k];
    slot.context = static_cast<int>(k) / streams_;
    contexts_.make_current(slot.context);
    check_driver(driver().cuStreamCreate(&slot.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
}

void Worker::destroy_streams() {
  GateCall gate(shared_.gate);
  for (Slot& slot : slots_) {
    if (slot.stream == nullptr) continue;
    try {
      contexts_.make_current(slot.context);
      check_driver(driver().cuStreamDestroy(std::exchange(slot.stream, nullptr)), "cuStreamDestroy");
    } catch (const std::exception& error) {
      fail(error.what());
    }
  }
  slots_.clear();
}

void Worker::retire(Slot& slot) {
  if (slot.call == nullptr) return;
  std::unique_ptr<StressCall> call = std::move(slot.call);
  const StressCase& c = call->stress_case();
  current_call_ = c.call;
  contexts_.make_current(slot.context);
  call->collect();
  call->verify();
  ++shared_.finished_by_kind[static_cast<int>(c.kind)];
  if (!call->failures().empty()) {
    failures_.add({static_cast<int64_t>(c.call), c.describe(), call->failures()});
  }
  {
    GateCall gate(shared_.gate);
    call.reset();  // frees anything a failed step left, in the call's context
  }
  current_call_ = kNoCall;
}

void Worker::run(const std::function<bool(uint64_t* call)>& next) {
  try {
    create_streams();
    uint64_t number = 0;
    while (next(&number)) {
      current_call_ = number;
      const StressCase c = case_for_call(seed_, number);
      const size_t first = static_cast<size_t>(c.context * streams_);
      const uint64_t turn = turns_[c.context]++;
      Slot& slot = slots_[first + turn % streams_];
      Slot& other = slots_[first + (turn + 1) % streams_];
      retire(slot);
      current_call_ = number;
      auto call = std::make_unique<StressCall>(c, shared_);  // host inputs, while the GPU works
      contexts_.make_current(c.context);
      call->start(slot.stream, other.stream);
      slot.call = std::move(call);
    }
  } catch (const std::exception& error) {
    fail(std::string("error: ") + error.what());
  }
  for (Slot& slot : slots_) {
    try {
      retire(slot);
    } catch (const std::exception& error) {
      fail(std::string("error: ") + error.what());
    }
  }
  current_call_ = kNoCall;
  destroy_streams();
}

}  // namespace scatterptx_stress

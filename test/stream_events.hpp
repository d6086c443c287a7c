// Events that order work across streams: stream B waits for what stream A
// has enqueued so far, with no host synchronisation in between.
#pragma once

#include <cuda.h>

namespace scatterptx_test {

// An event without timing, destroyed with its scope.
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  CUevent get() const { return event_; }
  // Captures the work enqueued on stream so far.
  void record(CUstream stream) const;

 private:
  CUevent event_ = nullptr;
};

// Work enqueued on stream after this call starts once event has completed.
void stream_wait_event(CUstream stream, const Event& event);

}  // namespace scatterptx_test

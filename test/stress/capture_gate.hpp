// Keeps every other thread's driver and library calls out of the window in
// which one thread captures a stream: a take (cuCtxSynchronize) or any
// synchronising call during a capture would fail it or be refused. Calls
// share the gate; a capture holds it alone. A waiting capture stops new
// calls from entering, so that a steady stream of calls cannot starve it.
#pragma once

#include <condition_variable>
#include <mutex>

namespace scatterptx_stress {

class CaptureGate {
 public:
  void enter_call();
  void leave_call();
  void begin_capture();
  void end_capture();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int calls_ = 0;
  int captures_waiting_ = 0;
  bool capturing_ = false;
};

// Holds the gate for a call over its scope.
class GateCall {
 public:
  explicit GateCall(CaptureGate& gate) : gate_(gate) { gate_.enter_call(); }
  ~GateCall() { gate_.leave_call(); }
  GateCall(const GateCall&) = delete;
  GateCall& operator=(const GateCall&) = delete;

 private:
  CaptureGate& gate_;
};

// Holds the gate alone for a capture over its scope.
class GateCapture {
 public:
  explicit GateCapture(CaptureGate& gate) : gate_(gate) { gate_.begin_capture(); }
  ~GateCapture() { gate_.end_capture(); }
  GateCapture(const GateCapture&) = delete;
  GateCapture& operator=(const GateCapture&) = delete;

 private:
  CaptureGate& gate_;
};

}  // namespace scatterptx_stress

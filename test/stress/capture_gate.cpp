#include "capture_gate.hpp"

namespace scatterptx_stress {

void CaptureGate::enter_call() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !capturing_ && captures_waiting_ == 0; });
  ++calls_;
}

void CaptureGate::leave_call() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--calls_ == 0) changed_.notify_all();
}

void CaptureGate::begin_capture() {
  std::unique_lock<std::mutex> lock(mutex_);
  ++captures_waiting_;
  changed_.wait(lock, [&] { return !capturing_ && calls_ == 0; });
  --captures_waiting_;
  capturing_ = true;
}

void CaptureGate::end_capture() {
  std::lock_guard<std::mutex> lock(mutex_);
  capturing_ = false;
  changed_.notify_all();
}

}  // namespace scatterptx_stress

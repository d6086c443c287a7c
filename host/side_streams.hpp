// Streams beside a caller's, for work that may run alongside the caller's
// own: a call forks to one after a launch, queues there, and joins back, so
// that the caller's stream orders everything after it as before. One set
// per context, reused, never destroyed (like the context's state).
#pragma once

#include <cuda.h>

#include <deque>
#include <mutex>

#include "driver_api.hpp"

namespace scatterptx::detail {

struct SideLane {
  CUstream stream = nullptr;  // non-blocking
  CUevent forked = nullptr;   // recorded on the caller's stream, waited for on this one
  CUevent joined = nullptr;   // recorded on this one, waited for on the caller's
  CUstream last_caller = nullptr;
  int priority = 0;  // the stream's, which its callers' streams share
  bool taken = false;
};

class SideStreams {
 public:
  // Lanes beyond this many are not made: a call that finds them all taken
  // by other calls queues its work on its own stream instead.
  static constexpr std::size_t kMostLanes = 16;

  // A lane no other call holds, at the priority of `caller`, for queueing
  // beside it: the one last used beside it, else one whose work is done,
  // else a new one, else any free one. nullptr when every such lane is
  // taken, or a new one or the caller's priority cannot be had.
  SideLane* take(const DriverApi& api, CUstream caller);
  void give_back(SideLane* lane);
  std::size_t lanes();

 private:
  std::mutex mutex_;
  std::deque<SideLane> lanes_;  // a deque: taken lanes keep their address
};

// A fork to a side lane after what the caller's stream has queued so far,
// joined back (the caller's stream waits for the lane's work) by join() or
// at the latest by the destructor, which also gives the lane back.
class ForkedLane {
 public:
  // Forks when lane is not null; else stream() is the caller's.
  ForkedLane(const DriverApi& api, SideStreams& owner, SideLane* lane, CUstream caller);
  ForkedLane(const ForkedLane&) = delete;
  ForkedLane& operator=(const ForkedLane&) = delete;
  ~ForkedLane();

  CUstream stream() const { return lane_ != nullptr ? lane_->stream : caller_; }
  // Throws DRIVER when the join cannot be queued, after waiting for the lane.
  void join();

 private:
  CUresult try_join(const char** failed_call);

  const DriverApi& api_;
  SideStreams& owner_;
  SideLane* lane_;
  CUstream caller_;
  bool joined_ = false;
};

}  // namespace scatterptx::detail

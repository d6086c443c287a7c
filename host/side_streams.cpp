#include "side_streams.hpp"

#include "errors.hpp"

namespace scatterptx::detail {
namespace {

// A new lane's stream, at `priority`, and events, or false with nothing kept.
bool make_lane(const DriverApi& api, SideLane& lane, int priority) {
  if (api.cuStreamCreateWithPriority(&lane.stream, CU_STREAM_NON_BLOCKING, priority) != CUDA_SUCCESS) return false;
  lane.priority = priority;
  if (api.cuEventCreate(&lane.forked, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS) {
    if (api.cuEventCreate(&lane.joined, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS) return true;
    (void)api.cuEventDestroy(lane.forked);
  }
  (void)api.cuStreamDestroy(lane.stream);
  return false;
}

}  // namespace

SideLane* SideStreams::take(const DriverApi& api, CUstream caller) {
  // Work moved off the caller's stream keeps that stream's priority.
  int priority = 0;
  if (api.cuStreamGetPriority(caller, &priority) != CUDA_SUCCESS) return nullptr;
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto free_at_priority = [priority](const SideLane& lane) { return !lane.taken && lane.priority == priority; };
  const auto claim = [caller](SideLane& lane) {
    lane.taken = true;
    lane.last_caller = caller;
    return &lane;
  };
  for (SideLane& lane : lanes_) {
    if (free_at_priority(lane) && lane.last_caller == caller) return claim(lane);
  }
  // Another caller's lane only once its work is done: queued behind that
  // work, this call would wait for a stream it has nothing to do with.
  for (SideLane& lane : lanes_) {
    if (free_at_priority(lane) && api.cuStreamQuery(lane.stream) == CUDA_SUCCESS) return claim(lane);
  }
  if (lanes_.size() < kMostLanes) {
    SideLane lane;
    if (make_lane(api, lane, priority)) return claim(lanes_.emplace_back(lane));
  }
  for (SideLane& lane : lanes_) {
    if (free_at_priority(lane)) return claim(lane);
  }
  return nullptr;
}

void SideStreams::give_back(SideLane* lane) {
  const std::lock_guard<std::mutex> lock(mutex_);
  lane->taken = false;
}

std::size_t SideStreams::lanes() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return lanes_.size();
}

ForkedLane::ForkedLane(const DriverApi& api, SideStreams& owner, SideLane* lane, CUstream caller)
    : api_(api), owner_(owner), lane_(lane), caller_(caller) {
  if (lane_ == nullptr) return;
  CUresult result = api_.cuEventRecord(lane_->forked, caller_);
  if (result == CUDA_SUCCESS) result = api_.cuStreamWaitEvent(lane_->stream, lane_->forked, 0);
  if (result == CUDA_SUCCESS) return;
  owner_.give_back(lane_);
  lane_ = nullptr;  // nothing was queued on the lane: the caller's stream takes the work
}

CUresult ForkedLane::try_join(const char** failed_call) {
  joined_ = true;
  *failed_call = "cuEventRecord";
  CUresult result = api_.cuEventRecord(lane_->joined, lane_->stream);
  if (result == CUDA_SUCCESS) {
    *failed_call = "cuStreamWaitEvent";
    result = api_.cuStreamWaitEvent(caller_, lane_->joined, 0);
  }
  // Unjoined, the lane's work could overlap what the caller queues next:
  // it is waited for here instead.
  if (result != CUDA_SUCCESS) (void)api_.cuStreamSynchronize(lane_->stream);
  return result;
}

void ForkedLane::join() {
  if (lane_ == nullptr || joined_) return;
  const char* failed_call = nullptr;
  const CUresult result = try_join(&failed_call);
  if (result != CUDA_SUCCESS) {
    fail(SCATTERPTX_ERROR_DRIVER, describe_driver_error(api_, failed_call, result) +
                                      " joining the side stream back to the caller's: the host waited for the "
                                      "side stream instead, and every launch stays enqueued");
  }
}

ForkedLane::~ForkedLane() {
  if (lane_ == nullptr) return;
  const char* failed_call = nullptr;
  if (!joined_) (void)try_join(&failed_call);  // after a failure being reported
  owner_.give_back(lane_);
}

}  // namespace scatterptx::detail

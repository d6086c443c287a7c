// Host-only: a CHECKED call against a scripted driver. Its launches record a
// bad index in the context's one CHECKED slot, under a lock; when one of its
// launches is refused after others were queued, the call must wait for those
// before it lets the next CHECKED call clear the slot, or that call would
// read the first one's positions as its own.
#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "context_state.hpp"
#include "errors.hpp"
#include "index_errors.hpp"
#include "problem.hpp"

namespace {

using scatterptx::detail::ContextState;
using scatterptx::detail::DriverApi;
using scatterptx::detail::Failure;
using scatterptx::detail::kCheckedModeSlot;
using scatterptx::detail::launch_checked;
using scatterptx::detail::Problem;
using scatterptx::detail::refuse_checked_in_capture;

constexpr CUdeviceptr kRecords = 0x7000;
CUstream const kStream = reinterpret_cast<CUstream>(uintptr_t{0x5700});

std::vector<std::string> calls;  // what the scripted driver and launches saw, in order
CUstreamCaptureStatus capture_status = CU_STREAM_CAPTURE_STATUS_NONE;

CUresult is_capturing(CUstream stream, CUstreamCaptureStatus* status) {
  calls.push_back(stream == kStream ? "cuStreamIsCapturing" : "cuStreamIsCapturing on another stream");
  *status = capture_status;
  return CUDA_SUCCESS;
}
CUresult memset_async(CUdeviceptr address, unsigned char, size_t, CUstream) {
  calls.push_back(address == kRecords + 8 * kCheckedModeSlot ? "clear the CHECKED slot" : "cuMemsetD8Async");
  return CUDA_SUCCESS;
}
CUresult copy_to_host_async(void* destination, CUdeviceptr, size_t, CUstream) {
  calls.push_back("cuMemcpyDtoHAsync");
  *static_cast<uint64_t*>(destination) = UINT64_MAX;  // no bad index
  return CUDA_SUCCESS;
}
CUresult stream_synchronize(CUstream stream) {
  calls.push_back(stream == kStream ? "cuStreamSynchronize" : "cuStreamSynchronize on another stream");
  return CUDA_SUCCESS;
}

DriverApi scripted_api() {
  DriverApi api;  // entry points left null are never reached here
  api.cuStreamIsCapturing = is_capturing;
  api.cuMemsetD8Async = memset_async;
  api.cuMemcpyDtoHAsync = copy_to_host_async;
  api.cuStreamSynchronize = stream_synchronize;
  return api;
}

class IndexCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    calls.clear();
    capture_status = CU_STREAM_CAPTURE_STATUS_NONE;
    state_.index_error_records = kRecords;
    problem_.index_check = SCATTERPTX_INDEX_CHECKED;
  }
  const DriverApi api_ = scripted_api();
  ContextState state_;
  Problem problem_;
};

TEST_F(IndexCheckTest, AClearRunWaitsForItsLaunchesAndReadsTheSlot) {
  launch_checked(api_, state_, problem_, [](CUdeviceptr slot) {
    EXPECT_EQ(slot, kRecords + 8 * kCheckedModeSlot);
    calls.push_back("launch");
  }, kStream);
  EXPECT_EQ(calls, (std::vector<std::string>{"cuStreamIsCapturing", "clear the CHECKED slot", "launch",
                                             "cuMemcpyDtoHAsync", "cuStreamSynchronize"}));
}

TEST_F(IndexCheckTest, ARefusedLaunchAfterOthersWaitsForThemBeforeTheSlotIsFreed) {
  auto enqueue = [](CUdeviceptr) {
    calls.push_back("launch 1");
    scatterptx::detail::fail(SCATTERPTX_ERROR_DRIVER, "launch 2 refused");
  };
  try {
    launch_checked(api_, state_, problem_, enqueue, kStream);
    FAIL() << "the refusal must reach the caller";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_DRIVER);
    EXPECT_EQ(std::string(failure.what()), "launch 2 refused");
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"cuStreamIsCapturing", "clear the CHECKED slot", "launch 1",
                                             "cuStreamSynchronize"}));
  // The slot is free for the next CHECKED call.
  std::unique_lock<std::mutex> next(state_.checked_mode_mutex, std::try_to_lock);
  EXPECT_TRUE(next.owns_lock());
}

TEST_F(IndexCheckTest, ACheckedCallInACaptureIsRefusedBeforeAnythingIsEnqueued) {
  capture_status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  try {
    launch_checked(api_, state_, problem_, [](CUdeviceptr) { calls.push_back("launch"); }, kStream);
    FAIL() << "a CHECKED call cannot wait for its result inside a capture";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(failure.what()).find("being captured"), std::string::npos) << failure.what();
  }
  EXPECT_EQ(calls, std::vector<std::string>{"cuStreamIsCapturing"});
  // The default call asks first, before it takes a workspace; RECORD is never refused.
  EXPECT_THROW(refuse_checked_in_capture(api_, problem_, kStream), Failure);
  problem_.index_check = SCATTERPTX_INDEX_RECORD;
  EXPECT_NO_THROW(refuse_checked_in_capture(api_, problem_, kStream));
}

}  // namespace

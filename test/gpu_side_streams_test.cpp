// The side lanes against the real driver: a lane takes the priority of its
// caller's stream, the null stream's included.
#include <gtest/gtest.h>

#include "gpu_harness.hpp"
#include "side_streams.hpp"

namespace scatterptx_test {
namespace {

using scatterptx::detail::SideLane;
using scatterptx::detail::SideStreams;

int priority_of(CUstream stream) {
  int priority = 0;
  DRIVER_CALL(cuStreamGetPriority, stream, &priority);
  return priority;
}

TEST(SideLanesOnGpu, ALaneRunsAtItsCallersPriority) {
  SCATTERPTX_REQUIRE_GPU();
  CUstream urgent = nullptr;
  DRIVER_CALL(cuStreamCreateWithPriority, &urgent, CU_STREAM_NON_BLOCKING, -100);  // clamped to the greatest
  ASSERT_LT(priority_of(urgent), 0) << "the device has no stream priorities";
  Stream plain;
  SideStreams lanes;
  SideLane* urgent_lane = lanes.take(driver(), urgent);
  SideLane* plain_lane = lanes.take(driver(), plain.get());
  SideLane* null_stream_lane = lanes.take(driver(), nullptr);
  ASSERT_NE(urgent_lane, nullptr);
  ASSERT_NE(plain_lane, nullptr);
  ASSERT_NE(null_stream_lane, nullptr) << "the null stream's priority is readable";
  EXPECT_EQ(priority_of(urgent_lane->stream), priority_of(urgent));
  EXPECT_EQ(priority_of(plain_lane->stream), priority_of(plain.get()));
  EXPECT_EQ(priority_of(null_stream_lane->stream), priority_of(nullptr));
  // The set is never destroyed (as in a context's state): its lanes go here.
  for (const SideLane* lane : {urgent_lane, plain_lane, null_stream_lane}) {
    DRIVER_CALL(cuStreamDestroy, lane->stream);
    DRIVER_CALL(cuEventDestroy, lane->forked);
    DRIVER_CALL(cuEventDestroy, lane->joined);
  }
  DRIVER_CALL(cuStreamDestroy, urgent);
}

}  // namespace
}  // namespace scatterptx_test

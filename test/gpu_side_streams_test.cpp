// The side lanes against the real driver: a lane takes its caller's stream
// priority, and a default call that forks from a high-priority stream adds
// every row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"
#include "side_streams.hpp"

namespace scatterptx_test {
namespace {

using scatterptx::detail::SideLane;
using scatterptx::detail::SideStreams;

// A non-blocking stream at the device's greatest priority (the driver
// clamps the request into its range), destroyed with the object.
class UrgentStream {
 public:
  UrgentStream() { DRIVER_CALL(cuStreamCreateWithPriority, &stream_, CU_STREAM_NON_BLOCKING, -100); }
  ~UrgentStream() { (void)driver().cuStreamDestroy(stream_); }
  UrgentStream(const UrgentStream&) = delete;
  UrgentStream& operator=(const UrgentStream&) = delete;
  CUstream get() const { return stream_; }

 private:
  CUstream stream_ = nullptr;
};

int priority_of(CUstream stream) {
  int priority = 0;
  DRIVER_CALL(cuStreamGetPriority, stream, &priority);
  return priority;
}

void destroy_lane(const SideLane* lane) {
  DRIVER_CALL(cuStreamDestroy, lane->stream);
  DRIVER_CALL(cuEventDestroy, lane->forked);
  DRIVER_CALL(cuEventDestroy, lane->joined);
}

TEST(SideLanesOnGpu, ALaneRunsAtItsCallersPriority) {
  SCATTERPTX_REQUIRE_GPU();
  UrgentStream urgent;
  ASSERT_LT(priority_of(urgent.get()), 0) << "the device has no stream priorities";
  Stream plain;
  SideStreams lanes;
  SideLane* urgent_lane = lanes.take(driver(), urgent.get());
  SideLane* plain_lane = lanes.take(driver(), plain.get());
  SideLane* null_stream_lane = lanes.take(driver(), nullptr);
  ASSERT_NE(urgent_lane, nullptr);
  ASSERT_NE(plain_lane, nullptr);
  ASSERT_NE(null_stream_lane, nullptr) << "the null stream's priority is readable";
  EXPECT_EQ(priority_of(urgent_lane->stream), priority_of(urgent.get()));
  EXPECT_EQ(priority_of(plain_lane->stream), priority_of(plain.get()));
  EXPECT_EQ(priority_of(null_stream_lane->stream), priority_of(nullptr));
  for (const SideLane* lane : {urgent_lane, plain_lane, null_stream_lane}) destroy_lane(lane);
}

// A sorted f32 index streams on a side lane: forked from a high-priority
// stream, every row is still added.
TEST(SideLanesOnGpu, ASortedDefaultCallFromAHighPriorityStreamAddsEveryRow) {
  SCATTERPTX_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  ScatterShape s;
  s.dtype = SCATTERPTX_F32;
  s.cols = 128;
  s.out_rows = 100000;
  s.src_rows = 400000;  // 4 rows a target: the check lets the streaming plan run
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  HostScatter host = make_random_scatter(s, seed);
  std::sort(host.index.begin(), host.index.end());
  DeviceScatter device(s, host);
  const scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const std::string plan = describe_plan(args);
  ASSERT_NE(plan.find("streams_when_sorted=1"), std::string::npos) << plan;
  UrgentStream urgent;
  for (int call = 0; call < 2; ++call) {
    ASSERT_EQ(scatterptx_scatter_add(&args, urgent.get()), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  }
  DRIVER_CALL(cuStreamSynchronize, urgent.get());
  expect_scatter_result(s, host, device, 2);
  int64_t position = 0;
  ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS);
  EXPECT_EQ(position, -1);
}

}  // namespace
}  // namespace scatterptx_test

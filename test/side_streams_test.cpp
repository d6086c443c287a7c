// Host-only: the side lanes a call forks to, against a scripted driver that
// makes stream and event handles, says which streams still have work, and
// logs the forks and joins.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "errors.hpp"
#include "side_streams.hpp"

namespace {

using scatterptx::detail::DriverApi;
using scatterptx::detail::Failure;
using scatterptx::detail::ForkedLane;
using scatterptx::detail::SideLane;
using scatterptx::detail::SideStreams;

const CUstream kCaller = reinterpret_cast<CUstream>(uintptr_t{0x10});
const CUstream kOtherCaller = reinterpret_cast<CUstream>(uintptr_t{0x20});

struct Script {
  uintptr_t next_handle = 0x1000;
  std::set<CUstream> streams, busy;
  std::map<CUstream, int> priorities;  // every stream's; callers not in it are at 0
  bool fail_priority_query = false;
  std::set<CUevent> events;
  int creations_to_fail = 0;   // stream creations that fail from now on
  bool fail_join_wait = false;  // cuStreamWaitEvent on a caller's stream fails
  std::vector<std::string> log;
  std::vector<CUstream> synchronised;
} script;

std::string name(const void* handle) {
  const auto h = reinterpret_cast<uintptr_t>(handle);
  if (h == 0x10) return "caller";
  if (h == 0x20) return "other";
  return std::to_string(h);
}

CUresult stream_create(CUstream* stream, unsigned flags, int priority) {
  if (script.creations_to_fail > 0) {
    --script.creations_to_fail;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  EXPECT_EQ(flags, unsigned{CU_STREAM_NON_BLOCKING});
  *stream = reinterpret_cast<CUstream>(script.next_handle++);
  script.streams.insert(*stream);
  script.priorities[*stream] = priority;
  return CUDA_SUCCESS;
}
CUresult stream_priority(CUstream stream, int* priority) {
  if (script.fail_priority_query) return CUDA_ERROR_INVALID_HANDLE;
  const auto known = script.priorities.find(stream);
  *priority = known != script.priorities.end() ? known->second : 0;
  return CUDA_SUCCESS;
}
CUresult stream_destroy(CUstream stream) { return script.streams.erase(stream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
CUresult stream_query(CUstream stream) { return script.busy.count(stream) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS; }
CUresult stream_synchronize(CUstream stream) {
  script.synchronised.push_back(stream);
  return CUDA_SUCCESS;
}
CUresult event_create(CUevent* event, unsigned flags) {
  EXPECT_EQ(flags, unsigned{CU_EVENT_DISABLE_TIMING});
  *event = reinterpret_cast<CUevent>(script.next_handle++);
  script.events.insert(*event);
  return CUDA_SUCCESS;
}
CUresult event_destroy(CUevent event) { return script.events.erase(event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
CUresult event_record(CUevent event, CUstream stream) {
  script.log.push_back("record " + name(event) + " on " + name(stream));
  return CUDA_SUCCESS;
}
CUresult stream_wait_event(CUstream stream, CUevent event, unsigned) {
  if (script.fail_join_wait && (stream == kCaller || stream == kOtherCaller)) return CUDA_ERROR_LAUNCH_FAILED;
  script.log.push_back("wait " + name(stream) + " for " + name(event));
  return CUDA_SUCCESS;
}

class SideStreamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    script = Script{};
    api_.cuStreamCreateWithPriority = stream_create;
    api_.cuStreamGetPriority = stream_priority;
    api_.cuStreamDestroy = stream_destroy;
    api_.cuStreamQuery = stream_query;
    api_.cuStreamSynchronize = stream_synchronize;
    api_.cuEventCreate = event_create;
    api_.cuEventDestroy = event_destroy;
    api_.cuEventRecord = event_record;
    api_.cuStreamWaitEvent = stream_wait_event;
  }
  DriverApi api_{};
  SideStreams lanes_;
};

// A caller's next call takes the lane it used before: what is still queued
// there was already ordered before the caller's stream.
TEST_F(SideStreamsTest, ACallerGetsItsOwnLaneBackEvenWhileItIsBusy) {
  SideLane* first = lanes_.take(api_, kCaller);
  ASSERT_NE(first, nullptr);
  lanes_.give_back(first);
  script.busy.insert(first->stream);
  EXPECT_EQ(lanes_.take(api_, kCaller), first);
  EXPECT_EQ(lanes_.lanes(), 1u);
  EXPECT_EQ(script.streams.size(), 1u);
  EXPECT_EQ(script.events.size(), 2u);
}

// Another caller's busy lane is not taken (the call would wait for that
// work); an idle one is.
TEST_F(SideStreamsTest, AnotherCallersLaneIsTakenOnlyOnceItsWorkIsDone) {
  SideLane* first = lanes_.take(api_, kCaller);
  ASSERT_NE(first, nullptr);
  lanes_.give_back(first);
  script.busy.insert(first->stream);
  SideLane* second = lanes_.take(api_, kOtherCaller);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second, first);
  EXPECT_NE(second->stream, first->stream);
  lanes_.give_back(second);

  script.busy.clear();
  const CUstream third_caller = reinterpret_cast<CUstream>(uintptr_t{0x30});
  SideLane* third = lanes_.take(api_, third_caller);
  EXPECT_TRUE(third == first || third == second);
  EXPECT_EQ(lanes_.lanes(), 2u);
}

// Two calls at once never share a lane, even beside the same stream.
TEST_F(SideStreamsTest, ATakenLaneIsNotTakenAgainUntilGivenBack) {
  SideLane* first = lanes_.take(api_, kCaller);
  SideLane* second = lanes_.take(api_, kCaller);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first, second);
  lanes_.give_back(first);
  EXPECT_EQ(lanes_.take(api_, kCaller), first);
}

// At the most lanes, a busy free lane is taken (a wait, not an error), and
// with every lane taken there is none: the call queues on its own stream.
TEST_F(SideStreamsTest, PastTheMostLanesABusyOneIsSharedAndThenThereIsNone) {
  std::vector<SideLane*> taken;
  for (std::size_t i = 0; i < SideStreams::kMostLanes; ++i) {
    taken.push_back(lanes_.take(api_, reinterpret_cast<CUstream>(uintptr_t{0x100 + i})));
    ASSERT_NE(taken.back(), nullptr);
    script.busy.insert(taken.back()->stream);
  }
  EXPECT_EQ(lanes_.take(api_, kCaller), nullptr) << "every lane is taken";
  lanes_.give_back(taken[3]);
  EXPECT_EQ(lanes_.take(api_, kCaller), taken[3]) << "busy, but the only one free";
  EXPECT_EQ(lanes_.lanes(), SideStreams::kMostLanes);
  EXPECT_EQ(script.streams.size(), SideStreams::kMostLanes);
}

// A lane runs at its caller's priority, and serves callers of that priority
// alone: high-priority work moved to a lane must not queue at a lower one.
TEST_F(SideStreamsTest, ALaneRunsAtItsCallersPriorityAndServesThatPriorityAlone) {
  const CUstream urgent = reinterpret_cast<CUstream>(uintptr_t{0x40});
  script.priorities[urgent] = -3;
  SideLane* urgent_lane = lanes_.take(api_, urgent);
  ASSERT_NE(urgent_lane, nullptr);
  EXPECT_EQ(script.priorities[urgent_lane->stream], -3);
  lanes_.give_back(urgent_lane);

  SideLane* plain_lane = lanes_.take(api_, kCaller);
  ASSERT_NE(plain_lane, nullptr);
  EXPECT_NE(plain_lane, urgent_lane) << "idle, but at another priority";
  EXPECT_EQ(script.priorities[plain_lane->stream], 0);
  lanes_.give_back(plain_lane);

  const CUstream also_urgent = reinterpret_cast<CUstream>(uintptr_t{0x50});
  script.priorities[also_urgent] = -3;
  EXPECT_EQ(lanes_.take(api_, also_urgent), urgent_lane) << "idle, at its priority";
  EXPECT_EQ(lanes_.lanes(), 2u);
}

// A caller whose stream's priority cannot be read gets no lane: its work
// stays on its own stream rather than run at a guessed priority.
TEST_F(SideStreamsTest, ACallerOfUnknownPriorityGetsNoLane) {
  script.fail_priority_query = true;
  EXPECT_EQ(lanes_.take(api_, kCaller), nullptr);
  EXPECT_EQ(lanes_.lanes(), 0u);
  EXPECT_TRUE(script.streams.empty());
}

// A lane that cannot be made is no lane, and nothing it took is kept.
TEST_F(SideStreamsTest, ALaneThatCannotBeMadeKeepsNothing) {
  script.creations_to_fail = 1;
  EXPECT_EQ(lanes_.take(api_, kCaller), nullptr);
  EXPECT_TRUE(script.streams.empty());
  EXPECT_TRUE(script.events.empty());
  EXPECT_EQ(lanes_.lanes(), 0u);
  EXPECT_NE(lanes_.take(api_, kCaller), nullptr) << "the next call tries again";
}

// The fork waits on the lane for what the caller queued; the join makes the
// caller's stream wait for the lane's work; the lane is given back after.
TEST_F(SideStreamsTest, AForkWaitsForTheCallerAndTheJoinMakesTheCallerWait) {
  SideLane* lane = lanes_.take(api_, kCaller);
  ASSERT_NE(lane, nullptr);
  {
    ForkedLane side(api_, lanes_, lane, kCaller);
    EXPECT_EQ(side.stream(), lane->stream);
    side.join();
  }
  const std::string s = name(lane->stream), forked = name(lane->forked), joined = name(lane->joined);
  const std::vector<std::string> expected = {"record " + forked + " on caller", "wait " + s + " for " + forked,
                                             "record " + joined + " on " + s, "wait caller for " + joined};
  EXPECT_EQ(script.log, expected);
  EXPECT_EQ(lanes_.take(api_, kOtherCaller), lane) << "given back (and idle)";
}

// Left without a join (a failure being reported), the lane still joins.
TEST_F(SideStreamsTest, ALaneLeftUnjoinedJoinsWhenItGoes) {
  SideLane* lane = lanes_.take(api_, kCaller);
  ASSERT_NE(lane, nullptr);
  { ForkedLane side(api_, lanes_, lane, kCaller); }
  ASSERT_EQ(script.log.size(), 4u);
  EXPECT_EQ(script.log[3], "wait caller for " + name(lane->joined));
}

// No lane: the work stays on the caller's stream, and nothing is recorded.
TEST_F(SideStreamsTest, WithoutALaneTheCallersStreamTakesTheWork) {
  ForkedLane side(api_, lanes_, nullptr, kCaller);
  EXPECT_EQ(side.stream(), kCaller);
  side.join();
  EXPECT_TRUE(script.log.empty());
}

// A join the driver refuses: the host waits for the lane before reporting,
// so that none of its work can overlap what the caller queues next.
TEST_F(SideStreamsTest, AJoinTheDriverRefusesWaitsForTheLaneAndSaysSo) {
  SideLane* lane = lanes_.take(api_, kCaller);
  ASSERT_NE(lane, nullptr);
  script.fail_join_wait = true;
  ForkedLane side(api_, lanes_, lane, kCaller);
  try {
    side.join();
    ADD_FAILURE() << "the refused join was not reported";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_DRIVER);
    EXPECT_NE(std::string(failure.what()).find("cuStreamWaitEvent"), std::string::npos) << failure.what();
    EXPECT_NE(std::string(failure.what()).find("the host waited for the side stream"), std::string::npos)
        << failure.what();
  }
  EXPECT_EQ(script.synchronised, std::vector<CUstream>{lane->stream});
}

}  // namespace

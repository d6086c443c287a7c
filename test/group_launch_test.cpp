// Host-only: the arguments grouped execution launches with, recorded by a
// scripted driver: which buffers each radix pass reads and writes, and where
// the summing kernel finds the grouped keys, positions and weights.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "group_launch.hpp"
#include "group_plan.hpp"
#include "host_problem.hpp"
#include "kernel_manifest.hpp"
#include "launch_gate.hpp"
#include "plan.hpp"
#include "run_call.hpp"

namespace {

using namespace scatterptx::detail;
using scatterptx_test::contiguous;
using scatterptx_test::weighted;

constexpr CUdeviceptr kWorkspace = 0x7f4000000000;
constexpr CUdeviceptr kErrorSlot = 0x7f5000000000;

// One launch: its kernel variant and its integer arguments by name.
struct Launch {
  std::size_t variant = 0;
  std::map<std::string, uint64_t> args;
  CUstream stream = nullptr;

  KernelFamily family() const { return kKernelVariants[variant].family; }
  uint64_t operator[](const std::string& name) const {
    const auto it = args.find(name);
    EXPECT_NE(it, args.end()) << "no argument " << name << " in " << kKernelVariants[variant].name;
    return it == args.end() ? ~uint64_t{0} : it->second;
  }
};
std::vector<Launch> launches;

// The scripted state's function handles are variant + 1.
Launch decode(CUfunction f, void** params) {
  Launch launch;
  launch.variant = reinterpret_cast<uintptr_t>(f) - 1;
  const KernelVariant& v = kKernelVariants[launch.variant];
  for (unsigned i = 0; i < v.param_count; ++i) {
    uint64_t value = 0;
    if (v.params[i].bytes == 8 || v.params[i].bytes == 4) std::memcpy(&value, params[i], v.params[i].bytes);
    launch.args[v.params[i].name] = value;
  }
  return launch;
}

// Each launch and each event record or wait, in order ("launch", "record", "wait").
std::vector<std::string> stream_ops;

CUresult record_launch_ex(const CUlaunchConfig* config, CUfunction f, void** params, void**) {
  launches.push_back(decode(f, params));
  launches.back().stream = config->hStream;
  stream_ops.push_back("launch");
  return CUDA_SUCCESS;
}

CUresult record_launch(CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       CUstream stream, void** params, void**) {
  launches.push_back(decode(f, params));
  launches.back().stream = stream;
  stream_ops.push_back("launch");
  return CUDA_SUCCESS;
}

// The side lanes' streams and events: made, recorded and waited for.
uintptr_t next_handle = 0x1000;
CUstreamCaptureStatus capture_status = CU_STREAM_CAPTURE_STATUS_NONE;
struct EventUse {
  CUevent event;
  CUstream stream;
};
std::vector<EventUse> records, waits;

CUresult stream_create(CUstream* stream, unsigned, int) {
  *stream = reinterpret_cast<CUstream>(next_handle++);
  return CUDA_SUCCESS;
}
CUresult event_create(CUevent* event, unsigned) {
  *event = reinterpret_cast<CUevent>(next_handle++);
  return CUDA_SUCCESS;
}
CUresult stream_query(CUstream) { return CUDA_SUCCESS; }
CUresult stream_priority(CUstream, int* priority) {
  *priority = 0;
  return CUDA_SUCCESS;
}
CUresult is_capturing(CUstream, CUstreamCaptureStatus* status) {
  *status = capture_status;
  return CUDA_SUCCESS;
}
CUresult event_record(CUevent event, CUstream stream) {
  records.push_back({event, stream});
  stream_ops.push_back("record");
  return CUDA_SUCCESS;
}
CUresult stream_wait_event(CUstream stream, CUevent event, unsigned) {
  waits.push_back({event, stream});
  stream_ops.push_back("wait");
  return CUDA_SUCCESS;
}

// The byte ranges set by cuMemsetD8Async, and to what.
struct Memset {
  CUdeviceptr at;
  unsigned char value;
  size_t bytes;
};
std::vector<Memset> memsets;

CUresult memset_async(CUdeviceptr at, unsigned char value, size_t bytes, CUstream) {
  memsets.push_back({at, value, bytes});
  return CUDA_SUCCESS;
}

CUresult encode_tensor_map(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                           const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                           CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  return CUDA_SUCCESS;
}

bool is_grouping_family(KernelFamily f) {
  return f == KernelFamily::group_histogram_index || f == KernelFamily::group_scatter_index ||
         f == KernelFamily::group_histogram_keys || f == KernelFamily::group_scatter_keys ||
         f == KernelFamily::group_scan || f == KernelFamily::group_segment_sum || f == KernelFamily::group_combine;
}

class GroupLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    launches.clear();
    memsets.clear();
    stream_ops.clear();
    records.clear();
    waits.clear();
    capture_status = CU_STREAM_CAPTURE_STATUS_NONE;
    api_.cuStreamCreateWithPriority = stream_create;
    api_.cuStreamGetPriority = stream_priority;
    api_.cuEventCreate = event_create;
    api_.cuStreamQuery = stream_query;
    api_.cuStreamIsCapturing = is_capturing;
    api_.cuEventRecord = event_record;
    api_.cuStreamWaitEvent = stream_wait_event;
    api_.cuTensorMapEncodeTiled = encode_tensor_map;
    api_.cuLaunchKernelEx = record_launch_ex;
    api_.cuLaunchKernel = record_launch;
    api_.cuMemsetD8Async = memset_async;
    for (std::size_t v = 0; v < kKernelVariantCount; ++v) {
      state_.functions[v] = reinterpret_cast<CUfunction>(uintptr_t{v + 1});
    }
  }

  // Groups and sums p as one call does; returns the plan.
  GroupPlan run(const Problem& p, const GroupOptions& options = {}) {
    GroupOptions segmented = options;
    segmented.mode = SCATTERPTX_MODE_SEGMENTED;
    const GroupPlan plan = make_group_plan(p, segmented);
    EXPECT_TRUE(plan.grouped());
    launch_grouping(api_, state_, p, plan, kWorkspace, nullptr);
    launch_grouped_execute(api_, state_, p, plan, kWorkspace, kErrorSlot, nullptr);
    return plan;
  }

  // The radix passes' scatter launches and the summing launches, in order.
  static std::vector<Launch> scatter_launches() {
    return of([](KernelFamily f) {
      return f == KernelFamily::group_scatter_index || f == KernelFamily::group_scatter_keys;
    });
  }
  static std::vector<Launch> sum_launches() {
    return of([](KernelFamily f) { return f == KernelFamily::group_segment_sum; });
  }
  template <typename Pick>
  static std::vector<Launch> of(Pick pick) {
    std::vector<Launch> out;
    for (const Launch& l : launches) {
      if (pick(l.family())) out.push_back(l);
    }
    return out;
  }

  DriverApi api_;
  ContextState state_;
};

TEST_F(GroupLaunchTest, EachPassReadsTheLastPassesBuffersAndTheSumsReadTheFinalOnes) {
  const Problem p = contiguous(SCATTERPTX_F32, 300000, 250000, 128);
  const GroupPlan plan = run(p);
  ASSERT_EQ(plan.passes, 3u);
  const GroupWorkspace& w = plan.workspace;
  ASSERT_EQ(launches.size(), 3 * plan.passes + 1 + plan.combine_levels);

  const std::vector<Launch> scatters = scatter_launches();
  ASSERT_EQ(scatters.size(), plan.passes);
  for (uint32_t pass = 0; pass < plan.passes; ++pass) {
    SCOPED_TRACE("pass " + std::to_string(pass));
    const Launch& s = scatters[pass];
    EXPECT_EQ(s.family(), pass == 0 ? KernelFamily::group_scatter_index : KernelFamily::group_scatter_keys);
    EXPECT_EQ(s["key_source"], pass == 0 ? p.index_address : kWorkspace + w.keys[(pass - 1) % 2]);
    EXPECT_EQ(s["value_source"], pass == 0 ? 0 : kWorkspace + w.rows[(pass - 1) % 2]);
    EXPECT_EQ(s["keys_out"], kWorkspace + w.keys[pass % 2]);
    EXPECT_EQ(s["values_out"], kWorkspace + w.rows[pass % 2]);
    EXPECT_EQ(s["shift"], plan.first_shift + pass * kSortDigitBits);
    EXPECT_EQ(s["count"], p.src_rows);
    EXPECT_EQ(s["weight_bytes"], 0u) << "nothing to carry";
  }

  const std::vector<Launch> sums = sum_launches();
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_EQ(sums[0]["keys"], kWorkspace + w.keys[plan.final_buffer()]);
  EXPECT_EQ(sums[0]["rows"], kWorkspace + w.rows[plan.final_buffer()]);
  EXPECT_EQ(sums[0]["weights_sorted"], 0u);
  EXPECT_EQ(sums[0]["error_record"], kErrorSlot);
}

// A call that groups and sums at once has the passes carry 2- and 4-byte
// weights in (position, weight bits) pairs: the first reads the caller's,
// each later one the last one's pairs, and the sums read the final pass's
// second words in grouped order.
TEST_F(GroupLaunchTest, CarriedWeightsFollowThePositionsThroughEveryPass) {
  for (const auto& [rows, weights_dtype, bytes] :
       {std::tuple{SCATTERPTX_F32, SCATTERPTX_F32, 4u}, std::tuple{SCATTERPTX_BF16, SCATTERPTX_BF16, 2u},
        std::tuple{SCATTERPTX_F64, SCATTERPTX_F32, 4u}}) {
    SCOPED_TRACE(std::string(scatterptx_dtype_name(rows)) + " rows");
    launches.clear();
    const Problem p = weighted(contiguous(rows, 300000, 250000, 128), weights_dtype);
    const GroupPlan plan = run(p);
    ASSERT_TRUE(plan.weights_in_sort);
    const GroupWorkspace& w = plan.workspace;
    const std::vector<Launch> scatters = scatter_launches();
    ASSERT_EQ(scatters.size(), plan.passes);
    for (uint32_t pass = 0; pass < plan.passes; ++pass) {
      SCOPED_TRACE("pass " + std::to_string(pass));
      EXPECT_EQ(scatters[pass]["weight_bytes"], bytes);
      EXPECT_EQ(scatters[pass]["weights_in"], pass == 0 ? p.weights_address : 0);
      EXPECT_EQ(scatters[pass]["value_source"], pass == 0 ? 0 : kWorkspace + w.rows[(pass - 1) % 2]);
      EXPECT_EQ(scatters[pass]["values_out"], kWorkspace + w.rows[pass % 2]);
    }
    const std::vector<Launch> sums = sum_launches();
    ASSERT_EQ(sums.size(), 1u);
    EXPECT_TRUE(kKernelVariants[sums[0].variant].weighted);
    EXPECT_EQ(sums[0]["rows"], kWorkspace + w.rows[plan.final_buffer()]);
    EXPECT_EQ(sums[0]["weights"], kWorkspace + w.rows[plan.final_buffer()] + 4) << "the first pair's second word";
    EXPECT_EQ(sums[0]["weight_bytes"], bytes);
    EXPECT_EQ(sums[0]["weights_sorted"], 1u);
  }
}

// A plan object's executes, and 8-byte weights, read the weights by source
// row: the passes carry none.
TEST_F(GroupLaunchTest, WeightsReadByRowStayWithTheCaller) {
  GroupOptions object;
  object.weights_read_at_execute = true;
  const Problem f32 = weighted(contiguous(SCATTERPTX_F32, 300000, 250000, 128));
  const Problem f64 = weighted(contiguous(SCATTERPTX_F64, 300000, 250000, 128), SCATTERPTX_F64);
  for (const auto& [p, options] : {std::pair{f32, object}, std::pair{f64, GroupOptions{}}}) {
    SCOPED_TRACE(scatterptx_dtype_name(p.weights_dtype));
    launches.clear();
    ASSERT_FALSE(run(p, options).weights_in_sort);
    const std::vector<Launch> scatters = scatter_launches();
    ASSERT_FALSE(scatters.empty()) << "no radix pass launched";
    for (const Launch& s : scatters) {
      EXPECT_EQ(s["weight_bytes"], 0u);
    }
    const std::vector<Launch> sums = sum_launches();
    ASSERT_EQ(sums.size(), 1u);
    EXPECT_EQ(sums[0]["weights"], p.weights_address);
    EXPECT_EQ(sums[0]["weight_bytes"], p.weight_bytes());
    EXPECT_EQ(sums[0]["weights_sorted"], 0u);
  }
}

// The default call on an f32 index: the first radix pass samples the
// index's order into the workspace's flag, every later grouped launch runs
// only if it was out of order, and the streaming plan only if it was in order.
TEST_F(GroupLaunchTest, TheOrderCheckGatesTheGroupedLaunchesAndTheStreamingPlanOppositely) {
  const Problem p = contiguous(SCATTERPTX_F32, 4000000, 1000000, 256);
  const GroupPlan plan = plan_default_call(p, state_.limits);
  ASSERT_TRUE(plan.streams_when_sorted) << plan.describe();
  run_grouped(api_, state_, p, plan, kWorkspace, nullptr);
  const CUdeviceptr flag = kWorkspace + plan.workspace.order_flag;

  ASSERT_FALSE(memsets.empty());
  const Memset& ones = memsets.front();
  EXPECT_EQ(ones.value, 0xFF);
  EXPECT_EQ(ones.at, kWorkspace + plan.workspace.plan_error);
  EXPECT_GE(ones.at + ones.bytes, flag + 4) << "the flag starts out 'in order'";

  ASSERT_GT(launches.size(), 2u);
  const Launch& sample = launches.front();
  EXPECT_EQ(sample.family(), KernelFamily::group_histogram_index);
  EXPECT_EQ(sample["sorted_flag"], flag);
  EXPECT_GT(sample["tile_step"], 1u) << "a sample of the tiles";
  EXPECT_EQ(sample["gate"], 0u) << "the check always runs";
  std::size_t grouped = 0, streaming = 0;
  for (std::size_t i = 1; i < launches.size(); ++i) {
    const Launch& l = launches[i];
    SCOPED_TRACE(kKernelVariants[l.variant].name);
    EXPECT_EQ(l["gate"], flag);
    if (is_grouping_family(l.family())) {
      ++grouped;
      EXPECT_EQ(l["gate_value"], 0u) << "runs when the check cleared the flag";
      if (l.family() == KernelFamily::group_histogram_index) EXPECT_EQ(l["sorted_flag"], 0u) << "one check";
    } else {
      ++streaming;
      EXPECT_EQ(l["gate_value"], kIndexInOrder) << "runs when the flag held";
    }
  }
  EXPECT_EQ(grouped, 3 * plan.passes + 1 + plan.combine_levels);
  EXPECT_GE(streaming, 1u);
}

const CUstream kCallerStream = reinterpret_cast<CUstream>(uintptr_t{0x10});

// Outside a capture the streaming plan runs on a side stream: forked after
// the order check, so that it waits for the check alone, and joined back at
// the end, so that the caller's stream orders everything after the call.
TEST_F(GroupLaunchTest, TheStreamingPlanRunsBesideTheGroupedKernelsFromTheCheckToAJoin) {
  const Problem p = contiguous(SCATTERPTX_F32, 4000000, 1000000, 256);
  const GroupPlan plan = plan_default_call(p, state_.limits);
  ASSERT_TRUE(plan.streams_when_sorted) << plan.describe();
  run_grouped(api_, state_, p, plan, kWorkspace, kCallerStream);

  ASSERT_EQ(records.size(), 2u);
  ASSERT_EQ(waits.size(), 2u);
  const CUstream side = waits[0].stream;
  EXPECT_NE(side, kCallerStream);
  EXPECT_EQ(records[0].stream, kCallerStream) << "the fork, on the caller's stream";
  EXPECT_EQ(waits[0].event, records[0].event) << "the side stream waits for the fork";
  EXPECT_EQ(records[1].stream, side) << "the join, on the side stream";
  EXPECT_EQ(waits[1].stream, kCallerStream);
  EXPECT_EQ(waits[1].event, records[1].event) << "the caller's stream waits for the join";

  const std::vector<std::string> fork_after_the_check = {"launch", "record", "wait"};
  ASSERT_GE(stream_ops.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(stream_ops.begin(), stream_ops.begin() + 3), fork_after_the_check);
  EXPECT_EQ(stream_ops[stream_ops.size() - 2], "record");
  EXPECT_EQ(stream_ops.back(), "wait") << "the join comes last";
  ASSERT_FALSE(launches.empty());
  EXPECT_EQ(launches.front()["sorted_flag"], kWorkspace + plan.workspace.order_flag) << "the check comes first";
  std::size_t streaming = 0;
  for (const Launch& l : launches) {
    SCOPED_TRACE(kKernelVariants[l.variant].name);
    if (is_grouping_family(l.family())) {
      EXPECT_EQ(l.stream, kCallerStream);
    } else {
      ++streaming;
      EXPECT_EQ(l.stream, side);
    }
  }
  EXPECT_GE(streaming, 1u);

  // The next call beside the same stream takes the same side stream.
  waits.clear();
  run_grouped(api_, state_, p, plan, kWorkspace, kCallerStream);
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(waits[0].stream, side);
  EXPECT_EQ(state_.side_streams.lanes(), 1u);
}

// A captured side stream would stay in the capture's graph until it ends,
// out of reach of other calls: while capturing, nothing forks.
TEST_F(GroupLaunchTest, WhileCapturingTheStreamingPlanStaysOnTheCallersStream) {
  const Problem p = contiguous(SCATTERPTX_F32, 4000000, 1000000, 256);
  const GroupPlan plan = plan_default_call(p, state_.limits);
  ASSERT_TRUE(plan.streams_when_sorted) << plan.describe();
  capture_status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  run_grouped(api_, state_, p, plan, kWorkspace, kCallerStream);
  EXPECT_TRUE(records.empty());
  EXPECT_TRUE(waits.empty());
  EXPECT_EQ(state_.side_streams.lanes(), 0u);
  ASSERT_GT(launches.size(), 2u);
  for (const Launch& l : launches) EXPECT_EQ(l.stream, kCallerStream) << kKernelVariants[l.variant].name;
}

CUresult refuse_tensor_map(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                           const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                           CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  return CUDA_ERROR_INVALID_VALUE;
}

// The streaming plan queued behind the grouped launches is made before them:
// a tensor map the driver refuses fails the call with nothing enqueued.
TEST_F(GroupLaunchTest, TheStreamingPlansTensorMapsAreMadeBeforeAnythingIsQueued) {
  const Problem p = contiguous(SCATTERPTX_F32, 1000000, 100000, 2048);  // 8 KB rows stream on the TMA path
  const GroupPlan plan = plan_default_call(p, state_.limits);
  ASSERT_TRUE(plan.streams_when_sorted) << plan.describe();
  ASSERT_EQ(make_plan(p, state_.limits).path, SCATTERPTX_PATH_TMA) << "the streaming plan must use a tensor map";
  api_.cuTensorMapEncodeTiled = refuse_tensor_map;
  EXPECT_THROW(run_grouped(api_, state_, p, plan, kWorkspace, nullptr), Failure);
  EXPECT_TRUE(launches.empty()) << launches.size() << " launches were queued before the failure";
  EXPECT_TRUE(memsets.empty());
}

int launches_until_refusal = 0;

CUresult refuse_a_later_launch(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  if (launches_until_refusal-- == 0) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  return record_launch_ex(config, f, params, extra);
}

CUresult name_error(CUresult, const char** name) {
  *name = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  return CUDA_SUCCESS;
}

// A launch can not be taken back: one the driver refuses part way through
// the grouped kernels fails the call, saying that those before it stay queued.
TEST_F(GroupLaunchTest, ARefusedLaunchSaysTheLaunchesBeforeItStayEnqueued) {
  const Problem p = contiguous(SCATTERPTX_BF16, 4000000, 1000000, 256);
  const GroupPlan plan = plan_default_call(p, state_.limits);
  ASSERT_TRUE(plan.grouped()) << plan.describe();
  api_.cuLaunchKernelEx = refuse_a_later_launch;
  api_.cuLaunchKernel = nullptr;
  api_.cuGetErrorName = name_error;
  launches_until_refusal = 3;
  try {
    run_grouped(api_, state_, p, plan, kWorkspace, nullptr);
    ADD_FAILURE() << "the refused launch was not reported";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_DRIVER);
    const std::string message = failure.what();
    EXPECT_NE(message.find("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"), std::string::npos) << message;
    EXPECT_NE(message.find("; launches this call queued before it stay enqueued (the grouping's write only the "
                           "workspace, the sums' write out)"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(launches.size(), 3u) << "the launches before the refused one";
}

// Where the default call queues both plans, the streaming launch comes last:
// refused, it says that the grouped kernels before it are queued.
TEST_F(GroupLaunchTest, ARefusedStreamingLaunchSaysTheGroupedKernelsAreQueued) {
  const Problem p = contiguous(SCATTERPTX_F32, 4000000, 1000000, 256);
  const GroupPlan plan = plan_default_call(p, state_.limits);
  ASSERT_TRUE(plan.streams_when_sorted) << plan.describe();
  api_.cuLaunchKernelEx = refuse_a_later_launch;
  api_.cuLaunchKernel = nullptr;
  api_.cuGetErrorName = name_error;
  const int grouped = static_cast<int>(1 + 3 * plan.passes + 1 + plan.combine_levels);  // the sample first
  launches_until_refusal = grouped;
  try {
    run_grouped(api_, state_, p, plan, kWorkspace, nullptr);
    ADD_FAILURE() << "the refused launch was not reported";
  } catch (const Failure& failure) {
    const std::string message = failure.what();
    EXPECT_NE(message.find("; the grouped kernels were enqueued before it and add every row if the index is not "
                           "in order"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(launches.size(), static_cast<size_t>(grouped));
  for (const Launch& l : launches) EXPECT_TRUE(is_grouping_family(l.family())) << kKernelVariants[l.variant].name;
  ASSERT_EQ(waits.size(), 2u) << "forked and joined back";
  EXPECT_EQ(waits.back().stream, nullptr) << "the caller's stream waits for the side stream";
}

// Grouping that does not depend on the order (bf16 rows sum in f32) queues
// no check and gates nothing.
TEST_F(GroupLaunchTest, GroupingForAccuracyQueuesNoCheckAndNoGates) {
  const Problem p = contiguous(SCATTERPTX_BF16, 4000000, 1000000, 256);
  const GroupPlan plan = plan_default_call(p, state_.limits);
  ASSERT_TRUE(plan.grouped() && !plan.streams_when_sorted) << plan.describe();
  run_grouped(api_, state_, p, plan, kWorkspace, nullptr);
  ASSERT_EQ(launches.size(), 3 * plan.passes + 1 + plan.combine_levels);
  for (const Launch& l : launches) {
    SCOPED_TRACE(kKernelVariants[l.variant].name);
    EXPECT_TRUE(is_grouping_family(l.family()));
    EXPECT_EQ(l["gate"], 0u);
    if (l.family() == KernelFamily::group_histogram_index) {
      EXPECT_EQ(l["sorted_flag"], 0u);
      EXPECT_EQ(l["tile_step"], 1u);
    }
  }
}

}  // namespace

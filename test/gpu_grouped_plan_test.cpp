// A plan beyond its first execute: reused on new src and out, blind to
// changes of its index after create, executed on two streams ordered by an
// event, captured in a CUDA graph and replayed, refusing pointers less
// aligned than at create, and describing itself; and the STREAMING mode
// through the same entry points.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu_harness.hpp"
#include "group_case.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"
#include "stream_events.hpp"

namespace scatterptx_test {
namespace {

// Random inputs with a hot target taking a quarter of the rows. kExact:
// eighths whose every sum is exact in the dtype, each row added `repeats`
// times; bf16 sums only so many rows exactly (255 adds), so there the hot
// target takes half of what it can (63 rows added twice), leaving room for
// the rows uniform indices add to it.
HostScatter make_inputs(const ScatterShape& s, uint64_t seed, Comparison comparison = Comparison::kWithinBound,
                        int repeats = 1) {
  HostScatter host = make_random_scatter(s, seed);
  int64_t hot_rows = s.src_rows / 4;
  if (comparison == Comparison::kExact) {
    hot_rows = std::min(hot_rows, most_exact_rows_per_target(s.dtype, repeats) / 2);
  }
  host.index = hot_target_index(s.src_rows, s.out_rows, s.out_rows / 2, hot_rows, derive_seed(seed, 7));
  if (comparison == Comparison::kExact && !make_sums_exact(host, derive_seed(seed, 8), repeats)) {
    ADD_FAILURE() << "a target takes too many rows for exact sums";
  }
  return host;
}

void expect_no_index_error() {
  int64_t bad_position = 0;
  ASSERT_EQ(scatterptx_take_index_error(&bad_position), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  EXPECT_EQ(bad_position, -1) << "every index was valid";
}

class GroupedPlanTest : public ::testing::TestWithParam<GroupMode> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }
  scatterptx_group_options options() const { return group_options(GetParam()); }
};

TEST_P(GroupedPlanTest, ReusedOnThreeNewSources) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = contiguous_shape(SCATTERPTX_F32, 2000, 30000, 132);
  SCOPED_TRACE(s.describe());
  const HostScatter planned = make_inputs(s, seed);
  DeviceScatter planned_device(s, planned);
  const scatterptx_scatter_add_args args =
      planned_device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const scatterptx_group_options group = options();
  ScopedPlan plan;
  ASSERT_EQ(scatterptx_plan_create(&args, &group, nullptr, 0, nullptr, plan.receive()),
            SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();

  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE("source " + std::to_string(k));
    // Fresh out and src, in allocations of their own, with the plan's index.
    HostScatter fresh = make_random_scatter(s, derive_seed(seed, 100 + static_cast<uint64_t>(k)));
    fresh.index = planned.index;
    DeviceScatter fresh_device(s, fresh);
    const scatterptx_scatter_add_args fresh_args =
        fresh_device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
    ASSERT_EQ(scatterptx_plan_execute(plan.get(), fresh_args.out, fresh_args.src, nullptr),
              SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    expect_scatter_result(s, fresh, fresh_device, 1);
  }
  expect_no_index_error();
}

TEST_P(GroupedPlanTest, IndexChangedAfterCreateIsNotSeen) {
  if (GetParam() == GroupMode::kAuto) {
    GTEST_SKIP() << "AUTO plans this shape (528-byte rows, not 16-byte multiples) as STREAMING, "
                    "which reads the index at every execute";
  }
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = contiguous_shape(SCATTERPTX_F32, 2000, 30000, 132);
  SCOPED_TRACE(s.describe());
  const HostScatter host = make_inputs(s, seed);
  DeviceScatter device(s, host);
  const scatterptx_scatter_add_args args =
      device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const scatterptx_group_options group = options();
  ScopedPlan plan;
  ASSERT_EQ(scatterptx_plan_create(&args, &group, nullptr, 0, nullptr, plan.receive()),
            SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  // The index is read once, at create: overwriting it in place (with other
  // valid targets) must not change what the plan adds where.
  std::vector<int64_t> other_index = host.index;
  for (int64_t& target : other_index) target = s.out_rows - 1 - target;
  const std::vector<unsigned char> other_bytes = encode_indices(other_index, s.index_type);
  upload(reinterpret_cast<CUdeviceptr>(args.index), other_bytes.data(), other_bytes.size());
  ASSERT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.src, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  expect_scatter_result(s, host, device, 1);
  expect_no_index_error();
}

TEST_P(GroupedPlanTest, ExecutesOnTwoStreamsInTurn) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  // 200-byte rows take the scalar summing variant.
  const ScatterShape s = contiguous_shape(SCATTERPTX_BF16, 1500, 25000, 100);
  SCOPED_TRACE(s.describe());
  // Then exact sums: the bound of the hot target's 12500 bf16 adds could
  // not tell one execute from two.
  for (Comparison comparison : {Comparison::kWithinBound, Comparison::kExact}) {
    SCOPED_TRACE(comparison_name(comparison));
    const HostScatter host = make_inputs(s, seed, comparison, /*repeats=*/2);
    DeviceScatter device(s, host);
    const scatterptx_scatter_add_args args =
        device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
    const scatterptx_group_options group = options();
    Stream first;
    Stream second;
    ScopedPlan plan;
    ASSERT_EQ(scatterptx_plan_create(&args, &group, nullptr, 0, first.get(), plan.receive()),
              SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    // Executes share the plan's workspace: the second stream waits for the
    // first's execute through an event, with no host synchronisation.
    Event first_done;
    ASSERT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.src, first.get()),
              SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    first_done.record(first.get());
    stream_wait_event(second.get(), first_done);
    ASSERT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.src, second.get()),
              SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    second.synchronize();
    expect_scatter_result(s, host, device, 2, comparison);
    expect_no_index_error();
    if (HasFatalFailure()) return;
  }
}

TEST_P(GroupedPlanTest, CapturedExecuteReplaysTwice) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  // Each dtype then with exact sums, which show a replay lost or run twice
  // however many rows the hot target adds.
  for (const auto& [dtype, comparison] :
       {std::pair{SCATTERPTX_F32, Comparison::kWithinBound}, std::pair{SCATTERPTX_F32, Comparison::kExact},
        std::pair{SCATTERPTX_BF16, Comparison::kWithinBound}, std::pair{SCATTERPTX_BF16, Comparison::kExact}}) {
    const ScatterShape s = contiguous_shape(dtype, 900, 12000, 264);
    SCOPED_TRACE(s.describe() + ", " + comparison_name(comparison));
    const HostScatter host = make_inputs(s, derive_seed(seed, dtype), comparison, /*repeats=*/2);
    DeviceScatter device(s, host);
    const scatterptx_scatter_add_args args =
        device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
    const scatterptx_group_options group = options();
    ASSERT_EQ(scatterptx_prepare(), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    Stream stream;
    // Create synchronises, so it comes before the capture; only execute is captured.
    ScopedPlan plan;
    ASSERT_EQ(scatterptx_plan_create(&args, &group, nullptr, 0, stream.get(), plan.receive()),
              SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    DRIVER_CALL(cuStreamBeginCapture, stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL);
    const scatterptx_status captured =
        scatterptx_plan_execute(plan.get(), args.out, args.src, stream.get());
    const std::string message = scatterptx_last_error_message();
    CUgraph graph = nullptr;
    DRIVER_CALL(cuStreamEndCapture, stream.get(), &graph);  // ends the capture whatever happened
    ASSERT_EQ(captured, SCATTERPTX_SUCCESS) << message;
    ASSERT_NE(graph, nullptr);
    CUgraphExec exec = nullptr;
    DRIVER_CALL(cuGraphInstantiateWithFlags, &exec, graph, 0);
    synchronize_gpu();
    EXPECT_TRUE(device.download_out().bytes == host.out0.bytes) << "capture ran the execute";
    DRIVER_CALL(cuGraphLaunch, exec, stream.get());
    DRIVER_CALL(cuGraphLaunch, exec, stream.get());
    stream.synchronize();
    expect_scatter_result(s, host, device, 2, comparison);
    DRIVER_CALL(cuGraphExecDestroy, exec);
    DRIVER_CALL(cuGraphDestroy, graph);
    expect_no_index_error();
    if (HasFatalFailure()) return;
  }
}

TEST_P(GroupedPlanTest, DescribeNamesTheMode) {
  const ScatterShape s = contiguous_shape(SCATTERPTX_F32, 700, 9000, 36);
  const HostScatter host = make_inputs(s, fresh_seed());
  DeviceScatter device(s, host);
  const scatterptx_scatter_add_args args =
      device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const scatterptx_group_options group = options();
  ScopedPlan plan;
  ASSERT_EQ(scatterptx_plan_create(&args, &group, nullptr, 0, nullptr, plan.receive()),
            SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  const std::string described = describe_group_plan(plan.get());
  EXPECT_NE(described.find("mode="), std::string::npos) << described;
  if (forces_segmented(group)) {
    EXPECT_NE(described.find("mode=segmented"), std::string::npos) << described;
  }
  // Describing runs nothing.
  EXPECT_TRUE(device.download_out().bytes == host.out0.bytes);
}

INSTANTIATE_TEST_SUITE_P(Sm90, GroupedPlanTest,
                         ::testing::Values(GroupMode::kSegmented, GroupMode::kAuto, GroupMode::kDeterministic),
                         [](const ::testing::TestParamInfo<GroupMode>& info) {
                           return std::string(group_mode_name(info.param));
                         });

// Executes must keep create's alignment. Only the modes that force
// grouping: a plan that AUTO makes streaming runs what scatter_add runs,
// which takes any element-aligned pointer, so it has nothing to refuse.
class GroupedPlanAlignmentTest : public ::testing::TestWithParam<GroupMode> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }
  scatterptx_group_options options() const { return group_options(GetParam()); }
};

TEST_P(GroupedPlanAlignmentTest, RefusesPointersLessAlignedThanAtCreate) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  // f32 rows of 64 elements (256 bytes) from 256-byte-aligned allocations:
  // the segmented kernels may be chosen for 16-byte loads and stores.
  const ScatterShape s = contiguous_shape(SCATTERPTX_F32, 500, 3000, 64);
  const HostScatter host = make_inputs(s, seed);
  DeviceScatter device(s, host);
  const scatterptx_scatter_add_args args =
      device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const scatterptx_group_options group = options();
  ScopedPlan plan;
  ASSERT_EQ(scatterptx_plan_create(&args, &group, nullptr, 0, nullptr, plan.receive()),
            SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();

  // The same values one element (4 bytes) past a 16-byte boundary.
  constexpr size_t kShift = 4;
  DeviceBuffer shifted_src(host.src.bytes.size() + 16);
  upload(shifted_src.address(kShift), host.src.bytes.data(), host.src.bytes.size());
  DeviceBuffer shifted_out(host.out0.bytes.size() + 16);
  upload(shifted_out.address(kShift), host.out0.bytes.data(), host.out0.bytes.size());

  EXPECT_EQ(scatterptx_plan_execute(plan.get(), args.out, shifted_src.pointer(kShift), nullptr),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_STRNE(scatterptx_last_error_message(), "");
  EXPECT_EQ(scatterptx_plan_execute(plan.get(), shifted_out.pointer(kShift), args.src, nullptr),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_STRNE(scatterptx_last_error_message(), "");
  EXPECT_EQ(scatterptx_plan_execute(plan.get(), nullptr, args.src, nullptr),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_plan_execute(plan.get(), args.out, nullptr, nullptr),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  synchronize_gpu();
  EXPECT_TRUE(device.download_out().bytes == host.out0.bytes) << "a refused execute wrote to out";
  EXPECT_EQ(device.guard_damage(), "");
  std::vector<unsigned char> shifted_after(host.out0.bytes.size());
  download(shifted_after.data(), shifted_out.address(kShift), shifted_after.size());
  EXPECT_TRUE(shifted_after == host.out0.bytes) << "a refused execute wrote to its misaligned out";

  // The refusals leave the plan usable.
  ASSERT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.src, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  expect_scatter_result(s, host, device, 1);
  expect_no_index_error();
}

// An empty problem (no source rows, or rows of no columns) reads and writes
// nothing, so create takes any pointers and so do its executes, whatever
// alignment create saw.
TEST_P(GroupedPlanAlignmentTest, AnEmptyPlanTakesAnyPointersAtExecute) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = contiguous_shape(SCATTERPTX_F32, 500, 3000, 64);
  const HostScatter host = make_inputs(s, seed);
  DeviceScatter device(s, host);
  DeviceBuffer shifted(host.out0.bytes.size() + 16);
  unsigned char* const odd = static_cast<unsigned char*>(shifted.pointer(2));  // not even element-aligned
  const scatterptx_group_options group = options();
  for (const char* empty : {"no source rows", "no columns"}) {
    SCOPED_TRACE(empty);
    scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
    if (std::string(empty) == "no source rows") {
      args.src_rows = 0;
    } else {
      args.cols = 0;
    }
    ScopedPlan plan;
    ASSERT_EQ(scatterptx_plan_create(&args, &group, nullptr, 0, nullptr, plan.receive()), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    EXPECT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.src, nullptr), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    EXPECT_EQ(scatterptx_plan_execute(plan.get(), odd, odd + 4, nullptr), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    EXPECT_EQ(scatterptx_plan_execute(plan.get(), nullptr, nullptr, nullptr), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
  }
  synchronize_gpu();
  EXPECT_TRUE(device.download_out().bytes == host.out0.bytes) << "an empty execute wrote to out";
  EXPECT_EQ(device.guard_damage(), "");
  expect_no_index_error();
}

INSTANTIATE_TEST_SUITE_P(Sm90, GroupedPlanAlignmentTest,
                         ::testing::Values(GroupMode::kSegmented, GroupMode::kDeterministic),
                         [](const ::testing::TestParamInfo<GroupMode>& info) {
                           return std::string(group_mode_name(info.param));
                         });

// A plan that allocated its own workspace frees it in its own context,
// whatever is current on the destroying thread (here none), and leaves that
// thread as it found it. Ten plans in turn, each destroyed from a new
// thread, each with a workspace of about 15% of the device's free memory:
// were one not freed, a later create would find too little left. (Free
// memory itself is not compared: the suite's other processes move it.)
TEST(GroupedPlanDestroy, FreesItsWorkspaceFromAThreadWithNoContext) {
  SCATTERPTX_REQUIRE_GPU();
  constexpr int kRounds = 10;
  // One f32 column into 1000 targets (two radix passes): about 16 bytes of
  // workspace per source row (keys and positions, twice) for 8 of inputs
  // (an int32 index and src), so a large workspace costs little else.
  ScatterShape s = contiguous_shape(SCATTERPTX_F32, /*out_rows=*/1000, /*src_rows=*/int64_t{1} << 20, /*cols=*/1);
  s.index_type = SCATTERPTX_INDEX_INT32;
  const scatterptx_group_options options = group_options(GroupMode::kSegmented);
  const auto args_of = [](const ScatterShape& shape, void* out, const void* src, const void* index) {
    scatterptx_scatter_add_args args;
    scatterptx_scatter_add_args_init(&args);
    args.out = out;
    args.out_rows = shape.out_rows;
    args.out_row_stride = shape.cols;
    args.src = src;
    args.src_rows = shape.src_rows;
    args.src_row_stride = shape.cols;
    args.cols = shape.cols;
    args.dtype = shape.dtype;
    args.index = index;
    args.index_type = shape.index_type;
    return args;
  };
  size_t probe_bytes = 0;  // the size needs the shape only, no pointers
  query_workspace_size(args_of(s, nullptr, nullptr, nullptr), options, &probe_bytes);
  if (HasFatalFailure()) return;
  const size_t free_bytes = free_device_memory();
  const double bytes_per_row = static_cast<double>(probe_bytes) / static_cast<double>(s.src_rows);
  // Source positions are u32: at most 2^32 - 1 rows.
  s.src_rows = std::min<int64_t>(static_cast<int64_t>(0.15 * static_cast<double>(free_bytes) / bytes_per_row),
                                 int64_t{UINT32_MAX});
  size_t workspace_bytes = 0;
  query_workspace_size(args_of(s, nullptr, nullptr, nullptr), options, &workspace_bytes);
  if (HasFatalFailure()) return;
  ASSERT_GT(workspace_bytes * kRounds, free_bytes) << "ten leaked workspaces must not fit in free memory";
  SCOPED_TRACE(s.describe() + ", workspace " + std::to_string(workspace_bytes) + " bytes of " +
               std::to_string(free_bytes) + " free");

  // Every row to target 0. The plans are never executed, so src is never
  // read and stays as allocated.
  DeviceBuffer out(static_cast<size_t>(s.out_rows * s.cols) * element_bytes(s.dtype));
  DeviceBuffer src(static_cast<size_t>(s.src_rows * s.cols) * element_bytes(s.dtype));
  DeviceBuffer index(static_cast<size_t>(s.src_rows) * index_bytes(s.index_type));
  fill_device_bytes(index.address(), 0, index.size());
  const scatterptx_scatter_add_args args = args_of(s, out.pointer(), src.pointer(), index.pointer());

  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    scatterptx_plan plan = nullptr;
    const scatterptx_status created = scatterptx_plan_create(&args, &options, nullptr, 0, nullptr, &plan);
    ASSERT_EQ(created, SCATTERPTX_SUCCESS)
        << scatterptx_status_name(created) << ": " << scatterptx_last_error_message()
        << (round > 0 ? " (did an earlier destroy keep its workspace?)" : "");
    scatterptx_status status = SCATTERPTX_ERROR_DRIVER;  // overwritten by the destroy
    std::string message;
    CUresult current_result = CUDA_ERROR_UNKNOWN;
    CUcontext current = reinterpret_cast<CUcontext>(uintptr_t{1});
    std::thread destroyer([&] {  // a new thread: no context is current on it
      status = scatterptx_plan_destroy(plan);
      message = scatterptx_last_error_message();
      current_result = driver().cuCtxGetCurrent(&current);
    });
    destroyer.join();
    EXPECT_EQ(status, SCATTERPTX_SUCCESS) << message;
    ASSERT_EQ(current_result, CUDA_SUCCESS);
    EXPECT_EQ(current, nullptr) << "the destroying thread's context changed";
  }
}

// STREAMING needs no workspace and honours args.path, through the grouped
// entry points as through scatter_add.
TEST(GroupedStreamingMode, RunsWithoutWorkspaceOnEveryPath) {
  SCATTERPTX_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = contiguous_shape(SCATTERPTX_F32, 800, 10000, 132);
  const HostScatter host = make_inputs(s, seed);
  DeviceScatter device(s, host);
  scatterptx_group_options streaming;
  scatterptx_group_options_init(&streaming);
  streaming.mode = SCATTERPTX_MODE_STREAMING;
  for (scatterptx_path path : {SCATTERPTX_PATH_AUTO, SCATTERPTX_PATH_TMA, SCATTERPTX_PATH_RED}) {
    SCOPED_TRACE(std::string("path ") + path_name(path));
    const scatterptx_scatter_add_args args = device.args(path, SCATTERPTX_INDEX_RECORD);
    size_t bytes = 1;
    ASSERT_EQ(scatterptx_plan_workspace_size(&args, &streaming, &bytes), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    EXPECT_EQ(bytes, 0u);
    for (GroupEntry entry : all_group_entries()) {
      device.reset_out(host.out0);
      run_grouped(device, host, args, streaming, entry);
      if (HasFatalFailure()) return;
      expect_scatter_result(s, host, device, 1);
    }
    ScopedPlan plan;
    ASSERT_EQ(scatterptx_plan_create(&args, &streaming, nullptr, 0, nullptr, plan.receive()),
              SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    const std::string described = describe_group_plan(plan.get());
    EXPECT_NE(described.find("mode=streaming"), std::string::npos) << described;
  }
  expect_no_index_error();
}

}  // namespace
}  // namespace scatterptx_test

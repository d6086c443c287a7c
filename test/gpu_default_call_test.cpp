// The default call (scatterptx_scatter_add with path AUTO) in each region of
// its choice: grouped where grouping wins, privatised for few targets,
// streaming elsewhere; and where its workspace comes from: the call's own or
// a registered allocator (used, failing, misaligned), the library's pool under graph
// capture, none at all (grouping off), several streams and threads, and the
// pool trimmed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "context_state.hpp"
#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"

namespace scatterptx_test {
namespace {

// 512-byte rows into a 20 MB out: grouped AUTO's region.
ScatterShape grouped_shape(scatterptx_dtype dtype) {
  ScatterShape s;
  s.dtype = dtype;
  s.cols = 512 / static_cast<int64_t>(element_bytes(dtype));
  s.out_rows = 40000;
  s.src_rows = 100000;
  return s;
}

// Counts what the library asks of it; hands out cuMemAlloc'd memory filled
// with kFill (a workspace must not count on zeroed memory), or NULL when
// told to fail, or memory 16 bytes off alignment. Released memory is freed
// only after the test synchronises.
struct TestAllocator {
  static constexpr unsigned char kFill = 0xA5;
  enum class Mode { kWorking, kFailing, kMisaligned } mode = Mode::kWorking;
  int allocations = 0;
  int releases = 0;
  size_t last_bytes = 0;
  std::vector<std::unique_ptr<DeviceBuffer>> held;

  static void* allocate(size_t bytes, CUstream, void* self_pointer) {
    auto* self = static_cast<TestAllocator*>(self_pointer);
    ++self->allocations;
    self->last_bytes = bytes;
    if (self->mode == Mode::kFailing) return nullptr;
    self->held.push_back(std::make_unique<DeviceBuffer>(bytes + 256));
    fill_device_bytes(self->held.back()->address(), kFill, self->held.back()->size());
    return self->held.back()->pointer(self->mode == Mode::kMisaligned ? 16 : 0);
  }
  // The bytes of held buffers no longer kFill (after the work synchronised).
  size_t bytes_written() const {
    size_t written = 0;
    for (const auto& buffer : held) {
      std::vector<unsigned char> bytes(buffer->size());
      download(bytes.data(), buffer->address(), bytes.size());
      written += static_cast<size_t>(std::count_if(bytes.begin(), bytes.end(),
                                                   [](unsigned char byte) { return byte != kFill; }));
    }
    return written;
  }
  static void release(void*, size_t, CUstream, void* self_pointer) {
    ++static_cast<TestAllocator*>(self_pointer)->releases;
  }
  scatterptx_allocator registration() {
    return scatterptx_allocator{&TestAllocator::allocate, &TestAllocator::release, this};
  }
};

// Registers an allocator for one test and restores the pool after it.
class RegisteredAllocator {
 public:
  explicit RegisteredAllocator(TestAllocator& allocator) {
    const scatterptx_allocator registration = allocator.registration();
    EXPECT_EQ(scatterptx_set_allocator(&registration), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  }
  ~RegisteredAllocator() { EXPECT_EQ(scatterptx_set_allocator(nullptr), SCATTERPTX_SUCCESS); }
};

// Runs the default call on fresh inputs (eighths for kExact) and checks the
// result and that no index error was recorded; returns the plan it described.
std::string run_default_call(const ScatterShape& s, uint64_t seed,
                             scatterptx_grouping grouping = SCATTERPTX_GROUPING_AUTO,
                             const scatterptx_allocator* call_allocator = nullptr,
                             Comparison comparison = Comparison::kWithinBound) {
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe() + ", " + comparison_name(comparison));
  HostScatter host = make_random_scatter(s, seed);
  if (comparison == Comparison::kExact) {
    EXPECT_TRUE(make_sums_exact(host, derive_seed(seed, 8))) << "a target takes too many rows for exact sums";
  }
  DeviceScatter device(s, host);
  scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  args.grouping = grouping;
  const std::string plan = describe_plan(args);
  EXPECT_EQ(scatterptx_scatter_add_with_allocator(&args, call_allocator, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  expect_scatter_result(s, host, device, 1, comparison);
  int64_t position = 0;
  EXPECT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS);
  EXPECT_EQ(position, -1);
  return plan;
}

// Device memory reserved for graph allocations in this process.
uint64_t graph_memory_reserved() {
  CUdevice device = 0;
  DRIVER_CALL(cuCtxGetDevice, &device);
  cuuint64_t bytes = 0;
  DRIVER_CALL(cuDeviceGetGraphMemAttribute, device, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &bytes);
  return bytes;
}

// Bytes the current context's workspace pool holds of the device's memory.
uint64_t workspace_pool_reserved() {
  const scatterptx::detail::ContextState& state = scatterptx::detail::current_context_state(driver());
  cuuint64_t bytes = 0;
  DRIVER_CALL(cuMemPoolGetAttribute, state.workspace_pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &bytes);
  return bytes;
}

class DefaultCallTest : public ::testing::TestWithParam<scatterptx_dtype> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }
};

TEST_P(DefaultCallTest, GroupsLongRowsIntoAnOutBeyondL2) {
  const std::string plan = run_default_call(grouped_shape(GetParam()), fresh_seed());
  EXPECT_EQ(plan.rfind("mode=segmented", 0), 0u) << plan;
}

TEST_P(DefaultCallTest, SumsOnChipWhereItGroupsEvenOntoAHotTarget) {
  // Half of the rows onto target 0, all of them positive: added in f16 or
  // bf16 one at a time they would stall far below the sum, which the
  // on-chip bound catches (reference_test.cpp shows it does).
  const uint64_t seed = fresh_seed();
  const ScatterShape s = grouped_shape(GetParam());
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  HostScatter host = make_random_scatter(s, seed);
  for (int64_t i = 0; i < s.src_rows; i += 2) host.index[static_cast<size_t>(i)] = 0;
  const size_t element = element_bytes(s.dtype);
  for (int64_t r = 0; r < s.src_rows; ++r) {
    for (int64_t c = 0; c < s.cols; ++c) {
      store_element(s.dtype, host.src.row(r) + static_cast<size_t>(c) * element, std::fabs(host.src.at(r, c)));
    }
  }
  DeviceScatter device(s, host);
  const scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const std::string plan = describe_plan(args);
  EXPECT_EQ(plan.rfind("mode=segmented", 0), 0u) << plan;
  ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  expect_scatter_result(s, host, device, 1, Comparison::kOnChipSums);
}

TEST_P(DefaultCallTest, ReportsABadIndexWhenItGroups) {
  const uint64_t seed = fresh_seed();
  const ScatterShape s = grouped_shape(GetParam());
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  HostScatter host = make_random_scatter(s, seed);
  host.index[70001] = s.out_rows;
  host.index[99999] = -2;
  DeviceScatter device(s, host);
  for (scatterptx_index_check check : {SCATTERPTX_INDEX_RECORD, SCATTERPTX_INDEX_CHECKED}) {
    device.reset_out(host.out0);
    const scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, check);
    ASSERT_EQ(describe_plan(args).rfind("mode=segmented", 0), 0u) << describe_plan(args);
    const scatterptx_status status = scatterptx_scatter_add(&args, nullptr);
    const std::string message = scatterptx_last_error_message();  // before the take resets it
    int64_t position = -1;
    ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS);
    if (check == SCATTERPTX_INDEX_CHECKED) {
      EXPECT_EQ(status, SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE);
      EXPECT_NE(message.find(index_error_phrase(70001, s.out_rows)), std::string::npos) << message;
      EXPECT_EQ(position, -1);
    } else {
      EXPECT_EQ(status, SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
      EXPECT_EQ(position, 70001);
    }
    // The valid rows are added either way.
    expect_scatter_result(s, host, device, 1);
  }
}

TEST_P(DefaultCallTest, LeavesFewTargetsToThePrivatisedPath) {
  // 10000 rows per target: the privatised path's partial sums are few.
  ScatterShape s = grouped_shape(GetParam());
  s.out_rows = 10;
  const std::string plan = run_default_call(s, fresh_seed());
  EXPECT_NE(plan.find("path=private"), std::string::npos) << plan;
  // Again with exact sums, compared bit for bit: at 10000 adds the rounding
  // bound cannot see a lost row. In f32 whatever the instance's dtype: the
  // default call privatises only where each target takes well over a
  // thousand rows, more than bf16 sums exactly (255).
  ScatterShape exact = grouped_shape(SCATTERPTX_F32);
  exact.out_rows = 10;
  const std::string exact_plan =
      run_default_call(exact, fresh_seed(), SCATTERPTX_GROUPING_AUTO, nullptr, Comparison::kExact);
  EXPECT_NE(exact_plan.find("path=private"), std::string::npos) << exact_plan;
}

TEST_P(DefaultCallTest, StreamsShortRows) {
  ScatterShape s = grouped_shape(GetParam());
  s.cols = 64 / static_cast<int64_t>(element_bytes(GetParam()));
  const std::string plan = run_default_call(s, fresh_seed());
  EXPECT_EQ(plan.rfind("path=", 0), 0u) << plan;
}

TEST_P(DefaultCallTest, GroupingOffStreamsAndAllocatesNothing) {
  TestAllocator allocator;
  RegisteredAllocator registered(allocator);
  const std::string plan = run_default_call(grouped_shape(GetParam()), fresh_seed(), SCATTERPTX_GROUPING_OFF);
  EXPECT_EQ(plan.rfind("path=", 0), 0u) << plan;
  EXPECT_EQ(allocator.allocations, 0);
}

TEST_P(DefaultCallTest, TakesItsWorkspaceFromTheRegisteredAllocator) {
  TestAllocator allocator;
  RegisteredAllocator registered(allocator);
  const std::string plan = run_default_call(grouped_shape(GetParam()), fresh_seed());
  EXPECT_EQ(plan.rfind("mode=segmented", 0), 0u) << plan;
  EXPECT_EQ(allocator.allocations, 1);
  EXPECT_EQ(allocator.releases, 1);
  EXPECT_NE(plan.find("workspace_bytes=" + std::to_string(allocator.last_bytes)), std::string::npos) << plan;
}

TEST_P(DefaultCallTest, TakesItsWorkspaceFromItsOwnAllocatorBeforeTheRegisteredOne) {
  TestAllocator registered_allocator;
  registered_allocator.mode = TestAllocator::Mode::kFailing;  // asked, it would make the call stream
  RegisteredAllocator registered(registered_allocator);
  TestAllocator own;
  const scatterptx_allocator own_registration = own.registration();
  const std::string plan =
      run_default_call(grouped_shape(GetParam()), fresh_seed(), SCATTERPTX_GROUPING_AUTO, &own_registration);
  EXPECT_EQ(plan.rfind("mode=segmented", 0), 0u) << plan;
  EXPECT_EQ(own.allocations, 1);
  EXPECT_EQ(own.releases, 1);
  EXPECT_EQ(registered_allocator.allocations, 0);
}

TEST_P(DefaultCallTest, AFailingAllocatorMeansStreamingOrAClearError) {
  TestAllocator allocator;
  allocator.mode = TestAllocator::Mode::kFailing;
  RegisteredAllocator registered(allocator);
  (void)run_default_call(grouped_shape(GetParam()), fresh_seed());
  EXPECT_EQ(allocator.allocations, 1);
  EXPECT_EQ(allocator.releases, 0);

  const uint64_t seed = fresh_seed();
  const ScatterShape s = grouped_shape(GetParam());
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  const HostScatter host = make_random_scatter(s, seed);
  DeviceScatter device(s, host);
  scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  args.grouping = SCATTERPTX_GROUPING_NO_FALLBACK;
  EXPECT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(scatterptx_last_error_message()).find("allocator returned NULL"), std::string::npos)
      << scatterptx_last_error_message();
  EXPECT_TRUE(device.download_out().bytes == host.out0.bytes) << "a refused call wrote to out";
  EXPECT_EQ(device.guard_damage(), "");
}

TEST_P(DefaultCallTest, MisalignedMemoryFromTheAllocatorIsGivenBackAndNotUsed) {
  TestAllocator allocator;
  allocator.mode = TestAllocator::Mode::kMisaligned;
  RegisteredAllocator registered(allocator);
  (void)run_default_call(grouped_shape(GetParam()), fresh_seed());  // synchronises before it checks
  EXPECT_EQ(allocator.allocations, 1);
  EXPECT_EQ(allocator.releases, 1);
  EXPECT_EQ(allocator.bytes_written(), 0u) << "the call wrote to the misaligned memory it gave back";
}

// The default call's check of the index's order: for f32 a sorted index
// with short runs runs the streaming plan, any other one the grouped
// kernels; the order flag (a u32 right after the workspace's u64 error
// record) says which ran. f64, f16 and bf16 always group.
class DefaultCallOrderTest : public ::testing::TestWithParam<scatterptx_dtype> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }

  bool checks_order() const { return GetParam() == SCATTERPTX_F32; }

  // Runs the default call on `host` in a registered allocator's workspace,
  // checks the result, and returns the order flag the call left (0 where
  // the dtype takes no order check: the call never writes the flag then).
  uint32_t run(const ScatterShape& s, const HostScatter& host, int64_t expected_bad_position = -1) {
    TestAllocator allocator;
    RegisteredAllocator registered(allocator);
    DeviceScatter device(s, host);
    const scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
    const std::string plan = describe_plan(args);
    EXPECT_EQ(plan.rfind("mode=segmented", 0), 0u) << plan;
    EXPECT_NE(plan.find(std::string("streams_when_sorted=") + (checks_order() ? "1" : "0")), std::string::npos)
        << plan;
    EXPECT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    expect_scatter_result(s, host, device, 1);
    int64_t position = 0;
    EXPECT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS);
    EXPECT_EQ(position, expected_bad_position);
    EXPECT_EQ(allocator.allocations, 1);
    uint32_t flag = 0;
    if (checks_order() && !allocator.held.empty()) {
      scatterptx_testing::copy_to_host(&flag, allocator.held.back()->address(8), 4);
    }
    return flag;
  }
};

TEST_P(DefaultCallOrderTest, ASortedIndexStreamsAndARandomOneGroups) {
  const uint64_t seed = fresh_seed();
  const ScatterShape s = grouped_shape(GetParam());
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  HostScatter host = make_random_scatter(s, seed);
  const uint32_t random_flag = run(s, host);
  std::sort(host.index.begin(), host.index.end());
  const uint32_t sorted_flag = run(s, host);
  if (checks_order()) {
    EXPECT_EQ(random_flag, 0u);
    EXPECT_EQ(sorted_flag, 0xFFFFFFFFu);
  }
}

// A sorted index with one step down at `at`, every other pair in order and
// every entry in range.
HostScatter sorted_but_one_step_down(const ScatterShape& s, uint64_t seed, int64_t at) {
  HostScatter host = make_random_scatter(s, seed);
  std::sort(host.index.begin(), host.index.end());
  if (host.index[at] + 1 < s.out_rows) {
    host.index[at - 1] = host.index[at] + 1;
  } else {
    host.index[at] = host.index[at - 1] - 1;
  }
  return host;
}

// The check reads one sort tile (2048 keys) in 8: tiles 0, 8, 16, ...
TEST_P(DefaultCallOrderTest, OneStepDownInTheSampleGroups) {
  // Within a lane's round, across rounds and warps, into a sampled tile from
  // the one before it, and the last pair (tile 48 of 100000 rows).
  const ScatterShape s = grouped_shape(GetParam());
  for (int64_t at : {int64_t{6}, int64_t{32}, int64_t{256}, int64_t{8 * 2048}, int64_t{8 * 2048 + 256 + 32},
                     s.src_rows - 1}) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed) + ", " + s.describe() + ", step down at " + std::to_string(at));
    const uint32_t flag = run(s, sorted_but_one_step_down(s, seed, at));
    if (checks_order()) EXPECT_EQ(flag, 0u);
  }
}

// A step down only in tiles the sample skips streams, correctly.
TEST_P(DefaultCallOrderTest, OneStepDownOutsideTheSampleStreams) {
  const ScatterShape s = grouped_shape(GetParam());
  for (int64_t at : {int64_t{2048}, int64_t{4096 + 256 + 32}}) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed) + ", " + s.describe() + ", step down at " + std::to_string(at));
    const uint32_t flag = run(s, sorted_but_one_step_down(s, seed, at));
    if (checks_order()) EXPECT_EQ(flag, 0xFFFFFFFFu);
  }
}

TEST_P(DefaultCallOrderTest, ASortedIndexWithAHotTargetGroups) {
  // 600 rows of one target cover a whole warp's 256 keys: grouping wins.
  const uint64_t seed = fresh_seed();
  const ScatterShape s = grouped_shape(GetParam());
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  HostScatter host = make_random_scatter(s, seed);
  std::sort(host.index.begin(), host.index.end());
  std::fill(host.index.begin() + 1000, host.index.begin() + 1600, host.index[1000]);
  const uint32_t flag = run(s, host);
  if (checks_order()) EXPECT_EQ(flag, 0u);
}

TEST_P(DefaultCallOrderTest, ASortedIndexOfLongRunsGroups) {
  // 16 rows a target: a warp's 256 keys span 16 targets, under the 32 of
  // a short-run index.
  const uint64_t seed = fresh_seed();
  const ScatterShape s = grouped_shape(GetParam());
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  HostScatter host = make_random_scatter(s, seed);
  for (int64_t i = 0; i < s.src_rows; ++i) host.index[i] = i / 16 % s.out_rows;
  std::sort(host.index.begin(), host.index.end());
  const uint32_t flag = run(s, host);
  if (checks_order()) EXPECT_EQ(flag, 0u);
}

TEST_P(DefaultCallOrderTest, ASortedIndexEndingInBadEntriesStreamsAndReportsThem) {
  const uint64_t seed = fresh_seed();
  const ScatterShape s = grouped_shape(GetParam());
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  HostScatter host = make_random_scatter(s, seed);
  std::sort(host.index.begin(), host.index.end());
  host.index[s.src_rows - 3] = s.out_rows;  // every bad entry sorts last, as its key out_rows
  host.index[s.src_rows - 2] = s.out_rows + 7;
  host.index[s.src_rows - 1] = s.out_rows + 1;
  const uint32_t flag = run(s, host, s.src_rows - 3);
  if (checks_order()) EXPECT_EQ(flag, 0xFFFFFFFFu);
}

INSTANTIATE_TEST_SUITE_P(Sm90, DefaultCallOrderTest,
                         ::testing::Values(SCATTERPTX_F32, SCATTERPTX_F64, SCATTERPTX_BF16),
                         [](const ::testing::TestParamInfo<scatterptx_dtype>& info) {
                           return std::string(dtype_name(info.param));
                         });

INSTANTIATE_TEST_SUITE_P(Sm90, DefaultCallTest,
                         ::testing::Values(SCATTERPTX_F32, SCATTERPTX_BF16, SCATTERPTX_F16),
                         [](const ::testing::TestParamInfo<scatterptx_dtype>& info) {
                           return std::string(dtype_name(info.param));
                         });

TEST(DefaultCall, ACapturedAllocatingCallReplaysAHundredTimesInFlatMemory) {
  SCATTERPTX_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  const ScatterShape s = grouped_shape(SCATTERPTX_F32);
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  const HostScatter host = make_random_scatter(s, seed);
  DeviceScatter device(s, host);
  const scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  ASSERT_EQ(describe_plan(args).rfind("mode=segmented", 0), 0u) << describe_plan(args);
  ASSERT_EQ(scatterptx_prepare(), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  Stream stream;
  DRIVER_CALL(cuStreamBeginCapture, stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL);
  const scatterptx_status captured = scatterptx_scatter_add(&args, stream.get());
  CUgraph graph = nullptr;
  DRIVER_CALL(cuStreamEndCapture, stream.get(), &graph);
  ASSERT_EQ(captured, SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  CUgraphExec exec = nullptr;
  DRIVER_CALL(cuGraphInstantiateWithFlags, &exec, graph, 0);
  DRIVER_CALL(cuGraphLaunch, exec, stream.get());
  stream.synchronize();
  // The graph's own memory (its allocation nodes'), not the device's free
  // memory, which other processes move.
  const uint64_t after_first = graph_memory_reserved();
  EXPECT_GT(after_first, 0u) << "the captured call allocated no graph memory";
  for (int replay = 1; replay < 100; ++replay) DRIVER_CALL(cuGraphLaunch, exec, stream.get());
  stream.synchronize();
  EXPECT_EQ(graph_memory_reserved(), after_first) << "replays took more graph memory";
  expect_scatter_result(s, host, device, 100);
  DRIVER_CALL(cuGraphExecDestroy, exec);
  DRIVER_CALL(cuGraphDestroy, graph);
  int64_t position = 0;
  ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS);
  EXPECT_EQ(position, -1);
}

// Three default calls on each of four streams, two streams to a thread, at
// once; with a sorted index each call forks its streaming plan to a side
// stream of its own.
void four_streams_from_two_threads(const ScatterShape& s, bool sorted) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe() + (sorted ? ", sorted" : ""));
  constexpr int kThreads = 2;
  constexpr int kStreamsPerThread = 2;
  constexpr int kCallsPerStream = 3;
  std::vector<HostScatter> hosts;
  std::vector<std::unique_ptr<DeviceScatter>> devices;
  for (int k = 0; k < kThreads * kStreamsPerThread; ++k) {
    hosts.push_back(make_random_scatter(s, derive_seed(seed, static_cast<uint64_t>(k))));
    if (sorted) std::sort(hosts.back().index.begin(), hosts.back().index.end());
    devices.push_back(std::make_unique<DeviceScatter>(s, hosts.back()));
  }
  std::vector<scatterptx_status> statuses(kThreads * kStreamsPerThread, SCATTERPTX_SUCCESS);
  // What stopped each thread before it made and waited for all its calls;
  // "" when nothing did. GoogleTest's assertions are for the main thread,
  // and an exception leaving a thread would end the process.
  std::vector<std::string> thread_failures(kThreads, "the thread did not finish");
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        const GpuStatus gpu = make_gpu_current();
        if (gpu.state != GpuStatus::State::kReady) {
          thread_failures[t] = "no GPU context on the thread: " + gpu.reason;
          return;
        }
        std::vector<std::unique_ptr<Stream>> streams;
        for (int k = 0; k < kStreamsPerThread; ++k) streams.push_back(std::make_unique<Stream>());
        for (int call = 0; call < kCallsPerStream; ++call) {
          for (int k = 0; k < kStreamsPerThread; ++k) {
            const int slot = t * kStreamsPerThread + k;
            const auto args = devices[slot]->args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
            const scatterptx_status status = scatterptx_scatter_add(&args, streams[k]->get());
            if (status != SCATTERPTX_SUCCESS) statuses[slot] = status;
          }
        }
        for (auto& stream : streams) stream->synchronize();
        thread_failures[t] = "";
      } catch (const std::exception& error) {
        thread_failures[t] = std::string("threw: ") + error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(thread_failures[t], "") << "thread " << t;
  for (int k = 0; k < kThreads * kStreamsPerThread; ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(statuses[k], SCATTERPTX_SUCCESS) << scatterptx_status_name(statuses[k]);
    expect_scatter_result(s, hosts[k], *devices[k], kCallsPerStream);
  }
}

TEST(DefaultCall, TrimmingThePoolHandsItsMemoryBackAndLaterCallsRefillIt) {
  SCATTERPTX_REQUIRE_GPU();
  synchronize_gpu();  // no workspace of an earlier test is still in use
  ASSERT_EQ(scatterptx_trim_workspace_pool(), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  EXPECT_EQ(workspace_pool_reserved(), 0u);
  const std::string plan = run_default_call(grouped_shape(SCATTERPTX_F32), fresh_seed());  // synchronises
  ASSERT_EQ(plan.rfind("mode=segmented", 0), 0u) << plan;
  const auto workspace_bytes = static_cast<uint64_t>(plan_number(plan, "workspace_bytes"));
  EXPECT_GE(workspace_pool_reserved(), workspace_bytes) << "the pool keeps the workspace for the next call";
  ASSERT_EQ(scatterptx_trim_workspace_pool(), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  EXPECT_EQ(workspace_pool_reserved(), 0u);
  (void)run_default_call(grouped_shape(SCATTERPTX_F32), fresh_seed());
  EXPECT_GE(workspace_pool_reserved(), workspace_bytes);
}

TEST(DefaultCall, FourStreamsFromTwoThreadsAtOnce) {
  SCATTERPTX_REQUIRE_GPU();
  four_streams_from_two_threads(grouped_shape(SCATTERPTX_BF16), /*sorted=*/false);
}

TEST(DefaultCall, FourStreamsFromTwoThreadsAtOnceOnSortedIndexes) {
  SCATTERPTX_REQUIRE_GPU();
  four_streams_from_two_threads(grouped_shape(SCATTERPTX_F32), /*sorted=*/true);
}

// A sorted index of f32 rows, 4 a target, on the device: the default
// call's order check lets the streaming plan run, on a side stream.
struct SortedShortRuns {
  static ScatterShape shape_of_runs() {
    ScatterShape s;
    s.dtype = SCATTERPTX_F32;
    s.cols = 128;
    s.out_rows = 100000;
    s.src_rows = 400000;
    return s;
  }
  static HostScatter sorted(HostScatter host) {
    std::sort(host.index.begin(), host.index.end());
    return host;
  }
  std::string trace() const { return seed_trace(seed) + ", " + shape.describe(); }

  const uint64_t seed = fresh_seed();
  const ScatterShape shape = shape_of_runs();
  const HostScatter host = sorted(make_random_scatter(shape, seed));
  DeviceScatter device{shape, host};
  const scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
};

// On a sorted f32 index the streaming plan runs on a side stream: work
// queued next on the caller's stream (a copy of out) must see every row
// added, with only the caller's stream waited for. The streaming plan
// outlasts the gated-off grouped launches several times over here.
TEST(DefaultCall, WorkQueuedNextOnTheCallersStreamSeesTheWholeSum) {
  SCATTERPTX_REQUIRE_GPU();
  const SortedShortRuns c;
  SCOPED_TRACE(c.trace());
  const std::string plan = describe_plan(c.args);
  ASSERT_NE(plan.find("streams_when_sorted=1"), std::string::npos) << plan;
  TestAllocator allocator;
  RegisteredAllocator registered(allocator);
  const scatterptx_scatter_add_args& args = c.args;
  const size_t out_bytes = static_cast<size_t>(c.shape.out_rows) * static_cast<size_t>(args.out_row_stride) * 4;
  DeviceBuffer snapshot(out_bytes);
  const CUdeviceptr out = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(args.out));
  Stream stream;
  ASSERT_EQ(scatterptx_scatter_add(&args, stream.get()), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  DRIVER_CALL(cuMemcpyDtoDAsync, snapshot.address(), out, out_bytes, stream.get());
  stream.synchronize();
  synchronize_gpu();
  uint32_t flag = 0;
  ASSERT_EQ(allocator.held.size(), 1u);
  scatterptx_testing::copy_to_host(&flag, allocator.held.back()->address(8), 4);
  EXPECT_EQ(flag, 0xFFFFFFFFu) << "the streaming plan did not run";
  DRIVER_CALL(cuMemcpyDtoD, out, snapshot.address(), out_bytes);  // what the copy saw, checked
  expect_scatter_result(c.shape, c.host, c.device, 1);
}

// Forked from a high-priority stream (the side stream then one of that
// priority), a sorted call still adds every row.
TEST(DefaultCall, ASortedCallFromAHighPriorityStreamAddsEveryRow) {
  SCATTERPTX_REQUIRE_GPU();
  const SortedShortRuns c;
  SCOPED_TRACE(c.trace());
  const std::string plan = describe_plan(c.args);
  ASSERT_NE(plan.find("streams_when_sorted=1"), std::string::npos) << plan;
  CUstream urgent = nullptr;
  DRIVER_CALL(cuStreamCreateWithPriority, &urgent, CU_STREAM_NON_BLOCKING, -100);  // clamped to the greatest
  for (int call = 0; call < 2; ++call) {
    EXPECT_EQ(scatterptx_scatter_add(&c.args, urgent), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  }
  DRIVER_CALL(cuStreamSynchronize, urgent);
  DRIVER_CALL(cuStreamDestroy, urgent);
  expect_scatter_result(c.shape, c.host, c.device, 2);
  int64_t position = 0;
  ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS);
  EXPECT_EQ(position, -1);
}

}  // namespace
}  // namespace scatterptx_test

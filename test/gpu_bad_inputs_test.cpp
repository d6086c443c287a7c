// Bad inputs on the GPU (docs/bad_inputs.md): every call runs on tensors in
// one poisoned allocation (poisoned_arena.hpp), so a write anywhere outside
// what the call may legally change shows: out's rows of valid indices (their
// columns, never the padding) and a caller's workspace. After each bad call
// a valid call in the same context must succeed and match the float64
// reference.
//   - BadInputOnGpu: every host case of the matrix (bad_inputs.hpp) on real
//     memory: the documented answer, and nothing changed.
//   - OutOfRangeIndex*: indices outside [0, out_rows) in RECORD and CHECKED
//     mode, on each streaming path, in the default call, and in each grouped
//     mode through each grouped entry point.
//   - AllocatorFailureOnGpu, DeviceMisuseOnGpu: what reaches the device
//     otherwise (a failing allocator, capture, contexts, plan misuse, what
//     the planner refuses once the device is known).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bad_inputs.hpp"
#include "gpu_harness.hpp"
#include "group_case.hpp"
#include "poisoned_arena.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"

namespace scatterptx_test {
namespace {

namespace bad = scatterptx_bad_inputs;

// The record left by earlier work, taken so that a test starts from none.
void clear_index_record() {
  int64_t stale = 0;
  ASSERT_EQ(scatterptx_take_index_error(&stale), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
}

void expect_record(int64_t expected) {
  int64_t position = 0;
  ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  EXPECT_EQ(position, expected);
}

// A suite that needs the GPU and leaves no index record behind.
class GpuBadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SCATTERPTX_REQUIRE_GPU();
    clear_index_record();
  }
  void TearDown() override {
    if (make_gpu_current().state != GpuStatus::State::kReady) return;
    int64_t stale = 0;
    EXPECT_EQ(scatterptx_take_index_error(&stale), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  }
};

template <typename Param>
class GpuBadInputParamTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    SCATTERPTX_REQUIRE_GPU();
    clear_index_record();
  }
  void TearDown() override {
    if (make_gpu_current().state != GpuStatus::State::kReady) return;
    int64_t stale = 0;
    EXPECT_EQ(scatterptx_take_index_error(&stale), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  }
};

ScatterShape shape_of(scatterptx_index_type index_type, int64_t out_rows, int64_t src_rows, int64_t cols,
                      int64_t padding = 0) {
  ScatterShape s;
  s.dtype = SCATTERPTX_F32;
  s.index_type = index_type;
  s.out_rows = out_rows;
  s.src_rows = src_rows;
  s.cols = cols;
  s.out_row_stride = cols + padding;
  s.src_row_stride = cols + padding;
  return s;
}

std::string plan_text(const scatterptx_scatter_add_args& args) { return describe_plan(args); }

// ---------------------------------------------------------------------------
// Every host case of the matrix, on real memory.

class BadInputOnGpu : public GpuBadInputParamTest<bad::HostCase> {};

TEST_P(BadInputOnGpu, NothingChangesAndTheContextStillWorks) {
  const bad::HostCase& c = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = shape_of(SCATTERPTX_INDEX_INT64, bad::kOutRows, bad::kSrcRows, bad::kCols);
  const HostScatter host = make_random_scatter(s, seed);
  // Room for the cases that stretch a tensor: 5000 out rows, 264-byte src rows.
  ArenaRoom room;
  room.out = 5000 * 256;
  room.src = 64 << 10;
  PoisonedScatter arena(s, host, bad::baseline_workspace_bytes() + 4096, seed, room);
  bad::Call call = bad::baseline_call(arena.out(), arena.src_pointer(), arena.index_pointer(), arena.workspace(),
                                      arena.workspace_bytes());
  c.spoil(call);
  for (const bad::Entry entry : c.entries) {
    SCOPED_TRACE(bad::entry_name(entry));
    EXPECT_EQ(bad::outcome_mismatch(c, entry, bad::run_entry(entry, call)), "");
    arena.expect_unchanged(/*workspace_may_change=*/false);
  }
  expect_record(-1);
  // The context still computes: the unspoiled call.
  const bad::Call valid = bad::baseline_call(arena.out(), arena.src_pointer(), arena.index_pointer(),
                                             arena.workspace(), arena.workspace_bytes());
  ASSERT_EQ(scatterptx_scatter_add(&valid.args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
  expect_record(-1);
}

INSTANTIATE_TEST_SUITE_P(Sm90, BadInputOnGpu, ::testing::ValuesIn(bad::host_cases()),
                         [](const ::testing::TestParamInfo<bad::HostCase>& info) { return info.param.id; });

// ---------------------------------------------------------------------------
// Indices outside [0, out_rows).

// An index with bad entries: its smallest bad position and that entry.
struct BadIndex {
  std::vector<int64_t> index;
  int64_t position = 0;
  int64_t value = 0;
};

// Out-of-range values that fit the index type, negative ones included; for
// int64 also values whose low 32 bits are a valid row.
std::vector<int64_t> bad_values(scatterptx_index_type type, int64_t out_rows) {
  std::vector<int64_t> values = {out_rows, out_rows + 1, -1, -2, -out_rows, std::numeric_limits<int32_t>::min(),
                                 std::numeric_limits<int32_t>::max()};
  if (type == SCATTERPTX_INDEX_INT64) {
    values.insert(values.end(), {(int64_t{1} << 32) + 5, int64_t{1} << 32, -(int64_t{1} << 32) + 9,
                                 std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()});
  }
  return values;
}

// Bad values scattered over a valid index: the first at position 17 (a
// value no message could mistake for out_rows), the last row too, the
// others at random positions after 17, each its own.
BadIndex scatter_bad_values(std::vector<int64_t> index, scatterptx_index_type type, int64_t out_rows, uint64_t seed) {
  BadIndex bad_index;
  const int64_t rows = static_cast<int64_t>(index.size());
  const std::vector<int64_t> values = bad_values(type, out_rows);
  const std::vector<int64_t> positions =
      distinct_positions(static_cast<int64_t>(values.size()), 18, rows - 1, derive_seed(seed, 99));
  for (size_t k = 0; k < values.size(); ++k) index[static_cast<size_t>(positions[k])] = values[k];
  index.back() = values.back();
  bad_index.position = 17;
  bad_index.value = out_rows + 123457;
  index[17] = bad_index.value;
  bad_index.index = std::move(index);
  return bad_index;
}

// A sorted valid index ending in bad entries (each sorts last, its key being
// out_rows): the default call's order check may take the streaming plan.
BadIndex sorted_ending_in_bad_values(std::vector<int64_t> index, int64_t out_rows) {
  std::sort(index.begin(), index.end());
  const size_t rows = index.size();
  index[rows - 3] = out_rows;
  index[rows - 2] = out_rows + 7;
  index[rows - 1] = std::numeric_limits<int32_t>::max();
  return BadIndex{index, static_cast<int64_t>(rows) - 3, out_rows};
}

// The answer of a call that met bad entries: RECORD succeeds and records the
// smallest bad position; CHECKED fails with the documented message. Either
// way the CHECKED slot is not the record: a take then finds nothing more.
void expect_bad_index_answer(scatterptx_status status, const std::string& message, scatterptx_index_check check,
                             const BadIndex& bad_index, int64_t out_rows) {
  if (check == SCATTERPTX_INDEX_CHECKED) {
    EXPECT_EQ(status, SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE) << message;
    EXPECT_EQ(message, bad::expand(bad::device_case("oor_checked_streaming").message,
                                   {{"position", std::to_string(bad_index.position)},
                                    {"value", std::to_string(bad_index.value)},
                                    {"out_rows", std::to_string(out_rows)}}));
    expect_record(-1);
  } else {
    EXPECT_EQ(status, SCATTERPTX_SUCCESS) << message;
    expect_record(bad_index.position);
    expect_record(-1);
  }
}

const char* index_type_tag(scatterptx_index_type type) { return type == SCATTERPTX_INDEX_INT32 ? "Int32" : "Int64"; }
const char* check_tag(scatterptx_index_check check) {
  return check == SCATTERPTX_INDEX_RECORD ? "Record" : "Checked";
}

// ---- the streaming paths ----

using StreamingParam = std::tuple<scatterptx_index_type, scatterptx_path, scatterptx_index_check>;

class OutOfRangeIndexStreaming : public GpuBadInputParamTest<StreamingParam> {};

TEST_P(OutOfRangeIndexStreaming, OnlyValidRowsChange) {
  const auto [type, path, check] = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  // 256-byte rows padded to 272: every path takes them, the privatised one too.
  const ScatterShape s = shape_of(type, 500, 3000, 64, 4);
  HostScatter host = make_random_scatter(s, seed);
  const BadIndex bad_index = scatter_bad_values(host.index, type, s.out_rows, seed);
  host.index = bad_index.index;
  PoisonedScatter arena(s, host, 0, seed);
  scatterptx_scatter_add_args args = arena.args(path, check);
  args.grouping = SCATTERPTX_GROUPING_OFF;  // the streaming paths only, whatever the default call would do
  if (path != SCATTERPTX_PATH_AUTO) {
    const std::string plan = plan_text(args);
    EXPECT_NE(plan.find(std::string("path=") + (path == SCATTERPTX_PATH_TMA       ? "tma"
                                                : path == SCATTERPTX_PATH_RED     ? "red"
                                                                                  : "private")),
              std::string::npos)
        << plan;
  }
  const scatterptx_status status = scatterptx_scatter_add(&args, nullptr);
  const std::string message = scatterptx_last_error_message();
  expect_bad_index_answer(status, message, check, bad_index, s.out_rows);
  ASSERT_TRUE(arena.expect_rows_added(arena.index(), 1, false));

  // The same call on a valid index.
  const std::vector<int64_t> valid = random_indices(s.src_rows, s.out_rows, derive_seed(seed, 7));
  arena.set_index(valid);
  ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  arena.expect_rows_added(valid, 1, false);
  expect_record(-1);
}

INSTANTIATE_TEST_SUITE_P(
    Sm90, OutOfRangeIndexStreaming,
    ::testing::Combine(::testing::Values(SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64),
                       ::testing::Values(SCATTERPTX_PATH_AUTO, SCATTERPTX_PATH_TMA, SCATTERPTX_PATH_RED,
                                         SCATTERPTX_PATH_PRIVATE),
                       ::testing::Values(SCATTERPTX_INDEX_RECORD, SCATTERPTX_INDEX_CHECKED)),
    [](const ::testing::TestParamInfo<StreamingParam>& info) {
      return std::string(index_type_tag(std::get<0>(info.param))) + path_name(std::get<1>(info.param)) +
             check_tag(std::get<2>(info.param));
    });

// ---- the default call where it groups ----

enum class IndexOrder { kRandom, kSorted };
using DefaultCallParam = std::tuple<scatterptx_index_type, IndexOrder, scatterptx_index_check>;

class OutOfRangeIndexDefaultCall : public GpuBadInputParamTest<DefaultCallParam> {};

TEST_P(OutOfRangeIndexDefaultCall, OnlyValidRowsChange) {
  const auto [type, order, check] = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  // 512-byte rows (padded to 528) into a 21 MB out: the default call groups.
  const ScatterShape s = shape_of(type, 40000, 100000, 128, 4);
  HostScatter host = make_random_scatter(s, seed);
  const BadIndex bad_index = order == IndexOrder::kRandom ? scatter_bad_values(host.index, type, s.out_rows, seed)
                                                          : sorted_ending_in_bad_values(host.index, s.out_rows);
  host.index = bad_index.index;
  PoisonedScatter arena(s, host, 0, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, check);
  const std::string plan = plan_text(args);
  ASSERT_EQ(plan.rfind("mode=segmented", 0), 0u) << plan;
  const scatterptx_status status = scatterptx_scatter_add(&args, nullptr);
  const std::string message = scatterptx_last_error_message();
  expect_bad_index_answer(status, message, check, bad_index, s.out_rows);
  ASSERT_TRUE(arena.expect_rows_added(arena.index(), 1, false));

  std::vector<int64_t> valid = random_indices(s.src_rows, s.out_rows, derive_seed(seed, 7));
  if (order == IndexOrder::kSorted) std::sort(valid.begin(), valid.end());
  arena.set_index(valid);
  ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  arena.expect_rows_added(valid, 1, false);
  expect_record(-1);
}

INSTANTIATE_TEST_SUITE_P(
    Sm90, OutOfRangeIndexDefaultCall,
    ::testing::Combine(::testing::Values(SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64),
                       ::testing::Values(IndexOrder::kRandom, IndexOrder::kSorted),
                       ::testing::Values(SCATTERPTX_INDEX_RECORD, SCATTERPTX_INDEX_CHECKED)),
    [](const ::testing::TestParamInfo<DefaultCallParam>& info) {
      return std::string(index_type_tag(std::get<0>(info.param))) +
             (std::get<1>(info.param) == IndexOrder::kRandom ? "Random" : "Sorted") +
             check_tag(std::get<2>(info.param));
    });

// ---- grouped execution: each entry point, each mode ----

enum class Invocation { kSingleShot, kPlanOwnWorkspace, kPlanCallerWorkspace };
enum class Mode { kSegmented, kAuto, kDeterministic, kStreaming };
using GroupedParam = std::tuple<scatterptx_index_type, Invocation, Mode, scatterptx_index_check>;

const char* invocation_tag(Invocation invocation) {
  switch (invocation) {
    case Invocation::kSingleShot: return "SingleShot";
    case Invocation::kPlanOwnWorkspace: return "PlanOwnWorkspace";
    case Invocation::kPlanCallerWorkspace: return "PlanCallerWorkspace";
  }
  return "?";
}

const char* mode_tag(Mode mode) {
  switch (mode) {
    case Mode::kSegmented: return "Segmented";
    case Mode::kAuto: return "Auto";
    case Mode::kDeterministic: return "Deterministic";
    case Mode::kStreaming: return "Streaming";
  }
  return "?";
}

scatterptx_group_options options_for(Mode mode) {
  scatterptx_group_options options;
  scatterptx_group_options_init(&options);
  if (mode == Mode::kSegmented) options.mode = SCATTERPTX_MODE_SEGMENTED;
  if (mode == Mode::kStreaming) options.mode = SCATTERPTX_MODE_STREAMING;
  if (mode == Mode::kDeterministic) options.deterministic = 1;
  return options;
}

class OutOfRangeIndexGrouped : public GpuBadInputParamTest<GroupedParam> {
 protected:
  // Runs the invocation on the arena's index. Returns the status and message
  // of the call that met the index (a plan's create or execute), after
  // checking the arena: nothing changed where the call added nothing.
  struct Answer {
    scatterptx_status status = SCATTERPTX_SUCCESS;
    std::string message;
    bool rows_added = false;
  };

  Answer run(PoisonedScatter& arena, const scatterptx_scatter_add_args& args, const scatterptx_group_options& options,
             Invocation invocation, std::unique_ptr<ScopedPlan>& plan) {
    Answer answer;
    if (invocation == Invocation::kSingleShot) {
      answer.status = scatterptx_scatter_add_grouped(&args, &options, arena.workspace(), arena.workspace_bytes(),
                                                     nullptr);
      answer.message = scatterptx_last_error_message();
      answer.rows_added = true;
      return answer;
    }
    plan = std::make_unique<ScopedPlan>();
    void* workspace = invocation == Invocation::kPlanCallerWorkspace ? arena.workspace() : nullptr;
    const size_t bytes = invocation == Invocation::kPlanCallerWorkspace ? arena.workspace_bytes() : 0;
    const scatterptx_status created =
        scatterptx_plan_create(&args, &options, workspace, bytes, nullptr, plan->receive());
    if (created != SCATTERPTX_SUCCESS) {
      answer.status = created;
      answer.message = scatterptx_last_error_message();
      EXPECT_EQ(plan->get(), nullptr) << "a refused create handed out a plan";
      EXPECT_TRUE(arena.expect_unchanged(/*workspace_may_change=*/true)) << "plan_create wrote outside its workspace";
      return answer;
    }
    EXPECT_NE(plan->get(), nullptr);
    EXPECT_TRUE(arena.expect_unchanged(true)) << "plan_create wrote outside its workspace";
    expect_record(-1);  // create adds nothing, so it records nothing
    answer.status = scatterptx_plan_execute(plan->get(), args.out, args.src, nullptr);
    answer.message = scatterptx_last_error_message();
    answer.rows_added = true;
    return answer;
  }
};

TEST_P(OutOfRangeIndexGrouped, OnlyValidRowsChange) {
  const auto [type, invocation, mode, check] = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  // 256-byte rows (padded to 272), 70 rows a target: AUTO groups.
  const ScatterShape s = shape_of(type, 1000, 70000, 64, 4);
  HostScatter host = make_random_scatter(s, seed);
  const BadIndex bad_index = scatter_bad_values(host.index, type, s.out_rows, seed);
  host.index = bad_index.index;
  const scatterptx_group_options options = options_for(mode);
  size_t workspace_bytes = 0;
  {
    PoisonedScatter probe(s, host, 0, seed);
    query_workspace_size(probe.args(SCATTERPTX_PATH_AUTO, check), options, &workspace_bytes);
    ASSERT_FALSE(HasFatalFailure());
  }
  if (invocation == Invocation::kPlanOwnWorkspace) workspace_bytes = 0;
  PoisonedScatter arena(s, host, workspace_bytes, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, check);

  std::unique_ptr<ScopedPlan> plan;
  const Answer answer = run(arena, args, options, invocation, plan);
  if (check == SCATTERPTX_INDEX_CHECKED && !answer.rows_added) {
    // A plan that groups reads the index at create and refuses it there.
    EXPECT_NE(mode, Mode::kStreaming) << "a streaming plan reads the index at each execute";
    expect_bad_index_answer(answer.status, answer.message, check, bad_index, s.out_rows);
  } else {
    if (invocation != Invocation::kSingleShot && check == SCATTERPTX_INDEX_CHECKED) {
      // Created: then the plan streams, and its execute checks.
      const std::string described = describe_group_plan(plan->get());
      EXPECT_NE(described.find("mode=streaming"), std::string::npos) << described;
      EXPECT_TRUE(mode == Mode::kStreaming || mode == Mode::kAuto) << described;
    }
    expect_bad_index_answer(answer.status, answer.message, check, bad_index, s.out_rows);
    ASSERT_TRUE(arena.expect_rows_added(arena.index(), 1, true));
  }
  plan.reset();  // synchronises, then destroys

  // The same invocation on a valid index.
  const std::vector<int64_t> valid = random_indices(s.src_rows, s.out_rows, derive_seed(seed, 7));
  arena.set_index(valid);
  std::unique_ptr<ScopedPlan> valid_plan;
  const Answer valid_answer = run(arena, args, options, invocation, valid_plan);
  ASSERT_EQ(valid_answer.status, SCATTERPTX_SUCCESS) << valid_answer.message;
  arena.expect_rows_added(valid, 1, true);
  expect_record(-1);
}

INSTANTIATE_TEST_SUITE_P(
    Sm90, OutOfRangeIndexGrouped,
    ::testing::Combine(::testing::Values(SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64),
                       ::testing::Values(Invocation::kSingleShot, Invocation::kPlanOwnWorkspace,
                                         Invocation::kPlanCallerWorkspace),
                       ::testing::Values(Mode::kSegmented, Mode::kAuto, Mode::kDeterministic, Mode::kStreaming),
                       ::testing::Values(SCATTERPTX_INDEX_RECORD, SCATTERPTX_INDEX_CHECKED)),
    [](const ::testing::TestParamInfo<GroupedParam>& info) {
      return std::string(index_type_tag(std::get<0>(info.param))) + invocation_tag(std::get<1>(info.param)) +
             mode_tag(std::get<2>(info.param)) + check_tag(std::get<3>(info.param));
    });

// ---------------------------------------------------------------------------
// The default call's allocator failing.

// Hands out NULL, or memory 16 bytes off 256-byte alignment (from a buffer of
// its own, outside the arena); counts what it is asked.
struct FailingAllocator {
  bool misaligned = false;
  int allocations = 0;
  int releases = 0;
  size_t last_bytes = 0;
  std::vector<std::unique_ptr<DeviceBuffer>> held;

  static void* allocate(size_t bytes, CUstream, void* self_pointer) {
    auto* self = static_cast<FailingAllocator*>(self_pointer);
    ++self->allocations;
    self->last_bytes = bytes;
    if (!self->misaligned) return nullptr;
    self->held.push_back(std::make_unique<DeviceBuffer>(bytes + 256));
    return self->held.back()->pointer(16);
  }
  static void release(void*, size_t, CUstream, void* self_pointer) {
    ++static_cast<FailingAllocator*>(self_pointer)->releases;
  }
};

using AllocatorParam = std::tuple<bool /*misaligned*/, scatterptx_grouping>;

class AllocatorFailureOnGpu : public GpuBadInputParamTest<AllocatorParam> {
 protected:
  void TearDown() override {
    EXPECT_EQ(scatterptx_set_allocator(nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    GpuBadInputParamTest<AllocatorParam>::TearDown();
  }
};

TEST_P(AllocatorFailureOnGpu, NothingElseChanges) {
  const auto [misaligned, grouping] = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = shape_of(SCATTERPTX_INDEX_INT64, 1000, 70000, 64, 4);
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  args.grouping = grouping;
  const std::string plan = plan_text(args);
  ASSERT_EQ(plan.rfind("mode=segmented", 0), 0u) << plan;

  FailingAllocator allocator;
  allocator.misaligned = misaligned;
  const scatterptx_allocator registration{&FailingAllocator::allocate, &FailingAllocator::release, &allocator};
  ASSERT_EQ(scatterptx_set_allocator(&registration), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  const scatterptx_status status = scatterptx_scatter_add(&args, nullptr);
  const std::string message = scatterptx_last_error_message();
  EXPECT_EQ(allocator.allocations, 1);
  EXPECT_EQ(allocator.releases, misaligned ? 1 : 0) << "misaligned memory is given back at once, NULL is not";
  if (grouping == SCATTERPTX_GROUPING_NO_FALLBACK) {
    const std::string id = misaligned ? "allocator_misaligned_no_fallback" : "allocator_null_no_fallback";
    EXPECT_EQ(status, SCATTERPTX_ERROR_OUT_OF_MEMORY) << message;
    EXPECT_EQ(message, bad::expand(bad::device_case(id).message, {{"bytes", std::to_string(allocator.last_bytes)}}));
    arena.expect_unchanged(false);
  } else {
    EXPECT_EQ(status, SCATTERPTX_SUCCESS) << message;  // it streams instead
    arena.expect_rows_added(host.index, 1, false);
  }
  expect_record(-1);

  // With the pool again, the call groups and is right.
  ASSERT_EQ(scatterptx_set_allocator(nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
  expect_record(-1);
}

INSTANTIATE_TEST_SUITE_P(Sm90, AllocatorFailureOnGpu,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Values(SCATTERPTX_GROUPING_AUTO,
                                                              SCATTERPTX_GROUPING_NO_FALLBACK)),
                         [](const ::testing::TestParamInfo<AllocatorParam>& info) {
                           return std::string(std::get<0>(info.param) ? "Misaligned" : "Null") +
                                  (std::get<1>(info.param) == SCATTERPTX_GROUPING_AUTO ? "Auto" : "NoFallback");
                         });

// ---------------------------------------------------------------------------
// Streams, contexts, capture, plans, and what the planner refuses with the
// device known.

class DeviceMisuseOnGpu : public GpuBadInputTest {
 protected:
  // 1000 x 64 f32 out (rows padded to 68), 4096 source rows: every path.
  ScatterShape small_shape() const { return shape_of(SCATTERPTX_INDEX_INT64, 1000, 4096, 64, 4); }
};

TEST_F(DeviceMisuseOnGpu, CheckedCallInACapturingStream) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = small_shape();
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_CHECKED);
  ASSERT_EQ(scatterptx_prepare(), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  Stream stream;
  DRIVER_CALL(cuStreamBeginCapture, stream.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  const scatterptx_status status = scatterptx_scatter_add(&args, stream.get());
  const std::string message = scatterptx_last_error_message();
  CUgraph graph = nullptr;
  const CUresult ended = driver().cuStreamEndCapture(stream.get(), &graph);
  if (ended == CUDA_SUCCESS && graph != nullptr) DRIVER_CALL(cuGraphDestroy, graph);
  EXPECT_EQ(status, SCATTERPTX_ERROR_INVALID_ARGUMENT) << message;
  EXPECT_EQ(message, bad::device_case("checked_in_capture").message);
  EXPECT_EQ(ended, CUDA_SUCCESS) << "the refused call broke the capture";
  arena.expect_unchanged(false);

  ASSERT_EQ(scatterptx_scatter_add(&args, stream.get()), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
}

TEST_F(DeviceMisuseOnGpu, CallOnAThreadWithoutAContext) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = small_shape();
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  scatterptx_status status = SCATTERPTX_SUCCESS;
  std::string message;
  // Not null, so that only the query's answer can make it null.
  CUcontext current = reinterpret_cast<CUcontext>(uintptr_t{1});
  CUresult query = CUDA_ERROR_UNKNOWN;
  std::thread bare([&] {  // a new thread has no current context
    query = driver().cuCtxGetCurrent(&current);
    status = scatterptx_scatter_add(&args, nullptr);
    message = scatterptx_last_error_message();
  });
  bare.join();
  ASSERT_EQ(query, CUDA_SUCCESS) << "cuCtxGetCurrent on the new thread";
  ASSERT_EQ(current, nullptr);
  EXPECT_EQ(status, SCATTERPTX_ERROR_NO_CONTEXT) << message;
  EXPECT_EQ(message, bad::device_case("no_context").message);
  arena.expect_unchanged(false);

  ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
}

// A SEGMENTED plan of the arena's problem, in its own workspace.
void create_segmented_plan(const scatterptx_scatter_add_args& args, ScopedPlan& plan) {
  const scatterptx_group_options options = options_for(Mode::kSegmented);
  ASSERT_EQ(scatterptx_plan_create(&args, &options, nullptr, 0, nullptr, plan.receive()), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
}

TEST_F(DeviceMisuseOnGpu, PlanThatGroupsInACapturingStream) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = small_shape();
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const scatterptx_group_options options = options_for(Mode::kSegmented);
  ASSERT_EQ(scatterptx_prepare(), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  Stream stream;
  DRIVER_CALL(cuStreamBeginCapture, stream.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  scatterptx_plan plan = reinterpret_cast<scatterptx_plan>(uintptr_t{0x1});  // a refusal must clear it
  const scatterptx_status status = scatterptx_plan_create(&args, &options, nullptr, 0, stream.get(), &plan);
  const std::string message = scatterptx_last_error_message();
  CUgraph graph = nullptr;
  const CUresult ended = driver().cuStreamEndCapture(stream.get(), &graph);
  if (ended == CUDA_SUCCESS && graph != nullptr) DRIVER_CALL(cuGraphDestroy, graph);
  EXPECT_EQ(status, SCATTERPTX_ERROR_INVALID_ARGUMENT) << message;
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(message, bad::device_case("plan_create_in_capture").message);
  EXPECT_EQ(ended, CUDA_SUCCESS) << "the refused create broke the capture";
  arena.expect_unchanged(false);

  // Made before capturing, the same plan's executes are what a capture holds.
  ScopedPlan made;
  create_segmented_plan(args, made);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(scatterptx_plan_execute(made.get(), args.out, args.src, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
}

// A plan's workspace written over by someone else (here every byte 0xFF:
// keys past out_rows) gives wrong sums at worst, never a write outside out.
TEST_F(DeviceMisuseOnGpu, PlanWorkspaceWrittenOverByOthersWritesNothingOutsideOut) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = small_shape();
  const HostScatter host = make_random_scatter(s, seed);
  const scatterptx_group_options options = options_for(Mode::kSegmented);
  size_t workspace_bytes = 0;
  {
    PoisonedScatter probe(s, host, 0, seed);
    query_workspace_size(probe.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD), options, &workspace_bytes);
    ASSERT_FALSE(HasFatalFailure());
  }
  PoisonedScatter arena(s, host, workspace_bytes, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  ScopedPlan plan;
  ASSERT_EQ(scatterptx_plan_create(&args, &options, arena.workspace(), arena.workspace_bytes(), nullptr,
                                   plan.receive()),
            SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  fill_device_bytes(reinterpret_cast<CUdeviceptr>(arena.workspace()), 0xFF, arena.workspace_bytes());
  ASSERT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.src, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  synchronize_gpu();
  // Every key reads as past out_rows: nothing is added anywhere.
  arena.expect_unchanged(/*workspace_may_change=*/true);
}

TEST_F(DeviceMisuseOnGpu, PlanExecuteWithNullOutOrSrc) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = small_shape();
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  ScopedPlan plan;
  create_segmented_plan(args, plan);
  ASSERT_FALSE(HasFatalFailure());
  const std::string& pattern = bad::device_case("plan_execute_null").message;
  EXPECT_EQ(scatterptx_plan_execute(plan.get(), nullptr, args.src, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), bad::expand(pattern, {{"tensor", "out"}}));
  EXPECT_EQ(scatterptx_plan_execute(plan.get(), args.out, nullptr, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), bad::expand(pattern, {{"tensor", "src"}}));
  arena.expect_unchanged(false);

  ASSERT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.src, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
}

TEST_F(DeviceMisuseOnGpu, PlanExecuteLessAlignedThanAtCreate) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = small_shape();
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  ScopedPlan plan;
  create_segmented_plan(args, plan);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_NE(describe_group_plan(plan.get()).find("vec16"), std::string::npos) << describe_group_plan(plan.get());
  const std::string& pattern = bad::device_case("plan_execute_misaligned").message;
  char* const out = static_cast<char*>(args.out);
  const char* const src = static_cast<const char*>(args.src);
  EXPECT_EQ(scatterptx_plan_execute(plan.get(), out + 4, src, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), bad::expand(pattern, {{"tensor", "out"}, {"alignment", "16"}}));
  EXPECT_EQ(scatterptx_plan_execute(plan.get(), out, src + 8, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), bad::expand(pattern, {{"tensor", "src"}, {"alignment", "16"}}));
  arena.expect_unchanged(false);

  ASSERT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.src, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
}

TEST_F(DeviceMisuseOnGpu, PlanExecuteWithOutOverlappingSrcStaysInsideOut) {
  // create saw separate tensors; execute is handed src = out. More out rows
  // than source rows keep src inside out, so every read is of out's values.
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = shape_of(SCATTERPTX_INDEX_INT64, 5000, 4096, 64, 4);
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  ScopedPlan plan;
  create_segmented_plan(args, plan);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.out, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  arena.expect_unchanged_outside_out(false);
  expect_record(-1);

  arena.repoison_out(derive_seed(seed, 5));  // the sums above are unspecified
  ASSERT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.src, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
}

TEST_F(DeviceMisuseOnGpu, ForcedPrivatePathThatDoesNotFit) {
  // 4096 targets: within the path's layout rules, but 64-column f32
  // accumulators for them take 1 MiB of shared memory.
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = shape_of(SCATTERPTX_INDEX_INT64, 4096, 4096, 64, 4);
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_PRIVATE, SCATTERPTX_INDEX_RECORD);
  const std::string expected =
      bad::expand(bad::device_case("private_does_not_fit").message, {{"out_rows", std::to_string(s.out_rows)}});
  scatterptx_group_options streaming;
  scatterptx_group_options_init(&streaming);
  streaming.mode = SCATTERPTX_MODE_STREAMING;
  char buffer[1024];
  EXPECT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), expected);
  EXPECT_EQ(scatterptx_describe_plan(&args, buffer, sizeof buffer), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), expected);
  ScopedPlan plan;
  EXPECT_EQ(scatterptx_plan_create(&args, &streaming, nullptr, 0, nullptr, plan.receive()),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), expected);
  EXPECT_EQ(plan.get(), nullptr);
  EXPECT_EQ(scatterptx_scatter_add_grouped(&args, &streaming, nullptr, 0, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), expected);
  arena.expect_unchanged(false);

  const scatterptx_scatter_add_args valid = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  ASSERT_EQ(scatterptx_scatter_add(&valid, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
}

TEST_F(DeviceMisuseOnGpu, TmaScheduleBeyondSharedMemory) {
  // 256-byte rows: a chunk is the whole row, a stage 256 bytes; 32 warps of
  // 32 stages need 32 * 32 * (256 + 8) bytes a CTA.
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = small_shape();
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const scatterptx_schedule schedule = {65536, 32, 32, 0};
  args.schedule = &schedule;
  const int limit = device_attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  const std::string expected = bad::expand(bad::device_case("tma_schedule_too_big").message,
                                           {{"bytes", std::to_string(32 * 32 * (256 + 8))},
                                            {"limit", std::to_string(limit)}});
  scatterptx_group_options streaming;
  scatterptx_group_options_init(&streaming);
  streaming.mode = SCATTERPTX_MODE_STREAMING;
  char buffer[1024];
  EXPECT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), expected);
  EXPECT_EQ(scatterptx_describe_plan(&args, buffer, sizeof buffer), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), expected);
  ScopedPlan plan;
  EXPECT_EQ(scatterptx_plan_create(&args, &streaming, nullptr, 0, nullptr, plan.receive()),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), expected);
  EXPECT_EQ(scatterptx_scatter_add_grouped(&args, &streaming, nullptr, 0, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), expected);
  arena.expect_unchanged(false);

  args.schedule = nullptr;
  ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
}

// Device 1's primary context, current while the test uses it.
class SecondContext {
 public:
  SecondContext() {
    DRIVER_CALL(cuDeviceGet, &device_, 1);
    DRIVER_CALL(cuDevicePrimaryCtxRetain, &context_, device_);
  }
  ~SecondContext() {
    (void)driver().cuCtxSetCurrent(gpu_context());
    (void)driver().cuDevicePrimaryCtxRelease(device_);
  }
  void make_current() const { DRIVER_CALL(cuCtxSetCurrent, context_); }

 private:
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

int device_count() {
  int count = 0;
  DRIVER_CALL(cuDeviceGetCount, &count);
  return count;
}

TEST_F(DeviceMisuseOnGpu, StreamOfAnotherContext) {
  if (device_count() < 2) GTEST_SKIP() << "needs a second CUDA device for a second context";
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = small_shape();
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  SecondContext other;
  other.make_current();
  CUstream other_stream = nullptr;
  DRIVER_CALL(cuStreamCreate, &other_stream, CU_STREAM_NON_BLOCKING);
  DRIVER_CALL(cuCtxSetCurrent, gpu_context());
  EXPECT_EQ(scatterptx_scatter_add(&args, other_stream), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(scatterptx_last_error_message(), bad::device_case("stream_other_context").message);
  arena.expect_unchanged(false);
  other.make_current();
  DRIVER_CALL(cuStreamDestroy, other_stream);
  DRIVER_CALL(cuCtxSetCurrent, gpu_context());

  ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
}

TEST_F(DeviceMisuseOnGpu, PlanExecutedInAnotherContext) {
  if (device_count() < 2) GTEST_SKIP() << "needs a second CUDA device for a second context";
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = small_shape();
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  SecondContext other;
  scatterptx_plan foreign = nullptr;
  {
    // The plan's own tensors on device 1: create reads its index there.
    other.make_current();
    const HostScatter there = make_random_scatter(s, derive_seed(seed, 3));
    DeviceScatter device(s, there);
    const scatterptx_scatter_add_args foreign_args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
    scatterptx_group_options options;
    scatterptx_group_options_init(&options);
    options.mode = SCATTERPTX_MODE_SEGMENTED;
    ASSERT_EQ(scatterptx_plan_create(&foreign_args, &options, nullptr, 0, nullptr, &foreign), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    DRIVER_CALL(cuCtxSetCurrent, gpu_context());
    EXPECT_EQ(scatterptx_plan_execute(foreign, args.out, args.src, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(scatterptx_last_error_message(), bad::device_case("plan_other_context").message);
    arena.expect_unchanged(false);
    other.make_current();
    EXPECT_EQ(scatterptx_plan_destroy(foreign), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  }  // device 1's buffers freed with its context current
  DRIVER_CALL(cuCtxSetCurrent, gpu_context());

  ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
}

// Memory of device 1 while device 0's context is current: refused by name at
// every entry point before anything is enqueued, on either device.
TEST_F(DeviceMisuseOnGpu, MemoryOfAnotherDevice) {
  if (device_count() < 2) GTEST_SKIP() << "needs a second CUDA device for memory of another device";
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = small_shape();
  const HostScatter host = make_random_scatter(s, seed);
  PoisonedScatter arena(s, host, 0, seed);
  const scatterptx_scatter_add_args args = arena.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const std::string& pattern = bad::device_case("memory_other_device").message;
  SecondContext other;
  {
    other.make_current();
    const HostScatter there = make_random_scatter(s, derive_seed(seed, 5));
    DeviceScatter device(s, there);
    const scatterptx_scatter_add_args foreign = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
    DRIVER_CALL(cuCtxSetCurrent, gpu_context());
    scatterptx_group_options options;
    scatterptx_group_options_init(&options);
    options.mode = SCATTERPTX_MODE_SEGMENTED;
    for (const char* tensor : {"out", "src", "index"}) {
      SCOPED_TRACE(tensor);
      scatterptx_scatter_add_args mixed = args;
      if (std::string(tensor) == "out") mixed.out = foreign.out;
      if (std::string(tensor) == "src") mixed.src = foreign.src;
      if (std::string(tensor) == "index") mixed.index = foreign.index;
      const std::string expected = bad::expand(pattern, {{"tensor", tensor}, {"n", "1"}});
      EXPECT_EQ(scatterptx_scatter_add(&mixed, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(scatterptx_last_error_message(), expected);
      scatterptx_plan plan = nullptr;
      EXPECT_EQ(scatterptx_plan_create(&mixed, &options, nullptr, 0, nullptr, &plan), SCATTERPTX_ERROR_INVALID_ARGUMENT);
      EXPECT_EQ(scatterptx_last_error_message(), expected);
      EXPECT_EQ(plan, nullptr);
    }
    DRIVER_CALL(cuCtxSynchronize);
    arena.expect_unchanged(false);
    other.make_current();
    DRIVER_CALL(cuCtxSynchronize);
    EXPECT_TRUE(device.download_out().bytes == there.out0.bytes) << "device 1's out was written";
  }  // device 1's buffers freed with its context current
  DRIVER_CALL(cuCtxSetCurrent, gpu_context());

  ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  arena.expect_rows_added(host.index, 1, false);
}

}  // namespace
}  // namespace scatterptx_test

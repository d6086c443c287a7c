// scatter_reduce on the GPU: every dtype x reduce (sum, mean, amax, amin) x
// include_self x weights (none, f32, the rows' dtype; sum only) x index type,
// through the default call, a grouped call, a deterministic plan and (for
// weighted sums) the forced red path, against the float64 reduce with out
// poisoned first: targets no row reaches, a hot target whose segment spans
// two combine levels, NaN and infinities in src and out, out-of-range
// indices (skipped, the smallest recorded; CHECKED names it), rows with
// padding and misaligned pointers (the scalar summing variants), and the
// refusals (weighted mean, grouping off, no workspace).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "group_case.hpp"
#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"

namespace scatterptx_test {
namespace {

enum class Weights { kNone, kF32, kOwnDtype };

const char* weights_name(Weights w) {
  switch (w) {
    case Weights::kNone: return "Unweighted";
    case Weights::kF32: return "F32Weights";
    case Weights::kOwnDtype: return "OwnWeights";
  }
  return "UnknownWeights";
}

const char* reduce_label(scatterptx_reduce reduce) {
  switch (reduce) {
    case SCATTERPTX_REDUCE_SUM: return "Sum";
    case SCATTERPTX_REDUCE_MEAN: return "Mean";
    case SCATTERPTX_REDUCE_AMAX: return "Amax";
    case SCATTERPTX_REDUCE_AMIN: return "Amin";
  }
  return "UnknownReduce";
}

// As plan descriptions spell it.
const char* reduce_text(scatterptx_reduce reduce) {
  switch (reduce) {
    case SCATTERPTX_REDUCE_SUM: return "sum";
    case SCATTERPTX_REDUCE_MEAN: return "mean";
    case SCATTERPTX_REDUCE_AMAX: return "amax";
    case SCATTERPTX_REDUCE_AMIN: return "amin";
  }
  return "unknown";
}

struct ReduceCase {
  scatterptx_dtype dtype;
  scatterptx_index_type index_type;
  scatterptx_reduce reduce;
  bool include_self;
  Weights weights;

  scatterptx_dtype weights_dtype() const { return weights == Weights::kOwnDtype ? dtype : SCATTERPTX_F32; }
  bool plain_sum() const { return reduce == SCATTERPTX_REDUCE_SUM && include_self; }
  std::string name() const {
    return std::string(dtype_name(dtype)) + "_" + index_type_name(index_type) + "_" + reduce_label(reduce) +
           (include_self ? "_WithSelf_" : "_WithoutSelf_") + weights_name(weights);
  }
};

void PrintTo(const ReduceCase& c, std::ostream* os) { *os << c.name(); }

std::vector<ReduceCase> all_cases() {
  std::vector<ReduceCase> cases;
  for (scatterptx_dtype dtype : {SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16, SCATTERPTX_F64}) {
    for (scatterptx_index_type index : {SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64}) {
      for (scatterptx_reduce reduce :
           {SCATTERPTX_REDUCE_SUM, SCATTERPTX_REDUCE_MEAN, SCATTERPTX_REDUCE_AMAX, SCATTERPTX_REDUCE_AMIN}) {
        for (bool self : {true, false}) {
          for (Weights w : {Weights::kNone, Weights::kF32, Weights::kOwnDtype}) {
            if (w != Weights::kNone && reduce != SCATTERPTX_REDUCE_SUM) continue;  // refused: RefusalsTest
            if (w == Weights::kOwnDtype && dtype == SCATTERPTX_F32) continue;      // the same as f32 weights
            cases.push_back({dtype, index, reduce, self, w});
          }
        }
      }
    }
  }
  return cases;
}

// Five layouts: 1 KB rows, 16-byte aligned (vec16 summing variants, two
// CTAs along each row for f32); 37 columns in padded rows with src one
// element off 16-byte alignment (scalar variants, the red path's tail);
// 32-byte rows (the red path's short-row loop); 72-byte rows with src 8
// bytes off 16-byte alignment and 36-byte rows 4 bytes off (the red path's
// 8-byte and, for f16/bf16, 4-byte lanes).
enum class Layout { kLongRows, kUnaligned, kShortRows, kEightByteLanes, kFourByteLanes };

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::kLongRows: return "long rows";
    case Layout::kUnaligned: return "unaligned rows";
    case Layout::kShortRows: return "short rows";
    case Layout::kEightByteLanes: return "rows 8 bytes off alignment";
    case Layout::kFourByteLanes: return "rows 4 bytes off alignment";
  }
  return "unknown layout";
}

ScatterShape shape_of(Layout layout, const ReduceCase& c) {
  const int64_t element = static_cast<int64_t>(element_bytes(c.dtype));
  ScatterShape s;
  s.dtype = c.dtype;
  s.index_type = c.index_type;
  switch (layout) {
    case Layout::kLongRows:
      s.cols = 1024 / element;
      s.out_rows = 600;
      s.src_rows = 30000;
      break;
    case Layout::kUnaligned:
      s.cols = 37;
      s.out_row_stride = 41;
      s.src_row_stride = 39;
      s.src_offset_bytes = static_cast<size_t>(element);
      s.out_rows = 100;
      s.src_rows = 3000;
      break;
    case Layout::kShortRows:
      s.cols = 32 / element;
      s.out_rows = 5000;
      s.src_rows = 20000;
      break;
    case Layout::kEightByteLanes:
    case Layout::kFourByteLanes: {
      const int64_t off = layout == Layout::kEightByteLanes ? 8 : 4;
      s.cols = std::max<int64_t>(1, 9 * off / element);  // 72- or 36-byte rows
      s.src_offset_bytes = static_cast<size_t>(std::max(off, element));
      s.out_rows = 300;
      s.src_rows = 4000;
      break;
    }
  }
  return s;
}

// The source positions with a bad index: skipped, the first one recorded.
constexpr int64_t kFirstBadPosition = 101;

// The targets make_reduce_inputs reaches: the multiples of 3.
int64_t reached_targets(const ScatterShape& s) { return (s.out_rows + 2) / 3; }

// Inputs with every case the reduce must handle: targets that are multiples
// of 3 only (the others are reached by nothing and must keep their bytes,
// NaN included), one hot target taking hot_rows (a third of the rows: its
// segment spans many tiles; 10000 rows of the long layout, 40 tiles: two
// combine levels), long
// runs in the short-row layout (sorted: the red path folds them), NaN and
// both infinities among the source values, NaN in out, two bad indices.
HostScatter make_reduce_inputs(Layout layout, const ScatterShape& s, int64_t hot_rows, uint64_t seed) {
  HostScatter host = make_random_scatter(s, seed);
  const int64_t targets = reached_targets(s);
  const int64_t hot_target = 3 * (targets / 2);
  std::vector<int64_t> index = hot_target_index(s.src_rows, targets, targets / 2, hot_rows, derive_seed(seed, 7));
  for (int64_t& target : index) target *= 3;
  if (layout == Layout::kShortRows) std::sort(index.begin(), index.end());
  host.index = index;
  const auto put = [](HostMatrix& m, int64_t row, int64_t col, double value) {
    store_element(m.dtype, m.row(row) + static_cast<size_t>(col) * element_bytes(m.dtype), value);
  };
  const double nan = std::nan("");
  put(host.src, 5, 0, nan);
  put(host.src, 11, 1, HUGE_VAL);
  put(host.src, 12, 1, -HUGE_VAL);
  put(host.src, 17, 2, HUGE_VAL);
  put(host.src, 40, 2, -HUGE_VAL);
  put(host.out0, host.index[23], 0, nan);  // reached: joins only with include_self
  put(host.out0, hot_target, 1, -HUGE_VAL);
  put(host.out0, 1, 0, nan);                // never reached: stays as it is
  host.index[kFirstBadPosition] = s.out_rows;
  host.index[static_cast<size_t>(s.src_rows - 2)] = -3;
  return host;
}

class ReduceTest : public ::testing::TestWithParam<ReduceCase> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }
};

// Whether run_layout can also hold the case to exact sums: unweighted sums
// (a mean's division, and a weight's product, round).
bool sums_exactly(const ReduceCase& c) { return c.reduce == SCATTERPTX_REDUCE_SUM && c.weights == Weights::kNone; }

// One layout's inputs through every entry that may run the case. kExact
// (sums_exactly cases): eighths in place of the random values, NaN and
// infinities, every sum exact in the dtype and compared bit for bit. bf16
// and f16 sum only so many rows exactly (255, 2047): there the hot target
// takes at most half of that and the others about a quarter, so the long
// and unaligned layouts have fewer rows and the hot segment fewer tiles.
void run_layout(const ReduceCase& c, Layout layout, uint64_t seed, Comparison comparison) {
  ScatterShape shape = shape_of(layout, c);
  int64_t hot_rows = shape.src_rows / 3;
  if (comparison == Comparison::kExact) {
    const int64_t most_rows = most_exact_rows_per_target(c.dtype);
    shape.src_rows = std::min(shape.src_rows, reached_targets(shape) * (most_rows / 4));
    hot_rows = std::min(shape.src_rows / 3, most_rows / 2);
  }
  SCOPED_TRACE(std::string(layout_name(layout)) + ", " + shape.describe() + ", " + seed_trace(seed) + ", " +
               comparison_name(comparison));
  HostScatter host = make_reduce_inputs(layout, shape, hot_rows, seed);
  if (comparison == Comparison::kExact) {
    ASSERT_TRUE(make_sums_exact(host, derive_seed(seed, 8))) << "a target takes too many rows for exact sums";
  }
  DeviceScatter device(shape, host);
  ReduceCheck check;
  check.reduce = c.reduce;
  check.include_self = c.include_self;
  HostWeights weights;
  DeviceBuffer weights_buffer;
  if (c.weights != Weights::kNone) {
    weights = random_weights(shape.src_rows, c.weights_dtype(), derive_seed(seed, 9));
    check.weights = weights.values;
    weights_buffer = DeviceBuffer(weights.bytes.size());
    upload(weights_buffer.address(), weights.bytes.data(), weights.bytes.size());
  }
  const auto args_for = [&](scatterptx_path path, scatterptx_index_check index_check) {
    scatterptx_scatter_add_args args = device.args(path, index_check);
    args.reduce = c.reduce;
    args.include_self = c.include_self ? 1 : 0;
    if (c.weights != Weights::kNone) {
      args.weights = weights_buffer.pointer();
      args.weights_dtype = c.weights_dtype();
    }
    return args;
  };
  const auto check_result = [&] {
    const HostMatrix got = device.download_out();
    return comparison == Comparison::kExact
               ? check_exact_sums(host.out0, host.src, host.index, got, 1, c.include_self)
               : check_scatter_reduce(host.out0, host.src, host.index, got, check);
  };
  const auto expect_result = [&](const char* entry) {
    SCOPED_TRACE(entry);
    const CheckReport report = check_result();
    EXPECT_TRUE(report.ok) << report.summary();
    EXPECT_EQ(device.guard_damage(), "");
    int64_t position = -1;
    ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    EXPECT_EQ(position, kFirstBadPosition);
  };

  // The default call, RECORD: what it runs says the reduce.
  {
    const scatterptx_scatter_add_args args = args_for(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
    const std::string plan = describe_plan(args);
    if (!c.plain_sum()) {
      EXPECT_EQ(plan.rfind("mode=segmented", 0), 0u) << plan;
      if (c.reduce != SCATTERPTX_REDUCE_SUM) {
        EXPECT_NE(plan.find(std::string("reduce=") + reduce_text(c.reduce)), std::string::npos) << plan;
      }
      if (!c.include_self) EXPECT_NE(plan.find("include_self=0"), std::string::npos) << plan;
    }
    if (c.weights != Weights::kNone) {
      EXPECT_NE(plan.find(std::string("weights=") + scatterptx_dtype_name(c.weights_dtype())), std::string::npos)
          << plan;
    }
    ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    expect_result("default call");
  }
  // The default call, CHECKED: the first bad position named, every valid row reduced.
  {
    device.reset_out(host.out0);
    const scatterptx_scatter_add_args args = args_for(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_CHECKED);
    EXPECT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE);
    EXPECT_NE(std::string(scatterptx_last_error_message())
                  .find(index_error_phrase(kFirstBadPosition, host.index[kFirstBadPosition])),
              std::string::npos)
        << scatterptx_last_error_message();
    const CheckReport report = check_result();
    EXPECT_TRUE(report.ok) << "CHECKED: " << report.summary();
  }
  // Grouped, single-shot and as a deterministic plan: bitwise the same.
  HostMatrix grouped_result;
  for (GroupMode mode : {GroupMode::kSegmented, GroupMode::kDeterministic}) {
    device.reset_out(host.out0);
    const GroupEntry entry = mode == GroupMode::kSegmented ? GroupEntry::kSingleShot : GroupEntry::kPlanCallerWorkspace;
    run_grouped(device, host, args_for(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD), group_options(mode), entry);
    if (::testing::Test::HasFatalFailure()) return;
    expect_result(group_entry_name(entry));
    const HostMatrix got = device.download_out();
    if (mode == GroupMode::kSegmented) {
      grouped_result = got;
    } else {
      EXPECT_EQ(first_difference(grouped_result, got), "") << "grouped results differ between entries";
    }
  }
  // Weighted sums on the red path, forced.
  if (c.weights != Weights::kNone && c.include_self) {
    device.reset_out(host.out0);
    const scatterptx_scatter_add_args args = args_for(SCATTERPTX_PATH_RED, SCATTERPTX_INDEX_RECORD);
    const std::string plan = describe_plan(args);
    EXPECT_NE(plan.find("variant=row_red_weighted_"), std::string::npos) << plan;
    ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    expect_result("red path");
  }
}

TEST_P(ReduceTest, MatchesTheFloat64ReduceInEveryLayoutAndEntry) {
  for (Layout layout : {Layout::kLongRows, Layout::kUnaligned, Layout::kShortRows, Layout::kEightByteLanes,
                        Layout::kFourByteLanes}) {
    run_layout(GetParam(), layout, fresh_seed(), Comparison::kWithinBound);
    if (::testing::Test::HasFatalFailure()) return;
    if (sums_exactly(GetParam())) {
      run_layout(GetParam(), layout, fresh_seed(), Comparison::kExact);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sm90, ReduceTest, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<ReduceCase>& info) { return info.param.name(); });

// A plan's executes read the weights as they are at each execute, by source
// row; the one-shot grouped call carries them through the sort instead (2-
// and 4-byte weights). Both sum in the same order: bitwise the same result.
class WeightedPlanTest : public ::testing::TestWithParam<scatterptx_dtype> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }
};

TEST_P(WeightedPlanTest, ExecutesReadTheWeightsAsTheyAreThen) {
  const uint64_t seed = fresh_seed();
  // Rows of 512 bytes or more, 65536 and more of them, into an out beyond L2's
  // share: the default call groups too. 16 key bits: two radix passes, so the
  // carried weights ping-pong.
  const ScatterShape s = contiguous_shape(GetParam(), 40000, 70000, 256);
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  const HostScatter host = make_random_scatter(s, seed);
  DeviceScatter device(s, host);
  // The rows' own dtype: the one-shot call carries 4- and 2-byte weights, gathers f64's 8.
  const scatterptx_dtype weights_dtype = GetParam();
  const HostWeights first = random_weights(s.src_rows, weights_dtype, derive_seed(seed, 9));
  const HostWeights second = random_weights(s.src_rows, weights_dtype, derive_seed(seed, 10));
  DeviceBuffer weights(first.bytes.size());
  upload(weights.address(), first.bytes.data(), first.bytes.size());
  scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  args.weights = weights.pointer();
  args.weights_dtype = weights_dtype;
  const scatterptx_group_options options = group_options(GroupMode::kSegmented);
  const auto expect_weighted_by = [&](const HostWeights& w, const char* what) {
    SCOPED_TRACE(what);
    ReduceCheck check;
    check.weights = w.values;
    const CheckReport report = check_scatter_reduce(host.out0, host.src, host.index, device.download_out(), check);
    EXPECT_TRUE(report.ok) << report.summary();
    EXPECT_EQ(device.guard_damage(), "");
  };

  ScopedPlan plan;
  ASSERT_EQ(scatterptx_plan_create(&args, &options, nullptr, 0, nullptr, plan.receive()), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  EXPECT_EQ(describe_group_plan(plan.get()).find("weights_in_sort"), std::string::npos) << "plans read by row";
  ASSERT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.src, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  expect_weighted_by(first, "plan, the weights of create");
  upload(weights.address(), second.bytes.data(), second.bytes.size());
  device.reset_out(host.out0);
  ASSERT_EQ(scatterptx_plan_execute(plan.get(), args.out, args.src, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  expect_weighted_by(second, "plan, the weights changed after create");
  const HostMatrix by_plan = device.download_out();

  device.reset_out(host.out0);
  Workspace workspace;
  allocate_workspace(args, options, &workspace);
  if (::testing::Test::HasFatalFailure()) return;
  ASSERT_EQ(scatterptx_scatter_add_grouped(&args, &options, workspace.pointer(), workspace.bytes, nullptr),
            SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  expect_weighted_by(second, "one-shot grouped call");
  EXPECT_EQ(first_difference(by_plan, device.download_out()), "") << "the carried weights sum as the gathered ones";

  const std::string default_plan = describe_plan(args);
  EXPECT_EQ(default_plan.rfind("mode=segmented", 0), 0u) << default_plan;
  EXPECT_EQ(default_plan.find("weights_in_sort=1") != std::string::npos, GetParam() != SCATTERPTX_F64)
      << "the default call carries 2- and 4-byte weights: " << default_plan;
  device.reset_out(host.out0);
  ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  expect_weighted_by(second, "default call");
  EXPECT_EQ(first_difference(by_plan, device.download_out()), "") << "the default call sums as the plan does";
  int64_t position = -1;
  ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  EXPECT_EQ(position, -1) << "no index was out of range";
}

INSTANTIATE_TEST_SUITE_P(Sm90, WeightedPlanTest,
                         ::testing::Values(SCATTERPTX_F32, SCATTERPTX_BF16, SCATTERPTX_F16, SCATTERPTX_F64),
                         [](const ::testing::TestParamInfo<scatterptx_dtype>& info) {
                           return std::string(scatterptx_dtype_name(info.param));
                         });

class ReduceRefusalTest : public ::testing::TestWithParam<scatterptx_dtype> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }
};

// Allocates nothing: the default call then has no workspace to group in.
struct FailingAllocator {
  int allocations = 0;
  static void* allocate(size_t, CUstream, void* self) {
    ++static_cast<FailingAllocator*>(self)->allocations;
    return nullptr;
  }
  static void release(void*, size_t, CUstream, void*) {}
};

TEST_P(ReduceRefusalTest, RefusedCallsWriteNothing) {
  const uint64_t seed = fresh_seed();
  const ScatterShape s = contiguous_shape(GetParam(), 500, 4000, 64);
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  const HostScatter host = make_random_scatter(s, seed);
  DeviceScatter device(s, host);
  const HostWeights weights = random_weights(s.src_rows, SCATTERPTX_F32, derive_seed(seed, 9));
  DeviceBuffer weights_buffer(weights.bytes.size());
  upload(weights_buffer.address(), weights.bytes.data(), weights.bytes.size());
  const auto expect_untouched = [&](const char* what, scatterptx_status expected, scatterptx_status status) {
    SCOPED_TRACE(what);
    EXPECT_EQ(status, expected) << scatterptx_last_error_message();
    EXPECT_TRUE(device.download_out().bytes == host.out0.bytes) << "a refused call wrote to out";
    EXPECT_EQ(device.guard_damage(), "");
  };

  scatterptx_scatter_add_args weighted_mean = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  weighted_mean.reduce = SCATTERPTX_REDUCE_MEAN;
  weighted_mean.weights = weights_buffer.pointer();
  expect_untouched("weighted mean", SCATTERPTX_ERROR_INVALID_ARGUMENT, scatterptx_scatter_add(&weighted_mean, nullptr));

  scatterptx_scatter_add_args amax_off = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  amax_off.reduce = SCATTERPTX_REDUCE_AMAX;
  amax_off.grouping = SCATTERPTX_GROUPING_OFF;
  expect_untouched("amax with grouping off", SCATTERPTX_ERROR_INVALID_ARGUMENT, scatterptx_scatter_add(&amax_off, nullptr));

  FailingAllocator allocator;
  const scatterptx_allocator registration{&FailingAllocator::allocate, &FailingAllocator::release, &allocator};
  ASSERT_EQ(scatterptx_set_allocator(&registration), SCATTERPTX_SUCCESS);
  scatterptx_scatter_add_args amin = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  amin.reduce = SCATTERPTX_REDUCE_AMIN;
  const scatterptx_status no_workspace = scatterptx_scatter_add(&amin, nullptr);
  const std::string message = scatterptx_last_error_message();
  EXPECT_EQ(scatterptx_set_allocator(nullptr), SCATTERPTX_SUCCESS);
  expect_untouched("amin without a workspace", SCATTERPTX_ERROR_OUT_OF_MEMORY, no_workspace);
  EXPECT_NE(message.find("runs grouped only"), std::string::npos) << message;
  EXPECT_EQ(allocator.allocations, 1);

  // Nothing to reduce is a no-op for every reduce.
  scatterptx_scatter_add_args empty = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  empty.reduce = SCATTERPTX_REDUCE_MEAN;
  empty.include_self = 0;
  empty.src_rows = 0;
  expect_untouched("no source rows", SCATTERPTX_SUCCESS, scatterptx_scatter_add(&empty, nullptr));
}

INSTANTIATE_TEST_SUITE_P(Sm90, ReduceRefusalTest,
                         ::testing::Values(SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16, SCATTERPTX_F64),
                         [](const ::testing::TestParamInfo<scatterptx_dtype>& info) {
                           return std::string(dtype_name(info.param));
                         });

// A NaN in one column stays in that column. The f64 combine folds a
// target's partial sums four at a time; a target spanning a number of tiles
// that is no multiple of four leaves folds of a round off, and those must
// not take up the NaN flag of the fold before (an odd column's, in the
// 16-byte slices a lane holds two columns of).
class NanColumnTest : public ::testing::TestWithParam<std::tuple<scatterptx_reduce, bool>> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }
};

TEST_P(NanColumnTest, StaysInItsColumnWhateverTheTargetsTiles) {
  const auto [reduce, include_self] = GetParam();
  for (int64_t rows : {300, 600, 900, 1300, 2600}) {  // 2, 3, 4, 6 and 11 tiles of 256 rows
    ScatterShape s;
    s.dtype = SCATTERPTX_F64;
    s.cols = 64;  // 512-byte rows: the 16-byte slices
    s.out_rows = 8;
    s.src_rows = rows;
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(s.describe() + ", " + seed_trace(seed));
    HostScatter host = make_random_scatter(s, seed);
    host.index.assign(static_cast<size_t>(rows), 3);
    const auto put_nan = [&](int64_t row, int64_t col) {
      store_element(s.dtype, host.src.row(row) + static_cast<size_t>(col) * element_bytes(s.dtype), std::nan(""));
    };
    put_nan(7, 1);
    put_nan(rows - 2, 5);
    put_nan(rows / 2, 62);  // an even column too
    DeviceScatter device(s, host);
    scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
    args.reduce = reduce;
    args.include_self = include_self ? 1 : 0;
    const std::string plan = describe_plan(args);
    EXPECT_NE(plan.find("slices=vec16"), std::string::npos) << plan;
    ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    ReduceCheck check;
    check.reduce = reduce;
    check.include_self = include_self;
    const CheckReport report = check_scatter_reduce(host.out0, host.src, host.index, device.download_out(), check);
    EXPECT_TRUE(report.ok) << report.summary();
    EXPECT_EQ(device.guard_damage(), "");
  }
}

INSTANTIATE_TEST_SUITE_P(Sm90, NanColumnTest,
                         ::testing::Combine(::testing::Values(SCATTERPTX_REDUCE_AMAX, SCATTERPTX_REDUCE_AMIN),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<scatterptx_reduce, bool>>& info) {
                           return std::string(reduce_text(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_include_self" : "_exclude_self");
                         });

}  // namespace
}  // namespace scatterptx_test

// scatter_add against the float64 reference over dtype x index type x path,
// across row widths (including partial last chunks), row counts, padded
// strides, heavy collisions and misaligned sources.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_harness.hpp"
#include "plan.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"

namespace scatterptx_test {
namespace {

using ScatterParam = std::tuple<scatterptx_dtype, scatterptx_index_type, scatterptx_path>;

class ScatterAddTest : public ::testing::TestWithParam<ScatterParam> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }

  scatterptx_dtype dtype() const { return std::get<0>(GetParam()); }
  scatterptx_index_type index_type() const { return std::get<1>(GetParam()); }
  scatterptx_path path() const { return std::get<2>(GetParam()); }

  ScatterShape shape(int64_t out_rows, int64_t src_rows, int64_t cols) const {
    ScatterShape s;
    s.dtype = dtype();
    s.index_type = index_type();
    s.out_rows = out_rows;
    s.src_rows = src_rows;
    s.cols = cols;
    return s;
  }

  void run(const ScatterShape& s) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    run_and_check(s, path(), seed);
  }

  // Runs host, whose index the test has set, on path(): checked against the
  // reference as comparison says, or refused where the path must (or may)
  // refuse the input. Returns whether it ran.
  bool run_with_index(const ScatterShape& s, const HostScatter& host,
                      Comparison comparison = Comparison::kWithinBound) {
    DeviceScatter device(s, host);
    const scatterptx_scatter_add_args args = device.args(path(), SCATTERPTX_INDEX_RECORD);
    const scatterptx_status status = scatterptx_scatter_add(&args, nullptr);
    const DeviceScatter::Refusal refusal = device.refusal(path());
    if (refusal == DeviceScatter::Refusal::kMust ||
        (refusal == DeviceScatter::Refusal::kMay && status == SCATTERPTX_ERROR_INVALID_ARGUMENT)) {
      EXPECT_EQ(status, SCATTERPTX_ERROR_INVALID_ARGUMENT);
      return false;
    }
    EXPECT_EQ(status, SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    if (status != SCATTERPTX_SUCCESS) return false;
    expect_scatter_result(s, host, device, 1, comparison);
    return true;
  }
};

// Widths chosen so that the TMA path sees one element, odd widths, exact
// 16-byte multiples, and rows that end in a partial chunk (f32 8, 36, 132;
// bf16 264).
const std::vector<int64_t> kWidths = {1, 2, 3, 4, 6, 8, 36, 100, 128, 132, 256, 264, 300, 1000, 3000};

TEST_P(ScatterAddTest, SingleSourceRow) {
  for (int64_t cols : kWidths) {
    run(shape(/*out_rows=*/3, /*src_rows=*/1, cols));
    if (HasFatalFailure()) return;
  }
}

TEST_P(ScatterAddTest, MoreSourceRowsThanOutRows) {
  for (int64_t cols : kWidths) {
    run(shape(/*out_rows=*/61, /*src_rows=*/cols >= 1000 ? 4001 : 20011, cols));
    if (HasFatalFailure()) return;
  }
}

TEST_P(ScatterAddTest, FewerSourceRowsThanOutRows) {
  // Most out rows are never indexed: they must come back bit-identical.
  for (int64_t cols : kWidths) {
    run(shape(/*out_rows=*/2 * 1237 + 7, /*src_rows=*/1237, cols));
    if (HasFatalFailure()) return;
  }
}

TEST_P(ScatterAddTest, PaddedOutRowStride) {
  for (int64_t cols : {4, 36, 132, 264, 1000}) {
    for (int64_t pad : {8, 3}) {  // +3 breaks 16-byte row alignment
      ScatterShape s = shape(500, 3000, cols);
      s.out_row_stride = cols + pad;
      run(s);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(ScatterAddTest, PaddedSrcRowStride) {
  for (int64_t cols : {4, 36, 132, 264, 1000}) {
    for (int64_t pad : {8, 3}) {
      ScatterShape s = shape(500, 3000, cols);
      s.src_row_stride = cols + pad;
      run(s);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(ScatterAddTest, PaddedStridesOnBoth) {
  ScatterShape s = shape(777, 2500, 264);
  s.out_row_stride = 264 + 8;
  s.src_row_stride = 264 + 16;
  run(s);
}

TEST_P(ScatterAddTest, EveryRowToOneTarget) {
  // 5000 additions into row 7: the worst case for atomics and for ordering.
  for (int64_t cols : {1, 36, 256, 1000}) {
    ScatterShape s = shape(/*out_rows=*/16, /*src_rows=*/5000, cols);
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
    HostScatter host = make_random_scatter(s, seed);
    host.index.assign(host.index.size(), 7);
    run_with_index(s, host);
    if (HasFatalFailure()) return;
  }
}

TEST_P(ScatterAddTest, SortedTargetsInRuns) {
  // Runs of one target: on the TMA path rows of 512 bytes to 1 KB prefetch
  // their out chunk, except a row whose target is the previous row's
  // (f32 128, 132 and 256 columns; f16/bf16 256 and 300; f64 64 and 128).
  // 40000 rows: about ten per TMA worker, so runs cross workers and most
  // rows are issued from the main loop, not its prologue.
  for (int64_t cols : {64, 128, 132, 256, 300}) {
    ScatterShape s = shape(/*out_rows=*/700, /*src_rows=*/40000, cols);
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
    HostScatter host = make_random_scatter(s, seed);
    std::sort(host.index.begin(), host.index.end());
    run_with_index(s, host);
    if (HasFatalFailure()) return;
  }
}

TEST_P(ScatterAddTest, RunsOfOneTargetInConsecutiveRows) {
  // The red path's short-row loop takes batches of four consecutive rows and
  // folds a row into the next one when both have one target, so runs of 1
  // to 9 rows start at every slot of a batch and cross batches; every
  // fifth run repeats the target of the run before the last (equal
  // targets that are not neighbours). Rows of 2 bytes to 2 KB: one-element
  // lanes up to whole 16-byte vectors (f64 256 columns: 2 KB, 256 lanes);
  // 20011 rows leave the last batch partial. 20000 targets: a target that
  // is hit gets one run, rarely more than three. Values are eighths, so every
  // sum is exact and a row lost or added twice shows in every dtype (in
  // bf16 the rounding bound alone could hide it).
  for (int64_t cols : {1, 2, 8, 64, 256}) {
    ScatterShape s = shape(/*out_rows=*/20000, /*src_rows=*/20011, cols);
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
    HostScatter host = make_random_scatter(s, seed);
    Rng rng(derive_seed(seed, 7));
    std::vector<int64_t> run_targets;
    for (size_t row = 0, run = 0; row < host.index.size(); ++run) {
      const int64_t target = run % 5 == 4 ? run_targets[run - 2] : rng.below(s.out_rows);
      run_targets.push_back(target);
      for (size_t k = 0; k < run % 9 + 1 && row < host.index.size(); ++k) host.index[row++] = target;
    }
    ASSERT_TRUE(make_sums_exact(host, derive_seed(seed, 8))) << "a target takes too many rows for exact sums";
    run_with_index(s, host, Comparison::kExact);
    if (HasFailure()) return;
  }
}

TEST_P(ScatterAddTest, EveryRowToOneTargetExactly) {
  // EveryRowToOneTarget's rounding bound grows with the additions: at 5000
  // it could not tell a row lost or added twice, in bf16 not even out left
  // as it was. Here the values are random eighths whose every partial sum,
  // in any order, is exact in the dtype, and out must match bit for bit.
  // bf16 and f16 sum only so many rows exactly: 255 rows into one target in
  // bf16 (values +-1/8), 2047 in f16, 5000 otherwise.
  const int64_t rows = std::min<int64_t>(5000, most_exact_rows_per_target(dtype()));
  for (int64_t cols : {1, 36, 256, 1000}) {
    ScatterShape s = shape(/*out_rows=*/16, rows, cols);
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
    HostScatter host = make_random_scatter(s, seed);
    host.index.assign(host.index.size(), 7);
    ASSERT_TRUE(make_sums_exact(host, derive_seed(seed, 8))) << "a target takes too many rows for exact sums";
    run_with_index(s, host, Comparison::kExact);
    if (HasFailure()) return;
  }
}

TEST_P(ScatterAddTest, ShortRowsIntoOutLargerThanL2) {
  // Out larger than L2: the red path's short-row loop prefetches the next
  // batch's out lines, from the lanes at offsets 0, 128, ... of their row:
  // one per 64-byte row, four per 512-byte row, 32 per 4 KB row (the longest
  // the loop takes: 256 lanes of 16 bytes; f64 lanes are 8 bytes, so 2 KB
  // and 16 prefetches). Every group of lanes runs two full batches, some a
  // third, and the last batch is partial (red_prefetch_shape). The first
  // rows (up to 20000) go in runs of 37 to one target, so that one target's
  // rows are spread over batch slots, batches, groups and CTAs; uniform
  // targets after them.
  const int64_t longest = int64_t{scatterptx::detail::kRedThreadsPerCta} * red_lane_bytes(dtype());
  for (int64_t row_bytes : {int64_t{64}, int64_t{512}, longest}) {
    const ScatterShape s = red_prefetch_shape(dtype(), index_type(), row_bytes);
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
    HostScatter host = make_random_scatter(s, seed);
    for (int64_t i = 0; i < std::min<int64_t>(20000, s.src_rows); ++i) {
      host.index[static_cast<size_t>(i)] = i / 37 * 11;
    }
    // The group with the last, partial batch (rows 9 step .. 9 step + 2)
    // had rows 5 step .. 5 step + 3 before it: its last row's target in
    // the slot the partial batch leaves empty must not take in row
    // 9 step + 2, which has the same target.
    const int64_t step = red_batch_step(dtype(), index_type(), row_bytes);
    host.index[static_cast<size_t>(5 * step + 3)] = host.index[static_cast<size_t>(9 * step + 2)];
    if (path() == SCATTERPTX_PATH_RED) {
      DeviceScatter probe(s, host);
      check_short_row_batches(describe_plan(probe.args(path(), SCATTERPTX_INDEX_RECORD)), s.src_rows);
      if (HasFatalFailure()) return;
    }
    run_with_index(s, host);
    if (HasFailure()) return;  // a failed check of these sizes is slow to report
  }
}

TEST_P(ScatterAddTest, NoSourceRowsLeavesOutUnchanged) {
  run(shape(/*out_rows=*/40, /*src_rows=*/0, /*cols=*/64));
}

TEST_P(ScatterAddTest, WideRows) {
  // 640000 columns: many chunks per row, far more than one CTA's shared
  // memory. Out (128-512 MB) is larger than L2, so the red path's batches
  // prefetch their out lines.
  const ScatterShape s = shape(/*out_rows=*/100, /*src_rows=*/100, /*cols=*/640000);
  if (path() == SCATTERPTX_PATH_RED) {
    const HostScatter host = make_random_scatter(s, fresh_seed());
    DeviceScatter device(s, host);
    const std::string plan = describe_plan(device.args(path(), SCATTERPTX_INDEX_RECORD));
    EXPECT_NE(plan.find(" prefetch_out=1 "), std::string::npos) << plan;
  }
  run(s);
}

TEST_P(ScatterAddTest, LongRowsInBatchesOfVectorsThenOneByOneThenAPartialVector) {
  // Rows of W whole 16-byte vectors and half of one, strides padded to W + 1
  // vectors (16-byte aligned), more source rows than the red grid has CTAs:
  // one CTA of 256 lanes per row (grid 1 along y), lane l taking vectors
  // l, l + 256, ... in batches of four while the batch's last is whole.
  // W = 1282: every lane batches once, then takes one or two by one, lane 2
  // ending in the partial vector. W = 771: lanes 0-2 batch up to the last
  // whole vector (770) and stop; lane 3's batch would end on the partial one,
  // so it takes its four one by one, the last in the tail loop. f64 lanes
  // are one element (8 bytes), which has no half: its rows are W elements,
  // strides W + 1 (8-byte aligned), no tail, and at W = 771 lane 3 takes
  // its three one by one.
  const int64_t lane_bytes = red_lane_bytes(dtype());
  const int64_t per_vector = lane_bytes / static_cast<int64_t>(element_bytes(dtype()));
  for (int64_t whole : {1282, 771}) {
    SCOPED_TRACE(whole);
    ScatterShape s = shape(/*out_rows=*/700, /*src_rows=*/2500, /*cols=*/whole * per_vector + per_vector / 2);
    s.out_row_stride = s.src_row_stride = (whole + 1) * per_vector;
    if (path() == SCATTERPTX_PATH_RED) {
      const HostScatter host = make_random_scatter(s, fresh_seed());
      DeviceScatter device(s, host);
      const std::string plan = describe_plan(device.args(path(), SCATTERPTX_INDEX_RECORD));
      const int64_t vectors = whole + (per_vector > 1 ? 1 : 0);
      const std::string lanes = " vector_bytes=" + std::to_string(lane_bytes) +
                                " vectors_per_row=" + std::to_string(vectors) + " lanes_per_row=256 ";
      EXPECT_NE(plan.find(lanes), std::string::npos) << plan;
      EXPECT_EQ(plan.substr(plan.rfind('x') + 1), "1") << "one CTA across a row: " << plan;
    }
    run(s);
    if (HasFailure()) return;
  }
}

TEST_P(ScatterAddTest, SourceOneElementPastAlignment) {
  // src one element past a 16-byte boundary: TMA must be refused, RED works.
  ScatterShape s = shape(300, 2000, 128);
  s.src_offset_bytes = element_bytes(dtype());
  run(s);
}

std::string param_name(const ::testing::TestParamInfo<ScatterParam>& info) {
  return std::string(dtype_name(std::get<0>(info.param))) +
         index_type_name(std::get<1>(info.param)) + path_name(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    Sm90, ScatterAddTest,
    ::testing::Combine(::testing::Values(SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16,
                                         SCATTERPTX_F64),
                       ::testing::Values(SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64),
                       ::testing::Values(SCATTERPTX_PATH_AUTO, SCATTERPTX_PATH_TMA,
                                         SCATTERPTX_PATH_RED, SCATTERPTX_PATH_PRIVATE)),
    param_name);

// The planner's text names the path it will run.
TEST(ScatterAddPlan, DescribesForcedAndFallbackPaths) {
  SCATTERPTX_REQUIRE_GPU();
  ScatterShape s;
  s.dtype = SCATTERPTX_F32;
  s.out_rows = 64;
  s.src_rows = 256;
  s.cols = 132;
  const HostScatter host = make_random_scatter(s, fresh_seed());
  DeviceScatter device(s, host);
  ASSERT_TRUE(device.tma_eligible());
  EXPECT_NE(describe_plan(device.args(SCATTERPTX_PATH_TMA, SCATTERPTX_INDEX_RECORD))
                .find("path=tma"),
            std::string::npos);
  EXPECT_NE(describe_plan(device.args(SCATTERPTX_PATH_RED, SCATTERPTX_INDEX_RECORD))
                .find("path=red"),
            std::string::npos);

  ScatterShape odd = s;
  odd.src_row_stride = 132 + 3;  // 540-byte rows: not 16-byte aligned
  const HostScatter odd_host = make_random_scatter(odd, fresh_seed());
  DeviceScatter odd_device(odd, odd_host);
  ASSERT_FALSE(odd_device.tma_eligible());
  EXPECT_NE(describe_plan(odd_device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD))
                .find("path=red"),
            std::string::npos);
  // Describing launches nothing: out is still the poison.
  EXPECT_TRUE(odd_device.download_out().bytes == odd_host.out0.bytes);
}

}  // namespace
}  // namespace scatterptx_test

namespace scatterptx_test {
namespace {

// Few targets, many rows each: the privatised path's home ground, with
// duplicates of every target spread over many CTAs and, at 4096 columns,
// over several column slices.
class FewTargetsTest : public ::testing::TestWithParam<std::tuple<scatterptx_dtype, scatterptx_path>> {};

TEST_P(FewTargetsTest, ManyRowsPerTarget) {
  SCATTERPTX_REQUIRE_GPU();
  const auto [dtype, path] = GetParam();
  for (int64_t cols : {64, 264, 4096}) {
    for (int64_t targets : {1, 100, 1000}) {
      ScatterShape s;
      s.dtype = dtype;
      s.index_type = SCATTERPTX_INDEX_INT64;
      s.out_rows = targets;
      s.src_rows = 40000 + 7;  // not a multiple of the 8-row stage
      s.cols = cols;
      run_and_check(s, path, fresh_seed());
      if (HasFatalFailure()) return;
      // Again with exact sums, compared bit for bit: at 40 to 40007 rows a
      // target the rounding bound cannot see a lost row. bf16 and f16 sum
      // fewer rows exactly: there each target takes about half of what they
      // can (127, 1023 rows; uniform indices give some targets more), so
      // fewer source rows where there are few targets.
      ScatterShape exact = s;
      exact.src_rows = std::min(s.src_rows, targets * (most_exact_rows_per_target(dtype) / 2));
      run_and_check(exact, path, fresh_seed(), Comparison::kExact);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_P(FewTargetsTest, IndexOneElementPastAlignment) {
  // Indices that start off a 16-byte boundary reach each stage by plain
  // copies instead of one bulk copy.
  SCATTERPTX_REQUIRE_GPU();
  const auto [dtype, path] = GetParam();
  for (scatterptx_index_type index_type : {SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64}) {
    ScatterShape s;
    s.dtype = dtype;
    s.index_type = index_type;
    s.out_rows = 100;
    s.src_rows = 40000 + 7;
    s.cols = 264;
    s.index_offset_bytes = index_type == SCATTERPTX_INDEX_INT32 ? 4 : 8;
    run_and_check(s, path, fresh_seed());
  }
}

INSTANTIATE_TEST_SUITE_P(Sm90, FewTargetsTest,
                         ::testing::Combine(::testing::Values(SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16,
                                                              SCATTERPTX_F64),
                                            ::testing::Values(SCATTERPTX_PATH_AUTO, SCATTERPTX_PATH_PRIVATE)),
                         [](const ::testing::TestParamInfo<std::tuple<scatterptx_dtype, scatterptx_path>>& info) {
                           return std::string(dtype_name(std::get<0>(info.param))) +
                                  path_name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace scatterptx_test

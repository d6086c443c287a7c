// Grouped execution against the float64 reference over dtype x index type x
// mode, each case through every entry point (scatter_add_grouped, a plan
// with its own workspace, a plan in a caller workspace): one target, a
// permutation, segments far longer than a tile, a hot target, row widths
// that take the vector and the scalar variants, padded strides, a misaligned
// source, empty problems, and out_rows needing one, two and three radix
// passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu_harness.hpp"
#include "group_case.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"

namespace scatterptx_test {
namespace {

using GroupedParam = std::tuple<scatterptx_dtype, scatterptx_index_type, GroupMode>;
// Makes the index of a case from its seed; empty: uniform random.
using IndexMaker = std::function<std::vector<int64_t>(uint64_t seed)>;

class GroupedScatterAddTest : public ::testing::TestWithParam<GroupedParam> {
 protected:
  void SetUp() override {
    SCATTERPTX_REQUIRE_GPU();
    int64_t stale = 0;  // start from an empty index-error record whatever ran before
    ASSERT_EQ(scatterptx_take_index_error(&stale), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
  }

  scatterptx_dtype dtype() const { return std::get<0>(GetParam()); }
  scatterptx_index_type index_type() const { return std::get<1>(GetParam()); }
  scatterptx_group_options options() const { return group_options(std::get<2>(GetParam())); }

  ScatterShape shape(int64_t out_rows, int64_t src_rows, int64_t cols) const {
    ScatterShape s;
    s.dtype = dtype();
    s.index_type = index_type();
    s.out_rows = out_rows;
    s.src_rows = src_rows;
    s.cols = cols;
    return s;
  }

  // Fresh random out0 and src (never zero), then every entry point checked.
  // kExact: eighths whose every sum is exact in the dtype, compared bit for
  // bit, where the rounding bound cannot see a row lost at high fan-in.
  void run(const ScatterShape& s, const IndexMaker& make_index = nullptr,
           Comparison comparison = Comparison::kWithinBound) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(seed_trace(seed));
    HostScatter host = make_random_scatter(s, seed);
    if (make_index) host.index = make_index(derive_seed(seed, 7));
    ASSERT_EQ(static_cast<int64_t>(host.index.size()), s.src_rows);
    if (comparison == Comparison::kExact) {
      ASSERT_TRUE(make_sums_exact(host, derive_seed(seed, 8))) << "a target takes too many rows for exact sums";
    }
    run_grouped_and_check(s, host, options(), comparison);
  }

  // The rows of a hot target in an exact run: `wanted`, or in bf16 and f16
  // half of what they sum exactly (127, 1023), leaving room for the rows
  // that uniform indices add to it.
  int64_t exact_hot_rows(int64_t wanted) const {
    return std::min(wanted, most_exact_rows_per_target(dtype()) / 2);
  }
};

TEST_P(GroupedScatterAddTest, AllRowsToOneTarget) {
  // out_rows = 1: a single segment holding every source row; then exact
  // sums, of as many rows as bf16 and f16 sum exactly (255, 2047).
  for (int64_t cols : {1, 132}) {
    run(shape(/*out_rows=*/1, /*src_rows=*/20011, cols));
    if (HasFatalFailure()) return;
    const int64_t exact_rows = std::min<int64_t>(20011, most_exact_rows_per_target(dtype()));
    run(shape(/*out_rows=*/1, exact_rows, cols), nullptr, Comparison::kExact);
    if (HasFatalFailure()) return;
  }
}

TEST_P(GroupedScatterAddTest, PermutationAddsOneRowPerTarget) {
  // M = T, every segment one row long: no sums, only the grouping's order.
  const int64_t rows = 10007;
  run(shape(rows, rows, 36), [rows](uint64_t seed) { return permutation_index(rows, seed); });
}

TEST_P(GroupedScatterAddTest, SegmentFarLongerThanATile) {
  // 100000 rows to one target: 391 tiles of 256 rows, more than 32 tiles
  // (8192 rows), so the segment is summed in tile pieces combined in a fixed
  // order; the other 3000 rows spread over the remaining targets.
  const ScatterShape s = shape(/*out_rows=*/64, /*src_rows=*/103000, /*cols=*/36);
  run(s, [s](uint64_t seed) { return hot_target_index(s.src_rows, s.out_rows, 17, 100000, seed); });
  if (HasFatalFailure()) return;
  // Exact sums: f32 and f64 of the same segment (a dropped 8192-row piece
  // would pass the f32 rounding bound); bf16 and f16 cannot sum it exactly,
  // so theirs is exact_hot_rows long (under a tile in bf16, about four in
  // f16).
  const int64_t hot_rows = exact_hot_rows(100000);
  const ScatterShape exact = shape(/*out_rows=*/64, hot_rows + 3000, /*cols=*/36);
  run(exact, [exact, hot_rows](uint64_t seed) {
    return hot_target_index(exact.src_rows, exact.out_rows, 17, hot_rows, seed);
  }, Comparison::kExact);
}

TEST_P(GroupedScatterAddTest, SegmentsAtTileBoundaries) {
  // One target per length just below, at and above one tile and 32 tiles;
  // then exact sums of the lengths the dtype sums exactly (bf16 255 only,
  // f16 up to 257, f32 and f64 all).
  const std::vector<int64_t> lengths = {255, 256, 257, 8191, 8192, 8193};
  std::vector<int64_t> exact_lengths;
  for (int64_t length : lengths) {
    if (length <= most_exact_rows_per_target(dtype())) exact_lengths.push_back(length);
  }
  for (Comparison comparison : {Comparison::kWithinBound, Comparison::kExact}) {
    const std::vector<int64_t>& run_lengths = comparison == Comparison::kExact ? exact_lengths : lengths;
    int64_t total = 0;
    for (int64_t length : run_lengths) total += length;
    const ScatterShape s = shape(/*out_rows=*/16, total, /*cols=*/8);
    run(s, [run_lengths, total](uint64_t seed) {
      std::vector<int64_t> index;
      index.reserve(static_cast<size_t>(total));
      for (size_t target = 0; target < run_lengths.size(); ++target) {
        index.insert(index.end(), static_cast<size_t>(run_lengths[target]),
                     static_cast<int64_t>(2 * target + 1));
      }
      // Shuffled, so each segment's rows come from every part of src.
      const std::vector<int64_t> order = permutation_index(total, seed);
      std::vector<int64_t> shuffled(index.size());
      for (size_t i = 0; i < index.size(); ++i) shuffled[i] = index[static_cast<size_t>(order[i])];
      return shuffled;
    }, comparison);
    if (HasFatalFailure()) return;
  }
}

TEST_P(GroupedScatterAddTest, HotTargetTakesHalfTheRows) {
  // Then exact sums, the hot target's rows cut to exact_hot_rows in bf16
  // and f16.
  const ScatterShape s = shape(/*out_rows=*/3001, /*src_rows=*/20000, /*cols=*/128);
  for (Comparison comparison : {Comparison::kWithinBound, Comparison::kExact}) {
    const int64_t hot_rows =
        comparison == Comparison::kExact ? exact_hot_rows(s.src_rows / 2) : s.src_rows / 2;
    run(s, [s, hot_rows](uint64_t seed) {
      return hot_target_index(s.src_rows, s.out_rows, 1234, hot_rows, seed);
    }, comparison);
    if (HasFatalFailure()) return;
  }
}

TEST_P(GroupedScatterAddTest, UniformAcrossWidths) {
  // Odd widths and rows that are not a multiple of 16 bytes take the scalar
  // variant; out_rows 4099 is not a power of two.
  for (int64_t cols : {1, 3, 8, 36, 128, 132, 300, 1000}) {
    const int64_t src_rows = cols <= 36 ? 20011 : cols <= 132 ? 8009 : cols <= 300 ? 3001 : 1009;
    run(shape(/*out_rows=*/4099, src_rows, cols));
    if (HasFatalFailure()) return;
  }
}

TEST_P(GroupedScatterAddTest, PaddedRowStrides) {
  struct Padding {
    int64_t cols, out_pad, src_pad;
  };
  // +3 breaks 16-byte row alignment; +8 and +16 keep it for 4-byte types.
  for (const Padding& p : {Padding{36, 3, 8}, Padding{128, 8, 16}, Padding{128, 1, 3}}) {
    ScatterShape s = shape(/*out_rows=*/3001, /*src_rows=*/10000, p.cols);
    s.out_row_stride = p.cols + p.out_pad;
    s.src_row_stride = p.cols + p.src_pad;
    run(s);
    if (HasFatalFailure()) return;
  }
}

TEST_P(GroupedScatterAddTest, SourceOneElementPastAlignment) {
  ScatterShape s = shape(/*out_rows=*/3001, /*src_rows=*/10000, /*cols=*/128);
  s.src_offset_bytes = element_bytes(dtype());
  run(s);
}

TEST_P(GroupedScatterAddTest, NoSourceRowsLeavesOutUnchanged) {
  run(shape(/*out_rows=*/40, /*src_rows=*/0, /*cols=*/64));
}

TEST_P(GroupedScatterAddTest, OutRowsAtRadixDigitBoundaries) {
  // The grouping sorts by 8-bit digits of the target: these out_rows sit on
  // either side of one and two digits.
  for (int64_t out_rows : {2, 255, 256, 257, 65535, 65536, 65537}) {
    const ScatterShape s = shape(out_rows, /*src_rows=*/20000, /*cols=*/8);
    run(s, [s](uint64_t seed) {
      std::vector<int64_t> index = random_indices(s.src_rows, s.out_rows, seed);
      index.front() = s.out_rows - 1;  // the largest target is always present
      index.back() = 0;
      return index;
    });
    if (HasFatalFailure()) return;
  }
}

TEST_P(GroupedScatterAddTest, OutRowsNeedingThreeRadixPasses) {
  // 70000 needs 17 bits, 2^17 + 3 needs 18: three 8-bit passes, with many
  // targets of one or two rows.
  struct Case {
    int64_t out_rows, src_rows, cols;
  };
  for (const Case& c : {Case{70000, 100000, 3}, Case{(int64_t{1} << 17) + 3, 200000, 8}}) {
    const ScatterShape s = shape(c.out_rows, c.src_rows, c.cols);
    run(s, [s](uint64_t seed) {
      std::vector<int64_t> index = random_indices(s.src_rows, s.out_rows, seed);
      index.front() = s.out_rows - 1;
      index.back() = 0;
      return index;
    });
    if (HasFatalFailure()) return;
  }
}

TEST_P(GroupedScatterAddTest, NoColumnsLeavesOutUnchanged) {
  // Padded rows, so a write into the padding would show. Last in the file:
  // an empty problem that still launched would fault on pointers the
  // library never needed, and a faulted context fails every later test.
  ScatterShape s = shape(/*out_rows=*/40, /*src_rows=*/1000, /*cols=*/0);
  s.out_row_stride = 4;
  s.src_row_stride = 4;
  run(s);
}

std::string param_name(const ::testing::TestParamInfo<GroupedParam>& info) {
  return std::string(dtype_name(std::get<0>(info.param))) +
         index_type_name(std::get<1>(info.param)) + group_mode_name(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    Sm90, GroupedScatterAddTest,
    ::testing::Combine(::testing::Values(SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16,
                                         SCATTERPTX_F64),
                       ::testing::Values(SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64),
                       ::testing::Values(GroupMode::kSegmented, GroupMode::kAuto, GroupMode::kDeterministic)),
    param_name);

}  // namespace
}  // namespace scatterptx_test

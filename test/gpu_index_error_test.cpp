// Indices outside [0, out_rows): the row is skipped, every valid row is still
// added, nothing outside out is written, and the offence is reported (RECORD:
// through take_index_error; CHECKED: as the call's status and message).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"

namespace scatterptx_test {
namespace {

using IndexErrorParam = std::tuple<scatterptx_index_type, scatterptx_path, scatterptx_index_check>;

// A bad value at a source position.
struct BadIndex {
  int64_t position;
  int64_t value;
};

class IndexErrorTest : public ::testing::TestWithParam<IndexErrorParam> {
 protected:
  void SetUp() override {
    SCATTERPTX_REQUIRE_GPU();
    int64_t stale = 0;  // start from an empty record whatever ran before
    ASSERT_EQ(scatterptx_take_index_error(&stale), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
  }

  // Leave no record behind for the suites that expect none (CHECKED mode may
  // or may not also fill the record).
  void TearDown() override {
    if (make_gpu_current().state != GpuStatus::State::kReady) return;
    int64_t stale = 0;
    EXPECT_EQ(scatterptx_take_index_error(&stale), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
  }

  scatterptx_index_type index_type() const { return std::get<0>(GetParam()); }
  scatterptx_path path() const { return std::get<1>(GetParam()); }
  scatterptx_index_check check() const { return std::get<2>(GetParam()); }

  // f32 with 64 columns: 256-byte rows, eligible for both paths.
  ScatterShape shape() const {
    ScatterShape s;
    s.dtype = SCATTERPTX_F32;
    s.index_type = index_type();
    s.out_rows = 500;
    s.src_rows = 3000;
    s.cols = 64;
    return s;
  }

  // Out-of-range values that fit the index type; for int64 also values whose
  // low 32 bits are a valid row, which catch an index truncated to 32 bits.
  std::vector<int64_t> bad_values(int64_t out_rows) const {
    std::vector<int64_t> values = {out_rows, out_rows + 1, out_rows + 123457, -1, -2, -out_rows,
                                   std::numeric_limits<int32_t>::min(),
                                   std::numeric_limits<int32_t>::max()};
    if (index_type() == SCATTERPTX_INDEX_INT64) {
      values.insert(values.end(), {(int64_t{1} << 32) + 5, (int64_t{1} << 32),
                                   -(int64_t{1} << 32) + 9, std::numeric_limits<int64_t>::min(),
                                   std::numeric_limits<int64_t>::max()});
    }
    return values;
  }

  // Runs host (whose index holds the bad values) and checks the result and
  // the report; smallest is the smallest bad position.
  void run_expecting_report(const ScatterShape& s, const HostScatter& host, BadIndex smallest) {
    DeviceScatter device(s, host);
    const scatterptx_scatter_add_args args = device.args(path(), check());
    const scatterptx_status status = scatterptx_scatter_add(&args, nullptr);
    const std::string message = scatterptx_last_error_message();
    if (check() == SCATTERPTX_INDEX_CHECKED) {
      ASSERT_EQ(status, SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE) << message;
      EXPECT_NE(message.find(index_error_phrase(smallest.position, smallest.value)), std::string::npos)
          << "message should name position " << smallest.position << " and value " << smallest.value << ": "
          << message;
    } else {
      ASSERT_EQ(status, SCATTERPTX_SUCCESS) << message;
      int64_t position = 0;
      ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS)
          << scatterptx_last_error_message();
      EXPECT_EQ(position, smallest.position);
      ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS)
          << scatterptx_last_error_message();
      EXPECT_EQ(position, -1) << "take_index_error must clear the record";
    }
    // The reference ignores out-of-range indices: valid rows added, the
    // rest of out bit-identical, and the guard rows around out untouched.
    expect_scatter_result(s, host, device, 1);
  }
};

TEST_P(IndexErrorTest, OutOfRangeRowsAreSkipped) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = shape();
  HostScatter host = make_random_scatter(s, seed);
  const std::vector<int64_t> values = bad_values(s.out_rows);
  // Bad values scattered over the source, each at a position of its own,
  // the first at position 17 with a value that cannot be mistaken for
  // out_rows in the message; the last source row is bad too, so the tail is
  // covered.
  const BadIndex smallest{17, s.out_rows + 123457};
  host.index[17] = smallest.value;
  host.index[static_cast<size_t>(s.src_rows - 1)] = values.back();
  const std::vector<int64_t> positions =
      distinct_positions(static_cast<int64_t>(values.size()) - 1, 18, s.src_rows - 1, derive_seed(seed, 99));
  for (size_t k = 0; k + 1 < values.size(); ++k) host.index[static_cast<size_t>(positions[k])] = values[k];
  run_expecting_report(s, host, smallest);
}

TEST_P(IndexErrorTest, OutOfRangeRowsAreSkippedWhereOutIsPrefetched) {
  // 512-byte rows: the TMA path prefetches each row's out chunk as it
  // issues the row's load, skipping a bad index and a row whose target is
  // the previous row's. 40000 rows give each of the H200's 4224 TMA workers
  // about ten, so the runs of one target below cross worker boundaries and
  // pass through the main loop's issues, with bad rows inside them. (AUTO
  // takes red for f32 rows this size.)
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  ScatterShape s = shape();
  s.cols = 128;
  s.src_rows = 40000;
  HostScatter host = make_random_scatter(s, seed);
  for (size_t i = 30; i < 400; ++i) host.index[i] = 5 + static_cast<int64_t>(i / 37);
  for (size_t i : {33u, 34u, 95u, 96u, 97u, 250u}) host.index[i] = i % 2 == 0 ? -1 : s.out_rows;
  const BadIndex smallest{17, s.out_rows + 123457};
  host.index[17] = smallest.value;
  host.index[static_cast<size_t>(s.src_rows - 1)] = -3;
  if (path() == SCATTERPTX_PATH_TMA) {
    DeviceScatter probe(s, host);
    EXPECT_NE(describe_plan(probe.args(path(), check())).find("prefetch_out=1"), std::string::npos)
        << describe_plan(probe.args(path(), check()));
  }
  run_expecting_report(s, host, smallest);
}

TEST_P(IndexErrorTest, OutOfRangeRowsAreSkippedWhereRedPrefetchesOut) {
  // 64-byte rows into an out larger than L2, where the red path prefetches
  // the next batch's out lines (its prefetch is predicated off for a bad
  // index): bad rows are skipped and reported there too. The loop's batches
  // are four consecutive rows, group g taking batches g, g + step, ...
  // (red_prefetch_shape), and a row whose target is the next row's adds
  // into that row instead of sending its red. The bad rows below cover
  // every batch slot (row % 4), a group's first, second, third and last
  // (partial) batch, and a run of one target that spans batches: alone, two
  // side by side with one bad value, and at a batch's first and last slots.
  if (path() == SCATTERPTX_PATH_PRIVATE) GTEST_SKIP() << "more targets than the privatised path takes";
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = red_prefetch_shape(SCATTERPTX_F32, index_type(), 64);
  const int64_t step = red_batch_step(SCATTERPTX_F32, index_type(), 64);
  HostScatter host = make_random_scatter(s, seed);
  for (size_t row = 200; row < 264; ++row) host.index[row] = 5;
  // Batch slots (row % 4): 40, 41, 202, 207 take 0-3; 208 opens a batch
  // inside the run; 213 and 214 are neighbours; 4 step + 5 and + 7 sit in
  // second batches, 8 step + 9 in a third, src_rows - 1 in the last.
  const std::vector<int64_t> bad_rows = {40,           41,           202,          207,
                                         208,          213,          214,          4 * step + 5,
                                         4 * step + 7, 8 * step + 9, s.src_rows - 1};
  for (int64_t row : bad_rows) host.index[static_cast<size_t>(row)] = row % 2 == 0 ? -1 : s.out_rows;
  host.index[214] = host.index[213];  // neighbours with one bad value
  const BadIndex smallest{29, std::numeric_limits<int32_t>::max()};
  host.index[29] = smallest.value;
  if (path() == SCATTERPTX_PATH_RED) {
    DeviceScatter probe(s, host);
    check_short_row_batches(describe_plan(probe.args(path(), check())), s.src_rows);
    if (HasFatalFailure()) return;
  }
  run_expecting_report(s, host, smallest);
}

TEST_P(IndexErrorTest, NegativeIndicesAreSkipped) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = shape();
  HostScatter host = make_random_scatter(s, seed);
  Rng rng(derive_seed(seed, 98));
  for (int k = 0; k < 200; ++k) {  // negatives only, from -1 down to -out_rows
    host.index[static_cast<size_t>(500 + rng.below(s.src_rows - 500))] = -1 - rng.below(s.out_rows);
  }
  host.index[321] = -7;
  run_expecting_report(s, host, BadIndex{321, -7});
}

TEST_P(IndexErrorTest, AllIndicesOutOfRangeWritesNothing) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = shape();
  HostScatter host = make_random_scatter(s, seed);
  for (size_t i = 0; i < host.index.size(); ++i) {
    host.index[i] = i % 2 == 0 ? s.out_rows + 1000 + static_cast<int64_t>(i)
                               : -1 - static_cast<int64_t>(i);
  }
  run_expecting_report(s, host, BadIndex{0, s.out_rows + 1000});
}

TEST_P(IndexErrorTest, RecordKeepsSmallestPositionAcrossLaunches) {
  if (check() != SCATTERPTX_INDEX_RECORD) GTEST_SKIP() << "RECORD mode only";
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = shape();
  HostScatter first = make_random_scatter(s, derive_seed(seed, 1));
  first.index[900] = -1;
  HostScatter second = make_random_scatter(s, derive_seed(seed, 2));
  second.index[40] = s.out_rows;
  second.index[2000] = s.out_rows + 1;
  DeviceScatter first_device(s, first);
  DeviceScatter second_device(s, second);
  const auto first_args = first_device.args(path(), check());
  const auto second_args = second_device.args(path(), check());
  ASSERT_EQ(scatterptx_scatter_add(&first_args, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  ASSERT_EQ(scatterptx_scatter_add(&second_args, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  int64_t position = 0;
  ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS);
  EXPECT_EQ(position, 40) << "the smallest position over both launches";
  ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS);
  EXPECT_EQ(position, -1);
  expect_scatter_result(s, first, first_device, 1);
  expect_scatter_result(s, second, second_device, 1);
}

std::string param_name(const ::testing::TestParamInfo<IndexErrorParam>& info) {
  return std::string(index_type_name(std::get<0>(info.param))) +
         path_name(std::get<1>(info.param)) +
         (std::get<2>(info.param) == SCATTERPTX_INDEX_RECORD ? "Record" : "Checked");
}

INSTANTIATE_TEST_SUITE_P(
    Sm90, IndexErrorTest,
    ::testing::Combine(::testing::Values(SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64),
                       ::testing::Values(SCATTERPTX_PATH_AUTO, SCATTERPTX_PATH_TMA,
                                         SCATTERPTX_PATH_RED, SCATTERPTX_PATH_PRIVATE),
                       ::testing::Values(SCATTERPTX_INDEX_RECORD, SCATTERPTX_INDEX_CHECKED)),
    param_name);

}  // namespace
}  // namespace scatterptx_test

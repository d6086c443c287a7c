// Sizes past 32-bit arithmetic: a source over 4 GiB and over 2^31 elements,
// and an out whose last rows start past element 2^31 and byte 2^32, so any
// offset computed in 32 bits lands on the wrong row.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"

namespace scatterptx_test {
namespace {

constexpr size_t kGiB = size_t{1} << 30;

size_t device_bytes_needed(const ScatterShape& s) {
  const size_t element = element_bytes(s.dtype);
  return static_cast<size_t>(s.out_rows + 2 * kGuardRows) * s.out_stride() * element +
         static_cast<size_t>(s.src_rows) * s.src_stride() * element +
         static_cast<size_t>(s.src_rows) * 8;
}

// Runs every path with both index types on one upload of src.
void run_all_paths(const ScatterShape& s, HostScatter& host) {
  DeviceScatter device(s, host);
  for (scatterptx_index_type type : {SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64}) {
    device.set_index(host.index, type);
    for (scatterptx_path path : {SCATTERPTX_PATH_AUTO, SCATTERPTX_PATH_TMA, SCATTERPTX_PATH_RED}) {
      SCOPED_TRACE(std::string(index_type_name(type)) + " index, path " + path_name(path));
      device.reset_out(host.out0);
      const scatterptx_scatter_add_args args = device.args(path, SCATTERPTX_INDEX_RECORD);
      ASSERT_TRUE(device.tma_eligible());
      ASSERT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS)
          << scatterptx_last_error_message();
      expect_scatter_result(s, host, device, 1);
      int64_t bad_position = 0;
      ASSERT_EQ(scatterptx_take_index_error(&bad_position), SCATTERPTX_SUCCESS);
      EXPECT_EQ(bad_position, -1);
    }
  }
}

TEST(LargeScatterAdd, SourceOver4GiBAnd2Pow31Elements) {
  SCATTERPTX_REQUIRE_GPU();
  ScatterShape s;
  s.dtype = SCATTERPTX_BF16;
  s.cols = 1040;  // 2080-byte rows: TMA eligible
  s.src_rows = (int64_t{1} << 21) + 5;
  s.out_rows = int64_t{1} << 20;
  ASSERT_GT(s.src_rows * s.cols, int64_t{1} << 31);
  ASSERT_GT(static_cast<size_t>(s.src_rows * s.cols) * 2, 4 * kGiB);
  const size_t needed = device_bytes_needed(s) + kGiB;
  const size_t available = free_device_memory();
  if (available < needed) {
    GTEST_SKIP() << "needs " << needed / kGiB << " GiB of free device memory, "
                 << available / kGiB << " GiB free";
  }
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  HostScatter host = make_random_scatter(s, seed);
  // The first and last source rows go to the first and last out rows.
  host.index.front() = 0;
  host.index.back() = s.out_rows - 1;
  run_all_paths(s, host);
}

TEST(LargeScatterAdd, OutPast2Pow31ElementsWithIndicesNearTheEnd) {
  SCATTERPTX_REQUIRE_GPU();
  ScatterShape s;
  s.dtype = SCATTERPTX_BF16;
  s.cols = 16;  // 32-byte rows
  s.out_rows = (int64_t{1} << 27) + 17;  // row 2^27 starts at element 2^31, byte 2^32
  s.src_rows = 4096;
  const size_t needed = device_bytes_needed(s) + kGiB;
  const size_t available = free_device_memory();
  if (available < needed) {
    GTEST_SKIP() << "needs " << needed / kGiB << " GiB of free device memory, "
                 << available / kGiB << " GiB free";
  }
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  HostScatter host = make_random_scatter(s, seed);
  // A quarter of the sources go to the last 1024 rows (past element 2^31),
  // a few straddle byte offset 2^31 (row 2^26), the rest stay random.
  for (int64_t i = 0; i < 1024; ++i) {
    host.index[static_cast<size_t>(4 * i)] = s.out_rows - 1 - i;
  }
  const int64_t byte_2pow31_row = int64_t{1} << 26;
  for (int64_t k = -2; k <= 2; ++k) host.index[static_cast<size_t>(4 * k + 9)] = byte_2pow31_row + k;
  host.index.back() = s.out_rows - 1;
  run_all_paths(s, host);
}

}  // namespace
}  // namespace scatterptx_test

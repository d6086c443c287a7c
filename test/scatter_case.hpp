// One scatter_add problem on the GPU: host inputs, their device copies (out
// between guard rows), the launch, and the comparison with the reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx_test {

struct ScatterShape {
  scatterptx_dtype dtype = SCATTERPTX_F32;
  scatterptx_index_type index_type = SCATTERPTX_INDEX_INT64;
  int64_t out_rows = 0;
  int64_t src_rows = 0;
  int64_t cols = 0;
  int64_t out_row_stride = 0;  // 0: cols
  int64_t src_row_stride = 0;  // 0: cols
  size_t src_offset_bytes = 0; // src starts this far into its allocation
  size_t index_offset_bytes = 0; // index starts this far into its allocation

  int64_t out_stride() const { return out_row_stride != 0 ? out_row_stride : cols; }
  int64_t src_stride() const { return src_row_stride != 0 ? src_row_stride : cols; }
  std::string describe() const;
};

// Contiguous rows of cols elements, int64 indices.
ScatterShape contiguous_shape(scatterptx_dtype dtype, int64_t out_rows, int64_t src_rows, int64_t cols);

// Inputs on the host: out0 is the poison out starts from.
struct HostScatter {
  HostMatrix out0;
  HostMatrix src;
  std::vector<int64_t> index;
};

// Random out0 and src, indices uniform in [0, out_rows).
HostScatter make_random_scatter(const ScatterShape& shape, uint64_t seed);

// Replaces host's out0 and src by eighths (reference.hpp) that keep every
// sum exact for host's index, each source row added `repeats` times: K as
// large as the most rows one target takes allows. False, changing nothing,
// where that is too many for the dtype (most_exact_rows_per_target).
bool make_sums_exact(HostScatter& host, uint64_t seed, int repeats = 1);

// How a result is held to the float64 reference: within the rounding bound
// (check_scatter_add), bit for bit (check_exact_sums; inputs from
// make_sums_exact), or within the bound of sums made on chip
// (check_on_chip_sums; repeats must be 1).
enum class Comparison { kWithinBound, kExact, kOnChipSums };
const char* comparison_name(Comparison comparison);

// Rows of sentinel bytes allocated before and after out: a write outside
// out lands there and is caught.
constexpr int64_t kGuardRows = 2;
constexpr unsigned char kGuardByte = 0x5A;

class DeviceScatter {
 public:
  DeviceScatter(const ScatterShape& shape, const HostScatter& host);

  void reset_out(const HostMatrix& out0);
  void set_index(const std::vector<int64_t>& index, scatterptx_index_type type);
  scatterptx_scatter_add_args args(scatterptx_path path, scatterptx_index_check check) const;
  // Whether a forced PATH_TMA is allowed: 16-byte rows, strides and pointers.
  bool tma_eligible() const;
  // Whether a forced path must refuse this input, or may (the privatised
  // path refuses when its accumulators do not fit in shared memory).
  enum class Refusal { kNever, kMay, kMust };
  Refusal refusal(scatterptx_path path) const;
  HostMatrix download_out() const;
  // "" when every guard byte is intact, else where the first damage is.
  std::string guard_damage() const;

 private:
  ScatterShape shape_;
  scatterptx_index_type index_type_;
  DeviceBuffer out_storage_;
  DeviceBuffer src_storage_;
  DeviceBuffer index_storage_;
  size_t out_bytes_;
  size_t guard_bytes_;
};

// scatterptx_describe_plan's text for args, or "(describe_plan failed: ...)".
std::string describe_plan(const scatterptx_scatter_add_args& args);

// The bytes one lane of the red path takes of a 16-byte aligned row: a
// 16-byte vector, f64 one element (it has no vector red).
int64_t red_lane_bytes(scatterptx_dtype dtype);

// The value of " key=" in a plan's text (describe_plan's or
// describe_group_plan's), or -1 where it has none.
int64_t plan_number(const std::string& plan, const std::string& key);

// Shapes for the red path's short-row loop with out prefetched: 16-byte
// aligned rows of row_bytes (at most 256 lanes' red_lane_bytes: 4 KB, f64
// 2 KB) into an out larger than the device's L2. The loop's batches are
// four consecutive rows; group g of the grid takes batches g, g + step, ...
// (step: red_batch_step). The source-row count, 9 step + 3, gives every
// group two full batches, the first quarter of them a third, and leaves the
// last batch partial; check_short_row_batches holds a red plan to it.
ScatterShape red_prefetch_shape(scatterptx_dtype dtype, scatterptx_index_type index_type, int64_t row_bytes);

// The groups of lanes in the red grid the library plans for such rows when
// there are enough of them (its grid is then a few waves of the CTAs an SM
// holds, by the driver's occupancy): the batches between two batches of one
// group. Read from scatterptx_describe_plan's grid= and lanes_per_row=;
// throws std::runtime_error with the plan where they are missing.
int64_t red_batch_step(scatterptx_dtype dtype, scatterptx_index_type index_type, int64_t row_bytes);

// Fails unless plan (describe_plan's text of a red plan) prefetches out and
// its grid's groups of lanes are the step src_rows was made for
// (red_prefetch_shape: src_rows = 9 step + 3, so the last batch is partial).
void check_short_row_batches(const std::string& plan, int64_t src_rows);

// Runs shape with fresh random inputs (eighths for kExact) on the null
// stream and checks it: a forced TMA path on ineligible input must be
// rejected with nothing written; every other combination must match the
// reference, with AUTO on ineligible input planned as the red path.
void run_and_check(const ScatterShape& shape, scatterptx_path path, uint64_t seed,
                   Comparison comparison = Comparison::kWithinBound);

// Downloads out and checks it, guards included, against host's inputs added
// `repeats` times (the number of launches that ran).
void expect_scatter_result(const ScatterShape& shape, const HostScatter& host, const DeviceScatter& device,
                           int repeats, Comparison comparison = Comparison::kWithinBound);

}  // namespace scatterptx_test

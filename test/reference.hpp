// Host-side reference for scatter_add: element conversions, seeded random
// inputs, and a float64 reference with a rounding-error bound per element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "element_types.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx_test {

using scatterptx_testing::bf16_bits_to_float;
using scatterptx_testing::element_bytes;
using scatterptx_testing::float_to_bf16_bits;
using scatterptx_testing::float_to_half_bits;
using scatterptx_testing::half_bits_to_float;
using scatterptx_testing::load_element;
using scatterptx_testing::smallest_normal;
using scatterptx_testing::store_element;
using scatterptx_testing::unit_roundoff;

const char* dtype_name(scatterptx_dtype dtype);
const char* index_type_name(scatterptx_index_type type);
const char* path_name(scatterptx_path path);
size_t index_bytes(scatterptx_index_type type);

// xoshiro256**: fast, and reproducible from one 64-bit seed.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform();                 // [0, 1)
  int64_t below(int64_t bound);     // [0, bound), bound > 0
  // Uniform in [-1, 1] with |x| >= 1e-3: never zero, and far enough from the
  // subnormal range that flush-to-zero in bulk reductions cannot matter.
  double nonzero_value();

 private:
  uint64_t state_[4];
};

// A fresh seed per call from std::random_device, or SCATTERPTX_TEST_SEED
// from the environment to replay a failure.
uint64_t fresh_seed();
// "seed=N (replay with SCATTERPTX_TEST_SEED=N)", for SCOPED_TRACE.
std::string seed_trace(uint64_t seed);
// A seed for the sub-stream `stream` of `seed`, so that parallel generation
// gives the same values whatever the thread count.
uint64_t derive_seed(uint64_t seed, uint64_t stream);

// Padding between cols and row_stride in out: must come back unchanged.
constexpr unsigned char kOutPaddingByte = 0xA5;
// Padding in src: all-ones bytes are a NaN in every dtype, so a kernel that
// reads padding into a real column turns the result into NaN.
constexpr unsigned char kSrcPaddingByte = 0xFF;

// A row-major host matrix in the device layout (row_stride elements per row).
struct HostMatrix {
  scatterptx_dtype dtype = SCATTERPTX_F32;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;
  std::vector<unsigned char> bytes;

  HostMatrix() = default;
  HostMatrix(scatterptx_dtype dtype, int64_t rows, int64_t cols, int64_t row_stride,
             unsigned char fill_byte);
  size_t row_bytes() const { return static_cast<size_t>(row_stride) * element_bytes(dtype); }
  unsigned char* row(int64_t r) { return bytes.data() + static_cast<size_t>(r) * row_bytes(); }
  const unsigned char* row(int64_t r) const {
    return bytes.data() + static_cast<size_t>(r) * row_bytes();
  }
  double at(int64_t r, int64_t c) const {
    return load_element(dtype, row(r) + static_cast<size_t>(c) * element_bytes(dtype));
  }
};

// Random non-zero values in the first cols of each row, padding_byte after.
HostMatrix random_matrix(scatterptx_dtype dtype, int64_t rows, int64_t cols, int64_t row_stride,
                         unsigned char padding_byte, uint64_t seed);
// count indices uniform in [0, out_rows).
std::vector<int64_t> random_indices(int64_t count, int64_t out_rows, uint64_t seed);
// The device representation: int32 or int64, little-endian.
std::vector<unsigned char> encode_indices(const std::vector<int64_t>& index,
                                          scatterptx_index_type type);

struct CheckReport {
  bool ok = true;
  std::string first_failure;  // the first bad (row, col), or "" when ok
  int64_t bad_elements = 0;
  int64_t rows_added = 0;      // out rows with at least one valid index
  double relative_error = 0;   // ||got - ref|| / ||ref|| over added rows
  std::string summary() const;
};

// Compares got with out0 + sum of src rows (each added `repeats` times) in
// float64. Per element of an added row:
// |got - ref| <= rounding_error_bound (testing/error_bound.hpp), adds
// counting the additions into that row;
// NaN never passes. Rows with no valid index, and the padding of every row,
// must be bit-identical to out0. Indices outside [0, out_rows) are ignored.
CheckReport check_scatter_add(const HostMatrix& out0, const HostMatrix& src,
                              const std::vector<int64_t>& index, const HostMatrix& got,
                              int repeats = 1);

// check_scatter_add with on_chip_sum_error_bound (testing/error_bound.hpp):
// for a call that sums each target's rows on chip (grouped execution)
// before it rounds to the dtype.
CheckReport check_on_chip_sums(const HostMatrix& out0, const HostMatrix& src, const std::vector<int64_t>& index,
                               const HostMatrix& got);

// Exact sums. Values k/8, k a non-zero integer in [-K, K]: any partial sum
// of n of them, in any order, is a multiple of 1/8 no larger than n K / 8,
// which a dtype of p significand bits holds exactly while n K <= 2^p (p: 8
// bf16, 11 f16, 24 f32, 53 f64). With such inputs every kernel, whatever
// order it adds in, must give the float64 sum bit for bit, so a row lost,
// added twice or read from the wrong place shows; the rounding bound above
// grows with the additions and at high fan-in cannot tell those apart (in
// bf16 not even from out left as it was).

// The most source rows one target can take, each added `repeats` times,
// with K = 1 and out0's value counted: (2^p - 1) / repeats; 255 in bf16,
// 2047 in f16.
int64_t most_exact_rows_per_target(scatterptx_dtype dtype, int repeats = 1);
// The largest K for sums of `terms` values (terms K <= 2^p), at most 64;
// 0 where not even K = 1 keeps them exact.
int64_t most_exact_eighths(scatterptx_dtype dtype, int64_t terms);
// Replaces the first cols of every row of m by k/8, k uniform over the
// non-zero integers in [-most_eighths, most_eighths].
void fill_eighths(HostMatrix& m, int64_t most_eighths, uint64_t seed);

// Compares got with out0 (with include_self, else 0) plus the src rows of
// each target, each added `repeats` times: every element of a row some
// valid index reaches must be the float64 sum stored in the dtype, bit for
// bit. Rows with no valid index, and the padding of every row, must be
// bit-identical to out0. Fails, naming the element, where the terms are not
// all finite multiples of 1/8 whose absolute values sum to at most 2^p / 8:
// there the sum could round, and exactness is no test.
CheckReport check_exact_sums(const HostMatrix& out0, const HostMatrix& src, const std::vector<int64_t>& index,
                             const HostMatrix& got, int repeats = 1, bool include_self = true);

// torch's out.scatter_reduce_(0, index expanded, src, reduce, include_self),
// with per-row weights for a sum.
struct ReduceCheck {
  scatterptx_reduce reduce = SCATTERPTX_REDUCE_SUM;
  bool include_self = true;
  std::vector<double> weights;  // empty: unweighted; else one per source row (their exact values)
};

// Compares got with the float64 reduce of out0 and src. Per element of a
// reached row: NaN where any operand (out0's with include_self) is NaN, an
// infinite reference exactly; amax and amin exactly; sum within
// rounding_error_bound for the additions (one more with weights: the
// product's rounding), mean within that over the count plus one rounding of
// the dtype's smallest normal. Rows no valid index reaches, and the padding
// of every row, must be bit-identical to out0.
CheckReport check_scatter_reduce(const HostMatrix& out0, const HostMatrix& src, const std::vector<int64_t>& index,
                                 const HostMatrix& got, const ReduceCheck& reduce);

// count weights uniform in [-2, 2], none zero, each exactly representable in
// dtype; and their bytes as the device reads them.
struct HostWeights {
  scatterptx_dtype dtype = SCATTERPTX_F32;
  std::vector<double> values;
  std::vector<unsigned char> bytes;
};
HostWeights random_weights(int64_t count, scatterptx_dtype dtype, uint64_t seed);

// count distinct positions, uniform in [begin, end) (end - begin >= count).
std::vector<int64_t> distinct_positions(int64_t count, int64_t begin, int64_t end, uint64_t seed);

// How the library's CHECKED-mode message names the first bad index
// (host/index_errors.cpp): "index[<position>] = <value> is outside".
std::string index_error_phrase(int64_t position, int64_t value);

}  // namespace scatterptx_test

// Host-side reference for scatter_add: element conversions, seeded random
// inputs, and a float64 reference with a rounding-error bound per element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scatterptx/scatterptx.h"

namespace scatterptx_test {

// IEEE binary16 and bfloat16, round-to-nearest-even, NaN kept quiet.
uint16_t float_to_half_bits(float value);
float half_bits_to_float(uint16_t bits);
uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(uint16_t bits);

const char* dtype_name(scatterptx_dtype dtype);
const char* index_type_name(scatterptx_index_type type);
const char* path_name(scatterptx_path path);
size_t element_bytes(scatterptx_dtype dtype);
size_t index_bytes(scatterptx_index_type type);
// 2^-24 f32, 2^-11 f16, 2^-8 bf16, 2^-53 f64.
double unit_roundoff(scatterptx_dtype dtype);
// Smallest positive normal: what one flush-to-zero can lose.
double smallest_normal(scatterptx_dtype dtype);

double load_element(scatterptx_dtype dtype, const unsigned char* element);
void store_element(scatterptx_dtype dtype, unsigned char* element, double value);

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

// Runs body(first, last) over [begin, end) split across hardware threads.
void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t, int64_t)>& body);

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
//   |got - ref| <= (adds + 1) * u * (|out0| + sum |src|) + (adds + 1) * min_normal
// where adds counts the additions into that row and u = unit_roundoff(dtype);
// NaN never passes. Rows with no valid index, and the padding of every row,
// must be bit-identical to out0. Indices outside [0, out_rows) are ignored.
CheckReport check_scatter_add(const HostMatrix& out0, const HostMatrix& src,
                              const std::vector<int64_t>& index, const HostMatrix& got,
                              int repeats = 1);

}  // namespace scatterptx_test

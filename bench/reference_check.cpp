#include "reference_check.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "driver.hpp"
#include "element_types.hpp"
#include "error_bound.hpp"

namespace scatterptx_bench {
namespace {

using scatterptx_testing::element_bytes;
using scatterptx_testing::load_element;
using scatterptx_testing::rounding_error_bound;

// Sorted, distinct out rows the check reads back: every touched row and its
// untouched neighbours (a row written one off would land there).
std::vector<int64_t> rows_to_read(const std::vector<int64_t>& touched, int64_t out_rows) {
  std::vector<int64_t> rows;
  rows.reserve(touched.size() * 3);
  for (int64_t t : touched) {
    if (t > 0) rows.push_back(t - 1);
    rows.push_back(t);
    if (t + 1 < out_rows) rows.push_back(t + 1);
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// Reads the listed rows of out into consecutive rows of host, one copy per
// run of consecutive row numbers.
void download_rows(CUdeviceptr out, size_t row_bytes, const std::vector<int64_t>& rows,
                   uint8_t* host) {
  size_t first = 0;
  while (first < rows.size()) {
    size_t last = first;
    while (last + 1 < rows.size() && rows[last + 1] == rows[last] + 1) ++last;
    const size_t count = last - first + 1;
    copy_to_host(host + first * row_bytes, out + static_cast<size_t>(rows[first]) * row_bytes,
                 count * row_bytes);
    first = last + 1;
  }
}

size_t position_of(const std::vector<int64_t>& sorted_rows, int64_t row) {
  return static_cast<size_t>(std::lower_bound(sorted_rows.begin(), sorted_rows.end(), row) -
                             sorted_rows.begin());
}

}  // namespace

CheckResult check_prefix(const scatterptx_scatter_add_args& args, const ProblemInputs& inputs,
                         int64_t check_rows, CUstream stream, const PrefixLaunch& launch) {
  const DriverApi& api = driver();
  const OutInputs& out = *inputs.out;
  const SourceInputs& source = *inputs.source;
  const IndexInputs& index = *inputs.index;
  const scatterptx_dtype dtype = args.dtype;
  const size_t cols = static_cast<size_t>(args.cols);
  const size_t element = element_bytes(dtype);
  const size_t row_bytes = cols * element;

  CheckResult result;
  result.tolerance = scatterptx_testing::unit_roundoff(dtype);
  result.src_rows_checked =
      std::min({check_rows, args.src_rows, source.host_prefix_rows,
                static_cast<int64_t>(index.host_prefix.size())});

  // Clear the index-error record so only this launch can set it.
  int64_t stale_position = -1;
  check_scatterptx(scatterptx_take_index_error(&stale_position), "scatterptx_take_index_error");

  check_driver(api.cuMemcpyDtoDAsync(out.out.address(), out.pristine.address(), out.out.size(), stream),
           "cuMemcpyDtoDAsync");
  scatterptx_scatter_add_args prefix_args = args;
  prefix_args.src_rows = result.src_rows_checked;
  launch(prefix_args, stream);
  check_driver(api.cuStreamSynchronize(stream), "cuStreamSynchronize");

  int64_t error_position = -1;
  check_scatterptx(scatterptx_take_index_error(&error_position), "scatterptx_take_index_error");
  if (error_position != -1) {
    result.failure = "index error recorded at position " + std::to_string(error_position) +
                     " although every index is in range";
    return result;
  }

  const std::vector<int64_t> prefix_index(
      index.host_prefix.begin(),
      index.host_prefix.begin() + static_cast<std::ptrdiff_t>(result.src_rows_checked));
  std::vector<int64_t> touched = prefix_index;
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  const std::vector<int64_t> rows = rows_to_read(touched, out.rows);
  result.touched_rows = static_cast<int64_t>(touched.size());
  result.neighbour_rows = static_cast<int64_t>(rows.size() - touched.size());

  std::vector<uint8_t> got(rows.size() * row_bytes);
  download_rows(out.out.address(), row_bytes, rows, got.data());

  // reference = pristine out + every contribution, summed in float64; beside
  // it the sum of magnitudes and the additions per row, for the error bound.
  std::vector<double> reference(rows.size() * cols);
  std::vector<double> magnitude(rows.size() * cols);
  std::vector<size_t> additions(rows.size(), 0);
  for (size_t r = 0; r < rows.size(); ++r) {
    const size_t out_row = static_cast<size_t>(rows[r]);
    for (size_t c = 0; c < cols; ++c) {
      reference[r * cols + c] = load_element(dtype, out.host.get() + (out_row * cols + c) * element);
      magnitude[r * cols + c] = std::fabs(reference[r * cols + c]);
    }
  }
  for (size_t i = 0; i < prefix_index.size(); ++i) {
    const size_t r = position_of(rows, prefix_index[i]);
    ++additions[r];
    for (size_t c = 0; c < cols; ++c) {
      const double term = load_element(dtype, source.host_prefix.data() + (i * cols + c) * element);
      reference[r * cols + c] += term;
      magnitude[r * cols + c] += std::fabs(term);
    }
  }

  size_t touched_seen = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const bool is_touched = touched_seen < touched.size() && touched[touched_seen] == rows[r];
    if (!is_touched) {
      const uint8_t* pristine = out.host.get() + static_cast<size_t>(rows[r]) * row_bytes;
      if (std::memcmp(pristine, &got[r * row_bytes], row_bytes) != 0 && result.failure.empty()) {
        result.failure = "out row " + std::to_string(rows[r]) +
                         " is not a target of the checked rows but changed";
      }
      continue;
    }
    ++touched_seen;
    double max_error = 0;
    double max_reference = 0;
    for (size_t c = 0; c < cols; ++c) {
      const double expected = reference[r * cols + c];
      const double actual = load_element(dtype, got.data() + (r * cols + c) * element);
      const double error = std::fabs(actual - expected);
      max_error = std::isnan(error) ? std::numeric_limits<double>::infinity()
                                    : std::max(max_error, error);
      max_reference = std::max(max_reference, std::fabs(expected));
      const double bound = rounding_error_bound(dtype, static_cast<double>(additions[r]),
                                                magnitude[r * cols + c]);
      if (!(error <= bound) && result.failure.empty()) {
        result.failure = "out row " + std::to_string(rows[r]) + " col " + std::to_string(c) + ": |" +
                         std::to_string(actual) + " - " + std::to_string(expected) + "| > bound " +
                         std::to_string(bound) + " (" + std::to_string(additions[r]) + " additions)";
      }
    }
    const double relative = max_error / std::max(max_reference, DBL_MIN);
    if (relative > result.max_relative_error || std::isinf(relative)) {
      result.max_relative_error = relative;
    }
  }
  result.ok = result.failure.empty();
  return result;
}

void require_no_index_error(CheckResult* check) {
  int64_t position = -1;
  check_scatterptx(scatterptx_take_index_error(&position), "scatterptx_take_index_error");
  if (position != -1 && check->failure.empty()) {
    check->ok = false;
    check->failure = "timed runs recorded an index error at position " + std::to_string(position);
  }
}

}  // namespace scatterptx_bench

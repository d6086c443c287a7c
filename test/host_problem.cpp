#include "host_problem.hpp"

namespace scatterptx_test {

using scatterptx::detail::Problem;

Problem contiguous(scatterptx_dtype dtype, uint64_t src_rows, uint64_t out_rows, uint64_t cols) {
  Problem p;
  p.dtype = dtype;
  p.elem_bytes = scatterptx_dtype_size(dtype);
  p.index_type = SCATTERPTX_INDEX_INT64;
  p.index_bytes = 8;
  p.src_rows = src_rows;
  p.out_rows = out_rows;
  p.cols = cols;
  p.out_row_stride_bytes = cols * p.elem_bytes;
  p.src_row_stride_bytes = cols * p.elem_bytes;
  p.out_address = 0x7f0000000000;
  p.src_address = 0x7f1000000000;
  p.index_address = 0x7f2000000000;
  return p;
}

Problem weighted(Problem p, scatterptx_dtype weights_dtype) {
  p.weighted = true;
  p.weights_dtype = weights_dtype;
  p.weights_address = 0x7f3000000000;
  return p;
}

}  // namespace scatterptx_test

// libscatterptx C++ layer: the C ABI with exceptions instead of status codes.
#ifndef SCATTERPTX_SCATTERPTX_HPP
#define SCATTERPTX_SCATTERPTX_HPP

#include <cstdint>
#include <stdexcept>
#include <string>

#include "scatterptx/scatterptx.h"

namespace scatterptx {

// Thrown for every non-success status; carries the status and the message.
class Error : public std::runtime_error {
 public:
  Error(scatterptx_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  scatterptx_status status() const noexcept { return status_; }

 private:
  scatterptx_status status_;
};

inline void throw_on_error(scatterptx_status status) {
  if (status != SCATTERPTX_SUCCESS) {
    throw Error(status, std::string(scatterptx_status_name(status)) + ": " +
                            scatterptx_last_error_message());
  }
}

// A row-major matrix view on device memory; row_stride is in elements.
template <typename Pointer>
struct Matrix {
  Pointer data;
  int64_t rows;
  int64_t cols;
  int64_t row_stride;
};

// out[index[i], :] += src[i, :]; index holds src.rows entries.
inline void scatter_add(Matrix<void*> out, Matrix<const void*> src, scatterptx_dtype dtype,
                        const void* index, scatterptx_index_type index_type, CUstream stream,
                        scatterptx_index_check check = SCATTERPTX_INDEX_RECORD) {
  if (out.cols != src.cols) {
    throw Error(SCATTERPTX_ERROR_INVALID_ARGUMENT,
                "out has " + std::to_string(out.cols) + " columns but src has " +
                    std::to_string(src.cols));
  }
  scatterptx_scatter_add_args args;
  scatterptx_scatter_add_args_init(&args);
  args.out = out.data;
  args.out_rows = out.rows;
  args.out_row_stride = out.row_stride;
  args.src = src.data;
  args.src_rows = src.rows;
  args.src_row_stride = src.row_stride;
  args.cols = src.cols;
  args.dtype = dtype;
  args.index = index;
  args.index_type = index_type;
  args.index_check = check;
  throw_on_error(scatterptx_scatter_add(&args, stream));
}

inline void prepare() { throw_on_error(scatterptx_prepare()); }

// The smallest offending source position recorded since the last call, or -1.
inline int64_t take_index_error() {
  int64_t position = -1;
  throw_on_error(scatterptx_take_index_error(&position));
  return position;
}

}  // namespace scatterptx

#endif  // SCATTERPTX_SCATTERPTX_HPP

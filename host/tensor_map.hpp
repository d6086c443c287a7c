// Tensor maps for the TMA row path.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "driver_api.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx::detail {

struct RowTensorMapFields {
  scatterptx_dtype dtype = SCATTERPTX_F32;
  uint64_t address = 0;       // row 0, column 0
  uint64_t cols = 0;          // globalDim[0]
  uint64_t rows = 0;          // globalDim[1]
  uint64_t row_stride_bytes = 0;
  uint32_t box_elems = 0;     // boxDim = {box_elems, box_rows}
  uint32_t box_rows = 1;
};

// Every hardware limit the fields break, one per line; "" when they fit.
std::string row_tensor_map_violations(const RowTensorMapFields& fields);

// A tile-mode map over a (rows, cols) row-major matrix with a
// (box_rows, box_elems) box, no swizzle or interleave, zero fill out of bounds. Checks the limits
// first; on any failure the message lists every field.
CUtensorMap encode_row_tensor_map(const DriverApi& api, const RowTensorMapFields& fields);

}  // namespace scatterptx::detail

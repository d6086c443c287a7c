// A scatter-add call as the planner sees it: validated sizes in elements and
// bytes, and the addresses (for alignment) of its three tensors.
#pragma once

#include <cstdint>
#include <string>

#include "scatterptx/scatterptx.h"

namespace scatterptx::detail {

struct Problem {
  scatterptx_dtype dtype = SCATTERPTX_F32;
  scatterptx_index_type index_type = SCATTERPTX_INDEX_INT64;
  scatterptx_index_check index_check = SCATTERPTX_INDEX_RECORD;
  scatterptx_path path = SCATTERPTX_PATH_AUTO;
  scatterptx_grouping grouping = SCATTERPTX_GROUPING_AUTO;
  uint64_t elem_bytes = 4;
  uint64_t index_bytes = 8;
  uint64_t out_rows = 0;
  uint64_t src_rows = 0;
  uint64_t cols = 0;
  uint64_t out_row_stride_bytes = 0;
  uint64_t src_row_stride_bytes = 0;
  uint64_t out_address = 0;
  uint64_t src_address = 0;
  uint64_t index_address = 0;
  bool has_schedule = false;
  scatterptx_schedule schedule{};  // zero fields: planner's choice
  scatterptx_reduce reduce = SCATTERPTX_REDUCE_SUM;
  bool include_self = true;
  bool weighted = false;           // per-row weights (reduce SUM only)
  scatterptx_dtype weights_dtype = SCATTERPTX_F32;  // F32 or dtype
  uint64_t weights_address = 0;

  uint64_t row_bytes() const { return cols * elem_bytes; }
  bool is_empty() const { return src_rows == 0 || cols == 0; }
  // Bytes of one weight: 4 for f32 weights, else the element's.
  uint64_t weight_bytes() const { return weights_dtype == SCATTERPTX_F32 ? 4 : elem_bytes; }
  // Every reduce but SUM with include_self writes each reached row once,
  // which only grouped execution does (the streaming paths add atomically).
  bool needs_grouping() const { return reduce != SCATTERPTX_REDUCE_SUM || !include_self; }
};

// "sum", "mean", "amax", "amin", or "unknown".
const char* reduce_name(scatterptx_reduce reduce);

// " reduce=mean include_self=0 weights=f32", naming only what differs from
// out[index[i], :] += src[i, :] ("" for that), for the plans' descriptions.
std::string reduce_description(const Problem& problem);

// Checks every argument (never dereferencing a pointer) and returns the
// problem, or throws an INVALID_ARGUMENT Failure naming the offending field.
Problem validate_arguments(const scatterptx_scatter_add_args* args);

// The same for sizes, strides, dtype, index type and modes only: out, src and
// index are not looked at and the problem's addresses are 0 (aligned).
Problem validate_shape(const scatterptx_scatter_add_args* args);

// What scatterptx_scatter_add (and its describe) refuses beyond
// validate_arguments: a reduce that needs grouping with grouping OFF.
void validate_default_call(const Problem& problem);

}  // namespace scatterptx::detail

#include <string>

#include "errors.hpp"
#include "plan.hpp"
#include "problem.hpp"

namespace scatterptx::detail {
namespace {

// Largest byte extent a tensor may span: keeps every address computation
// (row * stride + column bytes) inside 63 bits.
constexpr uint64_t kMaxExtentBytes = uint64_t{1} << 62;

std::string str(int64_t value) { return std::to_string(value); }

uint64_t checked_extent(const char* name, uint64_t rows, uint64_t stride_bytes, uint64_t row_bytes) {
  if (rows == 0) return 0;
  // (rows - 1) * stride + row_bytes, guarding the multiplication.
  if (stride_bytes != 0 && rows - 1 > (kMaxExtentBytes - row_bytes) / stride_bytes) {
    invalid_argument(std::string(name) + " spans more than 2^62 bytes");
  }
  return (rows - 1) * stride_bytes + row_bytes;
}

bool ranges_overlap(uint64_t a, uint64_t a_bytes, uint64_t b, uint64_t b_bytes) {
  return a_bytes != 0 && b_bytes != 0 && a < b + b_bytes && b < a + a_bytes;
}

void validate_schedule(const scatterptx_schedule& s) {
  if (s.chunk_bytes != 0 && (s.chunk_bytes % 16 != 0 || s.chunk_bytes > 65536)) {
    invalid_argument("schedule.chunk_bytes = " + std::to_string(s.chunk_bytes) +
                     ": must be a multiple of 16 and at most 65536 (0 = planner's choice)");
  }
  if (s.stages == 1 || s.stages > 32) {
    // One stage cannot overlap a load with the reduce that frees it.
    invalid_argument("schedule.stages = " + std::to_string(s.stages) + ": must be 2..32 (0 = planner's choice)");
  }
  if (s.warps_per_cta > 32) {
    invalid_argument("schedule.warps_per_cta = " + std::to_string(s.warps_per_cta) + ": at most 32");
  }
  if (s.ctas_per_sm > 32) {
    invalid_argument("schedule.ctas_per_sm = " + std::to_string(s.ctas_per_sm) + ": at most 32");
  }
}


// The reduce and the weights against each other and against the streaming
// paths' options: weights scale a sum only, and a reduce that needs grouping
// cannot be forced onto a streaming path or schedule.
void validate_reduce(const Problem& p) {
  const std::string reduce = std::string("reduce = ") + reduce_name(p.reduce);
  if (p.weighted) {
    if (p.reduce != SCATTERPTX_REDUCE_SUM) {
      invalid_argument("weights are given with " + reduce +
                       ": weights combine with SCATTERPTX_REDUCE_SUM only (a weighted mean, amax or amin "
                       "is not supported)");
    }
    if (p.weights_dtype != SCATTERPTX_F32 && p.weights_dtype != p.dtype) {
      invalid_argument(std::string("weights_dtype = ") + scatterptx_dtype_name(p.weights_dtype) +
                       " with dtype = " + scatterptx_dtype_name(p.dtype) + ": weights are f32 or the rows' dtype");
    }
    if (p.path == SCATTERPTX_PATH_TMA || p.path == SCATTERPTX_PATH_PRIVATE) {
      invalid_argument(std::string("path = ") +
                       (p.path == SCATTERPTX_PATH_TMA ? "SCATTERPTX_PATH_TMA" : "SCATTERPTX_PATH_PRIVATE") +
                       " takes no weights: weighted rows stream on the red path (SCATTERPTX_PATH_RED) or group");
    }
    if (p.has_schedule) {
      invalid_argument("schedule tunes the TMA path, which takes no weights: weighted rows stream on the red path");
    }
  }
  if (p.needs_grouping()) {
    const std::string what = p.reduce != SCATTERPTX_REDUCE_SUM ? reduce : std::string("include_self = 0");
    if (p.path != SCATTERPTX_PATH_AUTO) {
      invalid_argument("path forces a streaming path, but " + what +
                       " runs grouped only (the streaming paths add atomically); use SCATTERPTX_PATH_AUTO");
    }
    if (p.has_schedule) {
      invalid_argument("schedule tunes a streaming path, but " + what + " runs grouped only");
    }
  }
}


Problem validate(const scatterptx_scatter_add_args* args, bool with_pointers) {
  if (args == nullptr) invalid_argument("args is NULL");
  const scatterptx_scatter_add_args& a = *args;
  Problem p;

  switch (a.dtype) {
    case SCATTERPTX_F32: case SCATTERPTX_F16: case SCATTERPTX_BF16: case SCATTERPTX_F64: break;
    default: invalid_argument("dtype = " + str(a.dtype) + " is not a scatterptx_dtype");
  }
  switch (a.index_type) {
    case SCATTERPTX_INDEX_INT32: case SCATTERPTX_INDEX_INT64: break;
    default: invalid_argument("index_type = " + str(a.index_type) + " is not a scatterptx_index_type");
  }
  switch (a.index_check) {
    case SCATTERPTX_INDEX_RECORD: case SCATTERPTX_INDEX_CHECKED: break;
    default: invalid_argument("index_check = " + str(a.index_check) + " is not a scatterptx_index_check");
  }
  switch (a.path) {
    case SCATTERPTX_PATH_AUTO: case SCATTERPTX_PATH_TMA: case SCATTERPTX_PATH_RED: case SCATTERPTX_PATH_PRIVATE:
      break;
    default: invalid_argument("path = " + str(a.path) + " is not a scatterptx_path");
  }
  switch (a.grouping) {
    case SCATTERPTX_GROUPING_AUTO: case SCATTERPTX_GROUPING_OFF: case SCATTERPTX_GROUPING_NO_FALLBACK: break;
    default: invalid_argument("grouping = " + str(a.grouping) + " is not a scatterptx_grouping");
  }
  switch (a.reduce) {
    case SCATTERPTX_REDUCE_SUM: case SCATTERPTX_REDUCE_MEAN: case SCATTERPTX_REDUCE_AMAX: case SCATTERPTX_REDUCE_AMIN:
      break;
    default: invalid_argument("reduce = " + str(a.reduce) + " is not a scatterptx_reduce");
  }
  switch (a.weights_dtype) {
    case SCATTERPTX_F32: case SCATTERPTX_F16: case SCATTERPTX_BF16: case SCATTERPTX_F64: break;
    default: invalid_argument("weights_dtype = " + str(a.weights_dtype) + " is not a scatterptx_dtype");
  }
  if (a.out_rows < 0) invalid_argument("out_rows = " + str(a.out_rows) + " is negative");
  if (a.src_rows < 0) invalid_argument("src_rows = " + str(a.src_rows) + " is negative");
  if (a.cols < 0) invalid_argument("cols = " + str(a.cols) + " is negative");
  if (a.out_row_stride < a.cols) {
    invalid_argument("out_row_stride = " + str(a.out_row_stride) + " is less than cols = " + str(a.cols));
  }
  if (a.src_row_stride < a.cols) {
    invalid_argument("src_row_stride = " + str(a.src_row_stride) + " is less than cols = " + str(a.cols));
  }
  if (a.schedule != nullptr) validate_schedule(*a.schedule);

  p.dtype = a.dtype;
  p.index_type = a.index_type;
  p.index_check = a.index_check;
  p.path = a.path;
  p.grouping = a.grouping;
  p.elem_bytes = scatterptx_dtype_size(a.dtype);
  p.index_bytes = a.index_type == SCATTERPTX_INDEX_INT32 ? 4 : 8;
  p.out_rows = static_cast<uint64_t>(a.out_rows);
  p.src_rows = static_cast<uint64_t>(a.src_rows);
  p.cols = static_cast<uint64_t>(a.cols);
  if (a.schedule != nullptr) {
    p.has_schedule = true;
    p.schedule = *a.schedule;
  }
  p.reduce = a.reduce;
  p.include_self = a.include_self != 0;
  p.weighted = a.weights != nullptr;
  p.weights_dtype = a.weights_dtype;
  validate_reduce(p);
  if (p.is_empty()) {
    // Nothing is read or written: pointers may be anything, and so may the
    // width, which is not checked here; as 0 no plan computes a size from it.
    p.cols = 0;
    return p;
  }

  if (p.cols > kMaxExtentBytes / p.elem_bytes) invalid_argument("cols = " + str(a.cols) + " is too large");
  if (static_cast<uint64_t>(a.out_row_stride) > kMaxExtentBytes / p.elem_bytes ||
      static_cast<uint64_t>(a.src_row_stride) > kMaxExtentBytes / p.elem_bytes) {
    invalid_argument("row stride too large: out_row_stride = " + str(a.out_row_stride) +
                     ", src_row_stride = " + str(a.src_row_stride));
  }
  p.out_row_stride_bytes = static_cast<uint64_t>(a.out_row_stride) * p.elem_bytes;
  p.src_row_stride_bytes = static_cast<uint64_t>(a.src_row_stride) * p.elem_bytes;
  // Extents need no pointers: shapes alone (plan_workspace_size's) that span
  // more than 2^62 bytes are refused too, so that no size computed from them
  // wraps around.
  const uint64_t out_bytes = checked_extent("out", p.out_rows, p.out_row_stride_bytes, p.row_bytes());
  const uint64_t src_bytes = checked_extent("src", p.src_rows, p.src_row_stride_bytes, p.row_bytes());
  const uint64_t index_bytes = checked_extent("index", p.src_rows, p.index_bytes, p.index_bytes);
  if (!with_pointers) return p;

  if (a.out == nullptr) invalid_argument("out is NULL with src_rows = " + str(a.src_rows) + " rows to add");
  if (a.src == nullptr) invalid_argument("src is NULL with src_rows = " + str(a.src_rows));
  if (a.index == nullptr) invalid_argument("index is NULL with src_rows = " + str(a.src_rows));
  if (p.out_rows == 0) invalid_argument("out_rows = 0 but src_rows = " + str(a.src_rows) + ": no valid target");
  p.out_address = reinterpret_cast<uint64_t>(a.out);
  p.src_address = reinterpret_cast<uint64_t>(a.src);
  p.index_address = reinterpret_cast<uint64_t>(a.index);
  if (p.out_address % p.elem_bytes != 0) {
    invalid_argument("out is not aligned to its element size (" + std::to_string(p.elem_bytes) + " bytes)");
  }
  if (p.src_address % p.elem_bytes != 0) {
    invalid_argument("src is not aligned to its element size (" + std::to_string(p.elem_bytes) + " bytes)");
  }
  if (p.index_address % p.index_bytes != 0) {
    invalid_argument("index is not aligned to its element size (" + std::to_string(p.index_bytes) + " bytes)");
  }

  // Fail on address overflow, and refuse overlaps that would make the
  // result depend on the order of the reads and the atomic writes.
  if (p.out_address > UINT64_MAX - out_bytes || p.src_address > UINT64_MAX - src_bytes ||
      p.index_address > UINT64_MAX - index_bytes) {
    invalid_argument("a tensor wraps around the end of the address space");
  }
  if (ranges_overlap(p.out_address, out_bytes, p.src_address, src_bytes)) {
    invalid_argument("out and src overlap in memory");
  }
  if (ranges_overlap(p.out_address, out_bytes, p.index_address, index_bytes)) {
    invalid_argument("out and index overlap in memory");
  }
  if (p.weighted) {
    p.weights_address = reinterpret_cast<uint64_t>(a.weights);
    const uint64_t weight_bytes = p.weight_bytes();
    if (p.weights_address % weight_bytes != 0) {
      invalid_argument("weights is not aligned to its element size (" + std::to_string(weight_bytes) + " bytes)");
    }
    const uint64_t weights_extent = checked_extent("weights", p.src_rows, weight_bytes, weight_bytes);
    if (p.weights_address > UINT64_MAX - weights_extent) {
      invalid_argument("weights wraps around the end of the address space");
    }
    if (ranges_overlap(p.out_address, out_bytes, p.weights_address, weights_extent)) {
      invalid_argument("out and weights overlap in memory");
    }
  }
  if (p.path == SCATTERPTX_PATH_TMA || p.path == SCATTERPTX_PATH_PRIVATE) {
    const std::string why_not = p.path == SCATTERPTX_PATH_TMA ? tma_layout_ineligibility(p)
                                                              : private_layout_ineligibility(p);
    if (!why_not.empty()) {
      invalid_argument(std::string("path = ") +
                       (p.path == SCATTERPTX_PATH_TMA ? "SCATTERPTX_PATH_TMA" : "SCATTERPTX_PATH_PRIVATE") +
                       " cannot take this input: " + why_not);
    }
  }
  return p;
}

}  // namespace

Problem validate_arguments(const scatterptx_scatter_add_args* args) { return validate(args, true); }

Problem validate_shape(const scatterptx_scatter_add_args* args) { return validate(args, false); }

void validate_default_call(const Problem& p) {
  if (p.needs_grouping() && p.grouping == SCATTERPTX_GROUPING_OFF) {
    const std::string what = p.reduce != SCATTERPTX_REDUCE_SUM ? std::string("reduce = ") + reduce_name(p.reduce)
                                                                : std::string("include_self = 0");
    invalid_argument("grouping = SCATTERPTX_GROUPING_OFF, but " + what +
                     " runs grouped only (the streaming paths add atomically); use SCATTERPTX_GROUPING_AUTO");
  }
}

const char* reduce_name(scatterptx_reduce reduce) {
  switch (reduce) {
    case SCATTERPTX_REDUCE_SUM: return "sum";
    case SCATTERPTX_REDUCE_MEAN: return "mean";
    case SCATTERPTX_REDUCE_AMAX: return "amax";
    case SCATTERPTX_REDUCE_AMIN: return "amin";
  }
  return "unknown";
}

std::string reduce_description(const Problem& p) {
  std::string out;
  if (p.reduce != SCATTERPTX_REDUCE_SUM) out += std::string(" reduce=") + reduce_name(p.reduce);
  if (!p.include_self) out += " include_self=0";
  if (p.weighted) out += std::string(" weights=") + scatterptx_dtype_name(p.weights_dtype);
  return out;
}

}  // namespace scatterptx::detail

#include "launch.hpp"

#include <stdexcept>

#include "errors.hpp"
#include "tensor_map.hpp"

namespace scatterptx::detail {
namespace {

void launch(const DriverApi& api, CUfunction function, const LaunchSlice& slice, uint32_t threads,
            uint32_t shared_bytes, CUstream stream, void** params) {
  check_driver(api, "cuLaunchKernel",
               api.cuLaunchKernel(function, static_cast<unsigned>(slice.grid_x), slice.grid_y, 1, threads, 1, 1,
                                  shared_bytes, stream, params, nullptr));
}

// What every kernel takes about one launch slice: out, and src and index
// advanced to the slice's first row.
struct SliceArguments {
  uint64_t out_ptr;
  uint64_t out_stride;
  uint64_t src_ptr;
  uint64_t src_stride;
  uint64_t index_ptr;
  uint64_t rows;
  uint64_t row_base;  // source position of the slice's row 0, for error records
};

SliceArguments slice_arguments(const Problem& p, const LaunchSlice& slice) {
  return SliceArguments{p.out_address,
                        p.out_row_stride_bytes,
                        p.src_address + slice.row_begin * p.src_row_stride_bytes,
                        p.src_row_stride_bytes,
                        p.index_address + slice.row_begin * p.index_bytes,
                        slice.rows,
                        slice.row_begin};
}

// The src tensor map of one launch slice, with a (box_rows, box_elems) box.
CUtensorMap slice_src_map(const DriverApi& api, const Problem& p, const LaunchSlice& slice, uint32_t box_elems,
                          uint32_t box_rows) {
  RowTensorMapFields fields;
  fields.dtype = p.dtype;
  fields.address = p.src_address + slice.row_begin * p.src_row_stride_bytes;
  fields.cols = p.cols;
  fields.rows = slice.rows;
  fields.row_stride_bytes = p.src_row_stride_bytes;
  fields.box_elems = box_elems;
  fields.box_rows = box_rows;
  return encode_row_tensor_map(api, fields);
}

void launch_tma(const DriverApi& api, CUfunction function, const Problem& p, const Plan& plan,
                CUdeviceptr error_record, CUstream stream) {
  const TmaSchedule& s = plan.tma;
  for (const LaunchSlice& slice : plan.launches) {
    CUtensorMap map = slice_src_map(api, p, slice, s.box_elems, 1);
    SliceArguments a = slice_arguments(p, slice);
    uint64_t out_rows = p.out_rows;
    uint32_t cols = static_cast<uint32_t>(p.cols);
    uint32_t chunk_elems = s.chunk_elems;
    uint32_t chunks_per_row = s.chunks_per_row;
    uint32_t box_elems = s.box_elems;
    uint32_t stages = s.stages;
    uint64_t record = error_record;
    uint32_t prefetch_out = s.prefetch_out ? 1 : 0;
    void* params[] = {&map,        &a.out_ptr, &a.out_stride, &a.index_ptr, &a.rows,
                      &a.row_base, &out_rows,  &cols,         &chunk_elems, &chunks_per_row,
                      &box_elems,  &stages,    &record,       &prefetch_out};
    launch(api, function, slice, plan.threads_per_cta, s.shared_bytes, stream, params);
  }
}

void launch_red(const DriverApi& api, CUfunction function, const Problem& p, const Plan& plan,
                CUdeviceptr error_record, CUstream stream) {
  const RedSchedule& s = plan.red;
  for (const LaunchSlice& slice : plan.launches) {
    SliceArguments a = slice_arguments(p, slice);
    uint64_t out_rows = p.out_rows;
    uint64_t cols = p.cols;
    uint64_t vectors_per_row = s.vectors_per_row;
    uint32_t lanes_log2 = s.lanes_per_row_log2;
    uint64_t record = error_record;
    uint32_t prefetch_out = s.prefetch_out ? 1 : 0;
    float out_keep_fraction = static_cast<float>(s.out_keep_percent) / 100.0f;
    void* params[] = {&a.out_ptr,  &a.out_stride, &a.src_ptr, &a.src_stride,    &a.index_ptr, &a.rows,
                      &a.row_base, &out_rows,     &cols,      &vectors_per_row, &lanes_log2,  &record,
                      &prefetch_out, &out_keep_fraction};
    launch(api, function, slice, plan.threads_per_cta, 0, stream, params);
  }
}

void launch_private(const DriverApi& api, CUfunction function, const Problem& p, const Plan& plan,
                    CUdeviceptr error_record, CUstream stream) {
  const PrivateSchedule& s = plan.priv;
  for (const LaunchSlice& slice : plan.launches) {
    CUtensorMap map = slice_src_map(api, p, slice, s.slice_elems, kPrivateRowsPerStage);
    SliceArguments a = slice_arguments(p, slice);
    uint32_t out_rows = static_cast<uint32_t>(p.out_rows);
    uint32_t cols = static_cast<uint32_t>(p.cols);
    uint32_t slice_elems = s.slice_elems;
    uint32_t stages = s.stages;
    uint32_t staging_offset = s.staging_offset;
    uint32_t flags_offset = s.flags_offset;
    uint32_t ring_offset = s.ring_offset;
    uint32_t index_offset = s.index_offset;
    uint32_t barrier_offset = s.barrier_offset;
    uint64_t record = error_record;
    void* params[] = {&map,           &a.out_ptr,     &a.out_stride, &a.index_ptr,   &a.rows,
                      &a.row_base,    &out_rows,      &cols,         &slice_elems,   &stages,
                      &staging_offset, &flags_offset, &ring_offset,  &index_offset,  &barrier_offset,
                      &record};
    launch(api, function, slice, plan.threads_per_cta, s.shared_bytes, stream, params);
  }
}

}  // namespace

void launch_plan(const DriverApi& api, const ContextState& state, const Problem& problem, const Plan& plan,
                 CUdeviceptr index_error_slot, CUstream stream) {
  const CUfunction function = state.functions[plan.variant];
  if (plan.path == SCATTERPTX_PATH_TMA) {
    launch_tma(api, function, problem, plan, index_error_slot, stream);
  } else if (plan.path == SCATTERPTX_PATH_PRIVATE) {
    launch_private(api, function, problem, plan, index_error_slot, stream);
  } else {
    launch_red(api, function, problem, plan, index_error_slot, stream);
  }
}

}  // namespace scatterptx::detail

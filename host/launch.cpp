#include "launch.hpp"

#include <string>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "kernel_params.hpp"
#include "kernel_launch.hpp"
#include "tensor_map.hpp"

namespace scatterptx::detail {
namespace {

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

// The fields every row family's parameters share, for one launch slice.
template <typename Params>
void fill_slice_fields(Params& k, const SliceArguments& a) {
  k.out_ptr = a.out_ptr;
  k.out_row_stride_bytes = a.out_stride;
  k.index_ptr = a.index_ptr;
  k.rows = a.rows;
  k.row_base = a.row_base;
}

std::string source_rows(uint64_t begin, uint64_t end) {
  return "source rows [" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

// Launches the plan's slices with their prepared parameters. Every slice's
// parameters (tensor maps included) are made before the first launch, so a
// failure while preparing enqueues nothing. A launch that the driver refuses
// after earlier slices were enqueued cannot take those back: the message
// says which source rows they cover (they add them when they run; the rest
// are not launched).
template <typename Params>
void launch_slices(const DriverApi& api, CUfunction function, const StreamingPlan& plan, uint32_t shared_bytes,
                   CUstream stream, std::vector<Params>& params) {
  const std::vector<LaunchSlice>& slices = plan.launches;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    const LaunchSlice& slice = slices[i];
    auto packed = params[i].packed();  // the addresses kernelParams points at
    KernelLaunch k;
    k.function = function;
    k.grid_x = static_cast<uint32_t>(slice.grid_x);
    k.grid_y = slice.grid_y;
    k.threads = plan.threads_per_cta;
    k.shared_bytes = shared_bytes;
    k.stream = stream;
    k.params = packed.data();
    const CUresult result = launch_kernel(api, k);
    if (result == CUDA_SUCCESS) continue;
    std::string message = describe_driver_error(api, launch_call_name(), result);
    if (slices.size() > 1) {
      message += " for launch " + std::to_string(i + 1) + " of " + std::to_string(slices.size()) + " (" +
                 source_rows(slice.row_begin, slice.row_begin + slice.rows) + ")";
    }
    if (i > 0) {
      message += "; launches 1-" + std::to_string(i) + " (" + source_rows(0, slice.row_begin) +
                 ") were enqueued before it and stay enqueued, the later rows are not launched";
    }
    fail(SCATTERPTX_ERROR_DRIVER, message);
  }
}

// The launcher of a plan's slices, their parameters made: it owns them.
template <typename Params>
PreparedLaunches slices_launcher(const DriverApi& api, CUfunction function, const StreamingPlan& plan,
                                 uint32_t shared_bytes, std::vector<Params> params) {
  return [&api, function, &plan, shared_bytes, params = std::move(params)](CUstream stream) mutable {
    launch_slices(api, function, plan, shared_bytes, stream, params);
  };
}

PreparedLaunches prepare_tma(const DriverApi& api, CUfunction function, const Problem& p, const StreamingPlan& plan,
                             CUdeviceptr error_record, const LaunchGate& gate) {
  const TmaSchedule& s = plan.tma;
  std::vector<RowTmaReduceParams> params;
  params.reserve(plan.launches.size());
  for (const LaunchSlice& slice : plan.launches) {
    const SliceArguments a = slice_arguments(p, slice);
    RowTmaReduceParams& k = params.emplace_back();
    k.src_map = slice_src_map(api, p, slice, s.box_elems, 1);
    fill_slice_fields(k, a);
    k.out_rows = p.out_rows;
    k.cols = static_cast<uint32_t>(p.cols);
    k.chunk_elems = s.chunk_elems;
    k.chunks_per_row = s.chunks_per_row;
    k.box_elems = s.box_elems;
    k.stages = s.stages;
    k.error_record = error_record;
    k.prefetch_out = s.prefetch_out ? 1 : 0;
    gate.apply(k);
  }
  return slices_launcher(api, function, plan, s.shared_bytes, std::move(params));
}

PreparedLaunches prepare_red(const DriverApi& api, CUfunction function, const Problem& p, const StreamingPlan& plan,
                             CUdeviceptr error_record, const LaunchGate& gate) {
  const RedSchedule& s = plan.red;
  std::vector<RowRedParams> params;
  params.reserve(plan.launches.size());
  for (const LaunchSlice& slice : plan.launches) {
    const SliceArguments a = slice_arguments(p, slice);
    RowRedParams& k = params.emplace_back();
    fill_slice_fields(k, a);
    k.src_ptr = a.src_ptr;
    k.src_row_stride_bytes = a.src_stride;
    k.out_rows = p.out_rows;
    k.cols = p.cols;
    k.vectors_per_row = s.vectors_per_row;
    k.lanes_per_row_log2 = s.lanes_per_row_log2;
    k.error_record = error_record;
    k.prefetch_out = s.prefetch_out ? 1 : 0;
    k.out_keep_fraction = static_cast<float>(s.out_keep_percent) / 100.0f;
    k.weights = p.weighted ? p.weights_address + slice.row_begin * p.weight_bytes() : 0;
    k.weight_bytes = static_cast<uint32_t>(p.weight_bytes());
    gate.apply(k);
  }
  return slices_launcher(api, function, plan, 0, std::move(params));
}

PreparedLaunches prepare_private(const DriverApi& api, CUfunction function, const Problem& p,
                                 const StreamingPlan& plan, CUdeviceptr error_record, const LaunchGate& gate) {
  const PrivateSchedule& s = plan.privatised;
  std::vector<RowPrivateParams> params;
  params.reserve(plan.launches.size());
  for (const LaunchSlice& slice : plan.launches) {
    const SliceArguments a = slice_arguments(p, slice);
    RowPrivateParams& k = params.emplace_back();
    k.src_map = slice_src_map(api, p, slice, s.slice_elems, kPrivateRowsPerStage);
    fill_slice_fields(k, a);
    k.out_rows = static_cast<uint32_t>(p.out_rows);
    k.cols = static_cast<uint32_t>(p.cols);
    k.slice_elems = s.slice_elems;
    k.stages = s.stages;
    k.staging_offset = s.staging_offset;
    k.flags_offset = s.flags_offset;
    k.ring_offset = s.ring_offset;
    k.index_offset = s.index_offset;
    k.barrier_offset = s.barrier_offset;
    k.error_record = error_record;
    gate.apply(k);
  }
  return slices_launcher(api, function, plan, s.shared_bytes, std::move(params));
}

}  // namespace

PreparedLaunches prepare_plan(const DriverApi& api, const ContextState& state, const Problem& problem,
                              const StreamingPlan& plan, CUdeviceptr index_error_slot, const LaunchGate& gate) {
  const CUfunction function = state.functions[plan.variant];
  if (plan.path == SCATTERPTX_PATH_TMA) return prepare_tma(api, function, problem, plan, index_error_slot, gate);
  if (plan.path == SCATTERPTX_PATH_PRIVATE) {
    return prepare_private(api, function, problem, plan, index_error_slot, gate);
  }
  return prepare_red(api, function, problem, plan, index_error_slot, gate);
}

void launch_plan(const DriverApi& api, const ContextState& state, const Problem& problem, const StreamingPlan& plan,
                 CUdeviceptr index_error_slot, CUstream stream, const LaunchGate& gate) {
  prepare_plan(api, state, problem, plan, index_error_slot, gate)(stream);
}

}  // namespace scatterptx::detail

#include "group_launch.hpp"

#include "errors.hpp"
#include "heuristics.hpp"
#include "kernel_launch.hpp"
#include "kernel_params.hpp"
#include "launch.hpp"
#include "plan.hpp"

namespace scatterptx::detail {
namespace {

void launch(const DriverApi& api, CUfunction function, uint64_t grid_x, uint32_t grid_y, uint32_t threads,
            CUstream stream, void** params, uint32_t shared_bytes = 0) {
  KernelLaunch k;
  k.function = function;
  k.grid_x = static_cast<uint32_t>(grid_x);
  k.grid_y = grid_y;
  k.threads = threads;
  k.shared_bytes = shared_bytes;
  k.stream = stream;
  k.params = params;
  const CUresult result = launch_kernel(api, k);
  if (result == CUDA_SUCCESS) return;
  fail(SCATTERPTX_ERROR_DRIVER,
       describe_driver_error(api, launch_call_name(), result) +
           "; launches this call queued before it stay enqueued (the grouping's write only the workspace, the "
           "sums' write out)");
}

}  // namespace

namespace {

GroupHistogramParams first_pass_histogram(const Problem& p, const GroupPlan& plan, CUdeviceptr workspace) {
  GroupHistogramParams histogram{};
  histogram.key_source = p.index_address;
  histogram.count = p.src_rows;
  histogram.shift = plan.first_shift;
  histogram.counts = workspace + plan.workspace.counts;
  histogram.tiles = plan.sort_tiles;
  histogram.out_rows = p.out_rows;
  histogram.error_record = workspace + plan.workspace.plan_error;
  histogram.tile_step = 1;
  return histogram;
}

}  // namespace

void launch_order_check(const DriverApi& api, const ContextState& state, const Problem& p, const GroupPlan& plan,
                        CUdeviceptr workspace, CUstream stream) {
  const GroupWorkspace& w = plan.workspace;
  // All ones: no bad index seen, and (the order flag, right after) in order.
  check_driver(api, "cuMemsetD8Async",
               api.cuMemsetD8Async(workspace + w.plan_error, 0xFF, w.order_flag - w.plan_error + 4, stream));
  if (p.src_rows == 0) return;
  // The first pass's variant over one tile in the sample step, clearing the flag.
  GroupHistogramParams sample = first_pass_histogram(p, plan, workspace);
  sample.sorted_flag = workspace + w.order_flag;
  sample.tile_step = heuristics::grouped::kOrderSampleStep;
  launch(api, state.functions[plan.histogram_variant[0]],
         order_sample_tiles(plan.sort_tiles, heuristics::grouped::kOrderSampleStep), 1, kSortThreads, stream,
         sample.packed().data());
}

void launch_grouping(const DriverApi& api, const ContextState& state, const Problem& p, const GroupPlan& plan,
                     CUdeviceptr workspace, CUstream stream, bool after_order_check) {
  const GroupWorkspace& w = plan.workspace;
  const uint64_t plan_error = workspace + w.plan_error;
  // Eight bytes of ones: no bad index seen (launch_order_check set them).
  if (!after_order_check) check_driver(api, "cuMemsetD8Async", api.cuMemsetD8Async(plan_error, 0xFF, 8, stream));
  if (p.src_rows == 0) return;
  const LaunchGate out_of_order = after_order_check ? LaunchGate{workspace + w.order_flag, 0} : LaunchGate{};
  const uint64_t tiles = plan.sort_tiles;
  for (uint32_t pass = 0; pass < plan.passes; ++pass) {
    const int from_index = pass == 0 ? 0 : 1;
    const uint64_t key_source = pass == 0 ? p.index_address : workspace + w.keys[(pass - 1) % 2];
    const uint32_t shift = plan.first_shift + pass * kSortDigitBits;

    GroupHistogramParams histogram = first_pass_histogram(p, plan, workspace);
    histogram.key_source = key_source;
    histogram.shift = shift;
    out_of_order.apply(histogram);
    launch(api, state.functions[plan.histogram_variant[from_index]], tiles, 1, kSortThreads, stream,
           histogram.packed().data());

    GroupScanParams scan{};
    scan.counts = workspace + w.counts;
    scan.tiles = tiles;
    scan.totals = workspace + w.totals;
    out_of_order.apply(scan);
    launch(api, state.functions[plan.scan_variant], kSortDigits, 1, kSortThreads, stream, scan.packed().data());

    GroupScatterParams scatter{};
    scatter.key_source = key_source;
    scatter.value_source = pass == 0 ? 0 : workspace + w.rows[(pass - 1) % 2];
    scatter.count = p.src_rows;
    scatter.shift = shift;
    scatter.counts = workspace + w.counts;
    scatter.tiles = tiles;
    scatter.totals = workspace + w.totals;
    scatter.keys_out = workspace + w.keys[pass % 2];
    scatter.values_out = workspace + w.rows[pass % 2];
    scatter.out_rows = p.out_rows;
    if (plan.weights_in_sort) {  // the values are (position, weight bits) pairs
      scatter.weights_in = pass == 0 ? p.weights_address : 0;
      scatter.weight_bytes = static_cast<uint32_t>(p.weight_bytes());
    }
    out_of_order.apply(scatter);
    launch(api, state.functions[plan.scatter_variant[from_index]], tiles, 1, kSortThreads, stream,
           scatter.packed().data());
  }
}

namespace {

// SEGMENTED: each segment summed on chip and added to its out row once; the
// plan's record of a bad index is folded into index_error_slot.
void launch_segment_sums(const DriverApi& api, const ContextState& state, const Problem& p, const GroupPlan& plan,
                         CUdeviceptr workspace, CUdeviceptr index_error_slot, CUstream stream,
                         const LaunchGate& gate) {
  const GroupWorkspace& w = plan.workspace;
  const uint32_t threads = 32 * plan.summing_warps;
  GroupSegmentSumParams sums{};
  sums.out_ptr = p.out_address;
  sums.out_row_stride_bytes = p.out_row_stride_bytes;
  sums.src_ptr = p.src_address;
  sums.src_row_stride_bytes = p.src_row_stride_bytes;
  sums.keys = workspace + w.keys[plan.final_buffer()];
  sums.rows = workspace + w.rows[plan.final_buffer()];
  sums.count = p.src_rows;
  sums.sentinel = static_cast<uint32_t>(p.out_rows);
  sums.cols = p.cols;
  sums.tiles = plan.segment_tiles;
  sums.partials = workspace + w.partials;
  sums.partial_stride = plan.partial_stride;
  sums.plan_error = workspace + w.plan_error;
  sums.error_record = index_error_slot;
  sums.weights = plan.weights_in_sort ? sums.rows + 4 : p.weights_address;  // the pairs' second words
  sums.weight_bytes = static_cast<uint32_t>(p.weight_bytes());
  sums.weights_sorted = plan.weights_in_sort ? 1 : 0;
  sums.include_self = p.include_self ? 1 : 0;
  gate.apply(sums);
  launch(api, state.functions[plan.segment_sum_variant], plan.summing_grid_x, plan.summing_grid_y, threads, stream,
         sums.packed().data(), segment_sum_shared_bytes(plan.summing_warps, staged_weight_bytes(p)));

  GroupCombineParams combine{};
  combine.out_ptr = sums.out_ptr;
  combine.out_row_stride_bytes = sums.out_row_stride_bytes;
  combine.keys = sums.keys;
  combine.count = sums.count;
  combine.sentinel = sums.sentinel;
  combine.cols = sums.cols;
  combine.tiles = sums.tiles;
  combine.partials = sums.partials;
  combine.level_sums = workspace + w.level_sums;
  combine.partial_stride = sums.partial_stride;
  combine.step = 1;
  combine.include_self = sums.include_self;
  gate.apply(combine);
  for (uint32_t level = 0; level < plan.combine_levels; ++level, combine.step *= kCombineFanIn) {
    launch(api, state.functions[plan.combine_variant], plan.combine_grid_x, plan.summing_grid_y, threads, stream,
           combine.packed().data());
  }
}

}  // namespace

void launch_grouped_execute(const DriverApi& api, const ContextState& state, const Problem& problem,
                            const GroupPlan& plan, CUdeviceptr workspace, CUdeviceptr index_error_slot,
                            CUstream stream, const LaunchGate& gate) {
  if (problem.is_empty()) return;
  launch_segment_sums(api, state, problem, plan, workspace, index_error_slot, stream, gate);
}

}  // namespace scatterptx::detail

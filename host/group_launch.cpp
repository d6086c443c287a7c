#include "group_launch.hpp"

#include "errors.hpp"
#include "launch.hpp"
#include "plan.hpp"

namespace scatterptx::detail {
namespace {

void launch(const DriverApi& api, CUfunction function, uint64_t grid_x, uint32_t grid_y, uint32_t threads,
            CUstream stream, void** params, uint32_t shared_bytes = 0) {
  check_driver(api, "cuLaunchKernel",
               api.cuLaunchKernel(function, static_cast<unsigned>(grid_x), grid_y, 1, threads, 1, 1, shared_bytes,
                                  stream, params, nullptr));
}

}  // namespace

void launch_grouping(const DriverApi& api, const ContextState& state, const Problem& p, const GroupPlan& plan,
                     CUdeviceptr workspace, CUstream stream) {
  const GroupWorkspace& w = plan.workspace;
  uint64_t plan_error = workspace + w.plan_error;
  // All ones: no bad index seen.
  check_driver(api, "cuMemsetD8Async", api.cuMemsetD8Async(plan_error, 0xFF, 8, stream));
  if (p.src_rows == 0) return;
  uint64_t count = p.src_rows;
  uint64_t tiles = plan.sort_tiles;
  uint64_t counts = workspace + w.counts;
  uint64_t totals = workspace + w.totals;
  uint64_t out_rows = p.out_rows;
  for (uint32_t pass = 0; pass < plan.passes; ++pass) {
    const int from_index = pass == 0 ? 0 : 1;
    uint64_t key_source = pass == 0 ? p.index_address : workspace + w.keys[(pass - 1) % 2];
    uint64_t value_source = pass == 0 ? 0 : workspace + w.rows[(pass - 1) % 2];
    uint64_t keys_out = workspace + w.keys[pass % 2];
    uint64_t values_out = workspace + w.rows[pass % 2];
    uint32_t shift = plan.first_shift + pass * kSortDigitBits;
    void* histogram[] = {&key_source, &count, &shift, &counts, &tiles, &out_rows, &plan_error};
    launch(api, state.functions[plan.histogram_variant[from_index]], tiles, 1, kSortThreads, stream, histogram);
    void* scan[] = {&counts, &tiles, &totals};
    launch(api, state.functions[plan.scan_variant], kSortDigits, 1, kSortThreads, stream, scan);
    void* scatter[] = {&key_source, &value_source, &count,    &shift,      &counts,
                       &tiles,      &totals,       &keys_out, &values_out, &out_rows};
    launch(api, state.functions[plan.scatter_variant[from_index]], tiles, 1, kSortThreads, stream, scatter);
  }
}

namespace {

// SEGMENTED: each segment summed on chip and added to its out row once; the
// plan's record of a bad index is folded into index_error_slot.
void launch_segment_sums(const DriverApi& api, const ContextState& state, const Problem& p, const GroupPlan& plan,
                         CUdeviceptr workspace, CUdeviceptr index_error_slot, CUstream stream) {
  const GroupWorkspace& w = plan.workspace;
  uint64_t out = p.out_address;
  uint64_t out_stride = p.out_row_stride_bytes;
  uint64_t src = p.src_address;
  uint64_t src_stride = p.src_row_stride_bytes;
  uint64_t keys = workspace + w.keys[plan.final_buffer()];
  uint64_t rows = workspace + w.rows[plan.final_buffer()];
  uint64_t count = p.src_rows;
  uint32_t sentinel = static_cast<uint32_t>(p.out_rows);
  uint64_t cols = p.cols;
  uint64_t tiles = plan.segment_tiles;
  uint64_t partials = workspace + w.partials;
  uint64_t level_sums = workspace + w.level_sums;
  uint64_t partial_stride = plan.partial_stride;
  uint64_t plan_error = workspace + w.plan_error;
  uint64_t record = index_error_slot;
  const uint32_t threads = 32 * plan.summing_warps;
  void* sums[] = {&out,  &out_stride, &src,      &src_stride,     &keys,       &rows,  &count,
                  &sentinel, &cols,   &tiles,    &partials,       &partial_stride, &plan_error, &record};
  launch(api, state.functions[plan.segment_sum_variant], plan.summing_grid_x, plan.summing_grid_y, threads, stream,
         sums, segment_sum_shared_bytes(plan.summing_warps));
  uint64_t step = 1;
  for (uint32_t level = 0; level < plan.combine_levels; ++level, step *= kCombineFanIn) {
    void* combine[] = {&out,   &out_stride, &keys,       &count,          &sentinel, &cols,
                       &tiles, &partials,   &level_sums, &partial_stride, &step};
    launch(api, state.functions[plan.combine_variant], plan.combine_grid_x, plan.summing_grid_y, threads, stream,
           combine);
  }
}

}  // namespace

void launch_grouped_execute(const DriverApi& api, const ContextState& state, const Problem& problem,
                            const GroupPlan& plan, CUdeviceptr workspace, CUdeviceptr index_error_slot,
                            CUstream stream) {
  if (problem.is_empty()) return;
  launch_segment_sums(api, state, problem, plan, workspace, index_error_slot, stream);
}

}  // namespace scatterptx::detail

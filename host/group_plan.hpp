// Grouped execution's plan: the mode, the radix passes over the index, the
// summing kernels and the workspace layout. A pure function of the problem
// and the options, unit-tested on the host; the device only decides the
// streaming plan of a plan whose mode is STREAMING.
#pragma once

#include <cstdint>
#include <string>

#include "kernel_constants.hpp"
#include "plan.hpp"
#include "problem.hpp"

namespace scatterptx::detail {

// group_segment_sum stages each warp's tile of keys and rows (u32 each) in
// dynamic shared memory, and for weighted rows the rows' weights in the
// compute type (f64 for f64 rows, else f32).
constexpr uint32_t staged_weight_bytes(const Problem& p) { return !p.weighted ? 0 : p.dtype == SCATTERPTX_F64 ? 8 : 4; }
constexpr uint32_t segment_sum_shared_bytes(uint32_t warps, uint32_t weight_bytes = 0) {
  return warps * kSegmentTileRows * (8 + weight_bytes);
}
// The least shared memory a CTA may opt into on an sm_90+ GPU (sm_120's
// 99 KiB), which bounds the summing CTA: 24 warps for weighted f64 rows, 32
// (every CTA size) for the others.
constexpr uint32_t kLeastSharedPerBlock = 99 * 1024;
constexpr uint32_t max_summing_warps(const Problem& p) {
  const uint32_t fit = kLeastSharedPerBlock / segment_sum_shared_bytes(1, staged_weight_bytes(p));
  return fit < 32 ? fit : 32;
}
// The order check's CTAs: one sort tile in heuristics' sample step.
constexpr uint64_t order_sample_tiles(uint64_t sort_tiles, uint32_t step) { return (sort_tiles + step - 1) / step; }
constexpr uint64_t kWorkspaceAlignment = 256;
// Keys and source positions are u32; the key out_rows marks a bad index.
constexpr uint64_t kMaxGroupedRows = UINT32_MAX;
constexpr uint64_t kMaxGroupedTargets = UINT32_MAX - 1;

// Byte offsets into the plan's workspace, each kWorkspaceAlignment-aligned.
struct GroupWorkspace {
  uint64_t plan_error = 0;  // u64: smallest bad source position, all ones if none
  uint64_t order_flag = 0;  // u32 after plan_error: all ones while the index reads in order
  uint64_t keys[2] = {};    // u32 [M] each: the radix passes ping-pong
  uint64_t rows[2] = {};    // [M] each: u32 source positions, or (position, weight bits)
                            // u32 pairs where the sort carries the weights
  uint64_t counts = 0;      // u32 [256][sort_tiles]
  uint64_t totals = 0;      // u32 [256]
  uint64_t partials = 0;    // SEGMENTED: [2 * segment_tiles] rows of partial_stride bytes
  uint64_t level_sums = 0;  // SEGMENTED: [2 * segment_tiles] rows of partial_stride bytes
  uint64_t bytes = 0;
};

struct GroupOptions {
  scatterptx_mode mode = SCATTERPTX_MODE_AUTO;
  bool deterministic = false;
  uint32_t warps_per_cta = 0;
  // A plan object's executes read the weights as they are then, by source
  // row; a call that groups and sums at once has the sort carry them.
  bool weights_read_at_execute = false;
};

struct GroupPlan {
  scatterptx_mode mode = SCATTERPTX_MODE_STREAMING;  // STREAMING or SEGMENTED once planned
  bool deterministic = false;
  // The default call's f32 grouping: the first radix pass checks the
  // index's order, and a sorted index runs the streaming plan instead.
  bool streams_when_sorted = false;
  // The radix passes carry 2- or 4-byte weights in (position, weight bits)
  // pairs, so that the summing kernel reads them in grouped order, not one
  // scattered 32-byte sector per row.
  bool weights_in_sort = false;
  std::string why_mode;          // one line: why the planner chose the mode
  std::string reduce;            // reduce_description(): "" for a plain sum
  // SEGMENTED:
  uint32_t key_bits = 0;         // bits of the largest key (out_rows)
  uint32_t first_shift = 0;      // lowest key bit of the first pass's digit
  uint32_t passes = 0;           // radix passes of kSortDigitBits
  uint64_t sort_tiles = 0;
  bool vectorized = false;       // 16-byte lane slices, else one element per lane
  uint64_t segment_tiles = 0;
  uint32_t combine_levels = 0;   // group_combine launches
  uint64_t partial_stride = 0;   // bytes per partial-sum row
  uint32_t summing_warps = 0;    // warps per CTA of group_segment_sum / group_combine
  uint64_t summing_grid_x = 0;  // group_segment_sum
  uint64_t combine_grid_x = 0;
  uint32_t summing_grid_y = 1;   // CTAs along the row
  std::size_t histogram_variant[2] = {};  // [0] reads the index, [1] keys
  std::size_t scatter_variant[2] = {};
  std::size_t scan_variant = 0;
  std::size_t segment_sum_variant = 0;
  std::size_t combine_variant = 0;
  GroupWorkspace workspace;

  bool grouped() const { return mode != SCATTERPTX_MODE_STREAMING; }
  uint32_t final_buffer() const { return (passes - 1) % 2; }
  std::string describe() const;
};

// Throws INVALID_ARGUMENT for options out of range or at odds with the
// problem (a forced path or schedule outside STREAMING, deterministic
// STREAMING, STREAMING for a reduce that runs grouped only, SEGMENTED on an
// ineligible problem, the removed BUCKETED).
GroupOptions validate_group_options(const scatterptx_group_options* options, const Problem& problem);

// Why SEGMENTED cannot take this problem, or "".
std::string segmented_ineligibility(const Problem& problem);

// The mode, the kernels and the workspace; for STREAMING nothing else (its
// plan is make_plan's, on the device). With a device, AUTO also streams where
// the streaming planner takes the privatised path; without one (workspace
// sizes, asked before a device is known) it may group there, which only
// over-estimates the workspace.
GroupPlan make_group_plan(const Problem& problem, const GroupOptions& options,
                          const DeviceLimits* device = nullptr);

// What scatterptx_scatter_add runs: grouped AUTO's choice, or STREAMING where
// the call forces a path or schedule or turns grouping off.
GroupPlan plan_default_call(const Problem& problem, const DeviceLimits& device);

}  // namespace scatterptx::detail

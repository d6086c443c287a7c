#include "plan_private.hpp"

#include <algorithm>
#include <string>

#include "heuristics.hpp"
#include "plan_math.hpp"

namespace scatterptx::detail {
namespace {

// The widest slice that fits `limit` bytes of shared memory and one tensor
// box (256 columns): all columns when they fit, else the widest multiple of
// 32 (whole warps: a thread owns a column), else of 8; width 0 when not even
// 8 columns fit.
PrivateSchedule widest_private_slice(const Problem& p, uint32_t stages, uint32_t limit) {
  const uint32_t widest = static_cast<uint32_t>(std::min<uint64_t>(p.cols, kMaxBoxElems));
  PrivateSchedule s = private_schedule(p, widest, stages);
  if (s.shared_bytes <= limit) return s;
  for (uint32_t step : {32u, 8u}) {
    for (uint32_t width = (widest - 1) / step * step; width >= step; width -= step) {
      s = private_schedule(p, width, stages);
      if (s.shared_bytes <= limit) return s;
    }
  }
  return private_schedule(p, 0, stages);
}

// Threads of a privatised CTA: consumer warps and one producer warp. A
// stage is kPrivateRowsPerStage x (slice columns / vector) items of 16
// bytes of accumulators; each consumer lane takes
// heuristics::privatised::kItemsPerLane of them, two at a time. A schedule's warps_per_cta sets the consumer warps
// instead.
uint32_t private_threads(const Problem& p, uint32_t slice_elems) {
  uint64_t consumers = p.schedule.warps_per_cta;
  if (consumers == 0) {
    // Columns per item: vector_elems() in gen/private_snippets.py.
    const uint64_t accumulator_bytes = p.dtype == SCATTERPTX_F64 ? 8 : 4;
    const uint64_t vector_elems = 16 / accumulator_bytes;
    const uint64_t items = uint64_t{kPrivateRowsPerStage} * slice_elems / vector_elems;
    const uint64_t wanted = ceil_div(items, 32 * heuristics::privatised::kItemsPerLane);
    consumers = std::clamp<uint64_t>(wanted, 1, kPrivateMaxConsumerWarps);
  }
  return static_cast<uint32_t>(32 * (consumers + 1));
}

}  // namespace

// A CTA of the privatised path is one ring of stages; its consumers wait on
// each stage's data, so latency is hidden by several CTAs per SM: take the
// widest slice that lets heuristics::privatised::kCtasPerSm of them share an
// SM, and one CTA per SM only when not even kMinSliceElems columns fit that
// way (docs/tuning.md#private-schedule).
bool fit_private(const Problem& p, const DeviceLimits& device, PrivateSchedule* out) {
  const uint32_t stages = pick(p.schedule.stages, heuristics::privatised::kStages);
  const uint64_t narrowest = std::min<uint64_t>(p.cols, heuristics::privatised::kMinSliceElems);
  const uint32_t shared_per_cta = device.max_shared_per_sm / heuristics::privatised::kCtasPerSm - kSharedReservedPerCta;
  const uint32_t shared_limit = std::min(device.max_shared_per_block, shared_per_cta);
  PrivateSchedule s = widest_private_slice(p, stages, shared_limit);
  if (s.slice_elems < narrowest) s = widest_private_slice(p, stages, device.max_shared_per_block);
  const uint64_t slices = s.slice_elems == 0 ? 0 : ceil_div(p.cols, s.slice_elems);
  if (s.slice_elems < narrowest || s.shared_bytes > device.max_shared_per_block || slices > device.max_grid_y) {
    return false;
  }
  s.slices = static_cast<uint32_t>(slices);
  s.threads_per_cta = private_threads(p, s.slice_elems);
  const uint32_t fit_shared = device.max_shared_per_sm / (s.shared_bytes + kSharedReservedPerCta);
  const uint32_t fit_threads = device.max_threads_per_sm / s.threads_per_cta;
  s.ctas_per_sm = std::max<uint32_t>(1, std::min({fit_shared, fit_threads, device.max_ctas_per_sm}));
  *out = s;
  return true;
}

// The privatised path reads src once and then reduces each CTA's partial
// sums, up to (CTAs of a slice) x out_rows rows; the streaming paths do one
// read-modify-write of out per source row, serialised on hot targets. Take
// it where the partial sums are few next to the source rows
// (docs/tuning.md#private-payoff).
bool private_pays_off(const Problem& p, const DeviceLimits& device, const PrivateSchedule& s) {
  const uint64_t ctas_per_slice = std::max<uint64_t>(1, uint64_t{device.sm_count} * s.ctas_per_sm / s.slices);
  return p.out_rows * ctas_per_slice * heuristics::privatised::kRowsPerPartial <= p.src_rows;
}

void plan_private(const Problem& p, const DeviceLimits& device, const PrivateSchedule& s, StreamingPlan& plan) {
  plan.path = SCATTERPTX_PATH_PRIVATE;
  plan.variant = find_variant(KernelFamily::row_private, p.dtype, p.index_type, 16);
  plan.privatised = s;
  plan.threads_per_cta = s.threads_per_cta;
  const uint64_t resident = uint64_t{device.sm_count} * s.ctas_per_sm;
  for (uint64_t begin = 0; begin < p.src_rows; begin += kMaxPrivateRowsPerLaunch) {
    LaunchSlice slice;
    slice.row_begin = begin;
    slice.rows = std::min(kMaxPrivateRowsPerLaunch, p.src_rows - begin);
    slice.grid_x = std::max<uint64_t>(
        1, std::min({std::max<uint64_t>(1, resident / s.slices), ceil_div(slice.rows, kPrivateRowsPerStage),
                     device.max_grid_x}));
    slice.grid_y = s.slices;
    plan.launches.push_back(slice);
  }
}

PrivateSchedule private_schedule(const Problem& p, uint32_t slice_elems, uint32_t stages) {
  const uint64_t targets = p.out_rows;
  const uint64_t acc_bytes = p.dtype == SCATTERPTX_F64 ? 8 : 4;
  const uint64_t staging_bytes = p.elem_bytes == 2 ? targets * slice_elems * 2 : 0;
  PrivateSchedule s;
  s.slice_elems = slice_elems;
  s.stages = stages;
  const uint64_t staging_offset = align_up(targets * slice_elems * acc_bytes, kSmemStageAlign);
  const uint64_t flags_offset = staging_offset + staging_bytes;
  const uint64_t ring_offset = align_up(flags_offset + 4 * targets, kSmemStageAlign);
  // Each stage is one tensor box; its bytes are a multiple of 128 (the box
  // width's bytes are a multiple of 16), which keeps every box 128-aligned.
  const uint64_t index_offset =
      ring_offset + uint64_t{stages} * kPrivateRowsPerStage * slice_elems * p.elem_bytes;
  const uint64_t barrier_offset = index_offset + uint64_t{stages} * kPrivateIndexSlotBytes;
  s.staging_offset = saturate(staging_offset);
  s.flags_offset = saturate(flags_offset);
  s.ring_offset = saturate(ring_offset);
  s.index_offset = saturate(index_offset);
  s.barrier_offset = saturate(barrier_offset);
  s.shared_bytes = saturate(barrier_offset + 16 * uint64_t{stages});  // full and empty mbarriers
  return s;
}

std::string private_layout_ineligibility(const Problem& p) {
  const std::string layout = tma_layout_ineligibility(p);
  if (!layout.empty()) return layout;
  if (p.out_rows > kPrivateMaxTargets) {
    return "out_rows = " + std::to_string(p.out_rows) + " is above " + std::to_string(kPrivateMaxTargets) +
           " targets";
  }
  return "";
}

}  // namespace scatterptx::detail

// Planning: which kernel, which schedule, which launches. A pure function of
// the problem and the device's properties, unit-tested on the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel_constants.hpp"
#include "kernel_manifest.hpp"
#include "problem.hpp"

namespace scatterptx::detail {

struct DeviceLimits {
  int compute_capability = 90;            // 10 * major + minor
  uint32_t sm_count = 132;
  uint32_t max_shared_per_block = 232448; // opt-in limit, bytes
  uint32_t max_shared_per_sm = 233472;
  uint32_t max_threads_per_sm = 2048;
  uint32_t max_ctas_per_sm = 32;
  uint64_t max_grid_x = 2147483647;
  uint32_t max_grid_y = 65535;
  uint64_t l2_bytes = 60ull << 20;
  // How many CTAs of each kernel variant one SM holds at once, as the driver
  // reports for its registers and threads; 0 where not asked (only the red
  // variants are) or where the driver said 0: the thread limit then applies.
  uint8_t resident_ctas_per_sm[kKernelVariantCount] = {};
  // The most threads a CTA of each grouped summing variant may have, as its
  // registers allow (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK); 0 where not
  // asked: no limit below 1024 is then known.
  uint16_t max_threads_per_cta[kKernelVariantCount] = {};
};

// Tensor-map coordinates are s32: one TMA launch covers fewer than 2^31 rows
// and columns; larger problems are split into several launches.
constexpr uint64_t kMaxTmaRowsPerLaunch = (uint64_t{1} << 31) - 1;
constexpr uint64_t kMaxTmaCols = (uint64_t{1} << 31) - 1;
constexpr uint32_t kMaxBoxElems = 256;          // tensor-map boxDim limit
constexpr uint64_t kMaxTensorMapStride = uint64_t{1} << 40;
constexpr uint32_t kPrivateMaxConsumerWarps = 8;  // plus one producer warp
constexpr uint64_t kPrivateMaxTargets = 4096;
// The privatised path's launches start on whole stages, below 2^31 rows.
constexpr uint64_t kMaxPrivateRowsPerLaunch = kMaxTmaRowsPerLaunch / kPrivateRowsPerStage * kPrivateRowsPerStage;

struct TmaSchedule {
  uint32_t box_elems = 0;       // one tensor-map box along the row
  uint32_t chunk_elems = 0;     // elements per pipeline stage, a multiple of box_elems
  uint32_t chunks_per_row = 0;
  uint32_t stages = 0;
  uint32_t warps_per_cta = 0;
  uint32_t ctas_per_sm = 0;
  uint32_t stage_bytes = 0;     // chunk bytes rounded up to 128
  uint32_t shared_bytes = 0;    // dynamic shared memory per CTA
  bool prefetch_out = false;    // prefetch each pair's out chunk into L2 with its load
};

struct RedSchedule {
  uint32_t vector_bytes = 0;         // bytes per lane access
  uint64_t vectors_per_row = 0;
  uint32_t lanes_per_row_log2 = 0;
  uint32_t grid_y = 1;               // CTAs across one row's vectors
  bool prefetch_out = false;         // prefetch out lines into L2 ahead of the reds (short-row loop, row-loop batches)
  uint32_t out_keep_percent = 0;     // short rows: chance (%) that a red marks its out line evict_last in L2
};

struct PrivateSchedule {
  uint32_t slice_elems = 0;     // columns per slice (W), the tensor box's width: at most 256
  uint32_t slices = 0;
  uint32_t stages = 0;
  uint32_t staging_offset = 0;  // shared-memory layout, ptx/row_private.ptx.in
  uint32_t flags_offset = 0;
  uint32_t ring_offset = 0;
  uint32_t index_offset = 0;    // each stage's indices
  uint32_t barrier_offset = 0;
  uint32_t shared_bytes = 0;
  uint32_t ctas_per_sm = 0;
  uint32_t threads_per_cta = 0;  // consumer warps and one producer warp
};

// One kernel launch over source rows [row_begin, row_begin + rows).
struct LaunchSlice {
  uint64_t row_begin = 0;
  uint64_t rows = 0;
  uint64_t grid_x = 0;
  uint32_t grid_y = 1;
};

struct StreamingPlan {
  scatterptx_path path = SCATTERPTX_PATH_AUTO;  // TMA, RED or PRIVATE once planned
  std::size_t variant = 0;                      // index into kKernelVariants
  uint32_t threads_per_cta = 0;
  TmaSchedule tma;
  RedSchedule red;
  PrivateSchedule privatised;
  std::vector<LaunchSlice> launches;            // empty for an empty problem
  std::string reduce;                           // reduce_description(): " weights=f32", "" for a plain sum

  std::string describe() const;
};

// Why the TMA path cannot take this problem's layout (alignment, row bytes,
// sizes), or "" when it can; needs no device.
std::string tma_layout_ineligibility(const Problem& problem);

// Why the privatised path cannot take this problem (TMA layout rules, too
// many targets), or "" when it may; whether its accumulators fit is a
// question for make_plan.
std::string private_layout_ineligibility(const Problem& problem);

// The privatised path's schedule for slice width `slice_elems`, or one with
// shared_bytes above the device limit when it does not fit.
PrivateSchedule private_schedule(const Problem& problem, uint32_t slice_elems, uint32_t stages);

// The same, on a given device.
std::string tma_ineligibility(const Problem& problem, const DeviceLimits& device);

// Throws INVALID_ARGUMENT when a forced path or schedule cannot run, and
// UNSUPPORTED_DEVICE below sm_90.
StreamingPlan make_plan(const Problem& problem, const DeviceLimits& device);

// Dynamic shared memory of a TMA CTA; must match ptx/row_tma_reduce.ptx.in.
uint32_t tma_shared_bytes(uint32_t stage_bytes, uint32_t stages, uint32_t warps_per_cta);

// The variant of family for the dtype, index type and access width that
// computes reduce (the summing kernels; every other family computes SUM),
// weighted or not.
std::size_t find_variant(KernelFamily family, scatterptx_dtype dtype, scatterptx_index_type index_type,
                         unsigned vector_bytes, scatterptx_reduce reduce = SCATTERPTX_REDUCE_SUM,
                         bool weighted = false);

}  // namespace scatterptx::detail

#include "plan.hpp"

#include <algorithm>

#include "errors.hpp"
#include "heuristics.hpp"
#include "plan_math.hpp"
#include "plan_private.hpp"
#include "plan_red.hpp"

namespace scatterptx::detail {
namespace {

// The caller's schedule fields where set, heuristics::tma's defaults where 0.
TmaSchedule plan_tma_schedule(const Problem& p, const DeviceLimits& device) {
  const scatterptx_schedule& want = p.schedule;
  const uint32_t elem = static_cast<uint32_t>(p.elem_bytes);
  const uint32_t cols = static_cast<uint32_t>(p.cols);
  // A chunk is at least 16 bytes, the bulk copies' granule.
  const uint32_t chunk_target = std::max<uint32_t>(pick(want.chunk_bytes, heuristics::tma::kChunkBytes) / elem,
                                                   16 / elem);
  TmaSchedule s;
  // Every candidate is a multiple of 16 bytes: cols * elem (eligibility),
  // 256 * elem, and chunk_target * elem.
  s.box_elems = std::min({cols, kMaxBoxElems, chunk_target});
  const uint32_t boxes_per_chunk =
      std::max<uint32_t>(1, std::min<uint64_t>(chunk_target / s.box_elems, ceil_div(cols, s.box_elems)));
  s.chunk_elems = s.box_elems * boxes_per_chunk;
  s.chunks_per_row = static_cast<uint32_t>(ceil_div(cols, s.chunk_elems));
  s.stages = pick(want.stages, heuristics::tma::kStages);
  s.warps_per_cta = pick(want.warps_per_cta, heuristics::tma::kWarpsPerCta);
  s.stage_bytes = static_cast<uint32_t>(ceil_div(uint64_t{s.chunk_elems} * elem, kSmemStageAlign) *
                                        kSmemStageAlign);
  s.shared_bytes = tma_shared_bytes(s.stage_bytes, s.stages, s.warps_per_cta);
  if (s.shared_bytes > device.max_shared_per_block) {
    invalid_argument("TMA schedule needs " + std::to_string(s.shared_bytes) +
                     " bytes of shared memory per CTA (warps_per_cta * stages * stage_bytes), more than "
                     "the device's " + std::to_string(device.max_shared_per_block));
  }
  const uint32_t fit_shared = device.max_shared_per_sm / (s.shared_bytes + kSharedReservedPerCta);
  const uint32_t fit_threads = device.max_threads_per_sm / (32 * s.warps_per_cta);
  const uint32_t fit = std::max<uint32_t>(1, std::min({fit_shared, fit_threads, device.max_ctas_per_sm}));
  s.ctas_per_sm = std::min(pick(want.ctas_per_sm, heuristics::tma::kCtasPerSm), fit);
  // docs/tuning.md#tma-out-prefetch
  s.prefetch_out = s.chunks_per_row == 1 && p.row_bytes() >= heuristics::tma::kPrefetchOutMinRowBytes &&
                   p.row_bytes() <= heuristics::tma::kPrefetchOutMaxRowBytes;
  return s;
}

void plan_tma(const Problem& p, const DeviceLimits& device, StreamingPlan& plan) {
  plan.path = SCATTERPTX_PATH_TMA;
  plan.variant = find_variant(KernelFamily::row_tma_reduce, p.dtype, p.index_type, 16);
  plan.tma = plan_tma_schedule(p, device);
  plan.threads_per_cta = 32 * plan.tma.warps_per_cta;
  const uint64_t resident = uint64_t{device.sm_count} * plan.tma.ctas_per_sm;
  for (uint64_t begin = 0; begin < p.src_rows; begin += kMaxTmaRowsPerLaunch) {
    LaunchSlice slice;
    slice.row_begin = begin;
    slice.rows = std::min(kMaxTmaRowsPerLaunch, p.src_rows - begin);
    const uint64_t pairs = slice.rows * plan.tma.chunks_per_row;
    // A persistent grid: each warp takes a contiguous run of (row, chunk) pairs.
    slice.grid_x = std::max<uint64_t>(1, std::min({resident, ceil_div(pairs, plan.tma.warps_per_cta),
                                                   device.max_grid_x}));
    plan.launches.push_back(slice);
  }
}

}  // namespace

uint32_t tma_shared_bytes(uint32_t stage_bytes, uint32_t stages, uint32_t warps_per_cta) {
  const uint64_t bytes = uint64_t{warps_per_cta} * stages * (uint64_t{stage_bytes} + 8);
  return static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX));
}

std::size_t find_variant(KernelFamily family, scatterptx_dtype dtype, scatterptx_index_type index_type,
                         unsigned vector_bytes, scatterptx_reduce reduce, bool weighted) {
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
    const KernelVariant& v = kKernelVariants[i];
    if (v.family == family && v.dtype == dtype && v.index_type == index_type && v.vector_bytes == vector_bytes &&
        v.reduce == reduce && v.weighted == weighted) {
      return i;
    }
  }
  fail(SCATTERPTX_ERROR_DRIVER, std::string("internal error: no kernel variant for dtype ") +
                                    scatterptx_dtype_name(dtype) + " vector_bytes " + std::to_string(vector_bytes) +
                                    " reduce " + reduce_name(reduce) + (weighted ? " weighted" : ""));
}

std::string tma_ineligibility(const Problem& p, const DeviceLimits& device) {
  if (device.compute_capability < 90) return "the TMA path needs sm_90 or newer";
  return tma_layout_ineligibility(p);
}

std::string tma_layout_ineligibility(const Problem& p) {
  if (p.row_bytes() % 16 != 0) {
    return "row bytes (cols * element size = " + std::to_string(p.row_bytes()) + ") not a multiple of 16";
  }
  if (p.out_address % 16 != 0) return "out is not 16-byte aligned";
  if (p.src_address % 16 != 0) return "src is not 16-byte aligned";
  if (p.out_row_stride_bytes % 16 != 0) return "out row stride is not a multiple of 16 bytes";
  if (p.src_row_stride_bytes % 16 != 0) return "src row stride is not a multiple of 16 bytes";
  if (p.src_row_stride_bytes >= kMaxTensorMapStride) return "src row stride is 2^40 bytes or more";
  if (p.cols > kMaxTmaCols) return "rows of 2^31 elements or more";
  return "";
}

StreamingPlan make_plan(const Problem& p, const DeviceLimits& device) {
  if (device.compute_capability < 90) {
    fail(SCATTERPTX_ERROR_UNSUPPORTED_DEVICE,
         "compute capability " + std::to_string(device.compute_capability / 10) + "." +
             std::to_string(device.compute_capability % 10) + " is not supported: libscatterptx needs sm_90+");
  }
  StreamingPlan plan;
  if (p.is_empty()) return plan;
  if (p.needs_grouping()) {
    invalid_argument(std::string("reduce = ") + reduce_name(p.reduce) + (p.include_self ? "" : ", include_self = 0") +
                     " has no streaming path: it runs grouped only");
  }
  plan.reduce = reduce_description(p);
  // Weighted rows stream on the red path, which scales them in registers
  // before its reds; the bulk paths reduce staged rows as they are.
  const char* kWeightedRows = "weighted rows stream on the red path (the bulk reductions cannot scale rows)";
  const std::string why_not_tma = p.weighted ? kWeightedRows : tma_ineligibility(p, device);
  const std::string why_not_private = p.weighted ? kWeightedRows : private_layout_ineligibility(p);
  PrivateSchedule private_fit;
  const bool private_fits = why_not_private.empty() && fit_private(p, device, &private_fit);
  switch (p.path) {
    case SCATTERPTX_PATH_PRIVATE:
      if (!why_not_private.empty()) {
        invalid_argument("path = SCATTERPTX_PATH_PRIVATE cannot take this input: " + why_not_private);
      }
      if (p.schedule.warps_per_cta > kPrivateMaxScheduleWarps) {
        invalid_argument("path = SCATTERPTX_PATH_PRIVATE: schedule.warps_per_cta = " +
                         std::to_string(p.schedule.warps_per_cta) + " consumer warps, at most " +
                         std::to_string(kPrivateMaxScheduleWarps) + " (a CTA also has a producer warp)");
      }
      if (!private_fits) {
        invalid_argument("path = SCATTERPTX_PATH_PRIVATE: " + std::to_string(p.out_rows) +
                         " accumulator rows of at least " +
                         std::to_string(heuristics::privatised::kMinSliceElems) +
                         " columns do not fit in shared memory");
      }
      plan_private(p, device, private_fit, plan);
      break;
    case SCATTERPTX_PATH_TMA:
      if (!why_not_tma.empty()) invalid_argument("path = SCATTERPTX_PATH_TMA cannot take this input: " + why_not_tma);
      plan_tma(p, device, plan);
      break;
    case SCATTERPTX_PATH_RED:
      plan_red(p, device, plan);
      break;
    default:
      if (p.has_schedule && why_not_tma.empty()) {
        // A schedule tunes the TMA path: the caller asked for it.
        plan_tma(p, device, plan);
      } else if (private_fits && private_pays_off(p, device, private_fit)) {
        plan_private(p, device, private_fit, plan);
      } else if (why_not_tma.empty() && tma_beats_red(p, device)) {
        plan_tma(p, device, plan);
      } else {
        plan_red(p, device, plan);
      }
  }
  return plan;
}

std::string StreamingPlan::describe() const {
  // Built with std::to_string, not a stream: the text is also asked for from
  // processes (Python) whose C++ locale state this library does not control.
  if (launches.empty()) return "path=none (empty problem)";
  const char* name = path == SCATTERPTX_PATH_TMA ? "tma" : path == SCATTERPTX_PATH_PRIVATE ? "private" : "red";
  auto field = [](const char* key, uint64_t value) { return std::string(" ") + key + "=" + std::to_string(value); };
  std::string out = std::string("path=") + name + " variant=" + kKernelVariants[variant].name;
  if (path == SCATTERPTX_PATH_PRIVATE) {
    out += field("slice_elems", privatised.slice_elems) + field("slices", privatised.slices) + field("stages", privatised.stages) +
           field("ctas_per_sm", privatised.ctas_per_sm) + field("shared_bytes", privatised.shared_bytes);
  } else if (path == SCATTERPTX_PATH_TMA) {
    out += field("box_elems", tma.box_elems) + field("chunk_elems", tma.chunk_elems) +
           field("chunks_per_row", tma.chunks_per_row) + field("stages", tma.stages) +
           field("warps_per_cta", tma.warps_per_cta) + field("ctas_per_sm", tma.ctas_per_sm) +
           field("shared_bytes", tma.shared_bytes) + field("prefetch_out", tma.prefetch_out ? 1 : 0);
  } else {
    out += field("vector_bytes", red.vector_bytes) + field("vectors_per_row", red.vectors_per_row) +
           field("lanes_per_row", uint64_t{1} << red.lanes_per_row_log2) +
           field("prefetch_out", red.prefetch_out ? 1 : 0) + field("out_keep_percent", red.out_keep_percent);
  }
  out += field("threads", threads_per_cta) + field("launches", launches.size()) + field("grid", launches[0].grid_x) +
         "x" + std::to_string(launches[0].grid_y);
  return out + reduce;
}

}  // namespace scatterptx::detail

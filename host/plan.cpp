#include "plan.hpp"

#include <algorithm>

#include "errors.hpp"
#include "plan_math.hpp"
#include "plan_private.hpp"

namespace scatterptx::detail {
namespace {

// Default TMA schedule. On a uniform scatter the DRAM read-modify-write of
// out dominates and the pipeline shape barely matters (bench/results/ holds
// the sweeps), so these favour few bulk operations per byte and enough
// workers per SM to keep loads in flight.
constexpr uint32_t kDefaultChunkBytes = 2048;
constexpr uint32_t kDefaultStages = 4;
constexpr uint32_t kDefaultWarpsPerCta = 4;
constexpr uint32_t kDefaultCtasPerSm = 8;
// Up to this many bytes per row, red.global beats one bulk copy and one bulk
// reduce per row whatever the dtype: on the H200 a (load, reduce) pair costs
// ~50 SM cycles whatever its size, so 8..128-byte rows ran at 0.78 ms for 4M
// rows on the TMA path against 0.06..0.44 ms on the red path
// (bench/results/2026-12-02-h200-core.md).
constexpr uint64_t kRedMaxRowBytes = 128;
// Up to this many bytes per row AUTO keeps the red path for f32/f16/bf16
// (tma_beats_red): 256 lanes of 16-byte vectors, one vector each, which is
// the red path's short-row loop.
constexpr uint64_t kRedMaxVectorRowBytes = 4096;
// Rows of this many bytes (one chunk each) reduce faster when their out chunk
// is prefetched into L2 with the src load: on the H200, uniform targets,
// 512-byte f32 rows 3.503 -> 3.116 ms, 1 KB f32 3.535 -> 3.339, 1 KB f64
// 1.766 -> 1.662; sorted targets lose a little (512 B 2.170 -> 2.223, 1 KB
// 2.168 -> 2.178). Outside the range it lost: 256-byte rows 0.92 -> 1.05 ms
// (the extra bulk operation per pair costs more than the fill it hides),
// 2 KB rows 1-4% (bench/results/2026-12-03-h200-seed-and-out-prefetch.md).
constexpr uint64_t kPrefetchMinRowBytes = 512;
constexpr uint64_t kPrefetchMaxRowBytes = 1024;

TmaSchedule plan_tma_schedule(const Problem& p, const DeviceLimits& device) {
  const scatterptx_schedule& want = p.schedule;
  const uint32_t elem = static_cast<uint32_t>(p.elem_bytes);
  const uint32_t cols = static_cast<uint32_t>(p.cols);
  const uint32_t chunk_target = std::max<uint32_t>(pick(want.chunk_bytes, kDefaultChunkBytes) / elem,
                                                   16 / elem);
  TmaSchedule s;
  // Every candidate is a multiple of 16 bytes: cols * elem (eligibility),
  // 256 * elem, and chunk_target * elem.
  s.box_elems = std::min({cols, kMaxBoxElems, chunk_target});
  const uint32_t boxes_per_chunk =
      std::max<uint32_t>(1, std::min<uint64_t>(chunk_target / s.box_elems, ceil_div(cols, s.box_elems)));
  s.chunk_elems = s.box_elems * boxes_per_chunk;
  s.chunks_per_row = static_cast<uint32_t>(ceil_div(cols, s.chunk_elems));
  s.stages = pick(want.stages, kDefaultStages);
  s.warps_per_cta = pick(want.warps_per_cta, kDefaultWarpsPerCta);
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
  s.ctas_per_sm = std::min(pick(want.ctas_per_sm, kDefaultCtasPerSm), fit);
  s.prefetch_out = s.chunks_per_row == 1 && p.row_bytes() >= kPrefetchMinRowBytes &&
                   p.row_bytes() <= kPrefetchMaxRowBytes;
  return s;
}

void plan_tma(const Problem& p, const DeviceLimits& device, Plan& plan) {
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

// The widest access the red path has for this dtype that every row start
// is aligned to and that fits in a row; the element itself otherwise.
uint32_t red_vector_bytes(const Problem& p) {
  const uint64_t alignment = p.out_address | p.src_address | p.out_row_stride_bytes | p.src_row_stride_bytes;
  for (uint32_t bytes : {16u, 8u, 4u}) {
    const bool has_variant = bytes > p.elem_bytes && !(p.dtype == SCATTERPTX_F64 && bytes != 16);
    if (has_variant && alignment % bytes == 0 && p.row_bytes() >= bytes) return bytes;
  }
  return static_cast<uint32_t>(p.elem_bytes);
}

// Whether the red path takes its short-row loop (ptx/row_red.ptx.in): at
// most one vector per lane, no partial vector, one CTA across the row.
bool red_takes_short_row_loop(const Problem& p, const RedSchedule& s) {
  const uint64_t vector_elems = s.vector_bytes / p.elem_bytes;
  return s.grid_y == 1 && s.vectors_per_row <= (uint64_t{1} << s.lanes_per_row_log2) && p.cols % vector_elems == 0;
}

// Whether the row loop's lanes load whole vectors in batches
// (kRedBatchVectors at a time, v, v + step, ...): at least one lane has a
// whole batch (every_lane false) or every lane has (every_lane true).
bool red_row_loop_batches(const Problem& p, const RedSchedule& s, bool every_lane) {
  if (red_takes_short_row_loop(p, s)) return false;
  const uint64_t whole_vectors = p.cols / (s.vector_bytes / p.elem_bytes);
  const uint64_t step = uint64_t{s.grid_y} << s.lanes_per_row_log2;
  const uint64_t needed = every_lane ? kRedBatchVectors * step : (kRedBatchVectors - 1) * step + 1;
  return whole_vectors >= needed;
}

// Whether the red path prefetches out lines into L2 ahead of its reds: the
// short-row loop the next batch's, the row loop its batch's before their
// loads. Only out larger than L2 gains: its lines are then mostly not in L2
// when their reds arrive, and the prefetch overlaps that miss with the
// loads. An out that fits stays in L2 and the prefetches are extra
// requests. On the H200 (60 MB of L2), uniform targets: 512-byte f32 rows
// 3.401 -> 2.966 ms, 256-byte bf16 1.684 -> 1.496, 128-byte f32 0.440 ->
// 0.395, 64-byte 0.248 -> 0.238, 1 KB f64 2.314 -> 1.927; sorted targets,
// whose lines are mostly in L2 already, lose a little (512-byte f32 2.004 ->
// 2.075, 1 KB 2.141 -> 2.159), and so do 32-byte rows into 32 MB of out
// (0.1162 -> 0.1198) (bench/results/2026-12-03-h200-red-out-prefetch.md).
// Long rows in the row loop's batches, f32, the prefetch alone (a batched
// kernel without and with it): 100 rows of 2.56 MB into a permutation of
// 100 targets 0.2265 -> 0.2034 ms (bf16 0.1152 -> 0.1096), uniform targets
// 2000 rows of 256 KB 0.4095 -> 0.3776, 30000 of 32 KB 0.8292 -> 0.7309,
// 250000 of 16 KB 3.513 -> 3.090 (bench/results/2026-12-03-h200-red-row-prefetch.md).
bool red_prefetches_out(const Problem& p, const RedSchedule& s, const DeviceLimits& device) {
  // out_rows * row_bytes > l2_bytes, without the product's overflow.
  const bool out_exceeds_l2 = p.row_bytes() != 0 && p.out_rows > device.l2_bytes / p.row_bytes();
  return out_exceeds_l2 && (red_takes_short_row_loop(p, s) || red_row_loop_batches(p, s, /*every_lane=*/false));
}

// The chance (percent) that one of the short-row loop's reds marks its out
// line evict_last in L2 (createpolicy.fractional: a per-access chance, so a
// line hit k times is kept with chance 1 - 0.75^k at 25%); the loop's source
// and index loads are always evict_first. Up to 3.05 times L2, 25% is the
// best or tied for best share measured (H200, uniform targets, f32 rows, ms
// for 0 / 25% / 100%: 32 MB of out 0.1578 / 0.1514 / 0.1536, 64 MB
// 0.2305 / 0.2070 / 0.2093, 128 MB of 128-byte rows 0.3931 / 0.3726 /
// 0.3752, 192 MB 0.3005 / 0.2965 / 0.2974). From 4.07 times L2 any share
// loses (256 MB: 0.7350, 0.7428 with 12.5%; 512 MB +3%, 880 MB +5%), so the
// cut sits between the two, at 3.5 times L2, not measured in between
// (bench/results/2026-12-03-h200-red-l2-policy.md).
uint32_t red_out_keep_percent(const Problem& p, const RedSchedule& s, const DeviceLimits& device) {
  constexpr uint32_t kKeptPercent = 25;
  // out_rows * row_bytes <= 3.5 * l2_bytes, without the product's overflow.
  const bool out_fits = p.row_bytes() == 0 || p.out_rows <= device.l2_bytes / 2 * 7 / p.row_bytes();
  return red_takes_short_row_loop(p, s) && out_fits ? kKeptPercent : 0;
}

void plan_red(const Problem& p, const DeviceLimits& device, Plan& plan) {
  plan.path = SCATTERPTX_PATH_RED;
  RedSchedule& s = plan.red;
  s.vector_bytes = red_vector_bytes(p);
  plan.variant = find_variant(KernelFamily::row_red, p.dtype, p.index_type, s.vector_bytes);
  plan.threads_per_cta = kRedThreadsPerCta;
  s.vectors_per_row = ceil_div(p.cols, s.vector_bytes / p.elem_bytes);
  while ((uint64_t{1} << s.lanes_per_row_log2) < s.vectors_per_row &&
         (1u << s.lanes_per_row_log2) < kRedThreadsPerCta) {
    ++s.lanes_per_row_log2;
  }
  const uint64_t rows_per_cta = kRedThreadsPerCta >> s.lanes_per_row_log2;
  const uint64_t resident = uint64_t{device.sm_count} * (device.max_threads_per_sm / kRedThreadsPerCta);
  LaunchSlice slice;
  slice.rows = p.src_rows;
  slice.grid_x = std::max<uint64_t>(1, std::min({ceil_div(p.src_rows, rows_per_cta), 2 * resident,
                                                 device.max_grid_x}));
  // Few, long rows: spread each row's vectors over CTAs along y as well.
  const uint64_t row_ctas = ceil_div(s.vectors_per_row, kRedThreadsPerCta);
  if (row_ctas > 1 && slice.grid_x < resident) {
    s.grid_y = static_cast<uint32_t>(
        std::min<uint64_t>({row_ctas, ceil_div(resident, slice.grid_x), device.max_grid_y}));
  }
  slice.grid_y = s.grid_y;
  plan.launches.push_back(slice);
  s.prefetch_out = red_prefetches_out(p, s, device);
  s.out_keep_percent = red_out_keep_percent(p, s, device);
}

// Whether the TMA path is the faster streaming path for an input it can take.
// With 16-byte vector reds (f32, f16, bf16) and out prefetched by the
// short-row loop, the red path ran as fast as TMA or faster on every shape
// measured with rows of up to 4 KB, uniform and sorted targets alike:
// 512-byte f32 rows 2.967 against 3.117 ms (uniform), 2.072 against 2.260
// (sorted); 4 KB f32 rows 3.068 against 3.518 (uniform), 2.183 against 2.514
// (sorted), 2.527 against 2.540 with out in L2
// (bench/results/2026-12-03-h200-red-out-prefetch.md). Longer rows go back
// to red where every lane loads them in batches with out prefetched (out
// larger than L2), f32 rows, uniform targets: 16 KB 3.022 against 3.461 ms,
// 32 KB 0.711 against 0.824, 256 KB 0.365 against 0.433, one row of 64 MB
// 0.056 against 0.060; 100 rows of 2.56 MB into a permutation of 100
// targets 0.198 against 0.226; bf16 and f16 likewise
// (bench/results/2026-12-03-h200-red-row-prefetch.md). TMA stays ahead for
// 8 KB rows, two vectors per lane and no batch (3.468 against 3.571), and
// for f64 (1 KB rows: 1.660 against 1.919; 100 rows of 5.12 MB: 0.442
// against 0.474). Rows of 12-16 KB, where most but not all lanes batch, are
// not measured and stay on TMA; so do long rows into out within L2 (one
// shape measured: 1 x 16M bf16, 32 MB of out, red 0.0320 against 0.0337).
bool tma_beats_red(const Problem& p, const DeviceLimits& device) {
  if (p.row_bytes() <= kRedMaxRowBytes) return false;
  if (p.dtype == SCATTERPTX_F64) return true;
  if (p.row_bytes() <= kRedMaxVectorRowBytes) return false;
  Plan red;
  plan_red(p, device, red);
  return !(red.red.prefetch_out && red_row_loop_batches(p, red.red, /*every_lane=*/true));
}

}  // namespace

uint32_t tma_shared_bytes(uint32_t stage_bytes, uint32_t stages, uint32_t warps_per_cta) {
  const uint64_t bytes = uint64_t{warps_per_cta} * stages * (uint64_t{stage_bytes} + 8);
  return static_cast<uint32_t>(std::min<uint64_t>(bytes, UINT32_MAX));
}

std::size_t find_variant(KernelFamily family, scatterptx_dtype dtype, scatterptx_index_type index_type,
                         unsigned vector_bytes) {
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
    const KernelVariant& v = kKernelVariants[i];
    if (v.family == family && v.dtype == dtype && v.index_type == index_type && v.vector_bytes == vector_bytes) {
      return i;
    }
  }
  fail(SCATTERPTX_ERROR_DRIVER, std::string("internal error: no kernel variant for dtype ") +
                                    scatterptx_dtype_name(dtype) + " vector_bytes " + std::to_string(vector_bytes));
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

Plan make_plan(const Problem& p, const DeviceLimits& device) {
  if (device.compute_capability < 90) {
    fail(SCATTERPTX_ERROR_UNSUPPORTED_DEVICE,
         "compute capability " + std::to_string(device.compute_capability / 10) + "." +
             std::to_string(device.compute_capability % 10) + " is not supported: libscatterptx needs sm_90+");
  }
  Plan plan;
  if (p.is_empty()) return plan;
  const std::string why_not_tma = tma_ineligibility(p, device);
  const std::string why_not_private = private_layout_ineligibility(p);
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
                         " accumulator rows of at least " + std::to_string(kPrivateMinSliceElems) +
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

std::string Plan::describe() const {
  // Built with std::to_string, not a stream: the text is also asked for from
  // processes (Python) whose C++ locale state this library does not control.
  if (launches.empty()) return "path=none (empty problem)";
  const char* name = path == SCATTERPTX_PATH_TMA ? "tma" : path == SCATTERPTX_PATH_PRIVATE ? "private" : "red";
  auto field = [](const char* key, uint64_t value) { return std::string(" ") + key + "=" + std::to_string(value); };
  std::string out = std::string("path=") + name + " variant=" + kKernelVariants[variant].name;
  if (path == SCATTERPTX_PATH_PRIVATE) {
    out += field("slice_elems", priv.slice_elems) + field("slices", priv.slices) + field("stages", priv.stages) +
           field("ctas_per_sm", priv.ctas_per_sm) + field("shared_bytes", priv.shared_bytes);
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
  return out;
}

}  // namespace scatterptx::detail

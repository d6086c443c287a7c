#include "plan_red.hpp"

#include <algorithm>

#include "heuristics.hpp"
#include "plan_math.hpp"

namespace scatterptx::detail {
namespace {

// The widest access the red path has for this dtype that every row start
// is aligned to and that fits in a row; the element itself otherwise. f64
// lanes are one element: f64 has no vector red, and a 16-byte lane of two
// scalar reds sends L2 two atomic requests per 32-byte sector
// (docs/tuning.md#red-f64-lanes).
uint32_t red_vector_bytes(const Problem& p) {
  if (p.dtype == SCATTERPTX_F64) return static_cast<uint32_t>(p.elem_bytes);
  const uint64_t alignment = p.out_address | p.src_address | p.out_row_stride_bytes | p.src_row_stride_bytes;
  for (uint32_t bytes : {16u, 8u, 4u}) {
    if (bytes > p.elem_bytes && alignment % bytes == 0 && p.row_bytes() >= bytes) return bytes;
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
// (kRedRowBatchVectors at a time, v, v + step, ...): at least one lane has a
// whole batch (every_lane false) or every lane has (every_lane true).
bool red_row_loop_batches(const Problem& p, const RedSchedule& s, bool every_lane) {
  if (red_takes_short_row_loop(p, s)) return false;
  const uint64_t whole_vectors = p.cols / (s.vector_bytes / p.elem_bytes);
  const uint64_t step = uint64_t{s.grid_y} << s.lanes_per_row_log2;
  const uint64_t needed = every_lane ? kRedRowBatchVectors * step : (kRedRowBatchVectors - 1) * step + 1;
  return whole_vectors >= needed;
}

// Whether the red path prefetches out lines into L2 ahead of its reds: the
// short-row loop the next batch's, the row loop its batch's before their
// loads. Only an out larger than L2 gains: the prefetch overlaps its misses
// with the loads (docs/tuning.md#red-out-prefetch).
bool red_prefetches_out(const Problem& p, const RedSchedule& s, const DeviceLimits& device) {
  // out_rows * row_bytes above the threshold, without the product's overflow.
  const uint64_t above = heuristics::red::kPrefetchOutAbove.of(device.l2_bytes);
  const bool out_exceeds_l2 = p.row_bytes() != 0 && p.out_rows > above / p.row_bytes();
  return out_exceeds_l2 && (red_takes_short_row_loop(p, s) || red_row_loop_batches(p, s, /*every_lane=*/false));
}

// The chance (percent) that one of the short-row loop's reds marks its out
// line evict_last in L2 (createpolicy.fractional: a per-access chance, so a
// line hit k times is kept with chance 1 - (1 - chance)^k); the loop's
// source and index loads are always evict_first (docs/tuning.md#red-l2-priorities).
uint32_t red_out_keep_percent(const Problem& p, const RedSchedule& s, const DeviceLimits& device) {
  // out_rows * row_bytes within the threshold, without the product's overflow.
  const uint64_t up_to = heuristics::red::kKeepOutUpTo.of(device.l2_bytes);
  const bool out_fits = p.row_bytes() == 0 || p.out_rows <= up_to / p.row_bytes();
  return red_takes_short_row_loop(p, s) && out_fits ? heuristics::red::kOutKeepPercent : 0;
}

// CTAs of the red variant for p one SM holds: the driver's figure for its
// registers where the device gave one, else the thread limit's
// (docs/tuning.md#red-grid-waves).
uint64_t red_ctas_per_sm(const Problem& p, const RedSchedule& s, const DeviceLimits& device) {
  const std::size_t variant =
      find_variant(KernelFamily::row_red, p.dtype, p.index_type, s.vector_bytes, SCATTERPTX_REDUCE_SUM, p.weighted);
  const uint32_t reported = device.resident_ctas_per_sm[variant];
  return reported != 0 ? reported : device.max_threads_per_sm / kRedThreadsPerCta;
}

// Waves of the short-row loop's grid: more CTAs took sorted and Zipf rows of
// 1 KB or more faster and cost shorter rows (docs/tuning.md#red-grid-waves).
uint64_t red_short_row_waves(const Problem& p) {
  return p.row_bytes() >= heuristics::red::kWideRowMinBytes ? heuristics::red::kWideRowGridWaves
                                                             : heuristics::red::kShortRowGridWaves;
}

// The red path's schedule (access width, lanes per row, CTAs along y, L2
// hints), and in grid_x its CTAs over the source rows.
RedSchedule red_schedule(const Problem& p, const DeviceLimits& device, uint64_t& grid_x) {
  RedSchedule s;
  s.vector_bytes = red_vector_bytes(p);
  s.vectors_per_row = ceil_div(p.cols, s.vector_bytes / p.elem_bytes);
  while ((uint64_t{1} << s.lanes_per_row_log2) < s.vectors_per_row &&
         (1u << s.lanes_per_row_log2) < kRedThreadsPerCta) {
    ++s.lanes_per_row_log2;
  }
  const uint64_t groups_per_cta = kRedThreadsPerCta >> s.lanes_per_row_log2;
  const uint64_t resident = uint64_t{device.sm_count} * (device.max_threads_per_sm / kRedThreadsPerCta);
  // A group takes one row at a time, or in the short-row loop a batch of
  // kRedShortRowsPerBatch consecutive rows (grid_y is still 1 here, and stays 1
  // for the rows that loop takes: they fit one CTA). The grid is a few waves
  // of the CTAs an SM holds (docs/tuning.md#red-grid-waves).
  const bool short_rows = red_takes_short_row_loop(p, s);
  const uint64_t units = short_rows ? ceil_div(p.src_rows, kRedShortRowsPerBatch) : p.src_rows;
  const uint64_t most_ctas =
      short_rows ? red_short_row_waves(p) * uint64_t{device.sm_count} * red_ctas_per_sm(p, s, device)
                 : heuristics::red::kRowLoopGridWaves * resident;
  grid_x = std::max<uint64_t>(1, std::min({ceil_div(units, groups_per_cta), most_ctas, device.max_grid_x}));
  // Few, long rows: spread each row's vectors over CTAs along y as well.
  const uint64_t row_ctas = ceil_div(s.vectors_per_row, kRedThreadsPerCta);
  if (row_ctas > 1 && grid_x < resident) {
    s.grid_y = static_cast<uint32_t>(std::min<uint64_t>({row_ctas, ceil_div(resident, grid_x), device.max_grid_y}));
  }
  s.prefetch_out = red_prefetches_out(p, s, device);
  s.out_keep_percent = red_out_keep_percent(p, s, device);
  return s;
}

}  // namespace

void plan_red(const Problem& p, const DeviceLimits& device, StreamingPlan& plan) {
  plan.path = SCATTERPTX_PATH_RED;
  LaunchSlice slice;
  slice.rows = p.src_rows;
  plan.red = red_schedule(p, device, slice.grid_x);
  slice.grid_y = plan.red.grid_y;
  plan.variant = find_variant(KernelFamily::row_red, p.dtype, p.index_type, plan.red.vector_bytes,
                              SCATTERPTX_REDUCE_SUM, p.weighted);
  plan.threads_per_cta = kRedThreadsPerCta;
  plan.launches.push_back(slice);
}

// Whether the TMA path is the faster streaming path for an input it can take.
// Red wins short rows, rows its short-row loop takes (one vector per lane of
// a CTA) and long rows every lane loads in batches with out prefetched; TMA
// keeps rows of a few vectors per lane, the mixed measures between, and long
// rows into an out within L2 (docs/tuning.md#red-or-tma).
bool tma_beats_red(const Problem& p, const DeviceLimits& device) {
  if (p.row_bytes() <= heuristics::red::kMaxRowBytes) return false;
  uint64_t grid_x = 0;
  const RedSchedule red = red_schedule(p, device, grid_x);
  if (red_takes_short_row_loop(p, red)) return false;
  return !(red.prefetch_out && red_row_loop_batches(p, red, /*every_lane=*/true));
}

}  // namespace scatterptx::detail

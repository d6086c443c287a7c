#include "plan_red.hpp"

#include <algorithm>

#include "plan_math.hpp"

namespace scatterptx::detail {
namespace {

// Up to this many bytes per row, red.global beats one bulk copy and one bulk
// reduce per row whatever the dtype: on the H200 a (load, reduce) pair costs
// ~50 SM cycles whatever its size, so 8..128-byte rows ran at 0.78 ms for 4M
// rows on the TMA path against 0.06..0.44 ms on the red path
// (bench/results/2026-12-02-h200-core.md).
constexpr uint64_t kRedMaxRowBytes = 128;

// The widest access the red path has for this dtype that every row start
// is aligned to and that fits in a row; the element itself otherwise. f64
// has no vector red, and its lanes are one element: a 16-byte lane of two
// scalar reds sends L2 two atomic requests for every 32-byte sector, where
// 8-byte lanes send one. H200, 16-byte against 8-byte lanes (ms), uniform
// targets: 4M rows of 32 bytes into 1M 0.1519 against 0.1034, of 128 bytes
// 0.4935 against 0.3740; 1 KB rows 7.154 against 6.044; and 100 rows of
// 5.12 MB into a permutation of 100 targets 0.4762 against 0.3883
// (bench/results/2026-12-03-h200-f64-lanes.md).
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
// loads. Only out larger than L2 gains: its lines are then mostly not in L2
// when their reds arrive, and the prefetch overlaps that miss with the
// loads. An out that fits stays in L2 and the prefetches are extra
// requests. On the H200 (60 MB of L2), uniform targets: 512-byte f32 rows
// 3.401 -> 2.966 ms, 256-byte bf16 1.684 -> 1.496, 128-byte f32 0.440 ->
// 0.395, 64-byte 0.248 -> 0.238, 1 KB f64 (16-byte lanes then) 2.314 ->
// 1.927; sorted targets,
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

// CTAs of the red variant for p one SM holds: the driver's figure where the
// device gave one, else the thread limit's 8. The variants' registers allow
// fewer: 3 CTAs of 16-byte lanes and of 8-byte lanes with 64-bit indices
// (78-80 registers), 4 of the others (63-64). The short-row loop's grid of
// 2 x 8 CTAs per SM so ran as 5.33 waves, the last part-empty, or as 4.
// H200, ms, 2 x 8 against 2 x 3 CTAs per SM: sorted 1 KB f32 rows 1.541
// against 1.498, uniform 128-byte f64 rows 0.3828 against 0.3683, bf16
// 0.3682 against 0.3618; 32-byte f32 rows 0.1021 against 0.1028
// (bench/results/2026-12-03-h200-red-grid-waves.md).
uint64_t red_ctas_per_sm(const Problem& p, const RedSchedule& s, const DeviceLimits& device) {
  const std::size_t variant = find_variant(KernelFamily::row_red, p.dtype, p.index_type, s.vector_bytes);
  const uint32_t reported = device.resident_ctas_per_sm[variant];
  return reported != 0 ? reported : device.max_threads_per_sm / kRedThreadsPerCta;
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
  // for the rows that loop takes: they fit one CTA). That loop's grid is two
  // waves of the CTAs an SM holds; longer rows keep two of the thread
  // limit's, the grids (along y too) that their figures and the path
  // choice below were measured on.
  const bool short_rows = red_takes_short_row_loop(p, s);
  const uint64_t units = short_rows ? ceil_div(p.src_rows, kRedShortRowsPerBatch) : p.src_rows;
  const uint64_t most_ctas = short_rows ? 2 * uint64_t{device.sm_count} * red_ctas_per_sm(p, s, device) : 2 * resident;
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

void plan_red(const Problem& p, const DeviceLimits& device, Plan& plan) {
  plan.path = SCATTERPTX_PATH_RED;
  LaunchSlice slice;
  slice.rows = p.src_rows;
  plan.red = red_schedule(p, device, slice.grid_x);
  slice.grid_y = plan.red.grid_y;
  plan.variant = find_variant(KernelFamily::row_red, p.dtype, p.index_type, plan.red.vector_bytes);
  plan.threads_per_cta = kRedThreadsPerCta;
  plan.launches.push_back(slice);
}

// Whether the TMA path is the faster streaming path for an input it can take.
// The red path wins rows of up to 128 bytes (kRedMaxRowBytes) and rows its
// short-row loop takes, one vector per lane of a CTA (up to 4 KB; f64, whose
// lanes are one element, up to 2 KB), out prefetched where it is larger
// than L2, uniform and sorted targets alike: 512-byte f32 rows 2.967
// against 3.117 ms (uniform), 2.072 against 2.260 (sorted); 4 KB f32 rows
// 3.068 against 3.518 (uniform), 2.183 against 2.514 (sorted), 2.527
// against 2.540 with out in L2 (bench/results/2026-12-03-h200-red-out-prefetch.md);
// f64 1 KB rows 6.044 against 6.557 (uniform), 2 KB 1.560 against 1.766
// (uniform), 1.128 against 1.264 (sorted); f64 1 KB sorted 2.299 against
// 2.175 (bench/results/2026-12-03-h200-f64-lanes.md) before the short-row
// loop folded runs, 1.944 against 2.181 since
// (bench/results/2026-12-03-h200-f64-1kb-paths-34208b4.txt).
// Longer rows go back to red where every lane loads them in batches with
// out prefetched (out larger than L2), f32 rows, uniform targets: 16 KB 3.022
// against 3.461 ms, 32 KB 0.711 against 0.824, 256 KB 0.365 against 0.433,
// one row of 64 MB 0.056 against 0.060; 100 rows of 2.56 MB into a
// permutation of 100 targets 0.198 against 0.226; bf16 and f16 likewise
// (bench/results/2026-12-03-h200-red-row-prefetch.md); f64 8 KB rows 1.546
// against 1.750, 100 rows of 5.12 MB 0.386 against 0.447. TMA stays ahead
// where lanes take a few vectors each and no batch (red against TMA): f32
// 8 KB rows (two vectors per lane) 3.571 against 3.468 (the same file); f64
// 3 KB 3.619 against 2.689, 4 KB 2.071 against 1.760, 6 KB 2.991 against
// 2.635 (bench/results/2026-12-03-h200-f64-lanes.md, as what follows).
// Between, the measures are mixed and the rule keeps TMA: f32 rows of 14 KB
// 3.064 against 3.058, 15 KB 3.204 against 3.276, 16000 bytes 3.724
// against 3.504, 16368 bytes (all lanes but one batch) 3.581 against 3.815.
// So do long rows into out within L2, where red was 2-6% faster on uniform
// targets (1 x 16M bf16 0.0321 against 0.0336, 20000 rows of 16 KB bf16
// into 1000 0.1632 against 0.1740) but 5% slower on sorted ones (200000
// rows of 16 KB f32 into 1000 1.713 against 1.628). f64 rows of 256 bytes
// to 2 KB into out within L2 take red as f32 does (uniform): 256 B rows
// 0.578 against 0.811 ms, 512 B 1.132 against 1.334, 1 KB 2.259 against
// 2.626, 2 KB 2.249 against 2.720; 1 KB sorted 2.318 and 2.324 against
// 2.298 and 2.283 (bench/results/2026-12-03-h200-f64-rows-in-l2-ae50f21.txt,
// two rounds, before the short-row loop folded runs); f64 rows of 136 to
// 248 bytes into out within L2 are not measured.
bool tma_beats_red(const Problem& p, const DeviceLimits& device) {
  if (p.row_bytes() <= kRedMaxRowBytes) return false;
  uint64_t grid_x = 0;
  const RedSchedule red = red_schedule(p, device, grid_x);
  if (red_takes_short_row_loop(p, red)) return false;
  return !(red.prefetch_out && red_row_loop_batches(p, red, /*every_lane=*/true));
}

}  // namespace scatterptx::detail

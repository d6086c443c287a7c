// Every tuned threshold of the planners (plan.cpp, plan_red.cpp,
// plan_private.cpp, group_plan.cpp), one line of reasoning each, with the
// docs/tuning.md section that holds its measurements. Constants the kernels
// or the hardware dictate are not tuned and live with their planners.
#pragma once

#include <cstdint>

namespace scatterptx::detail::heuristics {

// A multiple of the device's L2 size, num / den, taken as l2_bytes / den * num
// so that it cannot overflow.
struct L2Multiple {
  uint64_t num;
  uint64_t den;
  constexpr uint64_t of(uint64_t l2_bytes) const { return l2_bytes / den * num; }
};

// The TMA path (plan.cpp).
namespace tma {
// Default schedule: out's DRAM read-modify-write dominates a uniform scatter
// and the pipeline shape barely matters, so favour few bulk operations per
// byte and enough workers per SM to keep loads in flight.
// docs/tuning.md#tma-default-schedule
inline constexpr uint32_t kChunkBytes = 2048;
inline constexpr uint32_t kStages = 4;
inline constexpr uint32_t kWarpsPerCta = 4;
inline constexpr uint32_t kCtasPerSm = 8;
// One-chunk rows of 512 B to 1 KB prefetch their out chunk into L2 with the
// src load; shorter rows pay more for the extra bulk operation than the fill
// it hides, longer ones lost too. docs/tuning.md#tma-out-prefetch
inline constexpr uint64_t kPrefetchOutMinRowBytes = 512;
inline constexpr uint64_t kPrefetchOutMaxRowBytes = 1024;
}  // namespace tma

// The red path and AUTO's choice between the streaming paths (plan_red.cpp).
namespace red {
// AUTO takes red for rows up to this size whatever the dtype: a TMA (load,
// reduce) pair costs ~50 SM cycles whatever its size. docs/tuning.md#red-short-rows
inline constexpr uint64_t kMaxRowBytes = 128;
// The red path prefetches out lines into L2 only when out is larger than
// this: an out that fits stays in L2 and the prefetches are extra requests.
// docs/tuning.md#red-out-prefetch
inline constexpr L2Multiple kPrefetchOutAbove{1, 1};
// The short-row loop's reds mark their out line evict_last with this chance
// (percent) while out is at most kKeepOutUpTo: 25% was best or tied up to
// 3.05 times L2, any share lost from 4.07 times. docs/tuning.md#red-l2-priorities
inline constexpr uint32_t kOutKeepPercent = 25;
inline constexpr L2Multiple kKeepOutUpTo{7, 2};
// The short-row loop's grid is this many waves of the CTAs an SM holds of its
// variant (the driver's figure), the last wave full; rows of kWideRowMinBytes
// or more take kWideRowGridWaves. docs/tuning.md#red-grid-waves
inline constexpr uint64_t kShortRowGridWaves = 2;
inline constexpr uint64_t kWideRowGridWaves = 4;
inline constexpr uint64_t kWideRowMinBytes = 1024;
// Longer rows keep this many waves of the thread limit's CTAs per SM: the
// grids their measurements and the path choice were taken on. docs/tuning.md#red-grid-waves
inline constexpr uint64_t kRowLoopGridWaves = 2;
}  // namespace red

// The privatised path (plan_private.cpp).
namespace privatised {
// Stages in flight per CTA: 3 was fastest of 2, 3, 4 and 6 on few_targets.
// docs/tuning.md#private-schedule
inline constexpr uint32_t kStages = 3;
// Accumulator items per consumer lane and stage; sets the consumer warps
// (4 for 128-column slices, the fastest measured). docs/tuning.md#private-schedule
inline constexpr uint32_t kItemsPerLane = 4;
// Slices are sized so that this many CTAs share an SM: a CTA's consumers wait
// on each stage, and other CTAs hide that latency. docs/tuning.md#private-schedule
inline constexpr uint32_t kCtasPerSm = 3;
// The narrowest slice (columns, or all of them when fewer) the path takes.
// docs/tuning.md#private-schedule
inline constexpr uint32_t kMinSliceElems = 64;
// AUTO privatises when the partial sums the CTAs flush are at most 1/8 of
// the source rows: few targets with many rows each. docs/tuning.md#private-payoff
inline constexpr uint64_t kRowsPerPartial = 8;
}  // namespace privatised

// Grouped execution (group_plan.cpp).
namespace grouped {
// Warps per CTA of the summing kernels when the caller does not say.
// docs/tuning.md#grouped-summing-grid
inline constexpr uint32_t kSummingWarps = 8;
// Warps the summing grid aims for along the rows: enough row groups in
// flight to cover DRAM latency on a Hopper-class GPU, fixed so that the plan
// does not depend on the device. docs/tuning.md#grouped-summing-grid
inline constexpr uint64_t kTargetSummingWarps = 4096;
// AUTO groups rows of at least this many bytes: below it most lanes of a
// summing warp idle and streaming red is near its floor. docs/tuning.md#grouped-auto
inline constexpr uint64_t kSegmentedMinRowBytes = 256;
// AUTO streams fewer source rows than this: the summing grid (a warp per 256
// rows) is too thin, while TMA spreads few long rows over every SM. docs/tuning.md#grouped-auto
inline constexpr uint64_t kSegmentedMinRows = uint64_t{1} << 16;
// AUTO streams an out of at most this size whose targets are not hot (at
// most kHotRowsPerTarget source rows per target): the reductions stay on
// chip and grouping only adds the sort. docs/tuning.md#grouped-auto
inline constexpr uint64_t kL2ResidentOutBytes = 16ull << 20;
inline constexpr uint64_t kHotRowsPerTarget = 64;
// The default call's order check reads one sort tile in this many: a sorted
// index then streams after reading an eighth of it, not after the whole
// first radix pass (which runs only once the sample finds it out of order).
// docs/tuning.md#sorted-index
inline constexpr uint32_t kOrderSampleStep = 8;
}  // namespace grouped

}  // namespace scatterptx::detail::heuristics

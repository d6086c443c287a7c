#include "address_model.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "kernel_constants.hpp"
#include "kernel_manifest.hpp"
#include "heuristics.hpp"
#include "plan_private.hpp"

namespace scatterptx::fuzz {
namespace {

using namespace scatterptx::detail;

// Grids are launched with cuLaunchKernel's unsigned gridDim.x.
constexpr uint64_t kMaxGridX = (uint64_t{1} << 31) - 1;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// [begin, begin + bytes) of device memory.
struct Range {
  uint64_t begin = 0;
  uint64_t bytes = 0;
  uint64_t end() const { return begin + bytes; }
  bool contains(const Range& inner) const {
    return inner.bytes == 0 || (inner.begin >= begin && inner.end() <= end() && inner.begin <= inner.end());
  }
};

// rows rows of row_bytes each, stride_bytes apart, from address: what a
// kernel may touch of them (validate_arguments kept this below 2^62).
Range rows_range(uint64_t address, uint64_t rows, uint64_t stride_bytes, uint64_t row_bytes) {
  if (rows == 0) return Range{address, 0};
  return Range{address, (rows - 1) * stride_bytes + row_bytes};
}

Range out_tensor(const Problem& p) {
  return rows_range(p.out_address, p.out_rows, p.out_row_stride_bytes, p.row_bytes());
}
Range src_tensor(const Problem& p) {
  return rows_range(p.src_address, p.src_rows, p.src_row_stride_bytes, p.row_bytes());
}
Range index_tensor(const Problem& p) { return Range{p.index_address, p.src_rows * p.index_bytes}; }
Range weights_tensor(const Problem& p) {
  return p.weighted ? Range{p.weights_address, p.src_rows * p.weight_bytes()} : Range{};
}

// Column pieces of width piece_elems covering a row: count pieces, the last
// one clipped (by the tensor map or the kernel's tail), none past the row,
// and each written piece's bytes inside the row.
void check_row_pieces(const Problem& p, uint64_t piece_elems, uint64_t count, const char* what) {
  require(piece_elems != 0, what, p);
  require(count == ceil_div(p.cols, piece_elems), what, p);
  const uint64_t last_begin = (count - 1) * piece_elems;
  require(last_begin < p.cols, what, p);
  require((p.cols - last_begin) * p.elem_bytes <= piece_elems * p.elem_bytes, what, p);
}

// What every slice of a streaming plan reads: its src rows and its index
// entries (src and index advanced to the slice's first row, as
// launch.cpp's slice_arguments does); every write goes to a row of out below
// out_rows (the kernels skip other indices).
void check_slices(const Problem& p, const DeviceLimits& device, const StreamingPlan& plan) {
  uint64_t next_row = 0;
  for (const LaunchSlice& slice : plan.launches) {
    require(slice.row_begin == next_row, "slices tile the source rows in order, without gaps or overlap", p);
    require(slice.rows != 0, "no empty slice", p);
    require(slice.rows <= p.src_rows - slice.row_begin, "a slice ends within the source rows", p);
    next_row = slice.row_begin + slice.rows;
    require(slice.grid_x >= 1 && slice.grid_x <= kMaxGridX && slice.grid_x <= device.max_grid_x,
            "grid_x within the launch limits", p);
    require(slice.grid_y >= 1 && slice.grid_y <= device.max_grid_y, "grid_y within the launch limits", p);
    const Range src{p.src_address + slice.row_begin * p.src_row_stride_bytes,
                    (slice.rows - 1) * p.src_row_stride_bytes + p.row_bytes()};
    require(src_tensor(p).contains(src), "a slice's src rows lie inside src", p);
    const Range index{p.index_address + slice.row_begin * p.index_bytes, slice.rows * p.index_bytes};
    require(index_tensor(p).contains(index), "a slice's index entries lie inside index", p);
    if (p.weighted) {  // launch.cpp advances weights to the slice's first row as well
      const Range weights{p.weights_address + slice.row_begin * p.weight_bytes(), slice.rows * p.weight_bytes()};
      require(weights_tensor(p).contains(weights), "a slice's weights lie inside weights", p);
    }
  }
  require(next_row == p.src_rows, "the slices cover every source row", p);
  const Range last_out_row{p.out_address + (p.out_rows - 1) * p.out_row_stride_bytes, p.row_bytes()};
  require(out_tensor(p).contains(last_out_row), "out row out_rows - 1 lies inside out", p);
}

// The src tensor map of a TMA or privatised slice: 16-byte aligned address
// and stride, s32 coordinates, a stride below 2^40, a box of at most 256
// elements whose bytes are a multiple of 16; and the bulk reduces into out
// need 16-byte aligned rows.
void check_tensor_map_rules(const Problem& p, const StreamingPlan& plan, uint32_t box_elems, const char* family) {
  require(box_elems >= 1 && box_elems <= kMaxBoxElems, family, p);
  require(uint64_t{box_elems} * p.elem_bytes % 16 == 0, family, p);
  require(p.cols <= kMaxTmaCols && p.row_bytes() % 16 == 0, family, p);
  require(p.src_row_stride_bytes % 16 == 0 && p.src_row_stride_bytes < kMaxTensorMapStride, family, p);
  require(p.out_address % 16 == 0 && p.out_row_stride_bytes % 16 == 0, family, p);
  for (const LaunchSlice& slice : plan.launches) {
    require(slice.rows <= kMaxTmaRowsPerLaunch, family, p);
    require((p.src_address + slice.row_begin * p.src_row_stride_bytes) % 16 == 0, family, p);
  }
}

void check_tma(const Problem& p, const DeviceLimits& device, const StreamingPlan& plan) {
  const TmaSchedule& s = plan.tma;
  check_tensor_map_rules(p, plan, s.box_elems, "tma: tensor-map rules");
  require(s.chunk_elems % s.box_elems == 0, "tma: a chunk is whole boxes", p);
  check_row_pieces(p, s.chunk_elems, s.chunks_per_row, "tma: chunks cover the row, none past it");
  require(uint64_t{s.chunk_elems} * p.elem_bytes % 16 == 0, "tma: chunk bytes a multiple of 16 (bulk reduce)", p);
  require(s.stage_bytes >= uint64_t{s.chunk_elems} * p.elem_bytes && s.stage_bytes % 128 == 0,
          "tma: a stage holds a chunk, 128-byte aligned", p);
  require(s.stages >= 2 && s.warps_per_cta >= 1 && s.warps_per_cta <= 32, "tma: stages and warps in range", p);
  require(s.shared_bytes == tma_shared_bytes(s.stage_bytes, s.stages, s.warps_per_cta) &&
              s.shared_bytes <= device.max_shared_per_block,
          "tma: shared memory as the kernel lays it out, within the device's", p);
  require(plan.threads_per_cta == 32 * s.warps_per_cta, "tma: threads are the warps'", p);
  for (const LaunchSlice& slice : plan.launches) require(slice.grid_y == 1, "tma: one CTA along y", p);
}

void check_red(const Problem& p, const StreamingPlan& plan) {
  const RedSchedule& s = plan.red;
  const uint64_t vb = s.vector_bytes;
  require(vb == 2 || vb == 4 || vb == 8 || vb == 16, "red: vector bytes 2, 4, 8 or 16", p);
  require(vb >= p.elem_bytes && vb % p.elem_bytes == 0, "red: a vector is whole elements", p);
  require(p.dtype != SCATTERPTX_F64 || vb == 8, "red: f64 lanes are one element", p);
  // Whole-vector accesses at row starts need every row start aligned to vb;
  // a vector wider than the row would read past it.
  if (vb > p.elem_bytes) {
    require((p.out_address | p.src_address | p.out_row_stride_bytes | p.src_row_stride_bytes) % vb == 0,
            "red: every row start aligned to the vector", p);
    require(p.row_bytes() >= vb, "red: a vector fits in a row", p);
  }
  check_row_pieces(p, vb / p.elem_bytes, s.vectors_per_row, "red: vectors cover the row, none past it");
  require(s.lanes_per_row_log2 <= 8 && (uint32_t{1} << s.lanes_per_row_log2) <= plan.threads_per_cta,
          "red: a row's lanes fit in a CTA", p);
  require(plan.threads_per_cta == kRedThreadsPerCta, "red: threads per CTA", p);
  require(plan.launches.size() == 1 && plan.launches[0].grid_y == s.grid_y, "red: one launch, grid_y as planned", p);
  require(s.out_keep_percent <= 100, "red: a percentage", p);
}

void check_private(const Problem& p, const DeviceLimits& device, const StreamingPlan& plan) {
  const PrivateSchedule& s = plan.privatised;
  check_tensor_map_rules(p, plan, s.slice_elems, "private: tensor-map rules");
  require(p.out_rows <= kPrivateMaxTargets, "private: at most 4096 targets", p);
  check_row_pieces(p, s.slice_elems, s.slices, "private: slices cover the row, none past it");
  // Shared memory: accumulators, staging (16-bit dtypes), flags, the ring of
  // stages, their indices, the barriers, in that order without overlap.
  const uint64_t acc = p.dtype == SCATTERPTX_F64 ? 8 : 4;
  const uint64_t staging = p.elem_bytes == 2 ? p.out_rows * s.slice_elems * 2 : 0;
  require(s.staging_offset >= p.out_rows * s.slice_elems * acc, "private: accumulators end before staging", p);
  require(s.flags_offset >= uint64_t{s.staging_offset} + staging, "private: staging ends before the flags", p);
  require(s.ring_offset >= uint64_t{s.flags_offset} + 4 * p.out_rows && s.ring_offset % 128 == 0,
          "private: flags end before the ring, 128-aligned", p);
  require(s.index_offset >= uint64_t{s.ring_offset} +
                                uint64_t{s.stages} * kPrivateRowsPerStage * s.slice_elems * p.elem_bytes,
          "private: the ring ends before the indices", p);
  require(s.barrier_offset >= uint64_t{s.index_offset} + uint64_t{s.stages} * kPrivateIndexSlotBytes,
          "private: the indices end before the barriers", p);
  require(s.shared_bytes >= uint64_t{s.barrier_offset} + 16 * uint64_t{s.stages} &&
              s.shared_bytes <= device.max_shared_per_block,
          "private: the barriers end within the shared memory, within the device's", p);
  require(s.stages >= 2 && s.threads_per_cta >= 64 && s.threads_per_cta <= 1024 && s.threads_per_cta % 32 == 0 &&
              plan.threads_per_cta == s.threads_per_cta,
          "private: stages and threads in range", p);
  for (const LaunchSlice& slice : plan.launches) {
    require(slice.row_begin % kPrivateRowsPerStage == 0, "private: launches start on whole stages", p);
    require(slice.grid_y == s.slices, "private: one CTA row per column slice", p);
  }
}

bool variant_matches(const Problem& p, const StreamingPlan& plan) {
  const KernelVariant& v = kKernelVariants[plan.variant];
  const KernelFamily family = plan.path == SCATTERPTX_PATH_TMA       ? KernelFamily::row_tma_reduce
                              : plan.path == SCATTERPTX_PATH_PRIVATE ? KernelFamily::row_private
                                                                     : KernelFamily::row_red;
  return v.family == family && v.dtype == p.dtype && v.index_type == p.index_type &&
         (plan.path != SCATTERPTX_PATH_RED || v.vector_bytes == plan.red.vector_bytes) &&
         v.reduce == SCATTERPTX_REDUCE_SUM && v.weighted == p.weighted;
}

// A named piece of the workspace, as offsets from its start.
struct Region {
  const char* name;
  uint64_t offset;
  uint64_t bytes;
};

// The product of factors, required not to wrap: a workspace size that
// wrapped would be too small for what the kernels write.
uint64_t product(const Problem& p, std::initializer_list<uint64_t> factors) {
  uint64_t value = 1;
  for (uint64_t factor : factors) {
    require(!__builtin_mul_overflow(value, factor, &value), "workspace: a region's size does not wrap", p);
  }
  return value;
}

// The summing and combining grids and variants of a grouped plan for a
// problem with rows to add.
void check_group_grids(const Problem& p, const DeviceLimits& device, const GroupPlan& plan) {
  require(plan.summing_warps >= 1 && plan.summing_warps <= 32, "grouped: summing warps within 1..32", p);
  require(plan.summing_grid_x >= 1 && plan.summing_grid_x <= kMaxGridX &&
              plan.summing_grid_x * plan.summing_warps >= plan.segment_tiles,
          "grouped: the summing grid covers every tile", p);
  require(plan.combine_grid_x >= 1 && plan.combine_grid_x <= kMaxGridX &&
              plan.combine_grid_x * kCombineTilesPerWarp * plan.summing_warps >= plan.segment_tiles,
          "grouped: the combine grid covers every tile", p);
  require(plan.sort_tiles <= kMaxGridX, "grouped: the sort grid within the launch limit", p);
  if (plan.streams_when_sorted && plan.sort_tiles > 0) {
    // The order check's CTA x reads sort tile x * step: every one a tile of the index.
    const uint64_t step = heuristics::grouped::kOrderSampleStep;
    const uint64_t sampled = order_sample_tiles(plan.sort_tiles, heuristics::grouped::kOrderSampleStep);
    require(sampled >= 1 && (sampled - 1) * step < plan.sort_tiles,
            "grouped: the order check reads only tiles of the index", p);
  }
  require(plan.summing_grid_y >= 1 && plan.summing_grid_y <= device.max_grid_y, "grouped: grid_y within limits", p);
  require(segment_sum_shared_bytes(plan.summing_warps, staged_weight_bytes(p)) <= device.max_shared_per_block,
          "grouped: segment sum's shared memory within the device's", p);
  if (plan.vectorized) {
    require(p.row_bytes() % kLaneSliceBytes == 0 && p.out_row_stride_bytes % kLaneSliceBytes == 0 &&
                p.src_row_stride_bytes % kLaneSliceBytes == 0 && p.out_address % kLaneSliceBytes == 0 &&
                p.src_address % kLaneSliceBytes == 0,
            "grouped: 16-byte lane slices only on 16-byte aligned rows", p);
  }
  const uint64_t lane_elems = plan.vectorized ? kLaneSliceBytes / p.elem_bytes : 1;
  require(plan.summing_grid_y <= std::max<uint64_t>(1, ceil_div(p.cols, 32 * lane_elems)),
          "grouped: no CTA along y starts past the row", p);
  const KernelVariant& sum = kKernelVariants[plan.segment_sum_variant];
  const KernelVariant& combine = kKernelVariants[plan.combine_variant];
  require(sum.family == KernelFamily::group_segment_sum && combine.family == KernelFamily::group_combine &&
              sum.dtype == p.dtype && combine.dtype == p.dtype &&
              sum.vector_bytes == (plan.vectorized ? kLaneSliceBytes : p.elem_bytes),
          "grouped: the summing variants fit dtype and lanes", p);
  require(sum.reduce == p.reduce && sum.weighted == p.weighted && combine.reduce == p.reduce && !combine.weighted,
          "grouped: the summing variants compute the reduce, the sum's weighted where the rows are", p);
  require(kKernelVariants[plan.histogram_variant[0]].index_type == p.index_type &&
              kKernelVariants[plan.scatter_variant[0]].index_type == p.index_type,
          "grouped: the first pass reads the index as its type", p);

}

}  // namespace

void require(bool ok, const char* what, const Problem& p) {
  if (ok) return;
  std::fprintf(stderr,
               "address model violated: %s\n  dtype=%d index_type=%d path=%d grouping=%d out_rows=%llu "
               "src_rows=%llu cols=%llu out_stride_bytes=%llu src_stride_bytes=%llu out=0x%llx src=0x%llx "
               "index=0x%llx schedule=%d(%u,%u,%u,%u) reduce=%d include_self=%d weights=%d(0x%llx)\n",
               what, p.dtype, p.index_type, p.path, p.grouping, (unsigned long long)p.out_rows,
               (unsigned long long)p.src_rows, (unsigned long long)p.cols,
               (unsigned long long)p.out_row_stride_bytes, (unsigned long long)p.src_row_stride_bytes,
               (unsigned long long)p.out_address, (unsigned long long)p.src_address,
               (unsigned long long)p.index_address, p.has_schedule ? 1 : 0, p.schedule.chunk_bytes,
               p.schedule.stages, p.schedule.warps_per_cta, p.schedule.ctas_per_sm, p.reduce, p.include_self ? 1 : 0,
               p.weighted ? p.weights_dtype : -1, (unsigned long long)p.weights_address);
  std::abort();
}

void check_streaming_plan(const Problem& p, const DeviceLimits& device, const StreamingPlan& plan) {
  if (p.is_empty()) {
    require(plan.launches.empty(), "an empty problem launches nothing", p);
    return;
  }
  require(!p.needs_grouping(), "no streaming plan for a reduce that runs grouped only", p);
  require(!plan.launches.empty(), "a problem with rows launches", p);
  require(plan.variant < kKernelVariantCount && variant_matches(p, plan), "the variant fits path and dtypes", p);
  require(plan.threads_per_cta >= 32 && plan.threads_per_cta <= 1024, "threads per CTA within 32..1024", p);
  check_slices(p, device, plan);
  switch (plan.path) {
    case SCATTERPTX_PATH_TMA: check_tma(p, device, plan); break;
    case SCATTERPTX_PATH_RED: check_red(p, plan); break;
    case SCATTERPTX_PATH_PRIVATE: check_private(p, device, plan); break;
    default: require(false, "a planned path", p);
  }
  require(p.path == SCATTERPTX_PATH_AUTO || p.path == plan.path, "a forced path is kept", p);
}

void check_workspace_layout(const Problem& p, const GroupPlan& plan) {
  if (!plan.grouped()) return;
  if (p.is_empty()) {
    require(plan.workspace.bytes == 0, "an empty problem needs no workspace", p);
    return;
  }
  const GroupWorkspace& w = plan.workspace;
  const uint64_t m = p.src_rows;
  const int buffers = plan.passes > 1 ? 2 : 1;
  const uint64_t partial_bytes = product(p, {2, plan.segment_tiles, plan.partial_stride});
  std::vector<Region> regions{{"plan_error", w.plan_error, 8},
                              {"counts", w.counts, product(p, {4, kSortDigits, plan.sort_tiles})},
                              {"totals", w.totals, 4 * kSortDigits},
                              {"partials", w.partials, partial_bytes},
                              {"level_sums", w.level_sums, partial_bytes}};
  // Carried weights make each value a (position, weight bits) pair of u32s.
  const uint64_t value_bytes = plan.weights_in_sort ? 8 : 4;
  for (int b = 0; b < buffers; ++b) {
    regions.push_back({"keys", w.keys[b], product(p, {4, m})});
    regions.push_back({"rows", w.rows[b], product(p, {value_bytes, m})});
  }
  for (const Region& r : regions) {
    require(r.offset % kWorkspaceAlignment == 0, "workspace: regions 256-byte aligned", p);
    require(r.offset <= w.bytes && r.bytes <= w.bytes - r.offset, "workspace: every region inside it", p);
    for (const Region& other : regions) {
      if (&other == &r || r.bytes == 0 || other.bytes == 0) continue;
      require(r.offset + r.bytes <= other.offset || other.offset + other.bytes <= r.offset,
              "workspace: regions apart", p);
    }
  }
}

void check_group_plan(const Problem& p, const DeviceLimits& device, const GroupPlan& plan,
                      uint64_t workspace_address) {
  require(plan.grouped() || !p.needs_grouping() || p.is_empty() || p.grouping == SCATTERPTX_GROUPING_OFF,
          "a reduce that runs grouped only is grouped", p);
  if (!plan.grouped()) return;
  require(plan.mode == SCATTERPTX_MODE_SEGMENTED, "grouped means SEGMENTED", p);
  if (p.is_empty()) {  // a no-op in any mode: nothing launched, no workspace, no limits
    require(plan.passes == 0 && plan.sort_tiles == 0 && plan.segment_tiles == 0 && plan.workspace.bytes == 0,
            "an empty problem's plan launches nothing and needs no workspace", p);
    return;
  }
  require(p.src_rows <= kMaxGroupedRows && p.out_rows <= kMaxGroupedTargets, "keys and positions fit u32", p);
  const uint64_t m = p.src_rows;
  // The radix passes cover every bit of the largest key, out_rows.
  uint64_t key_reach = plan.first_shift + uint64_t{plan.passes} * kSortDigitBits;
  require(plan.passes >= 1 && plan.passes <= 4 && key_reach >= plan.key_bits && (p.out_rows >> plan.key_bits) == 0,
          "grouped: the passes cover the keys", p);
  require(plan.sort_tiles == ceil_div(m, kSortTileKeys), "grouped: sort tiles cover the positions", p);
  require(plan.segment_tiles == ceil_div(m, kSegmentTileRows), "grouped: segment tiles cover the positions", p);
  uint64_t reach = 1;
  for (uint32_t level = 0; level < plan.combine_levels; ++level) reach *= kCombineFanIn;
  require(reach >= plan.segment_tiles, "grouped: the combine levels reach every tile", p);
  const uint64_t acc = p.dtype == SCATTERPTX_F64 ? 8 : 4;
  require(plan.partial_stride >= p.cols * acc && plan.partial_stride % 16 == 0,
          "grouped: a partial row holds a row of sums, 16-byte aligned", p);
  check_workspace_layout(p, plan);
  require(workspace_address % kWorkspaceAlignment == 0, "workspace: 256-byte aligned", p);
  const int buffers = plan.passes > 1 ? 2 : 1;
  // Which key and row buffers the passes and the sums use (group_launch.cpp):
  // every one must be a buffer the layout made.
  for (uint32_t pass = 0; pass < plan.passes; ++pass) {
    require(static_cast<int>(pass % 2) < buffers, "workspace: a pass writes a buffer that exists", p);
  }
  require(static_cast<int>(plan.final_buffer()) < buffers, "workspace: the sums read a buffer that exists", p);
  check_group_grids(p, device, plan);
  // The first pass reads the whole index; the sums read src rows at grouped
  // positions below M and write out rows below out_rows.
  require(index_tensor(p).contains(Range{p.index_address, m * p.index_bytes}), "grouped: the index read", p);
  // Weighted: the first pass (carrying them) or the sums read weights[position]
  // for positions below M. Carried weights move in the pairs of the rows
  // buffers, whose places check_workspace_layout checks; the scatter kernel
  // moves 2- or 4-byte weights only.
  require(weights_tensor(p).contains(Range{p.weights_address, p.weighted ? m * p.weight_bytes() : 0}),
          "grouped: the weights read", p);
  require(!plan.weights_in_sort || (p.weighted && (p.weight_bytes() == 2 || p.weight_bytes() == 4)),
          "grouped: the sort carries only 2- or 4-byte weights", p);
  const Range last_out_row{p.out_address + (p.out_rows - 1) * p.out_row_stride_bytes, p.row_bytes()};
  require(out_tensor(p).contains(last_out_row), "grouped: out row out_rows - 1 lies inside out", p);
  const Range last_src_row{p.src_address + (m - 1) * p.src_row_stride_bytes, p.row_bytes()};
  require(src_tensor(p).contains(last_src_row), "grouped: src row M - 1 lies inside src", p);
}

}  // namespace scatterptx::fuzz

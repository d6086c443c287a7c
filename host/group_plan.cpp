#include "group_plan.hpp"

#include <algorithm>

#include "errors.hpp"
#include "heuristics.hpp"

namespace scatterptx::detail {
namespace {

constexpr uint64_t kMaxGridY = 65535;  // CUDA's limit on gridDim.y

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Workspace sizes: one past 2^64 bytes is refused, never wrapped (validation
// bounds the rows' bytes, but f16 and bf16 rows sum in f32, twice as wide).
uint64_t checked_workspace(bool overflowed, uint64_t value) {
  if (overflowed) invalid_argument("grouping this problem needs a workspace of more than 2^64 bytes");
  return value;
}
uint64_t workspace_product(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  const bool past = __builtin_mul_overflow(a, b, &product);
  return checked_workspace(past, product);
}
uint64_t align_up(uint64_t value, uint64_t alignment) { return ceil_div(value, alignment) * alignment; }

uint64_t acc_bytes(scatterptx_dtype dtype) { return dtype == SCATTERPTX_F64 ? 8 : 4; }

bool vector_aligned(const Problem& p) {
  return p.row_bytes() % kLaneSliceBytes == 0 && p.out_row_stride_bytes % kLaneSliceBytes == 0 &&
         p.src_row_stride_bytes % kLaneSliceBytes == 0 && p.out_address % kLaneSliceBytes == 0 &&
         p.src_address % kLaneSliceBytes == 0;
}

uint32_t bit_width(uint64_t value) {
  uint32_t bits = 0;
  while (value != 0) {
    ++bits;
    value >>= 1;
  }
  return bits;
}

// Why AUTO keeps streaming, or "" for SEGMENTED (docs/tuning.md#grouped-auto).
std::string auto_reason(const Problem& p) {
  if (!segmented_ineligibility(p).empty()) return "segmented ineligible: " + segmented_ineligibility(p);
  if (p.row_bytes() < heuristics::grouped::kSegmentedMinRowBytes) {
    return "rows under " + std::to_string(heuristics::grouped::kSegmentedMinRowBytes) + " bytes";
  }
  if (p.src_rows < heuristics::grouped::kSegmentedMinRows) {
    return "fewer than " + std::to_string(heuristics::grouped::kSegmentedMinRows) + " source rows";
  }
  if (!vector_aligned(p)) return "rows, strides or pointers not 16-byte aligned";
  const bool out_in_l2 = p.out_rows * p.row_bytes() <= heuristics::grouped::kL2ResidentOutBytes;
  if (out_in_l2 && p.src_rows <= heuristics::grouped::kHotRowsPerTarget * p.out_rows) {
    return "out fits in L2 and targets are not hot";
  }
  return "";
}

GroupWorkspace layout_workspace(const GroupPlan& plan, uint64_t rows) {
  GroupWorkspace w;
  uint64_t at = 0;
  auto take = [&](uint64_t bytes) {
    const uint64_t offset = at;
    uint64_t end = 0;
    const bool past = __builtin_add_overflow(at, bytes, &end) || end > UINT64_MAX - (kWorkspaceAlignment - 1);
    at = align_up(checked_workspace(past, end), kWorkspaceAlignment);
    return offset;
  };
  // One pass needs one output buffer; several ping-pong between two.
  const int buffers = plan.passes > 1 ? 2 : 1;
  w.plan_error = take(8);
  static_assert(kWorkspaceAlignment >= 12, "the order flag shares plan_error's slot");
  w.order_flag = w.plan_error + 8;
  for (int b = 0; b < buffers; ++b) w.keys[b] = take(workspace_product(4, rows));
  // Carried weights ride beside the positions: (position, weight bits) pairs.
  const uint64_t value_bytes = plan.weights_in_sort ? 8 : 4;
  for (int b = 0; b < buffers; ++b) w.rows[b] = take(workspace_product(value_bytes, rows));
  w.counts = take(workspace_product(4 * kSortDigits, plan.sort_tiles));
  w.totals = take(4 * kSortDigits);
  if (plan.mode == SCATTERPTX_MODE_SEGMENTED) {
    const uint64_t partial_bytes = workspace_product(2 * plan.segment_tiles, plan.partial_stride);
    w.partials = take(partial_bytes);
    w.level_sums = take(partial_bytes);
  }
  w.bytes = at;
  return w;
}

}  // namespace

std::string segmented_ineligibility(const Problem& p) {
  if (p.src_rows > kMaxGroupedRows) return "src_rows above 2^32 - 1 (source positions are u32)";
  if (p.out_rows > kMaxGroupedTargets) return "out_rows above 2^32 - 2 (keys are u32)";
  return "";
}

GroupOptions validate_group_options(const scatterptx_group_options* options, const Problem& p) {
  GroupOptions o;
  if (options != nullptr) {
    if (options->mode == SCATTERPTX_MODE_BUCKETED) {
      invalid_argument("options->mode = SCATTERPTX_MODE_BUCKETED is no longer supported: it was slower than "
                       "SCATTERPTX_MODE_SEGMENTED on every measured shape; use SEGMENTED or AUTO");
    }
    if (options->mode != SCATTERPTX_MODE_AUTO && options->mode != SCATTERPTX_MODE_STREAMING &&
        options->mode != SCATTERPTX_MODE_SEGMENTED) {
      invalid_argument("options->mode = " + std::to_string(static_cast<int>(options->mode)) +
                       " is not a scatterptx_mode");
    }
    if (options->warps_per_cta > 32) {
      invalid_argument("options->warps_per_cta = " + std::to_string(options->warps_per_cta) +
                       " is above 32 (a CTA has at most 1024 threads)");
    }
    if (options->warps_per_cta > max_summing_warps(p)) {
      invalid_argument("options->warps_per_cta = " + std::to_string(options->warps_per_cta) + " is above " +
                       std::to_string(max_summing_warps(p)) +
                       " for weighted f64 rows (each warp stages 256 weights of 8 bytes in shared memory)");
    }
    o.mode = options->mode;
    o.deterministic = options->deterministic != 0;
    o.warps_per_cta = options->warps_per_cta;
  }
  if (o.deterministic && o.mode == SCATTERPTX_MODE_STREAMING) {
    invalid_argument("deterministic results need grouping: the streaming paths add with atomics; "
                     "use SCATTERPTX_MODE_SEGMENTED or AUTO");
  }
  if (p.needs_grouping() && o.mode == SCATTERPTX_MODE_STREAMING) {
    invalid_argument(std::string("options->mode = SCATTERPTX_MODE_STREAMING, but reduce = ") + reduce_name(p.reduce) +
                     (p.include_self ? "" : " with include_self = 0") +
                     " runs grouped only (the streaming paths add atomically); use SCATTERPTX_MODE_SEGMENTED or AUTO");
  }
  const bool grouped = o.mode == SCATTERPTX_MODE_SEGMENTED || o.deterministic || p.needs_grouping();
  if (grouped || o.mode == SCATTERPTX_MODE_AUTO) {
    // In AUTO the streaming fallback uses the planner's own path and schedule.
    if (p.path != SCATTERPTX_PATH_AUTO) {
      invalid_argument("args->path forces a streaming path; it needs options->mode = SCATTERPTX_MODE_STREAMING");
    }
    if (p.has_schedule) {
      invalid_argument("args->schedule tunes a streaming path; it needs options->mode = SCATTERPTX_MODE_STREAMING");
    }
  }
  if (grouped && !p.is_empty()) {  // an empty problem is a no-op in any mode
    const std::string why = segmented_ineligibility(p);
    if (!why.empty()) {
      invalid_argument(std::string(p.needs_grouping() ? "this reduce runs grouped only, and " : "") +
                       "segmented mode cannot take this problem: " + why);
    }
  }
  return o;
}

GroupPlan make_group_plan(const Problem& p, const GroupOptions& o, const DeviceLimits* device) {
  GroupPlan plan;
  plan.deterministic = o.deterministic;
  plan.reduce = reduce_description(p);
  if (o.mode == SCATTERPTX_MODE_SEGMENTED || o.deterministic) {
    plan.mode = SCATTERPTX_MODE_SEGMENTED;
    plan.why_mode = o.deterministic ? "deterministic" : "forced";
  } else if (p.needs_grouping()) {
    // Only the grouped kernels write each reached row once; the default call
    // plans without validate_group_options, so the limits are checked here.
    const std::string why = p.is_empty() ? "" : segmented_ineligibility(p);
    if (!why.empty()) {
      invalid_argument(std::string("reduce = ") + reduce_name(p.reduce) + (p.include_self ? "" : ", include_self = 0") +
                       " runs grouped only, and segmented mode cannot take this problem: " + why);
    }
    plan.mode = SCATTERPTX_MODE_SEGMENTED;
    plan.why_mode = std::string(p.reduce != SCATTERPTX_REDUCE_SUM ? reduce_name(p.reduce) : "include_self=0") +
                    " runs grouped only";
  } else if (o.mode == SCATTERPTX_MODE_STREAMING) {
    plan.mode = o.mode;
    plan.why_mode = "forced";
  } else {
    std::string why = auto_reason(p);
    // Few targets: the privatised path sums on chip without a sort.
    if (why.empty() && device != nullptr && make_plan(p, *device).path == SCATTERPTX_PATH_PRIVATE) {
      why = "few targets: the privatised path";
    }
    plan.mode = why.empty() ? SCATTERPTX_MODE_SEGMENTED : SCATTERPTX_MODE_STREAMING;
    plan.why_mode = why.empty() ? "long rows, out beyond L2 or hot targets" : why;
  }
  // An empty problem reads and writes nothing: no kernels, no workspace.
  if (plan.mode == SCATTERPTX_MODE_STREAMING || p.is_empty()) return plan;

  const uint64_t m = p.src_rows;
  plan.key_bits = bit_width(p.out_rows);  // the largest key is out_rows itself
  plan.sort_tiles = ceil_div(m, kSortTileKeys);
  plan.histogram_variant[0] = find_variant(KernelFamily::group_histogram_index, SCATTERPTX_F32, p.index_type, 0);
  plan.histogram_variant[1] = find_variant(KernelFamily::group_histogram_keys, SCATTERPTX_F32,
                                           SCATTERPTX_INDEX_INT32, 0);
  plan.scatter_variant[0] = find_variant(KernelFamily::group_scatter_index, SCATTERPTX_F32, p.index_type, 0);
  plan.scatter_variant[1] = find_variant(KernelFamily::group_scatter_keys, SCATTERPTX_F32,
                                         SCATTERPTX_INDEX_INT32, 0);
  plan.scan_variant = find_variant(KernelFamily::group_scan, SCATTERPTX_F32, SCATTERPTX_INDEX_INT32, 0);
  plan.vectorized = vector_aligned(p);
  plan.passes = std::max<uint32_t>(1, (plan.key_bits + kSortDigitBits - 1) / kSortDigitBits);
  plan.segment_tiles = ceil_div(m, kSegmentTileRows);
  uint64_t reach = 1;  // the longest run (in tiles) the levels so far cover
  while (reach < plan.segment_tiles) {
    reach *= kCombineFanIn;
    ++plan.combine_levels;
  }
  plan.partial_stride = align_up(p.cols * acc_bytes(p.dtype), kLaneSliceBytes);
  plan.summing_warps = o.warps_per_cta != 0 ? o.warps_per_cta : heuristics::grouped::kSummingWarps;
  plan.summing_grid_x = ceil_div(plan.segment_tiles, plan.summing_warps);
  plan.combine_grid_x = ceil_div(plan.segment_tiles, uint64_t{kCombineTilesPerWarp} * plan.summing_warps);
  const uint64_t lane_elems = plan.vectorized ? kLaneSliceBytes / p.elem_bytes : 1;
  const uint64_t chunks = std::max<uint64_t>(1, ceil_div(p.cols, 32 * lane_elems));
  // Spread along the rows up to the warps the summing grid aims for
  // (docs/tuning.md#grouped-summing-grid).
  const uint64_t want_y =
      ceil_div(heuristics::grouped::kTargetSummingWarps, std::max<uint64_t>(1, plan.segment_tiles));
  plan.summing_grid_y = static_cast<uint32_t>(std::min<uint64_t>({chunks, want_y, kMaxGridY}));

  const unsigned slice = plan.vectorized ? kLaneSliceBytes : static_cast<unsigned>(p.elem_bytes);
  plan.segment_sum_variant =
      find_variant(KernelFamily::group_segment_sum, p.dtype, SCATTERPTX_INDEX_INT32, slice, p.reduce, p.weighted);
  // Weighted partial sums are sums: the plain combine adds them.
  plan.combine_variant = find_variant(KernelFamily::group_combine, p.dtype, SCATTERPTX_INDEX_INT32, slice, p.reduce);
  plan.weights_in_sort = p.weighted && !o.weights_read_at_execute && (p.weight_bytes() == 2 || p.weight_bytes() == 4);
  if (device != nullptr) {
    // Refused here, before anything is enqueued, not by the launch of the sums.
    for (const std::size_t variant : {plan.segment_sum_variant, plan.combine_variant}) {
      const uint32_t most = device->max_threads_per_cta[variant];
      if (most != 0 && plan.summing_warps * 32 > most) {
        invalid_argument("options->warps_per_cta = " + std::to_string(plan.summing_warps) + ": the " +
                         kKernelVariants[variant].name + " kernel's registers allow at most " +
                         std::to_string(most / 32) + " warps per CTA on this device");
      }
    }
  }
  plan.workspace = layout_workspace(plan, m);
  return plan;
}

GroupPlan plan_default_call(const Problem& p, const DeviceLimits& device) {
  validate_default_call(p);  // a reduce that runs grouped only, with grouping off
  GroupPlan streaming;
  if (p.grouping == SCATTERPTX_GROUPING_OFF) {
    streaming.why_mode = "grouping off";
  } else if (p.path != SCATTERPTX_PATH_AUTO) {
    streaming.why_mode = "path forced";
  } else if (p.has_schedule) {
    streaming.why_mode = "schedule override";
  } else {
    GroupPlan plan = make_group_plan(p, GroupOptions{}, &device);
    // A sorted f32 index with short runs streams faster than it sorts and
    // groups; f64 groups faster, f16 and bf16 group for the f32 sums
    // (docs/tuning.md#sorted-index).
    plan.streams_when_sorted = plan.grouped() && p.dtype == SCATTERPTX_F32 && !p.needs_grouping();
    return plan;
  }
  return streaming;
}

std::string GroupPlan::describe() const {
  // std::to_string, not a stream: see StreamingPlan::describe.
  auto field = [](const char* key, uint64_t value) { return std::string(" ") + key + "=" + std::to_string(value); };
  const char* name = mode == SCATTERPTX_MODE_SEGMENTED ? "segmented" : "streaming";
  std::string out = std::string("mode=") + name + field("deterministic", deterministic ? 1 : 0) + " why=\"" +
                    why_mode + "\"";
  if (mode == SCATTERPTX_MODE_SEGMENTED) {
    out += std::string(" slices=") + (vectorized ? "vec16" : "scalar") + field("key_bits", key_bits) +
           field("passes", passes) + field("sort_tiles", sort_tiles) + field("segment_tiles", segment_tiles) +
           field("combine_levels", combine_levels) + field("summing_warps", summing_warps) +
           field("grid", summing_grid_x) + "x" + std::to_string(summing_grid_y) +
           field("workspace_bytes", workspace.bytes) + field("streams_when_sorted", streams_when_sorted ? 1 : 0);
    if (weights_in_sort) out += field("weights_in_sort", 1);
  }
  return out + reduce;
}

}  // namespace scatterptx::detail

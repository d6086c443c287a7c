// Host-only: grouped execution's planner (mode, radix passes, summing grid,
// workspace layout) is a pure function of the problem and the options.
#include <gtest/gtest.h>

#include <string>

#include "errors.hpp"
#include "group_launch.hpp"
#include "group_plan.hpp"
#include "host_problem.hpp"
#include "plan_math.hpp"

namespace {

using namespace scatterptx::detail;
using scatterptx_test::contiguous;
using scatterptx_test::weighted;

// An H200 as the planner sees it, red occupancy aside.
const DeviceLimits kDevice{};

GroupOptions mode(scatterptx_mode m, bool deterministic = false) {
  GroupOptions o;
  o.mode = m;
  o.deterministic = deterministic;
  return o;
}

TEST(GroupPlan, AutoGroupsTheUniformScatterIntoAnOutBeyondL2) {
  const GroupPlan plan = make_group_plan(contiguous(SCATTERPTX_F32, 7770000, 1720000, 128),
                                         mode(SCATTERPTX_MODE_AUTO));
  EXPECT_EQ(plan.mode, SCATTERPTX_MODE_SEGMENTED) << plan.describe();
  EXPECT_TRUE(plan.vectorized);
  EXPECT_EQ(plan.key_bits, 21u);  // the largest key is out_rows = 1720000 < 2^21
  EXPECT_EQ(plan.passes, 3u);
  EXPECT_EQ(plan.sort_tiles, (7770000u + kSortTileKeys - 1) / kSortTileKeys);
  EXPECT_EQ(plan.segment_tiles, (7770000u + 255) / 256);
  EXPECT_EQ(plan.combine_levels, 3u);  // 32^2 < 30352 tiles <= 32^3
  EXPECT_EQ(plan.partial_stride, 512u);
}

TEST(GroupPlan, AutoGroupsHotTargetsEvenWhenOutFitsInL2) {
  // few_targets: 4M rows onto 100 rows of 1 KB, 40000 rows per target.
  const GroupPlan plan = make_group_plan(contiguous(SCATTERPTX_F32, 4000000, 100, 256), mode(SCATTERPTX_MODE_AUTO));
  EXPECT_EQ(plan.mode, SCATTERPTX_MODE_SEGMENTED) << plan.describe();
  EXPECT_EQ(plan.passes, 1u);  // keys 0..100 fit in one digit
}

TEST(GroupPlan, AutoWithTheDeviceLeavesFewTargetsToThePrivatisedPath) {
  // few_targets again: the privatised path sums them on chip without a sort.
  const Problem p = contiguous(SCATTERPTX_F32, 4000000, 100, 256);
  const GroupPlan plan = make_group_plan(p, mode(SCATTERPTX_MODE_AUTO), &kDevice);
  EXPECT_EQ(plan.mode, SCATTERPTX_MODE_STREAMING) << plan.describe();
  EXPECT_EQ(plan.why_mode, "few targets: the privatised path");
  ASSERT_EQ(make_plan(p, kDevice).path, SCATTERPTX_PATH_PRIVATE);
  // Forced SEGMENTED still groups, and the uniform scatter still groups in AUTO.
  EXPECT_EQ(make_group_plan(p, mode(SCATTERPTX_MODE_SEGMENTED), &kDevice).mode, SCATTERPTX_MODE_SEGMENTED);
  EXPECT_EQ(make_group_plan(contiguous(SCATTERPTX_F32, 7770000, 1720000, 128), mode(SCATTERPTX_MODE_AUTO), &kDevice).mode,
            SCATTERPTX_MODE_SEGMENTED);
}

TEST(GroupPlan, TheDefaultCallGroupsWhereGroupedAutoDoes) {
  const Problem uniform = contiguous(SCATTERPTX_F32, 7770000, 1720000, 128);
  const GroupPlan grouped = plan_default_call(uniform, kDevice);
  EXPECT_EQ(grouped.mode, SCATTERPTX_MODE_SEGMENTED) << grouped.describe();
  EXPECT_FALSE(grouped.deterministic);
  EXPECT_EQ(grouped.workspace.bytes, make_group_plan(uniform, mode(SCATTERPTX_MODE_SEGMENTED)).workspace.bytes);
  // Short rows, few targets and an L2-resident out stream, as in grouped AUTO.
  EXPECT_EQ(plan_default_call(contiguous(SCATTERPTX_F32, 4000000, 1000000, 8), kDevice).mode,
            SCATTERPTX_MODE_STREAMING);
  EXPECT_EQ(plan_default_call(contiguous(SCATTERPTX_F32, 4000000, 100, 256), kDevice).mode,
            SCATTERPTX_MODE_STREAMING);
  EXPECT_EQ(plan_default_call(contiguous(SCATTERPTX_F32, 400000, 10000, 128), kDevice).mode,
            SCATTERPTX_MODE_STREAMING);
}

TEST(GroupPlan, AnEmptyProblemOfAnyWidthPlansWithoutWrappingSizes) {
  // Validation checks sizes only where there are rows to add; an empty
  // problem of width 2^62 f32 once wrapped the grouped planner's row bytes.
  scatterptx_scatter_add_args args;
  scatterptx_scatter_add_args_init(&args);
  args.out_rows = 1000;
  args.cols = args.out_row_stride = args.src_row_stride = int64_t{1} << 62;
  args.dtype = SCATTERPTX_F32;
  const Problem empty = validate_arguments(&args);
  EXPECT_EQ(empty.cols, 0u);
  EXPECT_TRUE(empty.is_empty());
  EXPECT_EQ(plan_default_call(empty, kDevice).mode, SCATTERPTX_MODE_STREAMING);
  const GroupPlan forced = make_group_plan(empty, mode(SCATTERPTX_MODE_SEGMENTED));
  EXPECT_EQ(forced.partial_stride, 0u);
  EXPECT_EQ(forced.workspace.bytes, make_group_plan(contiguous(SCATTERPTX_F32, 0, 1000, 0),
                                                    mode(SCATTERPTX_MODE_SEGMENTED)).workspace.bytes);
}

TEST(GroupPlan, TheDefaultCallChecksTheOrderOfF32IndicesOnly) {
  for (scatterptx_dtype dtype : {SCATTERPTX_F32, SCATTERPTX_F64, SCATTERPTX_F16, SCATTERPTX_BF16}) {
    const bool wide = dtype == SCATTERPTX_F32;
    const GroupPlan plan = plan_default_call(contiguous(dtype, 7770000, 1720000, 256), kDevice);
    ASSERT_EQ(plan.mode, SCATTERPTX_MODE_SEGMENTED) << plan.describe();
    EXPECT_EQ(plan.streams_when_sorted, wide) << plan.describe();
    EXPECT_NE(plan.describe().find(std::string("streams_when_sorted=") + (wide ? "1" : "0")), std::string::npos);
  }
  // Grouped AUTO and plans never check it; a streaming choice has nothing to check.
  EXPECT_FALSE(make_group_plan(contiguous(SCATTERPTX_F32, 7770000, 1720000, 128), mode(SCATTERPTX_MODE_AUTO),
                               &kDevice).streams_when_sorted);
  EXPECT_FALSE(plan_default_call(contiguous(SCATTERPTX_F32, 4000000, 1000000, 8), kDevice).streams_when_sorted);
}

TEST(GroupPlan, TheOrderFlagSitsInThePlanErrorSlotsPadding) {
  const GroupPlan plan = plan_default_call(contiguous(SCATTERPTX_F32, 7770000, 1720000, 128), kDevice);
  EXPECT_EQ(plan.workspace.order_flag, plan.workspace.plan_error + 8);
  EXPECT_LE(plan.workspace.order_flag + 4, plan.workspace.keys[0]);
}

TEST(GroupPlan, TheDefaultCallStreamsWhenThePathOrScheduleIsForcedOrGroupingIsOff) {
  const Problem uniform = contiguous(SCATTERPTX_F32, 7770000, 1720000, 128);
  Problem forced = uniform;
  forced.path = SCATTERPTX_PATH_RED;
  EXPECT_EQ(plan_default_call(forced, kDevice).mode, SCATTERPTX_MODE_STREAMING);
  EXPECT_EQ(plan_default_call(forced, kDevice).why_mode, "path forced");
  Problem scheduled = uniform;
  scheduled.has_schedule = true;
  EXPECT_EQ(plan_default_call(scheduled, kDevice).why_mode, "schedule override");
  Problem off = uniform;
  off.grouping = SCATTERPTX_GROUPING_OFF;
  EXPECT_EQ(plan_default_call(off, kDevice).mode, SCATTERPTX_MODE_STREAMING);
  EXPECT_EQ(plan_default_call(off, kDevice).why_mode, "grouping off");
  Problem strict = uniform;
  strict.grouping = SCATTERPTX_GROUPING_NO_FALLBACK;
  EXPECT_EQ(plan_default_call(strict, kDevice).mode, SCATTERPTX_MODE_SEGMENTED);
}

TEST(GroupPlan, AutoStreamsShortRowsUnalignedRowsAndAnL2ResidentOut) {
  EXPECT_EQ(make_group_plan(contiguous(SCATTERPTX_BF16, 4000000, 1000000, 16), mode(SCATTERPTX_MODE_AUTO)).mode,
            SCATTERPTX_MODE_STREAMING);
  Problem odd = contiguous(SCATTERPTX_F32, 4000000, 1000000, 131);
  EXPECT_EQ(make_group_plan(odd, mode(SCATTERPTX_MODE_AUTO)).mode, SCATTERPTX_MODE_STREAMING);
  // 100 rows of 2.5 MB: too few rows for the summing grid.
  EXPECT_EQ(make_group_plan(contiguous(SCATTERPTX_F32, 100, 100, 640000), mode(SCATTERPTX_MODE_AUTO)).mode,
            SCATTERPTX_MODE_STREAMING);
  // 10000 x 512 B of out stays in L2 and 40 duplicates per target are not hot.
  EXPECT_EQ(make_group_plan(contiguous(SCATTERPTX_F32, 400000, 10000, 128), mode(SCATTERPTX_MODE_AUTO)).mode,
            SCATTERPTX_MODE_STREAMING);
}

TEST(GroupPlan, ForcedSegmentedTakesUnalignedRowsWithScalarSlices) {
  Problem odd = contiguous(SCATTERPTX_F16, 1000, 50, 37);
  const GroupPlan plan = make_group_plan(odd, mode(SCATTERPTX_MODE_SEGMENTED));
  EXPECT_EQ(plan.mode, SCATTERPTX_MODE_SEGMENTED);
  EXPECT_FALSE(plan.vectorized);
  EXPECT_EQ(kKernelVariants[plan.segment_sum_variant].family, KernelFamily::group_segment_sum);
  EXPECT_EQ(kKernelVariants[plan.segment_sum_variant].vector_bytes, 2u);
  EXPECT_EQ(kKernelVariants[plan.segment_sum_variant].dtype, SCATTERPTX_F16);
  EXPECT_EQ(plan.partial_stride, 160u);  // 37 f32 accumulators, rounded up to 16 bytes
}

TEST(GroupPlan, VariantsMatchDtypeAndIndexType) {
  Problem p = contiguous(SCATTERPTX_BF16, 100000, 70000, 128);
  p.index_type = SCATTERPTX_INDEX_INT32;
  p.index_bytes = 4;
  const GroupPlan plan = make_group_plan(p, mode(SCATTERPTX_MODE_SEGMENTED));
  EXPECT_EQ(kKernelVariants[plan.histogram_variant[0]].family, KernelFamily::group_histogram_index);
  EXPECT_EQ(kKernelVariants[plan.histogram_variant[0]].index_type, SCATTERPTX_INDEX_INT32);
  EXPECT_EQ(kKernelVariants[plan.histogram_variant[1]].family, KernelFamily::group_histogram_keys);
  EXPECT_EQ(kKernelVariants[plan.scatter_variant[0]].family, KernelFamily::group_scatter_index);
  EXPECT_EQ(kKernelVariants[plan.scatter_variant[1]].family, KernelFamily::group_scatter_keys);
  EXPECT_EQ(kKernelVariants[plan.combine_variant].dtype, SCATTERPTX_BF16);
  EXPECT_EQ(kKernelVariants[plan.combine_variant].vector_bytes, 16u);
  EXPECT_EQ(plan.passes, 3u);  // 70000 needs 17 bits
  EXPECT_EQ(plan.final_buffer(), 0u);
}

TEST(GroupPlan, CombineLevelsCoverTheLongestPossibleRun) {
  EXPECT_EQ(make_group_plan(contiguous(SCATTERPTX_F32, 256, 5, 64), mode(SCATTERPTX_MODE_SEGMENTED)).combine_levels,
            0u);  // one tile: nothing crosses a boundary
  EXPECT_EQ(make_group_plan(contiguous(SCATTERPTX_F32, 257, 5, 64), mode(SCATTERPTX_MODE_SEGMENTED)).combine_levels,
            1u);
  EXPECT_EQ(
      make_group_plan(contiguous(SCATTERPTX_F32, 256 * 32, 5, 64), mode(SCATTERPTX_MODE_SEGMENTED)).combine_levels,
      1u);
  EXPECT_EQ(make_group_plan(contiguous(SCATTERPTX_F32, 256 * 32 + 1, 5, 64), mode(SCATTERPTX_MODE_SEGMENTED))
                .combine_levels,
            2u);
}

TEST(GroupPlan, FewLongRowsSpreadAlongY) {
  const GroupPlan plan = make_group_plan(contiguous(SCATTERPTX_F32, 100, 10, 640000), mode(SCATTERPTX_MODE_SEGMENTED));
  EXPECT_EQ(plan.summing_grid_x, 1u);
  EXPECT_EQ(plan.summing_grid_y, 4096u);  // 5000 chunks of 128 columns, 4096 warps wanted
}

TEST(GroupPlan, WorkspaceHoldsEveryBufferAligned) {
  const GroupPlan plan = make_group_plan(contiguous(SCATTERPTX_F64, 123457, 999, 10), mode(SCATTERPTX_MODE_SEGMENTED));
  const GroupWorkspace& w = plan.workspace;
  const uint64_t offsets[] = {w.plan_error, w.keys[0], w.keys[1], w.rows[0], w.rows[1],
                              w.counts,     w.totals,  w.partials, w.level_sums};
  uint64_t previous_end = 0;
  for (uint64_t offset : offsets) {
    EXPECT_EQ(offset % kWorkspaceAlignment, 0u);
    EXPECT_GE(offset, previous_end);
    previous_end = offset + 1;
  }
  EXPECT_GE(w.keys[1] - w.keys[0], 4u * 123457);
  EXPECT_GE(w.level_sums - w.partials, 2 * plan.segment_tiles * plan.partial_stride);
  EXPECT_GE(w.bytes, w.level_sums + 2 * plan.segment_tiles * plan.partial_stride);
  EXPECT_EQ(plan.partial_stride, 80u);  // 10 f64 accumulators
}

TEST(GroupPlan, WarpsPerCtaChangesOnlyTheGrid) {
  GroupOptions four = mode(SCATTERPTX_MODE_SEGMENTED);
  four.warps_per_cta = 4;
  const Problem p = contiguous(SCATTERPTX_F32, 1000000, 50000, 128);
  const GroupPlan a = make_group_plan(p, four);
  const GroupPlan b = make_group_plan(p, mode(SCATTERPTX_MODE_SEGMENTED));
  EXPECT_EQ(a.summing_warps, 4u);
  EXPECT_EQ(b.summing_warps, 8u);
  EXPECT_EQ(a.summing_grid_x, (a.segment_tiles + 3) / 4);
  EXPECT_EQ(b.summing_grid_x, (b.segment_tiles + 7) / 8);
  EXPECT_EQ(a.segment_tiles, b.segment_tiles);
  EXPECT_EQ(a.workspace.bytes, b.workspace.bytes);
}

TEST(GroupPlan, WarpsTheSummingKernelsRegistersDoNotAllowAreRefusedOnTheDevice) {
  // A summing variant of 66 registers a thread fits 28 warps a CTA, not the
  // 32 the options allow: the device's plan refuses more, before a launch.
  const Problem p = contiguous(SCATTERPTX_F64, 100000, 1000, 4);
  GroupOptions o = mode(SCATTERPTX_MODE_SEGMENTED);
  o.warps_per_cta = 29;
  const GroupPlan sized = make_group_plan(p, o);  // without the device no such limit is known
  for (const std::size_t variant : {sized.segment_sum_variant, sized.combine_variant}) {
    SCOPED_TRACE(kKernelVariants[variant].name);
    DeviceLimits device{};
    device.max_threads_per_cta[variant] = 896;
    try {
      (void)make_group_plan(p, o, &device);
      ADD_FAILURE() << "29 warps planned where 28 fit";
    } catch (const Failure& failure) {
      EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(failure.what()).find("at most 28 warps"), std::string::npos) << failure.what();
    }
    GroupOptions fitting = o;
    fitting.warps_per_cta = 28;
    EXPECT_EQ(make_group_plan(p, fitting, &device).summing_warps, 28u);
  }
}

scatterptx_status options_status(const scatterptx_group_options& options, const Problem& p) {
  try {
    validate_group_options(&options, p);
    return SCATTERPTX_SUCCESS;
  } catch (const Failure& failure) {
    return failure.status();
  }
}

TEST(GroupPlan, OptionsAreChecked) {
  const Problem p = contiguous(SCATTERPTX_F32, 1000, 10, 128);
  scatterptx_group_options o{};
  EXPECT_EQ(options_status(o, p), SCATTERPTX_SUCCESS);
  o.mode = static_cast<scatterptx_mode>(7);
  EXPECT_EQ(options_status(o, p), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  o.mode = SCATTERPTX_MODE_STREAMING;
  o.deterministic = 1;
  EXPECT_EQ(options_status(o, p), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  o.mode = SCATTERPTX_MODE_AUTO;
  EXPECT_EQ(options_status(o, p), SCATTERPTX_SUCCESS);
  EXPECT_EQ(make_group_plan(p, validate_group_options(&o, p)).mode, SCATTERPTX_MODE_SEGMENTED);
  o.warps_per_cta = 33;
  EXPECT_EQ(options_status(o, p), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  o.warps_per_cta = 0;
  Problem forced = p;
  forced.path = SCATTERPTX_PATH_TMA;
  EXPECT_EQ(options_status(o, forced), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  o.mode = SCATTERPTX_MODE_STREAMING;
  o.deterministic = 0;
  EXPECT_EQ(options_status(o, forced), SCATTERPTX_SUCCESS);
  Problem huge = p;
  huge.out_rows = uint64_t{1} << 33;
  o.mode = SCATTERPTX_MODE_SEGMENTED;
  EXPECT_EQ(options_status(o, huge), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  o.mode = SCATTERPTX_MODE_AUTO;
  EXPECT_EQ(options_status(o, huge), SCATTERPTX_SUCCESS);
  EXPECT_EQ(make_group_plan(huge, validate_group_options(&o, huge)).mode, SCATTERPTX_MODE_STREAMING);
}

// Weighted rows stage their weights beside the tile's keys and rows; the
// summing CTA must fit the least shared memory an sm_90+ GPU offers a block.
TEST(GroupPlan, WeightedF64RowsTakeAtMost24SummingWarps) {
  Problem p = contiguous(SCATTERPTX_F64, 1000, 10, 64);
  scatterptx_group_options o{};
  o.mode = SCATTERPTX_MODE_SEGMENTED;
  o.warps_per_cta = 32;
  EXPECT_EQ(options_status(o, p), SCATTERPTX_SUCCESS) << "unweighted: 32 warps fit";
  p.weighted = true;
  p.weights_dtype = SCATTERPTX_F64;
  EXPECT_EQ(max_summing_warps(p), 24u);
  EXPECT_EQ(options_status(o, p), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  o.warps_per_cta = 24;
  EXPECT_EQ(options_status(o, p), SCATTERPTX_SUCCESS);
  const GroupPlan plan = make_group_plan(p, validate_group_options(&o, p));
  EXPECT_LE(segment_sum_shared_bytes(plan.summing_warps, staged_weight_bytes(p)), kLeastSharedPerBlock);
  Problem f32 = contiguous(SCATTERPTX_F32, 1000, 10, 64);
  f32.weighted = true;
  EXPECT_EQ(max_summing_warps(f32), 32u) << "f32 weights: 12 bytes a position fit 32 warps";
  EXPECT_EQ(segment_sum_shared_bytes(8, staged_weight_bytes(f32)), 8u * 256 * 12);
}

TEST(GroupPlan, RemovedBucketedModeIsRefusedWhateverTheProblem) {
  scatterptx_group_options o{};
  o.mode = SCATTERPTX_MODE_BUCKETED;
  EXPECT_EQ(options_status(o, contiguous(SCATTERPTX_F32, 1000, 10, 128)), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(options_status(o, contiguous(SCATTERPTX_F32, 0, 10, 128)), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  o.deterministic = 1;
  EXPECT_EQ(options_status(o, contiguous(SCATTERPTX_F32, 1000, 10, 128)), SCATTERPTX_ERROR_INVALID_ARGUMENT);
}

}  // namespace


namespace {

Problem reducing(Problem p, scatterptx_reduce reduce, bool include_self = true) {
  p.reduce = reduce;
  p.include_self = include_self;
  return p;
}

std::string variant_name(std::size_t variant) { return kKernelVariants[variant].name; }

// Every reduce but a sum with include_self writes each reached row once:
// only the grouped kernels do, so AUTO groups it even where a sum streams.
TEST(GroupPlan, ReducesThatWriteOnceAlwaysGroup) {
  const Problem short_rows = contiguous(SCATTERPTX_F32, 1000, 100, 8);  // a sum streams this
  ASSERT_EQ(make_group_plan(short_rows, mode(SCATTERPTX_MODE_AUTO), &kDevice).mode, SCATTERPTX_MODE_STREAMING);
  for (scatterptx_reduce r : {SCATTERPTX_REDUCE_MEAN, SCATTERPTX_REDUCE_AMAX, SCATTERPTX_REDUCE_AMIN}) {
    for (bool self : {true, false}) {
      const Problem p = reducing(short_rows, r, self);
      const GroupPlan plan = make_group_plan(p, mode(SCATTERPTX_MODE_AUTO), &kDevice);
      EXPECT_EQ(plan.mode, SCATTERPTX_MODE_SEGMENTED) << plan.describe();
      EXPECT_NE(plan.describe().find(std::string(" reduce=") + reduce_name(r)), std::string::npos) << plan.describe();
      EXPECT_EQ(plan.describe().find("include_self=0") != std::string::npos, !self) << plan.describe();
      EXPECT_EQ(plan_default_call(p, kDevice).mode, SCATTERPTX_MODE_SEGMENTED);
      EXPECT_FALSE(plan_default_call(p, kDevice).streams_when_sorted) << "a sorted index must not stream";
      EXPECT_GT(make_group_plan(p, mode(SCATTERPTX_MODE_AUTO)).workspace.bytes, 0u);
    }
  }
  const GroupPlan no_self = make_group_plan(reducing(short_rows, SCATTERPTX_REDUCE_SUM, false),
                                            mode(SCATTERPTX_MODE_AUTO), &kDevice);
  EXPECT_EQ(no_self.mode, SCATTERPTX_MODE_SEGMENTED) << no_self.describe();
  EXPECT_EQ(no_self.why_mode, "include_self=0 runs grouped only");
  // Few targets would take the privatised path as a sum; a mean groups.
  const Problem few_targets = reducing(contiguous(SCATTERPTX_F32, 4000000, 100, 256), SCATTERPTX_REDUCE_MEAN);
  EXPECT_EQ(make_group_plan(few_targets, mode(SCATTERPTX_MODE_AUTO), &kDevice).mode, SCATTERPTX_MODE_SEGMENTED);
}

TEST(GroupPlan, EachReduceTakesItsSummingVariants) {
  struct Expect {
    scatterptx_reduce reduce;
    const char* segment_sum;
    const char* combine;
  };
  const Expect cases[] = {
      {SCATTERPTX_REDUCE_SUM, "group_segment_sum_vec16_bf16", "group_combine_vec16_bf16"},
      {SCATTERPTX_REDUCE_MEAN, "group_segment_sum_vec16_bf16_mean", "group_combine_vec16_bf16_mean"},
      {SCATTERPTX_REDUCE_AMAX, "group_segment_sum_vec16_bf16_amax", "group_combine_vec16_bf16_amax"},
      {SCATTERPTX_REDUCE_AMIN, "group_segment_sum_vec16_bf16_amin", "group_combine_vec16_bf16_amin"},
  };
  for (const Expect& e : cases) {
    const GroupPlan plan =
        make_group_plan(reducing(contiguous(SCATTERPTX_BF16, 100000, 1000, 256), e.reduce), mode(SCATTERPTX_MODE_SEGMENTED));
    EXPECT_EQ(variant_name(plan.segment_sum_variant), e.segment_sum);
    EXPECT_EQ(variant_name(plan.combine_variant), e.combine);
  }
  // Weighted rows scale inside the sum; their partial sums combine as sums.
  for (scatterptx_dtype w : {SCATTERPTX_F32, SCATTERPTX_BF16}) {
    const Problem p = weighted(contiguous(SCATTERPTX_BF16, 100000, 1000, 256), w);
    const GroupPlan plan = make_group_plan(p, mode(SCATTERPTX_MODE_SEGMENTED));
    EXPECT_EQ(variant_name(plan.segment_sum_variant), "group_segment_sum_vec16_bf16_weighted");
    EXPECT_EQ(variant_name(plan.combine_variant), "group_combine_vec16_bf16");
    EXPECT_NE(plan.describe().find(std::string(" weights=") + scatterptx_dtype_name(w)), std::string::npos)
        << plan.describe();
  }
  Problem unaligned = reducing(contiguous(SCATTERPTX_F64, 100000, 1000, 3), SCATTERPTX_REDUCE_AMIN);
  const GroupPlan scalar = make_group_plan(unaligned, mode(SCATTERPTX_MODE_AUTO));
  EXPECT_EQ(variant_name(scalar.segment_sum_variant), "group_segment_sum_scalar_f64_amin");
  EXPECT_EQ(variant_name(scalar.combine_variant), "group_combine_scalar_f64_amin");
}

TEST(GroupPlan, TheDefaultCallGroupsWeightedFewTargetsAndStreamsWhatASumStreams) {
  // Few hot targets: a sum takes the privatised path, which cannot scale
  // rows, so a weighted sum groups; the weights change nothing else.
  const Problem few_targets = contiguous(SCATTERPTX_F32, 4000000, 100, 256);
  ASSERT_EQ(plan_default_call(few_targets, kDevice).mode, SCATTERPTX_MODE_STREAMING);
  const GroupPlan grouped = plan_default_call(weighted(few_targets, SCATTERPTX_F32), kDevice);
  EXPECT_EQ(grouped.mode, SCATTERPTX_MODE_SEGMENTED) << grouped.describe();
  EXPECT_EQ(variant_name(grouped.segment_sum_variant), "group_segment_sum_vec16_f32_weighted");
  // A sorted f32 index still runs the streaming plan (the weighted red path).
  EXPECT_TRUE(grouped.streams_when_sorted);
  const Problem uniform = contiguous(SCATTERPTX_BF16, 7770000, 1720000, 128);
  EXPECT_EQ(plan_default_call(weighted(uniform, SCATTERPTX_BF16), kDevice).mode, plan_default_call(uniform, kDevice).mode);
  const Problem short_rows = contiguous(SCATTERPTX_F16, 4000000, 1000000, 16);
  EXPECT_EQ(plan_default_call(weighted(short_rows, SCATTERPTX_F16), kDevice).mode, SCATTERPTX_MODE_STREAMING);
  // A forced path or grouping off streams the weighted rows too.
  Problem off = weighted(uniform, SCATTERPTX_F32);
  off.grouping = SCATTERPTX_GROUPING_OFF;
  EXPECT_EQ(plan_default_call(off, kDevice).mode, SCATTERPTX_MODE_STREAMING);
}

// A call that sorts and sums at once has the radix passes carry 2- and
// 4-byte weights beside the positions, in ping-pong buffers of M
// (position, weight bits) pairs, so that the sums read them in grouped
// order; 8-byte weights and plan objects (whose executes read the weights
// as they are then) keep reading them by row.
TEST(GroupPlan, TheSortCarriesTwoAndFourByteWeightsOfOneShotCalls) {
  const Problem rows = contiguous(SCATTERPTX_F32, 300000, 250000, 128);
  const GroupPlan plain = make_group_plan(rows, mode(SCATTERPTX_MODE_SEGMENTED));
  EXPECT_FALSE(plain.weights_in_sort);
  const GroupPlan carried = make_group_plan(weighted(rows, SCATTERPTX_F32), mode(SCATTERPTX_MODE_SEGMENTED));
  ASSERT_TRUE(carried.weights_in_sort);
  ASSERT_GT(carried.passes, 1u);
  const GroupWorkspace& w = carried.workspace;
  EXPECT_GE(w.rows[1], w.rows[0] + 8 * rows.src_rows) << "pairs of 8 bytes";
  EXPECT_GE(w.counts, w.rows[1] + 8 * rows.src_rows);
  EXPECT_EQ(w.bytes - plain.workspace.bytes, 2 * align_up(8 * rows.src_rows, kWorkspaceAlignment) -
                                                 2 * align_up(4 * rows.src_rows, kWorkspaceAlignment))
      << "the header's 8*M more";
  EXPECT_LE(w.bytes, 24 * rows.src_rows + 4 * 256 * ((rows.src_rows + 2047) / 2048) +
                         4 * ((rows.src_rows + 255) / 256) * 512 + 4096)
      << "the header's formula for 512-byte f32 rows, plus 8*M";
  EXPECT_NE(carried.describe().find(" weights_in_sort=1"), std::string::npos) << carried.describe();

  const Problem bf16 = weighted(contiguous(SCATTERPTX_BF16, 300000, 250000, 128), SCATTERPTX_BF16);
  EXPECT_TRUE(make_group_plan(bf16, mode(SCATTERPTX_MODE_SEGMENTED)).weights_in_sort) << "2-byte weights";
  EXPECT_TRUE(plan_default_call(bf16, kDevice).weights_in_sort) << "the default call groups and sums at once";
  const Problem f64 = contiguous(SCATTERPTX_F64, 300000, 250000, 128);
  EXPECT_FALSE(make_group_plan(weighted(f64, SCATTERPTX_F64), mode(SCATTERPTX_MODE_SEGMENTED)).weights_in_sort)
      << "8-byte weights are gathered by row";
  EXPECT_TRUE(make_group_plan(weighted(f64, SCATTERPTX_F32), mode(SCATTERPTX_MODE_SEGMENTED)).weights_in_sort)
      << "f32 weights of f64 rows are 4 bytes";

  GroupOptions object = mode(SCATTERPTX_MODE_SEGMENTED);
  object.weights_read_at_execute = true;
  const GroupPlan read_at_execute = make_group_plan(weighted(rows, SCATTERPTX_F32), object);
  EXPECT_FALSE(read_at_execute.weights_in_sort);
  EXPECT_EQ(read_at_execute.workspace.bytes, plain.workspace.bytes);
  EXPECT_EQ(read_at_execute.describe().find("weights_in_sort"), std::string::npos);
}

// One radix pass writes one buffer of each kind, pairs too.
TEST(GroupPlan, OnePassCarriesWeightsInOneBuffer) {
  const GroupPlan plan = make_group_plan(weighted(contiguous(SCATTERPTX_F32, 100000, 200, 128), SCATTERPTX_F32),
                                         mode(SCATTERPTX_MODE_SEGMENTED));
  ASSERT_EQ(plan.passes, 1u);
  ASSERT_TRUE(plan.weights_in_sort);
  EXPECT_EQ(plan.workspace.rows[1], 0u);
  EXPECT_GE(plan.workspace.counts, plan.workspace.rows[0] + 8 * 100000) << "one buffer of pairs";
}

TEST(GroupPlan, APlainSumDescribesItselfAsBefore) {
  const GroupPlan plan = make_group_plan(contiguous(SCATTERPTX_F32, 7770000, 1720000, 128), mode(SCATTERPTX_MODE_AUTO));
  EXPECT_EQ(plan.describe().find("reduce="), std::string::npos) << plan.describe();
  EXPECT_EQ(plan.describe().find("weights="), std::string::npos) << plan.describe();
}

TEST(GroupPlan, GroupedOnlyReducesRefuseStreamingAndProblemsGroupingCannotTake) {
  const Problem amax = reducing(contiguous(SCATTERPTX_F32, 1000, 100, 64), SCATTERPTX_REDUCE_AMAX);
  scatterptx_group_options streaming;
  scatterptx_group_options_init(&streaming);
  streaming.mode = SCATTERPTX_MODE_STREAMING;
  try {
    (void)validate_group_options(&streaming, amax);
    FAIL() << "STREAMING took an amax";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(failure.what()).find("runs grouped only"), std::string::npos) << failure.what();
  }
  // Source positions are u32: beyond 2^32 - 1 rows there is no grouping,
  // and no streaming path computes a maximum.
  const Problem huge = reducing(contiguous(SCATTERPTX_F32, (uint64_t{1} << 32) + 5, 100, 4), SCATTERPTX_REDUCE_AMAX);
  try {
    (void)validate_group_options(nullptr, huge);
    FAIL() << "an ungroupable amax was accepted";
  } catch (const Failure& failure) {
    EXPECT_NE(std::string(failure.what()).find("src_rows above 2^32 - 1"), std::string::npos) << failure.what();
  }
  // The default call plans without validate_group_options: it must refuse
  // too, not group past the u32 keys (found by fuzz_planners).
  for (const Problem& p : {huge, reducing(contiguous(SCATTERPTX_F32, 1000, uint64_t{1} << 33, 4),
                                          SCATTERPTX_REDUCE_SUM, /*include_self=*/false)}) {
    try {
      const GroupPlan plan = plan_default_call(p, kDevice);
      FAIL() << "the default call planned an ungroupable reduce: " << plan.describe();
    } catch (const Failure& failure) {
      EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(failure.what()).find("segmented mode cannot take this problem"), std::string::npos)
          << failure.what();
    }
  }
  try {
    (void)make_plan(huge, kDevice);
    FAIL() << "the streaming planner took an amax";
  } catch (const Failure& failure) {
    EXPECT_NE(std::string(failure.what()).find("has no streaming path"), std::string::npos) << failure.what();
  }
}

}  // namespace

// Host-only: the planner is a pure function of the problem and the device.
#include <gtest/gtest.h>

#include <string>

#include "errors.hpp"
#include "host_problem.hpp"
#include "plan.hpp"

namespace {

using scatterptx::detail::DeviceLimits;
using scatterptx::detail::Failure;
using scatterptx::detail::KernelFamily;
using scatterptx::detail::kKernelVariantCount;
using scatterptx::detail::kKernelVariants;
using scatterptx::detail::kMaxTmaRowsPerLaunch;
using scatterptx::detail::make_plan;
using scatterptx::detail::StreamingPlan;
using scatterptx::detail::Problem;
using scatterptx::detail::tma_ineligibility;
using scatterptx::detail::tma_shared_bytes;
using scatterptx_test::contiguous;
using scatterptx_test::weighted;

DeviceLimits h200() { return DeviceLimits{}; }  // the defaults are an H200's

Problem forced(Problem p, scatterptx_path path) {
  p.path = path;
  return p;
}

scatterptx_status status_of(const Problem& p, const DeviceLimits& d) {
  try {
    make_plan(p, d);
  } catch (const Failure& failure) {
    return failure.status();
  }
  return SCATTERPTX_SUCCESS;
}

TEST(StreamingPlan, UniformF32D128TakesTmaWithWholeRowChunks) {
  const StreamingPlan plan = make_plan(forced(contiguous(SCATTERPTX_F32, 7770000, 1720000, 128), SCATTERPTX_PATH_TMA), h200());
  EXPECT_EQ(plan.path, SCATTERPTX_PATH_TMA);
  EXPECT_STREQ(kKernelVariants[plan.variant].name, "row_tma_reduce_f32_i64");
  EXPECT_EQ(plan.tma.box_elems, 128u);
  EXPECT_EQ(plan.tma.chunk_elems, 128u);
  EXPECT_EQ(plan.tma.chunks_per_row, 1u);
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].rows, 7770000u);
  // A persistent grid: every SM gets the same number of CTAs.
  EXPECT_EQ(plan.launches[0].grid_x, 132u * plan.tma.ctas_per_sm);
  EXPECT_EQ(plan.threads_per_cta, 32u * plan.tma.warps_per_cta);
  EXPECT_LE(plan.tma.shared_bytes, h200().max_shared_per_block);
}

TEST(StreamingPlan, FewRowsHugeRowsStillFillTheGpu) {
  // 100 rows x 640000 f32 on the TMA path: the flat (row, chunk) schedule
  // gives every warp of a full persistent grid work.
  const StreamingPlan plan = make_plan(forced(contiguous(SCATTERPTX_F32, 100, 100, 640000), SCATTERPTX_PATH_TMA), h200());
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_TMA);
  EXPECT_EQ(plan.tma.box_elems, 256u);
  EXPECT_EQ(plan.tma.chunk_elems % plan.tma.box_elems, 0u);
  const uint64_t pairs = 100ull * plan.tma.chunks_per_row;
  const uint64_t workers = plan.launches[0].grid_x * plan.tma.warps_per_cta;
  EXPECT_EQ(plan.launches[0].grid_x, 132u * plan.tma.ctas_per_sm);
  EXPECT_GE(pairs, workers) << "some warps would have no (row, chunk) pair";
}

TEST(StreamingPlan, OneRowOfSixteenMillionFillsTheGpu) {
  const StreamingPlan plan = make_plan(contiguous(SCATTERPTX_BF16, 1, 1, 16u << 20), h200());
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_TMA);
  EXPECT_GE(uint64_t{plan.tma.chunks_per_row}, plan.launches[0].grid_x * plan.tma.warps_per_cta);
}

TEST(StreamingPlan, TinyProblemGridDoesNotExceedItsWork) {
  const StreamingPlan plan = make_plan(forced(contiguous(SCATTERPTX_F32, 3, 10, 64), SCATTERPTX_PATH_TMA), h200());
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_TMA);
  EXPECT_EQ(plan.launches[0].grid_x, 1u);  // 3 pairs, 4 warps per CTA
}

TEST(StreamingPlan, PartialLastChunkKeepsSixteenByteGranularity) {
  // bf16 D = 264: one 256-element box plus an 8-element tail (16 bytes).
  const StreamingPlan plan = make_plan(forced(contiguous(SCATTERPTX_BF16, 1000, 100, 264), SCATTERPTX_PATH_TMA), h200());
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_TMA);
  EXPECT_EQ(plan.tma.box_elems, 256u);
  EXPECT_EQ((264u % plan.tma.chunk_elems) * 2 % 16, 0u);
  // f32 D = 36: one 144-byte box; stage buffers still 128-byte aligned.
  const StreamingPlan small = make_plan(forced(contiguous(SCATTERPTX_F32, 1000, 100, 36), SCATTERPTX_PATH_TMA), h200());
  EXPECT_EQ(small.tma.box_elems, 36u);
  EXPECT_EQ(small.tma.stage_bytes, 256u);
}

TEST(StreamingPlan, MoreThanTwoToThe31RowsAreSplitIntoLaunches) {
  const uint64_t rows = 2 * kMaxTmaRowsPerLaunch + 5;
  const StreamingPlan plan = make_plan(forced(contiguous(SCATTERPTX_F32, rows, 1000, 64), SCATTERPTX_PATH_TMA), h200());
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_TMA);
  ASSERT_EQ(plan.launches.size(), 3u);
  uint64_t covered = 0;
  for (const auto& slice : plan.launches) {
    EXPECT_EQ(slice.row_begin, covered);
    EXPECT_LE(slice.rows, kMaxTmaRowsPerLaunch);
    EXPECT_LE(slice.grid_x, h200().max_grid_x);
    covered += slice.rows;
  }
  EXPECT_EQ(covered, rows);
}

TEST(StreamingPlan, AutoTakesVectorRedUpToRowsOneCtaCovers) {
  for (uint64_t cols : {4u, 8u, 16u, 32u, 128u, 256u, 512u, 516u, 1024u}) {
    const StreamingPlan plan = make_plan(contiguous(SCATTERPTX_F32, 4000000, 1000000, cols), h200());
    EXPECT_EQ(plan.path, SCATTERPTX_PATH_RED) << cols;
    EXPECT_EQ(plan.red.vector_bytes, 16u) << cols;
  }
  for (scatterptx_dtype dtype : {SCATTERPTX_F16, SCATTERPTX_BF16}) {
    EXPECT_EQ(make_plan(contiguous(dtype, 7770000, 1720000, 128), h200()).path, SCATTERPTX_PATH_RED);
    EXPECT_EQ(make_plan(contiguous(dtype, 2000000, 500000, 1024), h200()).path, SCATTERPTX_PATH_RED);
    EXPECT_EQ(make_plan(contiguous(dtype, 1000000, 500000, 2048), h200()).path, SCATTERPTX_PATH_RED);
  }
  // f64 lanes are one element: rows of up to 2 KB, one element per lane of
  // a CTA, take red, out lines prefetched where out is larger than L2.
  for (uint64_t cols : {4u, 16u, 64u, 128u, 256u}) {
    const StreamingPlan plan = make_plan(contiguous(SCATTERPTX_F64, 4000000, 1000000, cols), h200());
    EXPECT_EQ(plan.path, SCATTERPTX_PATH_RED) << cols;
    EXPECT_EQ(plan.red.vector_bytes, 8u) << cols;
    EXPECT_EQ(plan.red.prefetch_out, cols > 4) << cols;  // 32 MB of out stays in L2
  }
  // Rows longer than a CTA's lanes cover once (4 KB; f64 2 KB) where not
  // every lane of the red row loop has a whole batch of four vectors (8 KB:
  // two each; 4092 columns: all but the last lane; f64 4 KB: two each) take
  // TMA.
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F32, 4000000, 1000000, 1028), h200()).path, SCATTERPTX_PATH_TMA);
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_BF16, 4000000, 1000000, 2056), h200()).path, SCATTERPTX_PATH_TMA);
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F32, 500000, 250000, 2048), h200()).path, SCATTERPTX_PATH_TMA);  // 8 KB
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F32, 250000, 125000, 4092), h200()).path, SCATTERPTX_PATH_TMA);
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F64, 4000000, 1000000, 258), h200()).path, SCATTERPTX_PATH_TMA);
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F64, 1000000, 1000000, 512), h200()).path, SCATTERPTX_PATH_TMA);
}

TEST(StreamingPlan, LongRowsTakeRedWhenEveryLaneBatchesAndOutIsPrefetched) {
  // From 16 KB (four vectors for each of 256 lanes) into out larger than L2.
  for (scatterptx_dtype dtype : {SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16}) {
    const uint64_t per_16_kb = dtype == SCATTERPTX_F32 ? 4096 : 8192;  // columns
    const StreamingPlan plan = make_plan(contiguous(dtype, 250000, 125000, per_16_kb), h200());
    EXPECT_EQ(plan.path, SCATTERPTX_PATH_RED) << dtype;
    EXPECT_TRUE(plan.red.prefetch_out) << dtype;
    EXPECT_EQ(make_plan(contiguous(dtype, 2000, 10000, 2 * per_16_kb), h200()).path, SCATTERPTX_PATH_RED);
  }
  // f64 lanes are one element: from 8 KB; 1022 elements leave lanes 254
  // and 255 three each.
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F64, 250000, 125000, 1024), h200()).path, SCATTERPTX_PATH_RED);
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F64, 250000, 125000, 1022), h200()).path, SCATTERPTX_PATH_TMA);
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F64, 250000, h200().l2_bytes / 8192, 1024), h200()).path,
            SCATTERPTX_PATH_TMA);  // out within L2
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F64, 100, 100, 640000), h200()).path, SCATTERPTX_PATH_RED);
  // Few rows spread along y: every lane of every CTA column batches.
  StreamingPlan plan = make_plan(contiguous(SCATTERPTX_F32, 100, 100, 640000), h200());
  EXPECT_EQ(plan.path, SCATTERPTX_PATH_RED);
  EXPECT_GT(plan.launches[0].grid_y, 1u);
  EXPECT_TRUE(plan.red.prefetch_out);
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F32, 1, 1, 16000000), h200()).path, SCATTERPTX_PATH_RED);
  // Out within L2 is not prefetched: TMA.
  const uint64_t l2_rows = h200().l2_bytes / 16384;
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F32, 250000, l2_rows, 4096), h200()).path, SCATTERPTX_PATH_TMA);
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F32, 250000, l2_rows + 1, 4096), h200()).path, SCATTERPTX_PATH_RED);
  // 10 rows of 32 KB: eight CTAs along y leave each lane one vector: TMA.
  plan = make_plan(contiguous(SCATTERPTX_F32, 10, 1000000, 8192), h200());
  EXPECT_EQ(plan.path, SCATTERPTX_PATH_TMA);
}

TEST(StreamingPlan, MisalignedInputsFallBackToRed) {
  Problem odd_cols = contiguous(SCATTERPTX_F32, 1000, 100, 3);  // 12-byte rows
  EXPECT_NE(tma_ineligibility(odd_cols, h200()), "");
  StreamingPlan plan = make_plan(odd_cols, h200());
  EXPECT_EQ(plan.path, SCATTERPTX_PATH_RED);
  EXPECT_EQ(plan.red.vector_bytes, 4u);  // scalar: rows are not 16-byte aligned
  EXPECT_EQ(plan.red.vectors_per_row, 3u);
  EXPECT_EQ(plan.red.lanes_per_row_log2, 2u);

  Problem shifted = contiguous(SCATTERPTX_F32, 1000, 100, 128);
  shifted.src_address += 4;
  EXPECT_NE(tma_ineligibility(shifted, h200()), "");
  plan = make_plan(shifted, h200());
  EXPECT_EQ(plan.path, SCATTERPTX_PATH_RED);
  EXPECT_EQ(plan.red.vector_bytes, 4u);

  Problem padded = contiguous(SCATTERPTX_BF16, 1000, 100, 64);
  padded.src_row_stride_bytes = (64 + 3) * 2;  // stride not a multiple of 16 bytes
  EXPECT_EQ(make_plan(padded, h200()).path, SCATTERPTX_PATH_RED);
}

TEST(StreamingPlan, RedVectorisesWhenAligned) {
  Problem p = contiguous(SCATTERPTX_F16, 1000, 100, 128);
  p.path = SCATTERPTX_PATH_RED;
  const StreamingPlan plan = make_plan(p, h200());
  EXPECT_EQ(plan.path, SCATTERPTX_PATH_RED);
  EXPECT_EQ(plan.red.vector_bytes, 16u);
  EXPECT_EQ(plan.red.vectors_per_row, 16u);  // 8 halves per vector
  EXPECT_STREQ(kKernelVariants[plan.variant].name, "row_red_vec16_f16_i64");
}

TEST(StreamingPlan, RedShortRowGridCoversBatchesOfFourRows) {
  // 64-byte f32 rows: 4 lanes a row, 64 groups a CTA, each taking batches of
  // four consecutive rows; the grid stops at two CTAs per resident slot.
  Problem p = contiguous(SCATTERPTX_F32, 20000, 1000, 16);
  p.path = SCATTERPTX_PATH_RED;
  StreamingPlan plan = make_plan(p, h200());
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_RED);
  EXPECT_EQ(plan.red.lanes_per_row_log2, 2u);
  EXPECT_EQ(plan.launches[0].grid_x, 79u);  // ceil(5000 batches / 64)
  p.src_rows = 4000000;
  plan = make_plan(p, h200());
  EXPECT_EQ(plan.launches[0].grid_x, 2u * 132 * 8);
  // Rows longer than one access per lane take one row at a time.
  p = contiguous(SCATTERPTX_F32, 1000, 1000, 2047);  // 8 KB rows less one element
  p.path = SCATTERPTX_PATH_RED;
  plan = make_plan(p, h200());
  EXPECT_EQ(plan.launches[0].grid_x, 1000u);  // one row per CTA of 256 lanes
}

// Every red variant reported at `others` CTAs per SM, and variant at `held`.
DeviceLimits h200_with_red_ctas(std::size_t variant, uint8_t held, uint8_t others) {
  DeviceLimits device = h200();
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
    if (kKernelVariants[i].family == KernelFamily::row_red) device.resident_ctas_per_sm[i] = others;
  }
  device.resident_ctas_per_sm[variant] = held;
  return device;
}

TEST(StreamingPlan, RedShortRowGridIsTwoWavesOfTheCtasAnSmHolds) {
  // 64-byte f32 rows (the short-row loop); the device reports 3 CTAs per SM
  // of the variant the plan takes, 5 of every other red variant.
  Problem p = contiguous(SCATTERPTX_F32, 4000000, 1000000, 16);
  p.path = SCATTERPTX_PATH_RED;
  const StreamingPlan unreported = make_plan(p, h200());
  ASSERT_EQ(unreported.path, SCATTERPTX_PATH_RED);
  EXPECT_EQ(unreported.launches[0].grid_x, 2u * 132 * 8);  // the thread limit's 8
  const StreamingPlan reported = make_plan(p, h200_with_red_ctas(unreported.variant, 3, 5));
  EXPECT_EQ(reported.variant, unreported.variant);
  EXPECT_EQ(reported.launches[0].grid_x, 2u * 132 * 3);
  // A driver that said 0 for it: the thread limit again, not another variant's figure.
  EXPECT_EQ(make_plan(p, h200_with_red_ctas(unreported.variant, 0, 5)).launches[0].grid_x, 2u * 132 * 8);
}

TEST(StreamingPlan, RedShortRowGridOfWideRowsIsFourWaves) {
  // 1 KB f32 rows still take the short-row loop (one 16-byte vector per lane),
  // with four waves; 1008-byte rows (four elements less) keep two.
  Problem wide = contiguous(SCATTERPTX_F32, 4000000, 1000000, 256);
  wide.path = SCATTERPTX_PATH_RED;
  const StreamingPlan unreported = make_plan(wide, h200());
  ASSERT_EQ(unreported.path, SCATTERPTX_PATH_RED);
  EXPECT_EQ(unreported.launches[0].grid_y, 1u);
  EXPECT_EQ(unreported.launches[0].grid_x, 4u * 132 * 8);
  EXPECT_EQ(make_plan(wide, h200_with_red_ctas(unreported.variant, 3, 5)).launches[0].grid_x, 4u * 132 * 3);
  Problem narrower = contiguous(SCATTERPTX_F32, 4000000, 1000000, 252);
  narrower.path = SCATTERPTX_PATH_RED;
  const StreamingPlan two = make_plan(narrower, h200());
  ASSERT_EQ(two.path, SCATTERPTX_PATH_RED);
  EXPECT_EQ(make_plan(narrower, h200_with_red_ctas(two.variant, 3, 5)).launches[0].grid_x, 2u * 132 * 3);
}

TEST(StreamingPlan, RedLongRowGridsKeepTheThreadLimitsFigure) {
  // Rows past the short-row loop keep 2 x 8 CTAs per SM along x and their
  // spread along y, whatever the driver reports.
  Problem many = contiguous(SCATTERPTX_F32, 100000, 1000, 2047);  // 8 KB rows less one element
  many.path = SCATTERPTX_PATH_RED;
  Problem few = contiguous(SCATTERPTX_F32, 100, 100, 640001);  // odd: TMA ineligible
  for (const Problem& p : {many, few}) {
    const StreamingPlan unreported = make_plan(p, h200());
    ASSERT_EQ(unreported.path, SCATTERPTX_PATH_RED);
    const StreamingPlan reported = make_plan(p, h200_with_red_ctas(unreported.variant, 3, 3));
    EXPECT_EQ(reported.launches[0].grid_x, unreported.launches[0].grid_x) << p.cols;
    EXPECT_EQ(reported.launches[0].grid_y, unreported.launches[0].grid_y) << p.cols;
  }
  EXPECT_EQ(make_plan(many, h200()).launches[0].grid_x, 2u * 132 * 8);
  EXPECT_GT(make_plan(few, h200()).launches[0].grid_y, 1u);
}

TEST(StreamingPlan, RedSpreadsFewLongRowsAlongY) {
  Problem p = contiguous(SCATTERPTX_F32, 100, 100, 640001);  // odd: TMA ineligible
  const StreamingPlan plan = make_plan(p, h200());
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_RED);
  EXPECT_EQ(plan.launches[0].grid_x, 100u);  // one row per CTA of 256 lanes
  EXPECT_GT(plan.launches[0].grid_y, 1u);
  EXPECT_LE(plan.launches[0].grid_y, h200().max_grid_y);
  EXPECT_GE(plan.launches[0].grid_x * plan.launches[0].grid_y, 132u * 8);
}

TEST(StreamingPlan, TmaPrefetchesOutOnlyForOneChunkRowsOfHalfAKilobyteToOne) {
  auto prefetches = [](scatterptx_dtype dtype, uint64_t cols) {
    return make_plan(forced(contiguous(dtype, 4000000, 1000000, cols), SCATTERPTX_PATH_TMA), h200()).tma.prefetch_out;
  };
  EXPECT_FALSE(prefetches(SCATTERPTX_F32, 64));   // 256 bytes: the extra bulk operation costs more
  EXPECT_FALSE(prefetches(SCATTERPTX_F32, 124));  // 496 bytes
  EXPECT_TRUE(prefetches(SCATTERPTX_F32, 128));   // 512 bytes
  EXPECT_TRUE(prefetches(SCATTERPTX_F64, 128));   // 1 KB
  EXPECT_FALSE(prefetches(SCATTERPTX_F32, 260));  // 1040 bytes
  EXPECT_FALSE(prefetches(SCATTERPTX_BF16, 1024));
  EXPECT_FALSE(prefetches(SCATTERPTX_F32, 640000));
  // A row cut into chunks by a schedule is not prefetched.
  Problem chunked = forced(contiguous(SCATTERPTX_F32, 4000000, 1000000, 256), SCATTERPTX_PATH_TMA);
  chunked.has_schedule = true;
  chunked.schedule = scatterptx_schedule{512, 0, 0, 0};
  const StreamingPlan plan = make_plan(chunked, h200());
  ASSERT_EQ(plan.tma.chunks_per_row, 2u);
  EXPECT_FALSE(plan.tma.prefetch_out);
  EXPECT_NE(make_plan(forced(contiguous(SCATTERPTX_F32, 10, 10, 128), SCATTERPTX_PATH_TMA), h200())
                .describe()
                .find("prefetch_out=1"),
            std::string::npos);
}

TEST(StreamingPlan, RedPrefetchesOutOnlyForShortOrBatchedRowsIntoOutLargerThanL2) {
  auto prefetches = [](Problem p) { return make_plan(forced(p, SCATTERPTX_PATH_RED), h200()).red.prefetch_out; };
  const uint64_t l2 = h200().l2_bytes;
  EXPECT_FALSE(prefetches(contiguous(SCATTERPTX_F32, 4000000, 1000000, 8)));   // 32 MB of out stays in L2
  EXPECT_TRUE(prefetches(contiguous(SCATTERPTX_F32, 4000000, 1000000, 16)));   // 64 MB
  EXPECT_FALSE(prefetches(contiguous(SCATTERPTX_F32, 4000000, l2 / 64, 16)));  // exactly L2
  EXPECT_TRUE(prefetches(contiguous(SCATTERPTX_F32, 4000000, l2 / 64 + 1, 16)));
  EXPECT_TRUE(prefetches(contiguous(SCATTERPTX_F32, 7770000, 1720000, 128)));
  EXPECT_TRUE(prefetches(contiguous(SCATTERPTX_F32, 4000000, 30000000, 3)));   // 12-byte rows, scalar reds
  EXPECT_TRUE(prefetches(contiguous(SCATTERPTX_BF16, 1000000, 1000000, 2048)));  // 4 KB: a vector per lane
  // Rows neither loop prefetches: more vectors than a CTA's lanes but fewer
  // than one batch for lane 0 (8 KB: two each; 12 KB: three), and a partial
  // last vector.
  EXPECT_FALSE(prefetches(contiguous(SCATTERPTX_F32, 1000000, 1000000, 2048)));
  EXPECT_FALSE(prefetches(contiguous(SCATTERPTX_F32, 1000000, 1000000, 3072)));
  Problem partial = contiguous(SCATTERPTX_F32, 4000000, 3000000, 6);
  partial.out_row_stride_bytes = partial.src_row_stride_bytes = 32;
  ASSERT_EQ(make_plan(forced(partial, SCATTERPTX_PATH_RED), h200()).red.vector_bytes, 16u);
  EXPECT_FALSE(prefetches(partial));
  // The row loop's batches: from one whole batch for lane 0 (769 vectors),
  // few rows spread over CTAs along y too; out within L2 is not prefetched.
  EXPECT_TRUE(prefetches(contiguous(SCATTERPTX_F32, 1000000, 1000000, 3076)));
  EXPECT_TRUE(prefetches(contiguous(SCATTERPTX_F32, 100, 100000, 640000)));
  EXPECT_FALSE(prefetches(contiguous(SCATTERPTX_F32, 100, 10, 640000)));  // 25.6 MB of out
  EXPECT_NE(make_plan(forced(contiguous(SCATTERPTX_F32, 10, 1000000, 16), SCATTERPTX_PATH_RED), h200())
                .describe()
                .find("prefetch_out=1"),
            std::string::npos);
}

TEST(StreamingPlan, RedShortRowsKeepAQuarterOfOutInL2WhenOutIsAtMostThreeAndAHalfTimesL2) {
  auto kept = [](Problem p) { return make_plan(forced(p, SCATTERPTX_PATH_RED), h200()).red.out_keep_percent; };
  const uint64_t l2 = h200().l2_bytes;
  EXPECT_EQ(kept(contiguous(SCATTERPTX_F32, 4000000, 1000000, 8)), 25u);    // 32 MB of out
  EXPECT_EQ(kept(contiguous(SCATTERPTX_F32, 4000000, 1000000, 16)), 25u);   // 64 MB
  EXPECT_EQ(kept(contiguous(SCATTERPTX_F32, 4000000, 3000000, 16)), 25u);   // 192 MB
  EXPECT_EQ(kept(contiguous(SCATTERPTX_F32, 4000000, l2 / 2 * 7 / 64, 16)), 25u);  // 3.5 x L2
  EXPECT_EQ(kept(contiguous(SCATTERPTX_F32, 4000000, l2 / 2 * 7 / 64 + 1, 16)), 0u);
  EXPECT_EQ(kept(contiguous(SCATTERPTX_F32, 4000000, 1000000, 64)), 0u);    // 256 MB
  EXPECT_EQ(kept(contiguous(SCATTERPTX_F32, 7770000, 1720000, 128)), 0u);   // 880 MB
  EXPECT_EQ(kept(contiguous(SCATTERPTX_F64, 4000000, 1000000, 3)), 25u);    // 24-byte rows, scalar reds
  // Rows the short-row loop does not take keep nothing, however small out is.
  EXPECT_EQ(kept(contiguous(SCATTERPTX_F32, 1000, 1000, 2048)), 0u);
  Problem partial = contiguous(SCATTERPTX_F32, 4000, 3000, 6);
  partial.out_row_stride_bytes = partial.src_row_stride_bytes = 32;
  EXPECT_EQ(kept(partial), 0u);
  EXPECT_EQ(kept(contiguous(SCATTERPTX_F32, 100, 100, 640000)), 0u);
  const std::string text =
      make_plan(forced(contiguous(SCATTERPTX_F32, 10, 1000, 16), SCATTERPTX_PATH_RED), h200()).describe();
  EXPECT_NE(text.find("out_keep_percent=25"), std::string::npos) << text;
}

TEST(StreamingPlan, ForcedTmaOnIneligibleInputIsRejected) {
  Problem p = contiguous(SCATTERPTX_F32, 1000, 100, 3);
  p.path = SCATTERPTX_PATH_TMA;
  EXPECT_EQ(status_of(p, h200()), SCATTERPTX_ERROR_INVALID_ARGUMENT);
}

TEST(StreamingPlan, AScheduleKeepsAutoOnTheTmaPath) {
  Problem p = contiguous(SCATTERPTX_F32, 4000000, 1000000, 128);  // AUTO alone: red
  ASSERT_EQ(make_plan(p, h200()).path, SCATTERPTX_PATH_RED);
  p.has_schedule = true;
  p.schedule = scatterptx_schedule{1024, 3, 2, 5};
  const StreamingPlan plan = make_plan(p, h200());
  EXPECT_EQ(plan.path, SCATTERPTX_PATH_TMA);
  EXPECT_EQ(plan.tma.stages, 3u);
  Problem few = contiguous(SCATTERPTX_F32, 4000000, 100, 256);  // AUTO alone: private
  few.has_schedule = true;
  few.schedule = scatterptx_schedule{0, 0, 0, 4};
  EXPECT_EQ(make_plan(few, h200()).path, SCATTERPTX_PATH_TMA);
  Problem odd = contiguous(SCATTERPTX_F32, 1000, 100, 3);  // not eligible: red, schedule unused
  odd.has_schedule = true;
  odd.schedule = scatterptx_schedule{1024, 3, 2, 5};
  EXPECT_EQ(make_plan(odd, h200()).path, SCATTERPTX_PATH_RED);
}

TEST(StreamingPlan, ScheduleOverrideIsHonouredAndBounded) {
  Problem p = contiguous(SCATTERPTX_F32, 100000, 1000, 4096);
  p.has_schedule = true;
  p.schedule = scatterptx_schedule{1024, 3, 2, 5};
  const StreamingPlan plan = make_plan(p, h200());
  EXPECT_EQ(plan.tma.chunk_elems, 256u);
  EXPECT_EQ(plan.tma.stages, 3u);
  EXPECT_EQ(plan.tma.warps_per_cta, 2u);
  EXPECT_EQ(plan.tma.ctas_per_sm, 5u);
  EXPECT_EQ(plan.tma.shared_bytes, tma_shared_bytes(1024, 3, 2));

  p.schedule = scatterptx_schedule{65536, 32, 32, 0};  // 64 MB of stages
  EXPECT_EQ(status_of(p, h200()), SCATTERPTX_ERROR_INVALID_ARGUMENT);
}

TEST(StreamingPlan, OlderGpusAreUnsupported) {
  DeviceLimits ampere = h200();
  ampere.compute_capability = 80;
  EXPECT_EQ(status_of(contiguous(SCATTERPTX_F32, 10, 10, 4), ampere), SCATTERPTX_ERROR_UNSUPPORTED_DEVICE);
}

TEST(StreamingPlan, EveryDtypeAndIndexTypeHasItsVariants) {
  for (scatterptx_dtype dtype : {SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16, SCATTERPTX_F64}) {
    for (scatterptx_index_type index : {SCATTERPTX_INDEX_INT32, SCATTERPTX_INDEX_INT64}) {
      Problem p = contiguous(dtype, 1000, 100, 64);
      p.index_type = index;
      p.index_bytes = index == SCATTERPTX_INDEX_INT32 ? 4 : 8;
      const StreamingPlan tma = make_plan(p, h200());
      EXPECT_EQ(kKernelVariants[tma.variant].dtype, dtype);
      EXPECT_EQ(kKernelVariants[tma.variant].index_type, index);
      p.path = SCATTERPTX_PATH_RED;
      const StreamingPlan red = make_plan(p, h200());
      EXPECT_EQ(kKernelVariants[red.variant].dtype, dtype);
      EXPECT_EQ(kKernelVariants[red.variant].index_type, index);
    }
  }
}

TEST(StreamingPlan, EmptyProblemPlansNoLaunch) {
  EXPECT_TRUE(make_plan(contiguous(SCATTERPTX_F32, 0, 10, 4), h200()).launches.empty());
  EXPECT_TRUE(make_plan(contiguous(SCATTERPTX_F32, 10, 10, 0), h200()).launches.empty());
}

}  // namespace

namespace {

using scatterptx::detail::kPrivateMaxTargets;
using scatterptx::detail::private_schedule;

TEST(PlanPrivate, FewTargetsWithManyRowsEachArePrivatised) {
  const Problem p = contiguous(SCATTERPTX_F32, 4000000, 100, 256);
  const StreamingPlan plan = make_plan(p, h200());
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_PRIVATE) << plan.describe();
  EXPECT_STREQ(kKernelVariants[plan.variant].name, "row_private_f32_i64");
  // Slices narrow enough for three CTAs per SM, to hide each one's waits.
  EXPECT_EQ(plan.privatised.slice_elems % 8, 0u);
  EXPECT_GE(plan.privatised.slice_elems, 64u);
  EXPECT_EQ(plan.privatised.slices, (256 + plan.privatised.slice_elems - 1) / plan.privatised.slice_elems);
  EXPECT_GE(plan.privatised.ctas_per_sm, 3u);
  EXPECT_LE(3 * (plan.privatised.shared_bytes + 1024), h200().max_shared_per_sm);
  // Four items of a stage per consumer lane (16 rows x (slice / 4) vectors
  // of 4 f32), and a producer warp.
  EXPECT_EQ(plan.threads_per_cta, 32 * (16 * (plan.privatised.slice_elems / 4) / (32 * 4) + 1));
  EXPECT_EQ(plan.launches[0].grid_y, plan.privatised.slices);
  EXPECT_EQ(plan.launches[0].grid_x, 132u * plan.privatised.ctas_per_sm / plan.privatised.slices);
  // Whole warps: 128 columns, two slices of a 256-column row.
  EXPECT_EQ(plan.privatised.slice_elems, 128u);
  // The partial sums flushed stay few next to the source rows.
  EXPECT_LE(100u * plan.launches[0].grid_x * 8, p.src_rows);
}

TEST(PlanPrivate, SlicesAreOneTensorBoxWide) {
  // One target: everything fits, but a box is at most 256 columns.
  Problem p = contiguous(SCATTERPTX_F32, 4000000, 1, 4096);
  p.path = SCATTERPTX_PATH_PRIVATE;
  const StreamingPlan plan = make_plan(p, h200());
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_PRIVATE) << plan.describe();
  EXPECT_EQ(plan.privatised.slice_elems, 256u);
  EXPECT_EQ(plan.privatised.slices, 16u);
  EXPECT_EQ(plan.threads_per_cta, 32u * (8 + 1)) << "at most 8 consumer warps";
}

TEST(PlanPrivate, ConsumerLanesTakeFourSixteenByteItemsOfAStageEach) {
  // f64: 2 columns per item, 16 x 32 / 2 items -> 2 consumer warps.
  Problem narrow = contiguous(SCATTERPTX_F64, 4000000, 4, 32);
  narrow.path = SCATTERPTX_PATH_PRIVATE;
  EXPECT_EQ(make_plan(narrow, h200()).threads_per_cta, 32u * (2 + 1));
  // A few columns still get a whole consumer warp.
  Problem tiny = contiguous(SCATTERPTX_F32, 4000000, 4, 8);
  tiny.path = SCATTERPTX_PATH_PRIVATE;
  EXPECT_EQ(make_plan(tiny, h200()).threads_per_cta, 32u * (1 + 1));
  // A forced PRIVATE path takes its consumer warps from a schedule.
  Problem tuned = contiguous(SCATTERPTX_F32, 4000000, 100, 256);
  tuned.path = SCATTERPTX_PATH_PRIVATE;
  tuned.has_schedule = true;
  tuned.schedule.warps_per_cta = 6;
  const StreamingPlan plan = make_plan(tuned, h200());
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_PRIVATE);
  EXPECT_EQ(plan.threads_per_cta, 32u * (6 + 1));
  EXPECT_EQ(plan.privatised.threads_per_cta, 32u * (6 + 1));
  // With the producer warp, 32 consumer warps would pass 1024 threads.
  tuned.schedule.warps_per_cta = 32;
  EXPECT_EQ(status_of(tuned, h200()), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  tuned.schedule.warps_per_cta = 31;
  EXPECT_EQ(make_plan(tuned, h200()).threads_per_cta, 1024u);
}

TEST(PlanPrivate, LaunchesStartOnWholeStagesBelowTwoToThe31Rows) {
  Problem p = contiguous(SCATTERPTX_BF16, (uint64_t{1} << 32) + 5, 3, 64);
  p.path = SCATTERPTX_PATH_PRIVATE;
  const StreamingPlan plan = make_plan(p, h200());
  ASSERT_EQ(plan.launches.size(), 3u);
  uint64_t covered = 0;
  for (const auto& slice : plan.launches) {
    EXPECT_EQ(slice.row_begin, covered);
    EXPECT_EQ(slice.row_begin % 16, 0u);
    EXPECT_LT(slice.rows, uint64_t{1} << 31);
    covered += slice.rows;
  }
  EXPECT_EQ(covered, p.src_rows);
}

TEST(PlanPrivate, WideRowsAreSlicedToFit) {
  Problem p = contiguous(SCATTERPTX_BF16, 4000000, 300, 4096);
  p.path = SCATTERPTX_PATH_PRIVATE;
  const StreamingPlan plan = make_plan(p, h200());
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_PRIVATE);
  EXPECT_LT(plan.privatised.slice_elems, 4096u);
  EXPECT_GE(plan.privatised.slice_elems, 64u);
  EXPECT_EQ(plan.privatised.slice_elems % 8, 0u);
  EXPECT_EQ(plan.privatised.slices, (4096 + plan.privatised.slice_elems - 1) / plan.privatised.slice_elems);
  EXPECT_LE(plan.privatised.shared_bytes, h200().max_shared_per_block);
  EXPECT_EQ(plan.launches[0].grid_y, plan.privatised.slices);
}

TEST(PlanPrivate, LayoutKeepsEveryRegionAlignedAndApart) {
  Problem p = contiguous(SCATTERPTX_BF16, 100000, 100, 264);
  const auto s = private_schedule(p, 248, 6);
  EXPECT_EQ(s.staging_offset, 99200u);  // 100 x 248 f32 accumulators, a multiple of 128
  EXPECT_EQ(s.flags_offset, s.staging_offset + 100u * 248 * 2);
  EXPECT_EQ(s.ring_offset % 128, 0u);
  EXPECT_GE(s.ring_offset, s.flags_offset + 400);
  EXPECT_EQ(s.index_offset, s.ring_offset + 6u * 16 * 248 * 2);
  EXPECT_EQ((16u * 248 * 2) % 128, 0u) << "every stage's box lands 128-byte aligned";
  EXPECT_EQ(s.index_offset % 16, 0u) << "each stage's indices arrive by bulk copy";
  EXPECT_EQ(s.barrier_offset, s.index_offset + 6u * 128);
  EXPECT_EQ(s.shared_bytes, s.barrier_offset + 6u * 16) << "a full and an empty mbarrier per stage";
  EXPECT_EQ((248u * 4) % 16, 0u) << "accumulator rows feed bulk reduces: 16-byte pitch";
}

TEST(PlanPrivate, ManyTargetsOrFewRowsPerTargetStayOnTheStreamingPaths) {
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F32, 4000000, kPrivateMaxTargets + 1, 256), h200()).path,
            SCATTERPTX_PATH_RED);
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F32, 3000, 100, 256), h200()).path, SCATTERPTX_PATH_RED);
  EXPECT_EQ(make_plan(contiguous(SCATTERPTX_F64, 3000, 100, 256), h200()).path, SCATTERPTX_PATH_RED);
  Problem forced = contiguous(SCATTERPTX_F32, 4000000, kPrivateMaxTargets + 1, 256);
  forced.path = SCATTERPTX_PATH_PRIVATE;
  EXPECT_EQ(status_of(forced, h200()), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  Problem unaligned = contiguous(SCATTERPTX_F32, 4000000, 100, 255);
  unaligned.path = SCATTERPTX_PATH_PRIVATE;
  EXPECT_EQ(status_of(unaligned, h200()), SCATTERPTX_ERROR_INVALID_ARGUMENT);
}

}  // namespace

namespace {

TEST(PlanRed, WidestAlignedVectorThatFitsARow) {
  struct Case {
    scatterptx_dtype dtype;
    uint64_t cols;
    uint32_t vector_bytes;
  };
  const Case cases[] = {
      {SCATTERPTX_F32, 2, 8},   {SCATTERPTX_F32, 6, 8},   {SCATTERPTX_F32, 8, 16}, {SCATTERPTX_F32, 3, 4},
      {SCATTERPTX_BF16, 2, 4},  {SCATTERPTX_BF16, 4, 8},  {SCATTERPTX_BF16, 6, 4}, {SCATTERPTX_BF16, 3, 2},
      {SCATTERPTX_F16, 16, 16}, {SCATTERPTX_F64, 1, 8},   {SCATTERPTX_F64, 2, 8},  {SCATTERPTX_F64, 128, 8},
  };
  for (const Case& c : cases) {
    Problem p = contiguous(c.dtype, 1000, 100, c.cols);
    p.path = SCATTERPTX_PATH_RED;
    const StreamingPlan plan = make_plan(p, h200());
    EXPECT_EQ(plan.red.vector_bytes, c.vector_bytes) << "dtype " << c.dtype << " cols " << c.cols;
    EXPECT_EQ(kKernelVariants[plan.variant].vector_bytes, c.vector_bytes);
    EXPECT_EQ(kKernelVariants[plan.variant].dtype, c.dtype);
  }
}

}  // namespace

namespace {

// Weighted rows stream on the red path, which scales each value in
// registers before its red, whatever AUTO would pick for a plain sum: the
// bulk reductions of the TMA and privatised paths reduce staged rows as
// they are.
TEST(StreamingPlan, WeightedRowsStreamOnTheWeightedRedVariants) {
  struct Case {
    Problem problem;
    scatterptx_path plain_path;  // what a plain sum of the same rows takes
  };
  const Case cases[] = {
      {contiguous(SCATTERPTX_F32, 7770000, 1720000, 128), SCATTERPTX_PATH_RED},  // short-row loop either way
      {contiguous(SCATTERPTX_F32, 100, 100, 3000), SCATTERPTX_PATH_TMA},         // 12 KB rows: TMA as a sum
      {contiguous(SCATTERPTX_BF16, 4000000, 100, 512), SCATTERPTX_PATH_PRIVATE}, // few targets: privatised
  };
  for (const Case& c : cases) {
    ASSERT_EQ(make_plan(c.problem, h200()).path, c.plain_path) << make_plan(c.problem, h200()).describe();
    for (scatterptx_dtype w : {SCATTERPTX_F32, c.problem.dtype}) {
      const StreamingPlan plan = make_plan(weighted(c.problem, w), h200());
      EXPECT_EQ(plan.path, SCATTERPTX_PATH_RED) << plan.describe();
      EXPECT_TRUE(kKernelVariants[plan.variant].weighted) << plan.describe();
      EXPECT_EQ(std::string(kKernelVariants[plan.variant].name).rfind("row_red_weighted_", 0), 0u) << plan.describe();
      EXPECT_NE(plan.describe().find(std::string(" weights=") + scatterptx_dtype_name(w)), std::string::npos)
          << plan.describe();
      // The same schedule as the plain sum's red plan.
      const StreamingPlan plain_red = make_plan(forced(c.problem, SCATTERPTX_PATH_RED), h200());
      EXPECT_EQ(plan.red.vector_bytes, plain_red.red.vector_bytes);
      EXPECT_EQ(plan.launches[0].grid_y, plain_red.launches[0].grid_y);
    }
  }
  const StreamingPlan plain = make_plan(contiguous(SCATTERPTX_F32, 1000, 100, 64), h200());
  EXPECT_FALSE(kKernelVariants[plain.variant].weighted);
  EXPECT_EQ(plain.describe().find("weights="), std::string::npos) << plain.describe();
}

TEST(StreamingPlan, WeightedRowsRefuseTheBulkPaths) {
  for (scatterptx_path path : {SCATTERPTX_PATH_TMA, SCATTERPTX_PATH_PRIVATE}) {
    const Problem p = forced(weighted(contiguous(SCATTERPTX_F32, 4000000, 100, 256)), path);
    EXPECT_EQ(status_of(p, h200()), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  }
  EXPECT_EQ(status_of(forced(weighted(contiguous(SCATTERPTX_F16, 1000, 100, 7), SCATTERPTX_F16), SCATTERPTX_PATH_RED),
                      h200()),
            SCATTERPTX_SUCCESS);
}

TEST(StreamingPlan, EveryRedVariantHasAWeightedTwin) {
  int unweighted = 0;
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
    const auto& v = kKernelVariants[i];
    if (v.family != KernelFamily::row_red || v.weighted) continue;
    ++unweighted;
    SCOPED_TRACE(v.name);
    EXPECT_NO_THROW((void)scatterptx::detail::find_variant(KernelFamily::row_red, v.dtype, v.index_type, v.vector_bytes,
                                                           SCATTERPTX_REDUCE_SUM, true));
  }
  EXPECT_GT(unweighted, 0) << "no unweighted red variant in the manifest";
}

}  // namespace

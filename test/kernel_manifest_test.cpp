// Host-only: every variant the generator promises is in the library,
// assembled for sm_90, with its PTX beside it.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <sstream>
#include <string>

#include "kernel_images.hpp"
#include "plan.hpp"

namespace {

using scatterptx::detail::KernelFamily;
using scatterptx::detail::kKernelImages;
using scatterptx::detail::kKernelVariantCount;
using scatterptx::detail::kKernelVariants;
using scatterptx::detail::kRedRowBatchVectors;
using scatterptx::detail::kRedShortRowsPerBatch;
using scatterptx::detail::kRedThreadsPerCta;

TEST(KernelManifest, HasEveryDtypeIndexAndPathVariant) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) names.insert(kKernelVariants[i].name);
  EXPECT_EQ(names.size(), kKernelVariantCount) << "variant names must be unique";
  for (const char* dtype : {"f32", "f16", "bf16", "f64"}) {
    for (const char* index : {"i32", "i64"}) {
      const std::string suffix = std::string(dtype) + "_" + index;
      EXPECT_TRUE(names.count("row_tma_reduce_" + suffix)) << suffix;
      EXPECT_TRUE(names.count("row_red_scalar_" + suffix)) << suffix;
      // f64 has no vector red; its red lanes are one element (gen/red_snippets.py).
      EXPECT_EQ(names.count("row_red_vec16_" + suffix), std::strcmp(dtype, "f64") == 0 ? 0u : 1u) << suffix;
      EXPECT_TRUE(names.count("row_private_" + suffix)) << suffix;
    }
  }
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

// The row loop's batch is as long as the planner counts (kRedRowBatchVectors):
// its step over the batch, and one out-line prefetch per vector.
void expect_row_loop_batch_of(uint64_t vectors, const std::string& ptx) {
  const std::string step = "mad.lo.u64          %v, %v_step, " + std::to_string(vectors) + ", %v;";
  EXPECT_NE(ptx.find(step), std::string::npos) << "the row loop's batch is not " << vectors << " vectors";
  EXPECT_EQ(occurrences(ptx, "prefetch.global.L2 [%tg"), vectors);
}

// The red kernel's launch bound is the planner's block size, and its
// short-row loop folds each row whose target is the next row's into that
// row (one compare per pair of neighbours in a batch).
void expect_red_bounds_and_runs(const std::string& ptx) {
  EXPECT_NE(ptx.find(".maxntid " + std::to_string(kRedThreadsPerCta) + ", 1, 1"), std::string::npos);
  // 16-byte lanes keep three CTAs per SM (gen/red_snippets.py, cta_bounds).
  const bool wide_lanes = ptx.find("red.global.add.L2::cache_hint.v4") != std::string::npos ||
                          ptx.find("red.global.add.noftz.L2::cache_hint.v4") != std::string::npos;
  EXPECT_EQ(ptx.find(".minnctapersm 3") != std::string::npos, wide_lanes);
  EXPECT_EQ(occurrences(ptx, "setp.eq.and.u64     %merge"), kRedShortRowsPerBatch - 1);
}

// The red kernel's L2 priorities: from the policies' creation to the row
// loop (the short-row loop and its preload) every value and index load and
// every red carries a policy; the row loop's carry none; and the evict_last
// share is created only for a fraction above 0.
void expect_short_row_loop_alone_hinted(const std::string& ptx) {
  const size_t begin = ptx.find("createpolicy.fractional.L2::evict_first.b64 %stream_policy");
  const size_t row_loop = ptx.find("\nROW_LOOP:");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(row_loop, std::string::npos);
  ASSERT_LT(begin, row_loop);
  std::istringstream short_rows(ptx.substr(begin, row_loop - begin));
  int hinted = 0;
  for (std::string line; std::getline(short_rows, line);) {
    if (line.find("ld.global.nc") == std::string::npos && line.find("red.global.add") == std::string::npos) continue;
    EXPECT_NE(line.find(".L2::cache_hint"), std::string::npos) << line;
    const bool is_load = line.find("ld.global.nc") != std::string::npos;
    EXPECT_NE(line.find(is_load ? "%stream_policy;" : "%out_policy;"), std::string::npos) << line;
    ++hinted;
  }
  EXPECT_GE(hinted, 3 * 4);  // four rows: index and value loads, reds
  EXPECT_EQ(ptx.find("cache_hint", row_loop), std::string::npos) << "the row loop is hinted";
  EXPECT_NE(ptx.find("@%p createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %out_policy, %keep;"),
            std::string::npos);
}

TEST(KernelManifest, EveryVariantIsAssembledForSm90WithItsPtx) {
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
    const auto& variant = kKernelVariants[i];
    const auto& image = kKernelImages[i];
    SCOPED_TRACE(variant.name);
    ASSERT_GT(image.cubin_size, 64u);
    EXPECT_EQ(std::memcmp(image.cubin, "\x7f" "ELF", 4), 0) << "cubin is not an ELF image";
    const std::string ptx = image.ptx;
    EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
    EXPECT_NE(ptx.find(std::string(".visible .entry ") + variant.entry + "("), std::string::npos);
    EXPECT_EQ(ptx.find("{{"), std::string::npos) << "unexpanded template placeholder";
    EXPECT_NE(ptx.find("do not edit"), std::string::npos);
    EXPECT_EQ(variant.min_sm, 90);
    if (variant.family == KernelFamily::row_tma_reduce) {
      EXPECT_NE(ptx.find("cp.async.bulk.tensor.2d"), std::string::npos);
      EXPECT_NE(ptx.find("cp.reduce.async.bulk.global.shared::cta.bulk_group.add"), std::string::npos);
    } else if (variant.family == KernelFamily::row_private) {
      EXPECT_NE(ptx.find("cp.async.bulk.shared::cluster.global.mbarrier"), std::string::npos);
      EXPECT_NE(ptx.find("cp.reduce.async.bulk.global.shared::cta.bulk_group.add"), std::string::npos);
    } else if (variant.family == KernelFamily::row_red) {
      EXPECT_NE(ptx.find("red.global.add"), std::string::npos);
      expect_short_row_loop_alone_hinted(ptx);
      expect_row_loop_batch_of(kRedRowBatchVectors, ptx);
      expect_red_bounds_and_runs(ptx);
    } else if (variant.family == KernelFamily::index_record_take) {
      EXPECT_NE(ptx.find("atom.global.exch.b64"), std::string::npos);
    } else if (variant.family == KernelFamily::group_histogram_index ||
               variant.family == KernelFamily::group_histogram_keys ||
               variant.family == KernelFamily::group_scatter_index ||
               variant.family == KernelFamily::group_scatter_keys) {
      // Equal digits found by ballots, no global atomics but the bad-index record.
      EXPECT_NE(ptx.find("vote.sync.ballot.b32"), std::string::npos);
      EXPECT_EQ(ptx.find("atom.global"), std::string::npos);
    } else {
      // The summing kernels add in a fixed order: no atomic adds at all.
      EXPECT_EQ(ptx.find("red.global.add"), std::string::npos);
      EXPECT_EQ(ptx.find("atom."), std::string::npos);
    }
  }
}

}  // namespace

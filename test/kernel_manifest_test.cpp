// Host-only: every variant the generator promises is in the library,
// assembled for sm_90, with its PTX beside it.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "kernel_images.hpp"

namespace {

using scatterptx::detail::KernelFamily;
using scatterptx::detail::kKernelImages;
using scatterptx::detail::kKernelVariantCount;
using scatterptx::detail::kKernelVariants;

TEST(KernelManifest, HasEveryDtypeIndexAndPathVariant) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) names.insert(kKernelVariants[i].name);
  EXPECT_EQ(names.size(), kKernelVariantCount) << "variant names must be unique";
  for (const char* dtype : {"f32", "f16", "bf16", "f64"}) {
    for (const char* index : {"i32", "i64"}) {
      const std::string suffix = std::string(dtype) + "_" + index;
      EXPECT_TRUE(names.count("row_tma_reduce_" + suffix)) << suffix;
      EXPECT_TRUE(names.count("row_red_scalar_" + suffix)) << suffix;
      EXPECT_TRUE(names.count("row_red_vec16_" + suffix)) << suffix;
      EXPECT_TRUE(names.count("row_private_" + suffix)) << suffix;
    }
  }
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
      // The short-row loop's L2 priorities: loads go first, out's share kept last.
      EXPECT_NE(ptx.find("ld.global.nc.L2::cache_hint"), std::string::npos);
      EXPECT_NE(ptx.find("red.global.add.L2::cache_hint"), std::string::npos);
      EXPECT_NE(ptx.find("createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %out_policy, %keep"),
                std::string::npos);
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

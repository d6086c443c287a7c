// Host-only checks of the benchmark core: the compiled-in scenario table,
// the index kinds of the real workloads, the floors and the error bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "error_bound.hpp"
#include "floors.hpp"
#include "scenarios.hpp"

namespace scatterptx_bench {
namespace {

TEST(ScenarioTable, CompiledInSuiteHasEveryScenarioWithItsSizes) {
  const std::vector<Scenario> full = default_scenarios(false);
  const std::vector<Scenario> quick = default_scenarios(true);
  ASSERT_EQ(full.size(), 33u);
  ASSERT_EQ(quick.size(), full.size());
  EXPECT_EQ(full[0].name, "uniform-d128-f32");
  EXPECT_EQ(full[0].src_rows, 7770000);
  EXPECT_EQ(full[0].out_rows, 1720000);
  EXPECT_EQ(quick[0].src_rows, 7770000 / 16);
  EXPECT_EQ(full.back().name, "few_idx-d640000-f32");
  EXPECT_EQ(full.back().kind, IndexKind::few_idx);
  EXPECT_EQ(quick.back().cols, 640000 / 16);
  EXPECT_EQ(quick.back().src_rows, 100);
}

TEST(ScenarioTable, RealWorkloadsKeepTheirShapesWhenQuick) {
  for (bool quick : {false, true}) {
    int workloads = 0;
    for (const Scenario& s : default_scenarios(quick)) {
      if (s.kind == IndexKind::moe_topk) {
        EXPECT_EQ(s.src_rows % s.out_rows, 0) << s.name;
        EXPECT_LE(s.src_rows / s.out_rows, s.experts) << s.name;
      }
      workloads += s.kind == IndexKind::power_law || s.kind == IndexKind::zipf ||
                   s.kind == IndexKind::moe_topk;
    }
    EXPECT_EQ(workloads, 6);
  }
  const std::vector<Scenario> full = default_scenarios(false);
  const auto deepseek = std::find_if(full.begin(), full.end(), [](const Scenario& s) {
    return s.name == "moe_deepseek_v3-d7168-bf16";
  });
  ASSERT_NE(deepseek, full.end());
  EXPECT_EQ(deepseek->experts, 256);
  EXPECT_EQ(deepseek->src_rows / deepseek->out_rows, 8);
  EXPECT_EQ(index_kind_text(*deepseek), "moe_topk/256");
}

TEST(ScenarioTable, MoeKindNeedsExpertsAndWholeTopK) {
  std::vector<Scenario> scenarios;
  std::string error;
  EXPECT_FALSE(parse_scenario_table("m\tmoe_topk\t8\t4\t2\tbf16\t8\t4\t2\n", false, &scenarios, &error));
  EXPECT_FALSE(parse_scenario_table("m\tmoe_topk/4\t9\t4\t2\tbf16\t8\t4\t2\n", false, &scenarios, &error));
  EXPECT_NE(error.find("M = k * T"), std::string::npos) << error;
  EXPECT_FALSE(parse_scenario_table("m\tmoe_topk/2\t12\t4\t2\tbf16\t8\t4\t2\n", false, &scenarios, &error));
  EXPECT_FALSE(parse_scenario_table("m\tzipf/2\t12\t4\t2\tbf16\t8\t4\t2\n", false, &scenarios, &error));
  Scenario shape;
  ASSERT_TRUE(parse_shape("moe_topk/8:64:32:16:bf16", &shape, &error)) << error;
  EXPECT_EQ(shape.experts, 8);
  EXPECT_EQ(shape.name, "shape-moe_topk-e8-64-32-d16-bf16");
  EXPECT_FALSE(parse_shape("moe_topk/1:64:32:16:bf16", &shape, &error));
}

// How many times each target appears.
std::vector<int64_t> target_counts(const std::vector<int64_t>& index, int64_t out_rows) {
  std::vector<int64_t> counts(static_cast<size_t>(out_rows), 0);
  for (int64_t target : index) {
    EXPECT_GE(target, 0);
    EXPECT_LT(target, out_rows);
    if (target >= 0 && target < out_rows) ++counts[static_cast<size_t>(target)];
  }
  return counts;
}

TEST(IndexKinds, MoeTopKRoutesEachTokenToKDistinctExpertGroups) {
  const int64_t tokens = 4096, top_k = 8, experts = 64;
  const std::vector<int64_t> index = make_index(IndexKind::moe_topk, tokens * top_k, tokens, experts, 7);
  ASSERT_EQ(index.size(), static_cast<size_t>(tokens * top_k));
  for (int64_t count : target_counts(index, tokens)) ASSERT_EQ(count, top_k);
  // Expert-major, tokens strictly ascending within an expert: the index
  // breaks its ascent only between experts, and a token routed twice to one
  // expert would show as a repeat, which also breaks it.
  int64_t breaks = 0;
  for (size_t j = 1; j < index.size(); ++j) breaks += index[j] <= index[j - 1];
  EXPECT_LE(breaks, experts - 1);
  EXPECT_GE(breaks, experts / 2);  // the groups are not one ascending run
  EXPECT_EQ(index, make_index(IndexKind::moe_topk, tokens * top_k, tokens, experts, 7));
}

TEST(IndexKinds, ZipfMostFrequentIdHasItsExpectedShare) {
  const int64_t vocabulary = 1000, ids = 1000000;
  const std::vector<int64_t> index = make_index(IndexKind::zipf, ids, vocabulary, 0, 11);
  std::vector<int64_t> counts = target_counts(index, vocabulary);
  const int64_t hottest_id = std::max_element(counts.begin(), counts.end()) - counts.begin();
  double harmonic = 0;
  for (int64_t r = 1; r <= vocabulary; ++r) harmonic += 1.0 / static_cast<double>(r);
  // Rank 1 draws 1/H(1000) = 13.4% of the ids (binomial sd 0.03%), rank 2
  // half as many, rank 10 a tenth.
  std::sort(counts.rbegin(), counts.rend());
  EXPECT_NEAR(static_cast<double>(counts[0]) / ids, 1.0 / harmonic, 0.002);
  EXPECT_NEAR(static_cast<double>(counts[1]) / static_cast<double>(counts[0]), 0.5, 0.02);
  EXPECT_NEAR(static_cast<double>(counts[9]) / static_cast<double>(counts[0]), 0.1, 0.01);
  // Ranks are shuffled onto ids: the hottest is not simply id 0.
  EXPECT_NE(hottest_id, 0);
}

TEST(IndexKinds, PowerLawHasHubsFarAboveTheMeanDegree) {
  const int64_t nodes = 100000, messages = 5000000;  // mean in-degree 50
  const std::vector<int64_t> index = make_index(IndexKind::power_law, messages, nodes, 0, 5);
  const std::vector<int64_t> counts = target_counts(index, nodes);
  const int64_t hub = *std::max_element(counts.begin(), counts.end());
  // Rank 1 of r^-2/3 over 1e5 ranks: 1/(sum r^-2/3 ~ 136) = 0.73% of the messages.
  EXPECT_GT(hub, 100 * (messages / nodes));
  EXPECT_NEAR(static_cast<double>(hub) / messages, 0.0073, 0.0005);
  // A long tail: half the nodes get below the mean.
  const int64_t below_mean = std::count_if(counts.begin(), counts.end(), [&](int64_t c) {
    return c < messages / nodes;
  });
  EXPECT_GT(below_mean, nodes / 2);
  // Messages arrive unordered: about as many descents as ascents.
  int64_t descents = 0;
  for (size_t i = 1; i < index.size(); ++i) descents += index[i] < index[i - 1];
  EXPECT_NEAR(static_cast<double>(descents) / messages, 0.5, 0.01);
  EXPECT_EQ(index, make_index(IndexKind::power_law, messages, nodes, 0, 5));
}

TEST(ScenarioTable, RejectsMalformedLines) {
  std::vector<Scenario> scenarios;
  std::string error;
  EXPECT_FALSE(parse_scenario_table("a\tuniform\t1\t1\t1\tf32\t1\t1\n", false, &scenarios, &error));
  EXPECT_NE(error.find("line 1"), std::string::npos) << error;
  EXPECT_FALSE(parse_scenario_table("a\tnope\t1\t1\t1\tf32\t1\t1\t1\n", false, &scenarios, &error));
  EXPECT_FALSE(parse_scenario_table("a\tuniform\t1\t1\t1\tf32\t1\t1\t1\n"
                                    "a\tsorted\t1\t1\t1\tf32\t1\t1\t1\n",
                                    false, &scenarios, &error));
  EXPECT_NE(error.find("twice"), std::string::npos) << error;
  ASSERT_TRUE(parse_scenario_table("# comment\n\nb\tsorted\t8\t4\t2\tbf16\t2\t1\t2\n", true, &scenarios,
                                   &error))
      << error;
  ASSERT_EQ(scenarios.size(), 1u);
  EXPECT_EQ(scenarios[0].src_rows, 2);
  EXPECT_EQ(scenarios[0].dtype, SCATTERPTX_BF16);
}

TEST(Floors, BytesOfThePerformanceModel) {
  // M = 10 rows of 512 B, 8-byte index, 4 distinct targets.
  const FloorBytes floors = floor_bytes(10, 4, 512, 8);
  EXPECT_EQ(floors.ideal, 10 * 512 + 10 * 8 + 2 * 4 * 512);
  EXPECT_EQ(floors.no_reuse, 10 * 512 + 10 * 8 + 2 * 10 * 512);
  EXPECT_EQ(copy_bytes(10, 512), 2 * 10 * 512);
}

TEST(ErrorBound, CoversTheResultAndTheReferenceRounding) {
  const double u = std::ldexp(1.0, -8);
  const double u64 = std::ldexp(1.0, -53);
  const double tiny = std::ldexp(1.0, -126);
  EXPECT_DOUBLE_EQ(scatterptx_testing::rounding_error_bound(SCATTERPTX_BF16, 3, 2.0),
                   4 * ((u + u64) * 2.0 + tiny));
  // f64: the float64 reference rounds as much as the result.
  EXPECT_DOUBLE_EQ(scatterptx_testing::rounding_error_bound(SCATTERPTX_F64, 0, 1.0),
                   2 * u64 + std::ldexp(1.0, -1022));
}

}  // namespace
}  // namespace scatterptx_bench

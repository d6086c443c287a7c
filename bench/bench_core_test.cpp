// Host-only checks of the benchmark core: the compiled-in scenario table,
// the floors and the error bound.
#include <gtest/gtest.h>

#include <cmath>
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
  ASSERT_EQ(full.size(), 27u);
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

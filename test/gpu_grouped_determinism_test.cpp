// Deterministic grouped execution gives the same bits across runs, entry
// points, streams and warps_per_cta; and summing each segment in f32 with
// one rounding per out row keeps a bf16 hot row within 1% of float64.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_harness.hpp"
#include "group_case.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"

namespace scatterptx_test {
namespace {

// A hot target taking half the rows, the rest uniform: long segments summed
// in tile pieces next to short ones, where an order that depends on timing
// would show first.
constexpr int64_t kHotRow = 3;

HostScatter make_hot_scatter(const ScatterShape& s, uint64_t seed) {
  HostScatter host = make_random_scatter(s, seed);
  host.index =
      hot_target_index(s.src_rows, s.out_rows, kHotRow, s.src_rows / 2, derive_seed(seed, 7));
  return host;
}

// One run from out0; returns what it left in out.
HostMatrix run_from_out0(DeviceScatter& device, const HostScatter& host,
                         const scatterptx_group_options& options, GroupEntry entry,
                         CUstream stream) {
  device.reset_out(host.out0);
  run_grouped(device, host, device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD), options,
              entry, stream);
  return device.download_out();
}

class GroupedDeterminismTest : public ::testing::TestWithParam<scatterptx_dtype> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }
};

TEST_P(GroupedDeterminismTest, RepeatedRunsAreBitwiseIdentical) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = contiguous_shape(GetParam(), 1000, 40000, 128);
  SCOPED_TRACE(s.describe());
  const HostScatter host = make_hot_scatter(s, seed);
  DeviceScatter device(s, host);
  const scatterptx_group_options options = group_options(GroupMode::kDeterministic);

  const HostMatrix first = run_from_out0(device, host, options, GroupEntry::kSingleShot, nullptr);
  if (HasFatalFailure()) return;
  expect_scatter_result(s, host, device, 1);
  // Nine more, rotating the entry point and alternating streams.
  Stream stream;
  for (int run = 1; run < 10; ++run) {
    const GroupEntry entry = all_group_entries()[static_cast<size_t>(run) % 3];
    const HostMatrix got =
        run_from_out0(device, host, options, entry, run % 2 == 1 ? stream.get() : nullptr);
    if (HasFatalFailure()) return;
    EXPECT_EQ(first_difference(first, got), "")
        << "run " << run << " (" << group_entry_name(entry) << ") differs from run 0";
  }
}

// plan_describe's text of a plan of device's problem under options.
std::string described_plan(const DeviceScatter& device, const scatterptx_group_options& options) {
  const scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  ScopedPlan plan;
  const scatterptx_status created = scatterptx_plan_create(&args, &options, nullptr, 0, nullptr, plan.receive());
  EXPECT_EQ(created, SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  return created == SCATTERPTX_SUCCESS ? describe_group_plan(plan.get()) : "(plan_create failed)";
}

TEST_P(GroupedDeterminismTest, WarpsPerCtaChangeTheGridNotTheBits) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = contiguous_shape(GetParam(), 1000, 40000, 128);
  SCOPED_TRACE(s.describe());
  const HostScatter host = make_hot_scatter(s, seed);
  DeviceScatter device(s, host);

  // The summing grid does change: the same bits below come from different grids.
  const std::string with_4_warps = described_plan(device, group_options(GroupMode::kDeterministic, 4));
  const std::string with_8_warps = described_plan(device, group_options(GroupMode::kDeterministic, 8));
  EXPECT_EQ(plan_number(with_4_warps, "summing_warps"), 4) << with_4_warps;
  EXPECT_EQ(plan_number(with_8_warps, "summing_warps"), 8) << with_8_warps;
  EXPECT_GT(plan_number(with_4_warps, "grid"), 0) << with_4_warps;
  EXPECT_NE(plan_number(with_4_warps, "grid"), plan_number(with_8_warps, "grid"))
      << with_4_warps << "\n" << with_8_warps;

  const HostMatrix with_4 = run_from_out0(device, host, group_options(GroupMode::kDeterministic, 4),
                                          GroupEntry::kPlanOwnWorkspace, nullptr);
  if (HasFatalFailure()) return;
  expect_scatter_result(s, host, device, 1);
  for (uint32_t warps : {8u, 4u, 0u}) {  // 0: the planner's
    for (GroupEntry entry : {GroupEntry::kSingleShot, GroupEntry::kPlanOwnWorkspace}) {
      const HostMatrix got = run_from_out0(
          device, host, group_options(GroupMode::kDeterministic, warps), entry, nullptr);
      if (HasFatalFailure()) return;
      EXPECT_EQ(first_difference(with_4, got), "")
          << "warps_per_cta " << warps << " (" << group_entry_name(entry)
          << ") differs from warps_per_cta 4";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sm90, GroupedDeterminismTest,
                         ::testing::Values(SCATTERPTX_F32, SCATTERPTX_BF16),
                         [](const ::testing::TestParamInfo<scatterptx_dtype>& info) {
                           return std::string(dtype_name(info.param));
                         });

class GroupedAccuracyTest : public ::testing::TestWithParam<GroupMode> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }
};

TEST_P(GroupedAccuracyTest, Bf16HotRowWithinOnePercent) {
  // 100000 of 200000 rows into one row. Once that row's running sum passes
  // 128, a bf16 ulp is 1 and every bf16 addition of a term below 1 rounds;
  // accumulating in f32 and rounding once per out row keeps the row within
  // the one final bf16 rounding (2^-8) of the float64 sum.
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  const ScatterShape s = contiguous_shape(SCATTERPTX_BF16, 1000, 200000, 128);
  SCOPED_TRACE(s.describe());
  const HostScatter host = make_hot_scatter(s, seed);
  DeviceScatter device(s, host);
  for (GroupEntry entry : {GroupEntry::kSingleShot, GroupEntry::kPlanOwnWorkspace}) {
    const HostMatrix got = run_from_out0(device, host, group_options(GetParam()), entry, nullptr);
    if (HasFatalFailure()) return;
    expect_scatter_result(s, host, device, 1);
    const double error = row_relative_error(host, got, kHotRow);
    EXPECT_LT(error, 1e-2) << "||got - ref|| / ||ref|| of the hot row (" << group_entry_name(entry)
                           << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Sm90, GroupedAccuracyTest,
                         ::testing::Values(GroupMode::kSegmented, GroupMode::kDeterministic),
                         [](const ::testing::TestParamInfo<GroupMode>& info) {
                           return std::string(group_mode_name(info.param));
                         });

}  // namespace
}  // namespace scatterptx_test

// The C++ layer (scatterptx.hpp): errors become scatterptx::Error with the
// C ABI's status and message, Plan owns its handle (move-only, empty after a
// move), and the wrappers pass their arguments through unchanged. The host
// tests need no GPU; the last test runs a Plan on one.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>

#include "driver_api.hpp"
#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"
#include "scatterptx/scatterptx.hpp"

namespace scatterptx_test {
namespace {

static_assert(!std::is_copy_constructible_v<scatterptx::Plan>, "Plan owns its handle");
static_assert(!std::is_copy_assignable_v<scatterptx::Plan>, "Plan owns its handle");
static_assert(std::is_nothrow_move_constructible_v<scatterptx::Plan>, "Plan moves without throwing");
static_assert(std::is_nothrow_move_assignable_v<scatterptx::Plan>, "Plan moves without throwing");
static_assert(std::is_nothrow_destructible_v<scatterptx::Plan>, "Plan's destructor cannot throw");

void* fake_pointer(uintptr_t address) { return reinterpret_cast<void*>(address); }

// Fake device tensors 1 TiB apart: validation checks them, never reads them.
constexpr uintptr_t kTiB = uintptr_t{1} << 40;

scatterptx::Matrix<void*> fake_out() { return {fake_pointer(1 * kTiB), 1000, 64, 64}; }
scatterptx::Matrix<const void*> fake_src() { return {fake_pointer(2 * kTiB), 4096, 64, 64}; }
const void* fake_index() { return fake_pointer(3 * kTiB); }

scatterptx_scatter_add_args fake_args() {
  return scatterptx::make_args(fake_out(), fake_src(), SCATTERPTX_F32, fake_index(),
                               SCATTERPTX_INDEX_INT64);
}

bool driver_present() { return scatterptx::detail::driver_api(nullptr) != nullptr; }

// Runs body, which must throw scatterptx::Error with status, and returns
// the error's message.
template <typename Body>
std::string expect_error(scatterptx_status status, Body body) {
  try {
    body();
  } catch (const scatterptx::Error& error) {
    EXPECT_EQ(error.status(), status) << error.what();
    EXPECT_NE(std::string(error.what()).find(scatterptx_status_name(status)), std::string::npos)
        << "the message names the status: " << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no scatterptx::Error thrown; expected " << scatterptx_status_name(status);
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CppApi, MakeArgsFillsEveryField) {
  const scatterptx_scatter_add_args args =
      scatterptx::make_args({fake_pointer(1 * kTiB), 10, 3, 8}, {fake_pointer(2 * kTiB), 7, 3, 5},
                            SCATTERPTX_F64, fake_index(), SCATTERPTX_INDEX_INT32,
                            SCATTERPTX_INDEX_CHECKED);
  EXPECT_EQ(args.out, fake_pointer(1 * kTiB));
  EXPECT_EQ(args.out_rows, 10);
  EXPECT_EQ(args.out_row_stride, 8);
  EXPECT_EQ(args.src, fake_pointer(2 * kTiB));
  EXPECT_EQ(args.src_rows, 7);
  EXPECT_EQ(args.src_row_stride, 5);
  EXPECT_EQ(args.cols, 3);
  EXPECT_EQ(args.dtype, SCATTERPTX_F64);
  EXPECT_EQ(args.index, fake_index());
  EXPECT_EQ(args.index_type, SCATTERPTX_INDEX_INT32);
  EXPECT_EQ(args.index_check, SCATTERPTX_INDEX_CHECKED);
  EXPECT_EQ(args.path, SCATTERPTX_PATH_AUTO);
  EXPECT_EQ(args.schedule, nullptr);
  // The rest is args_init's: the default call, a plain sum.
  EXPECT_EQ(args.grouping, SCATTERPTX_GROUPING_AUTO);
  EXPECT_EQ(args.weights, nullptr);
  EXPECT_EQ(args.weights_dtype, SCATTERPTX_F32);
  EXPECT_EQ(args.reduce, SCATTERPTX_REDUCE_SUM);
  EXPECT_EQ(args.include_self, 1);
}

TEST(CppApi, WithReduceAndWithWeightsSetOnlyTheirFields) {
  const scatterptx_scatter_add_args base =
      scatterptx::make_args(fake_out(), fake_src(), SCATTERPTX_BF16, fake_index(), SCATTERPTX_INDEX_INT64);
  const scatterptx_scatter_add_args amax = scatterptx::with_reduce(base, SCATTERPTX_REDUCE_AMAX, false);
  EXPECT_EQ(amax.reduce, SCATTERPTX_REDUCE_AMAX);
  EXPECT_EQ(amax.include_self, 0);
  EXPECT_EQ(scatterptx::with_reduce(base, SCATTERPTX_REDUCE_MEAN).include_self, 1);
  const void* const weights = fake_pointer(5 * kTiB);
  const scatterptx_scatter_add_args weighted = scatterptx::with_weights(base, weights, SCATTERPTX_BF16);
  EXPECT_EQ(weighted.weights, weights);
  EXPECT_EQ(weighted.weights_dtype, SCATTERPTX_BF16);
  EXPECT_EQ(scatterptx::with_weights(base, weights).weights_dtype, SCATTERPTX_F32);
  // Every other field as make_args left it (field by field: padding is not copied).
  for (const scatterptx_scatter_add_args* changed : {&amax, &weighted}) {
    EXPECT_TRUE(changed->out == base.out && changed->out_rows == base.out_rows &&
                changed->out_row_stride == base.out_row_stride && changed->src == base.src &&
                changed->src_rows == base.src_rows && changed->src_row_stride == base.src_row_stride &&
                changed->cols == base.cols && changed->dtype == base.dtype && changed->index == base.index &&
                changed->index_type == base.index_type && changed->index_check == base.index_check &&
                changed->path == base.path && changed->schedule == base.schedule &&
                changed->grouping == base.grouping);
  }
  EXPECT_EQ(amax.weights, base.weights);
  EXPECT_EQ(weighted.reduce, base.reduce);
  EXPECT_EQ(weighted.include_self, base.include_self);
}

TEST(CppApi, ColumnMismatchThrowsBeforeTheLibraryIsCalled) {
  scatterptx::Matrix<const void*> src = fake_src();
  src.cols = 63;
  const std::string message = expect_error(SCATTERPTX_ERROR_INVALID_ARGUMENT, [&] {
    scatterptx::make_args(fake_out(), src, SCATTERPTX_F32, fake_index(), SCATTERPTX_INDEX_INT64);
  });
  EXPECT_TRUE(contains(message, "64") && contains(message, "63")) << message;
  expect_error(SCATTERPTX_ERROR_INVALID_ARGUMENT, [&] {
    scatterptx::scatter_add(fake_out(), src, SCATTERPTX_F32, fake_index(), SCATTERPTX_INDEX_INT64,
                            nullptr);
  });
}

TEST(CppApi, GroupOptionsPassedThrough) {
  const scatterptx_group_options defaults = scatterptx::group_options();
  EXPECT_EQ(defaults.mode, SCATTERPTX_MODE_AUTO);
  EXPECT_EQ(defaults.deterministic, 0);
  EXPECT_EQ(defaults.warps_per_cta, 0u);
  const scatterptx_group_options set =
      scatterptx::group_options(SCATTERPTX_MODE_SEGMENTED, true, 8);
  EXPECT_EQ(set.mode, SCATTERPTX_MODE_SEGMENTED);
  EXPECT_EQ(set.deterministic, 1);
  EXPECT_EQ(set.warps_per_cta, 8u);
}

TEST(CppApi, WorkspaceSizeMatchesTheCAbi) {
  const scatterptx_scatter_add_args args = fake_args();
  for (scatterptx_mode mode : {SCATTERPTX_MODE_STREAMING, SCATTERPTX_MODE_SEGMENTED}) {
    const scatterptx_group_options options = scatterptx::group_options(mode);
    size_t expected = 0;
    ASSERT_EQ(scatterptx_plan_workspace_size(&args, &options, &expected), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    EXPECT_EQ(scatterptx::plan_workspace_size(args, options), expected) << "mode " << mode;
  }
  EXPECT_GT(scatterptx::plan_workspace_size(args, scatterptx::group_options(SCATTERPTX_MODE_SEGMENTED)),
            0u);
  scatterptx_scatter_add_args bad = args;
  bad.src_rows = -1;
  const std::string message = expect_error(SCATTERPTX_ERROR_INVALID_ARGUMENT,
                                           [&] { scatterptx::plan_workspace_size(bad); });
  EXPECT_TRUE(contains(message, "src_rows")) << message;
}

TEST(CppApi, GroupedCallRefusesTooSmallAWorkspace) {
  const scatterptx_scatter_add_args args = fake_args();
  const scatterptx_group_options segmented = scatterptx::group_options(SCATTERPTX_MODE_SEGMENTED);
  const size_t needed = scatterptx::plan_workspace_size(args, segmented);
  const std::string message = expect_error(SCATTERPTX_ERROR_INVALID_ARGUMENT, [&] {
    scatterptx::scatter_add_grouped(args, fake_pointer(4 * kTiB), needed - 1, nullptr, segmented);
  });
  EXPECT_TRUE(contains(message, std::to_string(needed))) << message;
}

// Validation comes before the driver is touched, so these hold with or
// without a GPU, and no plan is made.
TEST(CppApiPlan, InvalidArgumentsThrowBeforeTheDriver) {
  scatterptx_scatter_add_args null_out = fake_args();
  null_out.out = nullptr;
  std::string message = expect_error(SCATTERPTX_ERROR_INVALID_ARGUMENT,
                                     [&] { scatterptx::Plan plan(null_out, nullptr); });
  EXPECT_TRUE(contains(message, "out")) << message;

  const scatterptx_group_options too_many_warps =
      scatterptx::group_options(SCATTERPTX_MODE_SEGMENTED, false, 33);
  message = expect_error(SCATTERPTX_ERROR_INVALID_ARGUMENT,
                         [&] { scatterptx::Plan plan(fake_args(), nullptr, too_many_warps); });
  EXPECT_TRUE(contains(message, "warps_per_cta")) << message;

  const scatterptx_group_options deterministic_streaming =
      scatterptx::group_options(SCATTERPTX_MODE_STREAMING, true);
  expect_error(SCATTERPTX_ERROR_INVALID_ARGUMENT,
               [&] { scatterptx::Plan plan(fake_args(), nullptr, deterministic_streaming); });
}

TEST(CppApiPlan, WithoutADriverConstructionThrowsNoDriver) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is present";
  const std::string message =
      expect_error(SCATTERPTX_ERROR_NO_DRIVER, [&] { scatterptx::Plan plan(fake_args(), nullptr); });
  EXPECT_TRUE(contains(message, "libcuda")) << message;
  EXPECT_TRUE(contains(message, scatterptx_last_error_message()))
      << "the library's own message is carried: " << message;
}

TEST(CppApiPlan, EmptyPlanRefusesToExecuteOrDescribe) {
  scatterptx::Plan plan;
  EXPECT_FALSE(plan);
  EXPECT_EQ(plan.get(), nullptr);
  std::string message = expect_error(SCATTERPTX_ERROR_INVALID_ARGUMENT, [&] {
    plan.execute(fake_pointer(1 * kTiB), fake_pointer(2 * kTiB), nullptr);
  });
  EXPECT_TRUE(contains(message, "plan")) << message;
  message = expect_error(SCATTERPTX_ERROR_INVALID_ARGUMENT, [&] { plan.describe(); });
  EXPECT_TRUE(contains(message, "plan")) << message;
  plan.destroy();  // nothing to free: no error
  EXPECT_EQ(plan.release(), nullptr);
}

TEST(CppApiPlan, MovesOfEmptyPlansStayEmpty) {
  scatterptx::Plan first;
  scatterptx::Plan second(std::move(first));
  EXPECT_FALSE(first);
  EXPECT_FALSE(second);
  second = std::move(first);
  EXPECT_FALSE(second);
  second = std::move(second);  // self-move keeps the (empty) plan intact
  EXPECT_FALSE(second);
}

// ---- On a GPU: a Plan made, moved, described, executed and destroyed ----

TEST(CppApiPlanOnGpu, MovedPlanExecutesAndTheSourceIsEmpty) {
  SCATTERPTX_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  ScatterShape shape;
  shape.dtype = SCATTERPTX_F32;
  shape.index_type = SCATTERPTX_INDEX_INT64;
  shape.out_rows = 500;
  shape.src_rows = 5000;
  shape.cols = 96;
  SCOPED_TRACE(shape.describe());
  const HostScatter host = make_random_scatter(shape, seed);
  DeviceScatter device(shape, host);
  const scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);

  scatterptx::Plan made(args, nullptr, scatterptx::group_options(SCATTERPTX_MODE_SEGMENTED, true));
  ASSERT_TRUE(made);
  const scatterptx_plan handle = made.get();
  scatterptx::Plan moved(std::move(made));
  EXPECT_FALSE(made);
  EXPECT_EQ(made.get(), nullptr);
  EXPECT_EQ(moved.get(), handle);
  scatterptx::Plan assigned;
  assigned = std::move(moved);
  EXPECT_FALSE(moved);
  EXPECT_EQ(assigned.get(), handle);

  EXPECT_TRUE(contains(assigned.describe(), "mode=segmented")) << assigned.describe();
  assigned.execute(args.out, args.src, nullptr);
  expect_scatter_result(shape, host, device, 1);
  assigned.destroy();
  EXPECT_FALSE(assigned);
}

}  // namespace
}  // namespace scatterptx_test

// Host-only: launching a plan over more than 2^31 source rows, which runs as
// several launch slices, against a scripted driver. Every slice's parameters
// and tensor map are made before the first launch, so a failure while
// making them enqueues nothing; a launch the driver refuses after earlier
// slices were enqueued fails naming the source rows of those slices.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "errors.hpp"
#include "kernel_launch.hpp"
#include "kernel_params.hpp"
#include "launch.hpp"
#include "plan.hpp"

namespace {

using scatterptx::detail::ContextState;
using scatterptx::detail::DeviceLimits;
using scatterptx::detail::DriverApi;
using scatterptx::detail::Failure;
using scatterptx::detail::kMaxPrivateRowsPerLaunch;
using scatterptx::detail::kMaxTmaRowsPerLaunch;
using scatterptx::detail::launch_call_name;
using scatterptx::detail::launch_plan;
using scatterptx::detail::make_plan;
using scatterptx::detail::Problem;
using scatterptx::detail::RowPrivateParams;
using scatterptx::detail::RowRedParams;
using scatterptx::detail::RowTmaReduceParams;
using scatterptx::detail::StreamingPlan;

constexpr uint64_t kOut = uint64_t{1} << 40;
constexpr uint64_t kSrc = uint64_t{2} << 40;
constexpr uint64_t kIndex = uint64_t{3} << 40;
CUstream const kStream = reinterpret_cast<CUstream>(uintptr_t{0x5700});

// One launch as the scripted driver saw it.
struct SeenLaunch {
  unsigned grid_x = 0;
  unsigned grid_y = 0;
  uint64_t rows = 0;
  uint64_t row_base = 0;
  uint64_t index_ptr = 0;
  uint64_t src_address = 0;  // the src tensor map's (0 for the red path, which has none)
};

// What the scripted driver was asked, and which of its calls fail.
struct Script {
  int encodes = 0;
  int failing_encode = -1;  // this encode (0-based) fails; -1: none
  int launch_calls = 0;
  int failing_launch = -1;  // this launch (0-based) fails; -1: none
  std::vector<SeenLaunch> enqueued;
  // Where the fields sit in the launching family's kernelParams.
  int rows_at = -1;
  int row_base_at = -1;
  int index_ptr_at = -1;
  bool has_map = false;
};
Script script;

template <typename Params>
int field_position(const char* name) {
  for (std::size_t i = 0; i < std::size(Params::kFields); ++i) {
    if (std::strcmp(Params::kFields[i].name, name) == 0) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no field " << name;
  return -1;
}

template <typename Params>
void expect_family(bool has_map) {
  script.rows_at = field_position<Params>("rows");
  script.row_base_at = field_position<Params>("row_base");
  script.index_ptr_at = field_position<Params>("index_ptr");
  script.has_map = has_map;
}

// The fake map records its globalAddress in its first bytes.
CUresult encode_tiled(CUtensorMap* map, CUtensorMapDataType, cuuint32_t, void* address, const cuuint64_t*,
                      const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                      CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  if (script.encodes++ == script.failing_encode) return CUDA_ERROR_INVALID_VALUE;
  std::memset(map, 0, sizeof *map);
  const uint64_t value = reinterpret_cast<uint64_t>(address);
  std::memcpy(map, &value, sizeof value);
  return CUDA_SUCCESS;
}

CUresult launch_kernel(CUfunction, unsigned grid_x, unsigned grid_y, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream stream, void** params, void**) {
  EXPECT_EQ(stream, kStream);
  if (script.launch_calls++ == script.failing_launch) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  SeenLaunch seen;
  seen.grid_x = grid_x;
  seen.grid_y = grid_y;
  std::memcpy(&seen.rows, params[script.rows_at], 8);
  std::memcpy(&seen.row_base, params[script.row_base_at], 8);
  std::memcpy(&seen.index_ptr, params[script.index_ptr_at], 8);
  if (script.has_map) std::memcpy(&seen.src_address, params[0], 8);  // src_map is every TMA family's first
  script.enqueued.push_back(seen);
  return CUDA_SUCCESS;
}

// The programmatic launch (host/kernel_launch.hpp) as the plain one above,
// after checking that it asks for programmatic stream serialization.
CUresult launch_kernel_ex(const CUlaunchConfig* config, CUfunction function, void** params, void** extra) {
  EXPECT_EQ(config->numAttrs, 1u);
  if (config->numAttrs == 1) {
    EXPECT_EQ(config->attrs[0].id, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
    EXPECT_EQ(config->attrs[0].value.programmaticStreamSerializationAllowed, 1);
  }
  EXPECT_EQ(config->gridDimZ, 1u);
  EXPECT_EQ(config->blockDimY, 1u);
  return launch_kernel(function, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                       config->blockDimY, config->blockDimZ, config->sharedMemBytes, config->hStream, params, extra);
}

CUresult error_name(CUresult result, const char** name) {
  *name = result == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  return CUDA_SUCCESS;
}

DriverApi scripted_api() {
  DriverApi api;  // entry points left null are never reached here
  api.cuTensorMapEncodeTiled = encode_tiled;
  api.cuLaunchKernel = launch_kernel;
  api.cuLaunchKernelEx = launch_kernel_ex;
  api.cuGetErrorName = error_name;
  return api;
}

// 64 f32 columns, 256-byte rows: every path takes it; src_rows past 2^32
// gives the TMA path three slices (2^31 - 1, 2^31 - 1 and 7 rows).
Problem problem_over_2pow32_rows(scatterptx_path path, uint64_t out_rows = 1000) {
  Problem p;
  p.dtype = SCATTERPTX_F32;
  p.index_type = SCATTERPTX_INDEX_INT64;
  p.path = path;
  p.elem_bytes = 4;
  p.index_bytes = 8;
  p.out_rows = out_rows;
  p.src_rows = (uint64_t{1} << 32) + 5;
  p.cols = 64;
  p.out_row_stride_bytes = 256;
  p.src_row_stride_bytes = 256;
  p.out_address = kOut;
  p.src_address = kSrc;
  p.index_address = kIndex;
  return p;
}

class LaunchSlicesTest : public ::testing::Test {
 protected:
  void SetUp() override { script = Script{}; }

  // Runs launch_plan; "" when it succeeded, else the failure's message.
  std::string launch(const Problem& p, const StreamingPlan& plan) {
    try {
      launch_plan(api_, state_, p, plan, /*index_error_slot=*/0x900, kStream);
    } catch (const Failure& failure) {
      status_ = failure.status();
      return failure.what();
    }
    return "";
  }

  const DriverApi api_ = scripted_api();
  ContextState state_;
  scatterptx_status status_ = SCATTERPTX_SUCCESS;
};

TEST_F(LaunchSlicesTest, EachSliceLaunchesItsOwnRowsAndTensorMap) {
  const Problem p = problem_over_2pow32_rows(SCATTERPTX_PATH_TMA);
  const StreamingPlan plan = make_plan(p, DeviceLimits{});
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_TMA);
  ASSERT_EQ(plan.launches.size(), 3u);
  expect_family<RowTmaReduceParams>(true);
  ASSERT_EQ(launch(p, plan), "");
  ASSERT_EQ(script.enqueued.size(), 3u);
  uint64_t begin = 0;
  for (const SeenLaunch& seen : script.enqueued) {
    EXPECT_EQ(seen.row_base, begin);
    EXPECT_EQ(seen.index_ptr, kIndex + 8 * begin);
    EXPECT_EQ(seen.src_address, kSrc + 256 * begin);
    EXPECT_LE(seen.rows, kMaxTmaRowsPerLaunch);
    begin += seen.rows;
  }
  EXPECT_EQ(begin, p.src_rows);
}

TEST_F(LaunchSlicesTest, ATensorMapThatCannotBeMadeForALaterSliceEnqueuesNothing) {
  const Problem p = problem_over_2pow32_rows(SCATTERPTX_PATH_TMA);
  const StreamingPlan plan = make_plan(p, DeviceLimits{});
  ASSERT_EQ(plan.launches.size(), 3u);
  expect_family<RowTmaReduceParams>(true);
  for (int failing = 0; failing < 3; ++failing) {
    SCOPED_TRACE("encode " + std::to_string(failing) + " fails");
    script = Script{};
    expect_family<RowTmaReduceParams>(true);
    script.failing_encode = failing;
    const std::string message = launch(p, plan);
    EXPECT_EQ(status_, SCATTERPTX_ERROR_DRIVER);
    EXPECT_NE(message.find("cuTensorMapEncodeTiled"), std::string::npos) << message;
    EXPECT_EQ(script.launch_calls, 0) << "a slice was launched before every slice's tensor map was made";
  }
}

TEST_F(LaunchSlicesTest, APrivatisedPlanMakesEverySliceBeforeLaunching) {
  const Problem p = problem_over_2pow32_rows(SCATTERPTX_PATH_PRIVATE, 100);
  const StreamingPlan plan = make_plan(p, DeviceLimits{});
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_PRIVATE);
  ASSERT_EQ(plan.launches.size(), 3u);
  expect_family<RowPrivateParams>(true);
  script.failing_encode = 2;
  EXPECT_NE(launch(p, plan), "");
  EXPECT_EQ(script.launch_calls, 0);

  script = Script{};
  expect_family<RowPrivateParams>(true);
  ASSERT_EQ(launch(p, plan), "");
  ASSERT_EQ(script.enqueued.size(), 3u);
  uint64_t begin = 0;
  for (const SeenLaunch& seen : script.enqueued) {
    EXPECT_EQ(seen.row_base, begin);
    EXPECT_EQ(seen.src_address, kSrc + 256 * begin);
    EXPECT_LE(seen.rows, kMaxPrivateRowsPerLaunch);
    begin += seen.rows;
  }
  EXPECT_EQ(begin, p.src_rows);
}

TEST_F(LaunchSlicesTest, AFirstLaunchRefusedEnqueuesNothingAndSaysSo) {
  const Problem p = problem_over_2pow32_rows(SCATTERPTX_PATH_TMA);
  const StreamingPlan plan = make_plan(p, DeviceLimits{});
  expect_family<RowTmaReduceParams>(true);
  script.failing_launch = 0;
  const std::string message = launch(p, plan);
  EXPECT_EQ(status_, SCATTERPTX_ERROR_DRIVER);
  EXPECT_TRUE(script.enqueued.empty());
  EXPECT_NE(message.find(std::string(launch_call_name()) + " failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("launch 1 of 3 (source rows [0, 2147483647))"), std::string::npos) << message;
  EXPECT_EQ(message.find("enqueued"), std::string::npos) << message;
  EXPECT_EQ(script.launch_calls, 1) << "no launch after the refused one";
}

TEST_F(LaunchSlicesTest, ALaterLaunchRefusedNamesTheRowsAlreadyEnqueued) {
  const Problem p = problem_over_2pow32_rows(SCATTERPTX_PATH_TMA);
  const StreamingPlan plan = make_plan(p, DeviceLimits{});
  expect_family<RowTmaReduceParams>(true);
  script.failing_launch = 1;
  const std::string message = launch(p, plan);
  EXPECT_EQ(status_, SCATTERPTX_ERROR_DRIVER);
  ASSERT_EQ(script.enqueued.size(), 1u) << "the first slice stays enqueued: a launch cannot be taken back";
  EXPECT_EQ(script.enqueued[0].row_base, 0u);
  EXPECT_EQ(script.launch_calls, 2) << "no launch after the refused one";
  EXPECT_NE(message.find("launch 2 of 3 (source rows [2147483647, 4294967294))"), std::string::npos) << message;
  EXPECT_NE(message.find("launches 1-1 (source rows [0, 2147483647)) were enqueued before it and stay enqueued, "
                         "the later rows are not launched"),
            std::string::npos)
      << message;
}

TEST_F(LaunchSlicesTest, TheLastLaunchRefusedNamesEveryEarlierSlice) {
  const Problem p = problem_over_2pow32_rows(SCATTERPTX_PATH_TMA);
  const StreamingPlan plan = make_plan(p, DeviceLimits{});
  expect_family<RowTmaReduceParams>(true);
  script.failing_launch = 2;
  const std::string message = launch(p, plan);
  EXPECT_EQ(script.enqueued.size(), 2u);
  EXPECT_NE(message.find("launch 3 of 3 (source rows [4294967294, 4294967301))"), std::string::npos) << message;
  EXPECT_NE(message.find("launches 1-2 (source rows [0, 4294967294))"), std::string::npos) << message;
}

TEST_F(LaunchSlicesTest, TheRedPathIsOneLaunchWhoseRefusalNamesNoSlices) {
  const Problem p = problem_over_2pow32_rows(SCATTERPTX_PATH_RED);
  const StreamingPlan plan = make_plan(p, DeviceLimits{});
  ASSERT_EQ(plan.path, SCATTERPTX_PATH_RED);
  ASSERT_EQ(plan.launches.size(), 1u);
  expect_family<RowRedParams>(false);
  script.failing_launch = 0;
  const std::string message = launch(p, plan);
  EXPECT_EQ(status_, SCATTERPTX_ERROR_DRIVER);
  EXPECT_EQ(message, std::string(launch_call_name()) + " failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  EXPECT_EQ(script.encodes, 0);
}

}  // namespace

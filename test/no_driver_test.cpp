// Without libcuda every entry point that needs the driver answers
// SCATTERPTX_ERROR_NO_DRIVER with a message instead of failing to load or
// crashing.
#include <gtest/gtest.h>

#include <string>

#include "driver_api.hpp"
#include "scatterptx/scatterptx.h"
#include "scatterptx/scatterptx.hpp"

namespace {

class NoDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (scatterptx::detail::driver_api(nullptr) != nullptr) {
      GTEST_SKIP() << "a CUDA driver is present";
    }
  }

  static scatterptx_scatter_add_args valid_args() {
    scatterptx_scatter_add_args args;
    scatterptx_scatter_add_args_init(&args);
    args.out = reinterpret_cast<void*>(0x10000);
    args.out_rows = 16;
    args.out_row_stride = 32;
    args.src = reinterpret_cast<const void*>(0x20000);
    args.src_rows = 5;
    args.src_row_stride = 32;
    args.cols = 32;
    args.index = reinterpret_cast<const void*>(0x30000);
    return args;
  }

  static void expect_no_driver(scatterptx_status status) {
    EXPECT_EQ(status, SCATTERPTX_ERROR_NO_DRIVER) << scatterptx_status_name(status);
    EXPECT_STRNE(scatterptx_last_error_message(), "");
  }
};

TEST_F(NoDriverTest, ScatterAdd) {
  const scatterptx_scatter_add_args args = valid_args();
  expect_no_driver(scatterptx_scatter_add(&args, nullptr));
  EXPECT_NE(std::string(scatterptx_last_error_message()).find("libcuda"), std::string::npos)
      << scatterptx_last_error_message();
}

TEST_F(NoDriverTest, Prepare) { expect_no_driver(scatterptx_prepare()); }

TEST_F(NoDriverTest, TrimWorkspacePool) { expect_no_driver(scatterptx_trim_workspace_pool()); }

TEST_F(NoDriverTest, TakeIndexError) {
  int64_t position = 12345;
  expect_no_driver(scatterptx_take_index_error(&position));
}

TEST_F(NoDriverTest, DescribePlan) {
  const scatterptx_scatter_add_args args = valid_args();
  char buffer[256] = {};
  expect_no_driver(scatterptx_describe_plan(&args, buffer, sizeof buffer));
}

TEST_F(NoDriverTest, CppLayerThrowsNoDriver) {
  try {
    scatterptx::prepare();
    FAIL() << "prepare() did not throw";
  } catch (const scatterptx::Error& error) {
    EXPECT_EQ(error.status(), SCATTERPTX_ERROR_NO_DRIVER);
    EXPECT_NE(std::string(error.what()).find("SCATTERPTX_ERROR_NO_DRIVER"), std::string::npos)
        << error.what();
  }
  try {
    scatterptx::take_index_error();
    FAIL() << "take_index_error() did not throw";
  } catch (const scatterptx::Error& error) {
    EXPECT_EQ(error.status(), SCATTERPTX_ERROR_NO_DRIVER);
  }
}

}  // namespace

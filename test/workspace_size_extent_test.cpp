// scatterptx_plan_workspace_size reads shapes only, without pointers: it
// must refuse the shapes scatter_add would (tensors spanning more than 2^62
// bytes), not answer with a size whose arithmetic wrapped. Found by
// fuzz/fuzz_validate with UBSan's unsigned-integer-overflow check.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "scatterptx/scatterptx.h"

namespace {

// 2^32 - 1 source rows of 2^40 f32 columns: about 2^74 bytes of src, and a
// SEGMENTED workspace of 2 * 2^24 partial rows of 2^42 bytes each.
scatterptx_scatter_add_args huge_shape() {
  scatterptx_scatter_add_args args;
  scatterptx_scatter_add_args_init(&args);
  args.out_rows = 1;
  args.src_rows = (int64_t{1} << 32) - 1;
  args.cols = int64_t{1} << 40;
  args.out_row_stride = args.cols;
  args.src_row_stride = args.cols;
  return args;
}

TEST(WorkspaceSizeExtent, RefusesTensorsBeyond2Pow62BytesInsteadOfWrapping) {
  const scatterptx_scatter_add_args args = huge_shape();
  scatterptx_group_options options;
  scatterptx_group_options_init(&options);
  options.mode = SCATTERPTX_MODE_SEGMENTED;
  size_t bytes = 1;
  EXPECT_EQ(scatterptx_plan_workspace_size(&args, &options, &bytes), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(bytes, 0u);
  EXPECT_NE(std::string(scatterptx_last_error_message()).find("2^62"), std::string::npos)
      << scatterptx_last_error_message();
}

TEST(WorkspaceSizeExtent, OutBeyond2Pow62BytesIsRefusedToo) {
  scatterptx_scatter_add_args args = huge_shape();
  args.src_rows = 1;
  args.out_rows = int64_t{1} << 40;
  size_t bytes = 1;
  EXPECT_EQ(scatterptx_plan_workspace_size(&args, nullptr, &bytes), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(scatterptx_last_error_message()).find("out spans more than 2^62"), std::string::npos)
      << scatterptx_last_error_message();
}

}  // namespace

// Host-only: the tensor-map limits are checked before the driver is asked.
#include <gtest/gtest.h>

#include "tensor_map.hpp"

namespace {

using scatterptx::detail::row_tensor_map_violations;
using scatterptx::detail::RowTensorMapFields;

RowTensorMapFields valid_fields() {
  RowTensorMapFields f;
  f.dtype = SCATTERPTX_F32;
  f.address = 0x7f0000000000;
  f.cols = 128;
  f.rows = 1000;
  f.row_stride_bytes = 512;
  f.box_elems = 128;
  return f;
}

TEST(TensorMap, ValidFieldsHaveNoViolation) { EXPECT_EQ(row_tensor_map_violations(valid_fields()), ""); }

TEST(TensorMap, EachLimitIsReported) {
  struct Case {
    const char* expected;
    void (*breaks)(RowTensorMapFields&);
  };
  const Case cases[] = {
      {"globalAddress", [](RowTensorMapFields& f) { f.address += 8; }},
      {"globalDim[0]", [](RowTensorMapFields& f) { f.cols = (uint64_t{1} << 32) + 1; }},
      {"globalDim[1]", [](RowTensorMapFields& f) { f.rows = 0; }},
      {"multiple of 16 bytes", [](RowTensorMapFields& f) { f.row_stride_bytes = 520; }},
      {"below 2^40", [](RowTensorMapFields& f) { f.row_stride_bytes = uint64_t{1} << 40; }},
      {"whole row", [](RowTensorMapFields& f) { f.row_stride_bytes = 256; }},
      {"boxDim[0] must be in", [](RowTensorMapFields& f) { f.box_elems = 512; }},
      {"boxDim[0] * element size", [](RowTensorMapFields& f) { f.box_elems = 6; }},
      {"boxDim[1] must be in", [](RowTensorMapFields& f) { f.box_rows = 257; }},
      {"boxDim[1] must be in", [](RowTensorMapFields& f) { f.box_rows = 0; }},
  };
  for (const Case& c : cases) {
    RowTensorMapFields f = valid_fields();
    c.breaks(f);
    EXPECT_NE(row_tensor_map_violations(f).find(c.expected), std::string::npos) << c.expected;
  }
}

TEST(TensorMap, SeveralViolationsAreAllListed) {
  RowTensorMapFields f = valid_fields();
  f.address += 4;
  f.box_elems = 0;
  const std::string text = row_tensor_map_violations(f);
  EXPECT_NE(text.find("globalAddress"), std::string::npos);
  EXPECT_NE(text.find("boxDim[0] must be in"), std::string::npos);
}

}  // namespace

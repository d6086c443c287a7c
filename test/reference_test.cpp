// The reference itself: conversions against known encodings, and a checker
// that catches what it must (wrong values, NaN, writes to untouched rows and
// to padding) while passing a correctly rounded result.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "reference.hpp"

namespace scatterptx_test {
namespace {

TEST(ReferenceConversions, HalfKnownEncodings) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half_bits(65519.0f), 0x7BFF);   // below the halfway point
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7C00);   // tie to even: infinity
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_half_bits(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 ulp: tie to even 2
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even mantissa wins.
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_half_bits(std::nanf("")) & 0x7E00, 0x7E00);
  EXPECT_EQ(half_bits_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x7BFF), 65504.0f);
  EXPECT_TRUE(std::isinf(half_bits_to_float(0xFC00)));
  EXPECT_TRUE(std::isnan(half_bits_to_float(0xFFFF)));
}

TEST(ReferenceConversions, HalfRoundTripsEveryFiniteEncoding) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if ((bits & 0x7C00) == 0x7C00) continue;  // inf and NaN
    const uint16_t h = static_cast<uint16_t>(bits);
    ASSERT_EQ(float_to_half_bits(half_bits_to_float(h)), h) << std::hex << bits;
  }
}

TEST(ReferenceConversions, Bf16KnownEncodings) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16_bits(-1.0f), 0xBF80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even mantissa wins.
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7F80);  // rounds up to inf
  EXPECT_EQ(float_to_bf16_bits(std::nanf("")) & 0x7FC0, 0x7FC0);
  EXPECT_EQ(bf16_bits_to_float(0x3F80), 1.0f);
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if ((bits & 0x7F80) == 0x7F80) continue;
    const uint16_t b = static_cast<uint16_t>(bits);
    ASSERT_EQ(float_to_bf16_bits(bf16_bits_to_float(b)), b) << std::hex << bits;
  }
}

TEST(ReferenceInputs, RandomValuesAreNonZeroNormalAndPadded) {
  const HostMatrix m = random_matrix(SCATTERPTX_F16, 50, 7, 10, kOutPaddingByte, fresh_seed());
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) {
      const double v = m.at(r, c);
      EXPECT_GE(std::fabs(v), 9e-4);
      EXPECT_LE(std::fabs(v), 1.0);
    }
    for (size_t b = 7 * 2; b < m.row_bytes(); ++b) EXPECT_EQ(m.row(r)[b], kOutPaddingByte);
  }
}

class ReferenceCheckerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out0 = random_matrix(SCATTERPTX_F32, 6, 5, 8, kOutPaddingByte, seed);
    src = random_matrix(SCATTERPTX_F32, 4, 5, 5, kSrcPaddingByte, seed + 1);
    index = {1, 3, 1, 99};  // 99 is out of range: ignored
    got = out0;
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t c = 0; c < 5; ++c) {
        unsigned char* e = got.row(index[i]) + 4 * c;
        store_element(SCATTERPTX_F32, e, load_element(SCATTERPTX_F32, e) + src.at(i, c));
      }
    }
  }
  uint64_t seed = fresh_seed();
  HostMatrix out0, src, got;
  std::vector<int64_t> index;
};

TEST_F(ReferenceCheckerTest, AcceptsCorrectResult) {
  const CheckReport report = check_scatter_add(out0, src, index, got);
  EXPECT_TRUE(report.ok) << report.summary();
  EXPECT_EQ(report.rows_added, 2);
}

TEST_F(ReferenceCheckerTest, RejectsWrongValue) {
  store_element(SCATTERPTX_F32, got.row(3) + 4 * 2, got.at(3, 2) + 1e-3);
  const CheckReport report = check_scatter_add(out0, src, index, got);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.first_failure.find("out[3, 2]"), std::string::npos) << report.first_failure;
}

TEST_F(ReferenceCheckerTest, RejectsNaN) {
  store_element(SCATTERPTX_F32, got.row(1), std::nan(""));
  EXPECT_FALSE(check_scatter_add(out0, src, index, got).ok);
}

TEST_F(ReferenceCheckerTest, RejectsChangedUntouchedRow) {
  got.row(4)[1] ^= 1;  // one bit of row 4, which no index names
  const CheckReport report = check_scatter_add(out0, src, index, got);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.first_failure.find("row 4"), std::string::npos) << report.first_failure;
}

TEST_F(ReferenceCheckerTest, RejectsChangedPadding) {
  got.row(1)[5 * 4] ^= 0x80;  // first padding byte of an added row
  EXPECT_FALSE(check_scatter_add(out0, src, index, got).ok);
}

TEST_F(ReferenceCheckerTest, RejectsMissingRepeat) {
  EXPECT_FALSE(check_scatter_add(out0, src, index, got, /*repeats=*/2).ok);
}

}  // namespace
}  // namespace scatterptx_test

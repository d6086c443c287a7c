// The reference itself: conversions against known encodings, and a checker
// that catches what it must (wrong values, NaN, writes to untouched rows and
// to padding) while passing a correctly rounded result.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "bad_inputs.hpp"
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

// A 3-row out, 4 source rows: rows 0 and 2 reached (two rows each), row 1
// not. The checker's float64 reduce, by hand.
struct SmallReduce {
  HostMatrix out0{SCATTERPTX_F32, 3, 2, 2, 0};
  HostMatrix src{SCATTERPTX_F32, 4, 2, 2, 0};
  std::vector<int64_t> index{0, 2, 0, 2};
  SmallReduce() {
    const double out_values[3][2] = {{1, -1}, {5, 5}, {0.5, 8}};
    const double src_values[4][2] = {{2, 3}, {-4, 1}, {6, -7}, {0.25, 9}};
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 2; ++c) store_element(SCATTERPTX_F32, out0.row(r) + 4 * c, out_values[r][c]);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 2; ++c) store_element(SCATTERPTX_F32, src.row(r) + 4 * c, src_values[r][c]);
  }
  HostMatrix with(const double values[3][2]) const {
    HostMatrix got = out0;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 2; ++c) store_element(SCATTERPTX_F32, got.row(r) + 4 * c, values[r][c]);
    return got;
  }
};

TEST(ReferenceCheck, ReducesAsTorchsScatterReduce) {
  const SmallReduce s;
  const struct {
    scatterptx_reduce reduce;
    bool include_self;
    double expected[3][2];
  } cases[] = {
      {SCATTERPTX_REDUCE_SUM, true, {{9, -5}, {5, 5}, {-3.25, 18}}},
      {SCATTERPTX_REDUCE_SUM, false, {{8, -4}, {5, 5}, {-3.75, 10}}},
      {SCATTERPTX_REDUCE_MEAN, true, {{3, -5.0 / 3}, {5, 5}, {-3.25 / 3, 6}}},
      {SCATTERPTX_REDUCE_MEAN, false, {{4, -2}, {5, 5}, {-3.75 / 2, 5}}},
      {SCATTERPTX_REDUCE_AMAX, true, {{6, 3}, {5, 5}, {0.5, 9}}},
      {SCATTERPTX_REDUCE_AMAX, false, {{6, 3}, {5, 5}, {0.25, 9}}},
      {SCATTERPTX_REDUCE_AMIN, true, {{1, -7}, {5, 5}, {-4, 1}}},
      {SCATTERPTX_REDUCE_AMIN, false, {{2, -7}, {5, 5}, {-4, 1}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::to_string(c.reduce) + (c.include_self ? " with self" : " without self"));
    ReduceCheck check;
    check.reduce = c.reduce;
    check.include_self = c.include_self;
    const CheckReport good = check_scatter_reduce(s.out0, s.src, s.index, s.with(c.expected), check);
    EXPECT_TRUE(good.ok) << good.summary();
    double off[3][2];
    std::memcpy(off, c.expected, sizeof off);
    off[2][1] += 0.5;
    EXPECT_FALSE(check_scatter_reduce(s.out0, s.src, s.index, s.with(off), check).ok);
    std::memcpy(off, c.expected, sizeof off);
    off[1][0] = 6;  // the unreached row changed
    EXPECT_FALSE(check_scatter_reduce(s.out0, s.src, s.index, s.with(off), check).ok);
  }
}

TEST(ReferenceCheck, WeightsScaleEachRowOfASum) {
  const SmallReduce s;
  ReduceCheck check;
  check.weights = {2, -1, 0.5, 4};
  const double expected[3][2] = {{1 + 4 + 3, -1 + 6 - 3.5}, {5, 5}, {0.5 + 4 + 1, 8 - 1 + 36}};
  EXPECT_TRUE(check_scatter_reduce(s.out0, s.src, s.index, s.with(expected), check).ok);
  check.weights.clear();
  EXPECT_FALSE(check_scatter_reduce(s.out0, s.src, s.index, s.with(expected), check).ok);
}

TEST(ReferenceCheck, NanPropagatesAndInfinitiesMatchExactly) {
  SmallReduce s;
  store_element(SCATTERPTX_F32, s.src.row(1), std::nan(""));                 // into row 2, col 0
  store_element(SCATTERPTX_F32, s.out0.row(0) + 4, std::nan(""));            // row 0, col 1: with self only
  store_element(SCATTERPTX_F32, s.src.row(0), HUGE_VAL);                     // into row 0, col 0
  const double nan = std::nan("");
  ReduceCheck check;
  check.reduce = SCATTERPTX_REDUCE_AMAX;
  const double with_self[3][2] = {{HUGE_VAL, nan}, {5, 5}, {nan, 9}};
  EXPECT_TRUE(check_scatter_reduce(s.out0, s.src, s.index, s.with(with_self), check).ok);
  check.include_self = false;
  const double without_self[3][2] = {{HUGE_VAL, 3}, {5, 5}, {nan, 9}};
  EXPECT_TRUE(check_scatter_reduce(s.out0, s.src, s.index, s.with(without_self), check).ok);
  EXPECT_FALSE(check_scatter_reduce(s.out0, s.src, s.index, s.with(with_self), check).ok);
  check.reduce = SCATTERPTX_REDUCE_SUM;
  const double sums[3][2] = {{HUGE_VAL, -4}, {5, 5}, {nan, 10}};
  EXPECT_TRUE(check_scatter_reduce(s.out0, s.src, s.index, s.with(sums), check).ok);
  const double finite[3][2] = {{1e30, -4}, {5, 5}, {nan, 10}};
  EXPECT_FALSE(check_scatter_reduce(s.out0, s.src, s.index, s.with(finite), check).ok);
}

// The exact check where the rounding bound cannot tell (at a few hundred
// adds in bf16, 1e5 in f32): every source row into out row 1 of three, as
// many rows as the dtype sums exactly, up to 100000.
class ExactSumsTest : public ::testing::TestWithParam<scatterptx_dtype> {
 protected:
  static constexpr int64_t kCols = 16;

  void SetUp() override {
    const scatterptx_dtype dtype = GetParam();
    const int64_t rows = std::min<int64_t>(100000, most_exact_rows_per_target(dtype));
    out0 = HostMatrix(dtype, 3, kCols, kCols + 2, kOutPaddingByte);
    src = HostMatrix(dtype, rows, kCols, kCols, kSrcPaddingByte);
    index.assign(static_cast<size_t>(rows), 1);
    const int64_t most_eighths = most_exact_eighths(dtype, rows + 1);
    ASSERT_GE(most_eighths, 1);
    fill_eighths(out0, most_eighths, derive_seed(seed, 1));
    fill_eighths(src, most_eighths, derive_seed(seed, 2));
  }

  // out after adding every source row but `skipped` (-1: none) one by one
  // in the dtype, as a kernel would.
  HostMatrix added_without(int64_t skipped) const {
    HostMatrix got = out0;
    for (int64_t i = 0; i < src.rows; ++i) {
      if (i == skipped) continue;
      for (int64_t c = 0; c < kCols; ++c) {
        unsigned char* element = got.row(1) + static_cast<size_t>(c) * element_bytes(got.dtype);
        store_element(got.dtype, element, load_element(got.dtype, element) + src.at(i, c));
      }
    }
    return got;
  }

  uint64_t seed = fresh_seed();
  HostMatrix out0, src;
  std::vector<int64_t> index;
};

TEST_P(ExactSumsTest, PassesTheSumsAddedInTheDtype) {
  SCOPED_TRACE(seed_trace(seed));
  const CheckReport report = check_exact_sums(out0, src, index, added_without(-1));
  EXPECT_TRUE(report.ok) << report.summary();
  EXPECT_EQ(report.rows_added, 1);
}

TEST_P(ExactSumsTest, FailsOutLeftAsItWas) {
  SCOPED_TRACE(seed_trace(seed));
  const CheckReport report = check_exact_sums(out0, src, index, out0);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.first_failure.find("out[1, "), std::string::npos) << report.first_failure;
}

TEST_P(ExactSumsTest, FailsOneRowDropped) {
  SCOPED_TRACE(seed_trace(seed));
  const CheckReport report = check_exact_sums(out0, src, index, added_without(src.rows / 2));
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.bad_elements, kCols) << "no value is zero, so every column misses one: " << report.summary();
}

TEST_P(ExactSumsTest, FailsOneRowAddedTwice) {
  SCOPED_TRACE(seed_trace(seed));
  const CheckReport report = check_exact_sums(out0, src, index, added_without(-1), /*repeats=*/2);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.bad_elements, kCols) << report.summary();
}

TEST_P(ExactSumsTest, RefusesValuesThatAreNotEighths) {
  SCOPED_TRACE(seed_trace(seed));
  store_element(src.dtype, src.row(3) + element_bytes(src.dtype), 1.0 / 3);
  const CheckReport report = check_exact_sums(out0, src, index, added_without(-1));
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.first_failure.find("out[1, 1]: the terms are not finite eighths"), std::string::npos)
      << report.first_failure;
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ExactSumsTest,
                         ::testing::Values(SCATTERPTX_BF16, SCATTERPTX_F16, SCATTERPTX_F32, SCATTERPTX_F64),
                         [](const ::testing::TestParamInfo<scatterptx_dtype>& info) {
                           return std::string(dtype_name(info.param));
                         });

// 20000 positive rows onto one target: summed in f16 or bf16 one add at a
// time the sum stalls far below the float64 one (an add under half the
// running sum's spacing is lost), which the per-add bound still accepts and
// the on-chip bound does not; summed in f32 and rounded once, both accept it.
TEST(ReferenceCheck, OnChipSumsTellAnF32SumFromEveryAddRounded) {
  for (scatterptx_dtype dtype : {SCATTERPTX_BF16, SCATTERPTX_F16}) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(std::string(dtype_name(dtype)) + ", " + seed_trace(seed));
    constexpr int64_t kRows = 20000, kCols = 4;
    const HostMatrix out0 = random_matrix(dtype, 1, kCols, kCols, 0, derive_seed(seed, 0));
    HostMatrix src = random_matrix(dtype, kRows, kCols, kCols, 0, derive_seed(seed, 1));
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t c = 0; c < kCols; ++c) {
        store_element(dtype, src.row(r) + static_cast<size_t>(c) * element_bytes(dtype), std::fabs(src.at(r, c)));
      }
    }
    const std::vector<int64_t> index(kRows, 0);
    HostMatrix every_add_rounded = out0;
    HostMatrix summed_in_f32 = out0;
    for (int64_t c = 0; c < kCols; ++c) {
      unsigned char* rounded = every_add_rounded.row(0) + static_cast<size_t>(c) * element_bytes(dtype);
      float sum = static_cast<float>(out0.at(0, c));
      for (int64_t r = 0; r < kRows; ++r) {
        store_element(dtype, rounded, load_element(dtype, rounded) + src.at(r, c));
        sum += static_cast<float>(src.at(r, c));
      }
      store_element(dtype, summed_in_f32.row(0) + static_cast<size_t>(c) * element_bytes(dtype), sum);
    }
    EXPECT_TRUE(check_scatter_add(out0, src, index, every_add_rounded).ok) << "the per-add bound allows the stall";
    const CheckReport stalled = check_on_chip_sums(out0, src, index, every_add_rounded);
    EXPECT_FALSE(stalled.ok);
    EXPECT_EQ(stalled.bad_elements, kCols) << stalled.summary();
    const CheckReport on_chip = check_on_chip_sums(out0, src, index, summed_in_f32);
    EXPECT_TRUE(on_chip.ok) << on_chip.summary();
    EXPECT_TRUE(check_scatter_add(out0, src, index, summed_in_f32).ok);
  }
}

TEST(ReferenceCheck, ExactSumsRefuseMoreRowsThanTheDtypeSumsExactly) {
  // 256 rows of +-1/8 and out0's value: up to 257/8, past bf16's 2^8/8.
  HostMatrix out0(SCATTERPTX_BF16, 1, 4, 4, kOutPaddingByte);
  HostMatrix src(SCATTERPTX_BF16, most_exact_rows_per_target(SCATTERPTX_BF16) + 1, 4, 4, kSrcPaddingByte);
  const uint64_t seed = fresh_seed();
  fill_eighths(out0, 1, derive_seed(seed, 1));
  fill_eighths(src, 1, derive_seed(seed, 2));
  const std::vector<int64_t> index(static_cast<size_t>(src.rows), 0);
  const CheckReport report = check_exact_sums(out0, src, index, out0);
  EXPECT_FALSE(report.ok);
  EXPECT_NE(report.first_failure.find("the sum may round"), std::string::npos) << report.first_failure;
}

TEST(ReferenceInputs, EighthsAreNonZeroMultiplesOfOneEighthUpToTheLimit) {
  HostMatrix m(SCATTERPTX_BF16, 40, 9, 11, kOutPaddingByte);
  fill_eighths(m, 3, fresh_seed());
  std::set<double> seen;
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t c = 0; c < m.cols; ++c) seen.insert(m.at(r, c));
    for (size_t b = 9 * 2; b < m.row_bytes(); ++b) EXPECT_EQ(m.row(r)[b], kOutPaddingByte);
  }
  EXPECT_EQ(seen, (std::set<double>{-0.375, -0.25, -0.125, 0.125, 0.25, 0.375}));
}

TEST(ReferenceInputs, ExactLimitsFollowTheSignificand) {
  EXPECT_EQ(most_exact_rows_per_target(SCATTERPTX_BF16), 255);
  EXPECT_EQ(most_exact_rows_per_target(SCATTERPTX_F16), 2047);
  EXPECT_EQ(most_exact_rows_per_target(SCATTERPTX_BF16, 2), 127);
  EXPECT_EQ(most_exact_rows_per_target(SCATTERPTX_F32), (int64_t{1} << 24) - 1);
  EXPECT_EQ(most_exact_eighths(SCATTERPTX_BF16, 256), 1);
  EXPECT_EQ(most_exact_eighths(SCATTERPTX_BF16, 257), 0);
  EXPECT_EQ(most_exact_eighths(SCATTERPTX_BF16, 64), 4);
  EXPECT_EQ(most_exact_eighths(SCATTERPTX_F32, 1000), 64);
}

TEST(ReferenceInputs, DistinctPositionsAreDistinctAndInRange) {
  const std::vector<int64_t> positions = distinct_positions(12, 18, 31, fresh_seed());
  ASSERT_EQ(positions.size(), 12u);
  const std::set<int64_t> unique(positions.begin(), positions.end());
  EXPECT_EQ(unique.size(), 12u);
  EXPECT_GE(*unique.begin(), 18);
  EXPECT_LT(*unique.rbegin(), 31);
}

TEST(ReferenceInputs, IndexErrorPhraseStartsTheDocumentedMessage) {
  const std::string message =
      scatterptx_bad_inputs::expand(scatterptx_bad_inputs::device_case("oor_checked_streaming").message,
                                    {{"position", "17"}, {"value", "-3"}, {"out_rows", "500"}});
  EXPECT_EQ(message.rfind(index_error_phrase(17, -3), 0), 0u) << message;
  // Unlike a search for "1" or "-3" alone, it cannot match another position.
  EXPECT_EQ(message.find(index_error_phrase(1, -3)), std::string::npos) << message;
}

}  // namespace
}  // namespace scatterptx_test

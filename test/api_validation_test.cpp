// Argument validation, on the host only: every rejected input returns
// INVALID_ARGUMENT with a message naming the field, before the driver is
// touched. Pointers are fake but aligned; validation never dereferences them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "driver_api.hpp"
#include "raw_values.hpp"
#include "scatterptx/scatterptx.h"
#include "scatterptx/scatterptx.hpp"

namespace {

using scatterptx_test::lower;
using scatterptx_test::set_raw_enum;

void* fake_pointer(uintptr_t address) { return reinterpret_cast<void*>(address); }

// 8 x 64 f32 out, 4 x 64 f32 src, int64 index: valid for every path.
scatterptx_scatter_add_args valid_args() {
  scatterptx_scatter_add_args args;
  scatterptx_scatter_add_args_init(&args);
  args.out = fake_pointer(0x10000);
  args.out_rows = 8;
  args.out_row_stride = 64;
  args.src = fake_pointer(0x20000);
  args.src_rows = 4;
  args.src_row_stride = 64;
  args.cols = 64;
  args.dtype = SCATTERPTX_F32;
  args.index = fake_pointer(0x30000);
  args.index_type = SCATTERPTX_INDEX_INT64;
  return args;
}

bool driver_present() { return scatterptx::detail::driver_api(nullptr) != nullptr; }

struct InvalidCase {
  std::string name;
  std::function<void(scatterptx_scatter_add_args&, scatterptx_schedule&)> spoil;
  std::string field;  // must appear in the message (case-insensitive)
};

// gtest prints parameters of failed tests: the name, not the bytes.
void PrintTo(const InvalidCase& c, std::ostream* os) { *os << c.name; }

std::vector<InvalidCase> invalid_cases() {
  using Args = scatterptx_scatter_add_args;
  using Schedule = scatterptx_schedule;
  return {
      {"NullOut", [](Args& a, Schedule&) { a.out = nullptr; }, "out"},
      {"NullSrc", [](Args& a, Schedule&) { a.src = nullptr; }, "src"},
      {"NullIndex", [](Args& a, Schedule&) { a.index = nullptr; }, "index"},
      {"NegativeOutRows", [](Args& a, Schedule&) { a.out_rows = -1; }, "out_rows"},
      {"NegativeSrcRows", [](Args& a, Schedule&) { a.src_rows = -3; }, "src_rows"},
      {"NegativeCols", [](Args& a, Schedule&) { a.cols = -64; }, "cols"},
      {"OutRowStrideBelowCols", [](Args& a, Schedule&) { a.out_row_stride = 63; },
       "out_row_stride"},
      {"SrcRowStrideBelowCols", [](Args& a, Schedule&) { a.src_row_stride = 1; },
       "src_row_stride"},
      {"UnknownDtype", [](Args& a, Schedule&) { set_raw_enum(a.dtype, 4); }, "dtype"},
      {"NegativeDtype", [](Args& a, Schedule&) { set_raw_enum(a.dtype, -1); }, "dtype"},
      {"UnknownIndexType", [](Args& a, Schedule&) { set_raw_enum(a.index_type, 2); },
       "index_type"},
      {"UnknownIndexCheck", [](Args& a, Schedule&) { set_raw_enum(a.index_check, 7); },
       "index_check"},
      {"UnknownPath", [](Args& a, Schedule&) { set_raw_enum(a.path, 9); }, "path"},
      {"NegativePath", [](Args& a, Schedule&) { set_raw_enum(a.path, -5); }, "path"},
      {"UnknownGrouping", [](Args& a, Schedule&) { set_raw_enum(a.grouping, 3); }, "grouping"},
      {"NegativeGrouping", [](Args& a, Schedule&) { set_raw_enum(a.grouping, -1); }, "grouping"},
      {"NoOutRowsForSourceRows", [](Args& a, Schedule&) { a.out_rows = 0; }, "out_rows"},
      {"OutNotElementAligned", [](Args& a, Schedule&) { a.out = fake_pointer(0x10002); }, "out"},
      {"SrcNotElementAligned", [](Args& a, Schedule&) { a.src = fake_pointer(0x20001); }, "src"},
      {"Int64IndexNotElementAligned", [](Args& a, Schedule&) { a.index = fake_pointer(0x30004); },
       "index"},
      {"Int32IndexNotElementAligned",
       [](Args& a, Schedule&) {
         a.index_type = SCATTERPTX_INDEX_INT32;
         a.index = fake_pointer(0x30002);
       },
       "index"},
      {"F64OutNotElementAligned",
       [](Args& a, Schedule&) {
         a.dtype = SCATTERPTX_F64;
         a.out = fake_pointer(0x10004);
       },
       "out"},
      {"TmaRowBytesNotMultipleOf16",
       [](Args& a, Schedule&) {
         a.path = SCATTERPTX_PATH_TMA;
         a.cols = 3;  // 12-byte rows
       },
       "tma"},
      {"TmaOutNotAligned16",
       [](Args& a, Schedule&) {
         a.path = SCATTERPTX_PATH_TMA;
         a.out = fake_pointer(0x10004);
       },
       "tma"},
      {"TmaSrcNotAligned16",
       [](Args& a, Schedule&) {
         a.path = SCATTERPTX_PATH_TMA;
         a.src = fake_pointer(0x20008);
       },
       "tma"},
      {"TmaOutRowStrideNotAligned16",
       [](Args& a, Schedule&) {
         a.path = SCATTERPTX_PATH_TMA;
         a.out_row_stride = 65;  // 260-byte rows
       },
       "tma"},
      {"TmaSrcRowStrideNotAligned16",
       [](Args& a, Schedule&) {
         a.path = SCATTERPTX_PATH_TMA;
         a.src_row_stride = 66;  // 264-byte rows
       },
       "tma"},
      {"UnknownReduce", [](Args& a, Schedule&) { set_raw_enum(a.reduce, 4); }, "reduce"},
      {"NegativeReduce", [](Args& a, Schedule&) { set_raw_enum(a.reduce, -1); }, "reduce"},
      {"UnknownWeightsDtype", [](Args& a, Schedule&) { set_raw_enum(a.weights_dtype, 9); }, "weights_dtype"},
      {"WeightedMean",
       [](Args& a, Schedule&) {
         a.weights = fake_pointer(0x40000);
         a.reduce = SCATTERPTX_REDUCE_MEAN;
       },
       "weights combine with SCATTERPTX_REDUCE_SUM only"},
      {"WeightedAmax",
       [](Args& a, Schedule&) {
         a.weights = fake_pointer(0x40000);
         a.reduce = SCATTERPTX_REDUCE_AMAX;
       },
       "weights combine with SCATTERPTX_REDUCE_SUM only"},
      {"WeightedAmin",
       [](Args& a, Schedule&) {
         a.weights = fake_pointer(0x40000);
         a.reduce = SCATTERPTX_REDUCE_AMIN;
         a.include_self = 0;
       },
       "weights combine with SCATTERPTX_REDUCE_SUM only"},
      {"WeightsNeitherF32NorTheRowsDtype",
       [](Args& a, Schedule&) {
         a.weights = fake_pointer(0x40000);
         a.weights_dtype = SCATTERPTX_BF16;  // rows are f32
       },
       "weights_dtype = bf16"},
      {"F64WeightsForF16Rows",
       [](Args& a, Schedule&) {
         a.dtype = SCATTERPTX_F16;
         a.weights = fake_pointer(0x40000);
         a.weights_dtype = SCATTERPTX_F64;
       },
       "weights_dtype = f64"},
      {"WeightsNotElementAligned", [](Args& a, Schedule&) { a.weights = fake_pointer(0x40002); },
       "weights is not aligned"},
      {"F64WeightsNotElementAligned",
       [](Args& a, Schedule&) {
         a.dtype = SCATTERPTX_F64;
         a.weights = fake_pointer(0x40004);
         a.weights_dtype = SCATTERPTX_F64;
       },
       "weights is not aligned"},
      {"WeightsOverlapOut", [](Args& a, Schedule&) { a.weights = fake_pointer(0x10000 + 64 * 4 * 3); },
       "out and weights overlap"},
      {"WeightedTmaPath",
       [](Args& a, Schedule&) {
         a.weights = fake_pointer(0x40000);
         a.path = SCATTERPTX_PATH_TMA;
       },
       "takes no weights"},
      {"WeightedPrivatePath",
       [](Args& a, Schedule&) {
         a.weights = fake_pointer(0x40000);
         a.path = SCATTERPTX_PATH_PRIVATE;
       },
       "takes no weights"},
      {"WeightedSchedule",
       [](Args& a, Schedule& s) {
         a.weights = fake_pointer(0x40000);
         s.stages = 4;
       },
       "takes no weights"},
      {"AmaxOnAForcedPath",
       [](Args& a, Schedule&) {
         a.reduce = SCATTERPTX_REDUCE_AMAX;
         a.path = SCATTERPTX_PATH_RED;
       },
       "path forces a streaming path"},
      {"MeanOnAForcedPath",
       [](Args& a, Schedule&) {
         a.reduce = SCATTERPTX_REDUCE_MEAN;
         a.path = SCATTERPTX_PATH_TMA;
       },
       "runs grouped only"},
      {"SumWithoutSelfOnAForcedPath",
       [](Args& a, Schedule&) {
         a.include_self = 0;
         a.path = SCATTERPTX_PATH_RED;
       },
       "include_self = 0"},
      {"AminWithASchedule",
       [](Args& a, Schedule& s) {
         a.reduce = SCATTERPTX_REDUCE_AMIN;
         s.chunk_bytes = 64;
       },
       "schedule"},
      {"AmaxWithGroupingOff",
       [](Args& a, Schedule&) {
         a.reduce = SCATTERPTX_REDUCE_AMAX;
         a.grouping = SCATTERPTX_GROUPING_OFF;
       },
       "SCATTERPTX_GROUPING_OFF"},
      {"SumWithoutSelfWithGroupingOff",
       [](Args& a, Schedule&) {
         a.include_self = 0;
         a.grouping = SCATTERPTX_GROUPING_OFF;
       },
       "include_self = 0 runs grouped only"},
      {"TooManyStages", [](Args&, Schedule& s) { s.stages = 33; }, "stages"},
      {"AbsurdStages", [](Args&, Schedule& s) { s.stages = 1u << 20; }, "stages"},
      {"ChunkBytesNotMultipleOf16", [](Args&, Schedule& s) { s.chunk_bytes = 24; },
       "chunk_bytes"},
      {"ChunkBytesBelow16", [](Args&, Schedule& s) { s.chunk_bytes = 8; }, "chunk_bytes"},
  };
}

class InvalidArgumentTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidArgumentTest, ScatterAddRejectsWithFieldInMessage) {
  scatterptx_scatter_add_args args = valid_args();
  scatterptx_schedule schedule = {0, 0, 0, 0};
  GetParam().spoil(args, schedule);
  if (schedule.chunk_bytes != 0 || schedule.stages != 0) args.schedule = &schedule;
  EXPECT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  const std::string message = scatterptx_last_error_message();
  EXPECT_NE(lower(message).find(lower(GetParam().field)), std::string::npos)
      << "message should name " << GetParam().field << ": \"" << message << "\"";
}

TEST_P(InvalidArgumentTest, DescribePlanRejectsToo) {
  scatterptx_scatter_add_args args = valid_args();
  scatterptx_schedule schedule = {0, 0, 0, 0};
  GetParam().spoil(args, schedule);
  if (schedule.chunk_bytes != 0 || schedule.stages != 0) args.schedule = &schedule;
  char buffer[512] = {};
  EXPECT_EQ(scatterptx_describe_plan(&args, buffer, sizeof buffer),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_STRNE(scatterptx_last_error_message(), "");
}

INSTANTIATE_TEST_SUITE_P(Validation, InvalidArgumentTest, ::testing::ValuesIn(invalid_cases()),
                         [](const ::testing::TestParamInfo<InvalidCase>& info) {
                           return info.param.name;
                         });

TEST(ApiValidation, NullArgsPointer) {
  EXPECT_EQ(scatterptx_scatter_add(nullptr, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lower(scatterptx_last_error_message()).find("args"), std::string::npos)
      << scatterptx_last_error_message();
  char buffer[64];
  EXPECT_EQ(scatterptx_describe_plan(nullptr, buffer, sizeof buffer),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_STRNE(scatterptx_last_error_message(), "");
}

TEST(ApiValidation, NullPositionPointer) {
  EXPECT_EQ(scatterptx_take_index_error(nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(lower(scatterptx_last_error_message()).find("position"), std::string::npos)
      << scatterptx_last_error_message();
}

TEST(ApiValidation, ArgsInitDefaults) {
  scatterptx_scatter_add_args args;
  std::memset(&args, 0xCD, sizeof args);  // init must overwrite every field
  scatterptx_scatter_add_args_init(&args);
  EXPECT_EQ(args.out, nullptr);
  EXPECT_EQ(args.out_rows, 0);
  EXPECT_EQ(args.out_row_stride, 0);
  EXPECT_EQ(args.src, nullptr);
  EXPECT_EQ(args.src_rows, 0);
  EXPECT_EQ(args.src_row_stride, 0);
  EXPECT_EQ(args.cols, 0);
  EXPECT_EQ(args.dtype, SCATTERPTX_F32);
  EXPECT_EQ(args.index, nullptr);
  EXPECT_EQ(args.index_type, SCATTERPTX_INDEX_INT64);
  EXPECT_EQ(args.index_check, SCATTERPTX_INDEX_RECORD);
  EXPECT_EQ(args.path, SCATTERPTX_PATH_AUTO);
  EXPECT_EQ(args.schedule, nullptr);
  EXPECT_EQ(args.grouping, SCATTERPTX_GROUPING_AUTO);
  EXPECT_EQ(args.weights, nullptr);
  EXPECT_EQ(args.weights_dtype, SCATTERPTX_F32);
  EXPECT_EQ(args.reduce, SCATTERPTX_REDUCE_SUM);
  EXPECT_EQ(args.include_self, 1);
}

// The C struct only grows at its end: the fields a caller built against an
// older header sit where they always did, and the new ones follow grouping.
TEST(ApiValidation, ArgsLayoutIsAppendOnly) {
  EXPECT_EQ(offsetof(scatterptx_scatter_add_args, out), 0u);
  EXPECT_EQ(offsetof(scatterptx_scatter_add_args, dtype), 56u);
  EXPECT_EQ(offsetof(scatterptx_scatter_add_args, schedule), 88u);
  EXPECT_EQ(offsetof(scatterptx_scatter_add_args, grouping), 96u);
  EXPECT_GT(offsetof(scatterptx_scatter_add_args, weights), offsetof(scatterptx_scatter_add_args, grouping));
  EXPECT_GT(offsetof(scatterptx_scatter_add_args, weights_dtype), offsetof(scatterptx_scatter_add_args, weights));
  EXPECT_GT(offsetof(scatterptx_scatter_add_args, reduce), offsetof(scatterptx_scatter_add_args, weights_dtype));
  EXPECT_GT(offsetof(scatterptx_scatter_add_args, include_self), offsetof(scatterptx_scatter_add_args, reduce));
}

TEST(ApiValidation, EmptyProblemsSucceedWithoutTheDriver) {
  // No rows or no columns: nothing to do, on any machine, driver or not.
  scatterptx_scatter_add_args no_rows = valid_args();
  no_rows.src_rows = 0;
  EXPECT_EQ(scatterptx_scatter_add(&no_rows, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();

  scatterptx_scatter_add_args no_rows_no_out = valid_args();
  no_rows_no_out.src_rows = 0;
  no_rows_no_out.out_rows = 0;
  EXPECT_EQ(scatterptx_scatter_add(&no_rows_no_out, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();

  scatterptx_scatter_add_args no_rows_null_inputs = valid_args();
  no_rows_null_inputs.src_rows = 0;
  no_rows_null_inputs.src = nullptr;  // null is fine for zero-sized src and index
  no_rows_null_inputs.index = nullptr;
  EXPECT_EQ(scatterptx_scatter_add(&no_rows_null_inputs, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();

  scatterptx_scatter_add_args no_cols = valid_args();
  no_cols.cols = 0;
  EXPECT_EQ(scatterptx_scatter_add(&no_cols, nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
}

// Valid inputs pass validation and go on to the driver; with fake pointers
// that is only safe to observe where there is no driver to launch on.
TEST(ApiValidation, ValidInputsReachTheDriver) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is present; fake pointers cannot launch";
  std::vector<scatterptx_scatter_add_args> valid;
  valid.push_back(valid_args());
  scatterptx_scatter_add_args tma = valid_args();
  tma.path = SCATTERPTX_PATH_TMA;
  valid.push_back(tma);
  scatterptx_scatter_add_args red_unaligned = valid_args();
  red_unaligned.path = SCATTERPTX_PATH_RED;
  red_unaligned.cols = 3;
  red_unaligned.out_row_stride = 5;
  red_unaligned.src_row_stride = 3;
  red_unaligned.src = fake_pointer(0x20004);  // element-aligned only
  valid.push_back(red_unaligned);
  scatterptx_scatter_add_args half = valid_args();
  half.dtype = SCATTERPTX_F16;
  half.index_type = SCATTERPTX_INDEX_INT32;
  half.index_check = SCATTERPTX_INDEX_CHECKED;
  half.out = fake_pointer(0x10002);
  valid.push_back(half);
  for (scatterptx_reduce reduce : {SCATTERPTX_REDUCE_MEAN, SCATTERPTX_REDUCE_AMAX, SCATTERPTX_REDUCE_AMIN}) {
    scatterptx_scatter_add_args reducing = valid_args();
    reducing.reduce = reduce;
    reducing.include_self = reduce == SCATTERPTX_REDUCE_AMIN ? 0 : 1;
    valid.push_back(reducing);
  }
  scatterptx_scatter_add_args weighted = valid_args();
  weighted.weights = fake_pointer(0x40000);
  valid.push_back(weighted);
  scatterptx_scatter_add_args weighted_half = half;
  weighted_half.weights = fake_pointer(0x40002);  // f16 weights: 2-byte aligned
  weighted_half.weights_dtype = SCATTERPTX_F16;
  valid.push_back(weighted_half);
  scatterptx_schedule schedule = {64, 4, 2, 1};
  scatterptx_scatter_add_args scheduled = valid_args();
  scheduled.schedule = &schedule;
  valid.push_back(scheduled);
  for (const scatterptx_scatter_add_args& args : valid) {
    EXPECT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_ERROR_NO_DRIVER)
        << scatterptx_last_error_message();
    EXPECT_NE(std::string(scatterptx_last_error_message()).find("libcuda"), std::string::npos)
        << scatterptx_last_error_message();
  }
}

TEST(ApiValidation, StatusNames) {
  EXPECT_STREQ(scatterptx_status_name(SCATTERPTX_SUCCESS), "SCATTERPTX_SUCCESS");
  EXPECT_STREQ(scatterptx_status_name(SCATTERPTX_ERROR_INVALID_ARGUMENT),
               "SCATTERPTX_ERROR_INVALID_ARGUMENT");
  EXPECT_STREQ(scatterptx_status_name(SCATTERPTX_ERROR_NO_DRIVER), "SCATTERPTX_ERROR_NO_DRIVER");
  EXPECT_STREQ(scatterptx_status_name(SCATTERPTX_ERROR_NO_CONTEXT), "SCATTERPTX_ERROR_NO_CONTEXT");
  EXPECT_STREQ(scatterptx_status_name(SCATTERPTX_ERROR_UNSUPPORTED_DEVICE),
               "SCATTERPTX_ERROR_UNSUPPORTED_DEVICE");
  EXPECT_STREQ(scatterptx_status_name(SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE),
               "SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE");
  EXPECT_STREQ(scatterptx_status_name(SCATTERPTX_ERROR_DRIVER), "SCATTERPTX_ERROR_DRIVER");
  scatterptx_status unknown;
  set_raw_enum(unknown, 99);
  const char* unknown_name = scatterptx_status_name(unknown);
  ASSERT_NE(unknown_name, nullptr);
  EXPECT_STRNE(unknown_name, "");
  EXPECT_STRNE(unknown_name, "SCATTERPTX_SUCCESS");
}

TEST(ApiValidation, DtypeNames) {
  EXPECT_STREQ(scatterptx_dtype_name(SCATTERPTX_F32), "f32");
  EXPECT_STREQ(scatterptx_dtype_name(SCATTERPTX_F16), "f16");
  EXPECT_STREQ(scatterptx_dtype_name(SCATTERPTX_BF16), "bf16");
  EXPECT_STREQ(scatterptx_dtype_name(SCATTERPTX_F64), "f64");
  scatterptx_dtype unknown;
  set_raw_enum(unknown, 7);
  EXPECT_STREQ(scatterptx_dtype_name(unknown), "unknown");
}

TEST(ApiValidation, DtypeSizes) {
  EXPECT_EQ(scatterptx_dtype_size(SCATTERPTX_F32), 4u);
  EXPECT_EQ(scatterptx_dtype_size(SCATTERPTX_F16), 2u);
  EXPECT_EQ(scatterptx_dtype_size(SCATTERPTX_BF16), 2u);
  EXPECT_EQ(scatterptx_dtype_size(SCATTERPTX_F64), 8u);
  scatterptx_dtype unknown;
  set_raw_enum(unknown, 4);
  EXPECT_EQ(scatterptx_dtype_size(unknown), 0u);
  set_raw_enum(unknown, -1);
  EXPECT_EQ(scatterptx_dtype_size(unknown), 0u);
}

TEST(ApiValidation, ErrorMessagesArePerThread) {
  scatterptx_scatter_add_args null_out = valid_args();
  null_out.out = nullptr;
  ASSERT_EQ(scatterptx_scatter_add(&null_out, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  const std::string mine = scatterptx_last_error_message();
  std::string theirs;
  std::thread other([&] {
    EXPECT_STREQ(scatterptx_last_error_message(), "") << "a new thread has no failed call yet";
    scatterptx_scatter_add_args negative_cols = valid_args();
    negative_cols.cols = -1;
    EXPECT_EQ(scatterptx_scatter_add(&negative_cols, nullptr), SCATTERPTX_ERROR_INVALID_ARGUMENT);
    theirs = scatterptx_last_error_message();
  });
  other.join();
  EXPECT_NE(theirs, mine);
  EXPECT_EQ(std::string(scatterptx_last_error_message()), mine)
      << "another thread's failure replaced this thread's message";
}

TEST(CppApi, ThrowsErrorWithStatus) {
  const scatterptx::Matrix<void*> out{nullptr, 8, 64, 64};  // null out
  const scatterptx::Matrix<const void*> src{fake_pointer(0x20000), 4, 64, 64};
  try {
    scatterptx::scatter_add(out, src, SCATTERPTX_F32, fake_pointer(0x30000),
                            SCATTERPTX_INDEX_INT64, nullptr);
    FAIL() << "scatter_add with a null out did not throw";
  } catch (const scatterptx::Error& error) {
    EXPECT_EQ(error.status(), SCATTERPTX_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(error.what()).find("SCATTERPTX_ERROR_INVALID_ARGUMENT"),
              std::string::npos)
        << error.what();
  }
}

TEST(CppApi, ColumnMismatchThrows) {
  const scatterptx::Matrix<void*> out{fake_pointer(0x10000), 8, 64, 64};
  const scatterptx::Matrix<const void*> src{fake_pointer(0x20000), 4, 32, 64};
  try {
    scatterptx::scatter_add(out, src, SCATTERPTX_F32, fake_pointer(0x30000),
                            SCATTERPTX_INDEX_INT64, nullptr);
    FAIL() << "mismatched columns did not throw";
  } catch (const scatterptx::Error& error) {
    EXPECT_EQ(error.status(), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  }
}

TEST(CppApi, EmptySourceDoesNotThrow) {
  const scatterptx::Matrix<void*> out{fake_pointer(0x10000), 8, 64, 64};
  const scatterptx::Matrix<const void*> src{fake_pointer(0x20000), 0, 64, 64};
  EXPECT_NO_THROW(scatterptx::scatter_add(out, src, SCATTERPTX_BF16, fake_pointer(0x30000),
                                          SCATTERPTX_INDEX_INT32, nullptr));
}

}  // namespace

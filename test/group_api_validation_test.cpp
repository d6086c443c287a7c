// Grouped execution's validation on the host only: what is rejected before
// the driver is touched (NULL pointers, options out of range or at odds with
// args, a workspace too small), and plan_workspace_size, a pure function of
// sizes that needs no GPU. Pointers are fake but aligned and far apart;
// validation never dereferences them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "driver_api.hpp"
#include "raw_values.hpp"
#include "scatterptx/scatterptx.h"

namespace {

using scatterptx_test::lower;
using scatterptx_test::set_raw_enum;

void* fake_pointer(uintptr_t address) { return reinterpret_cast<void*>(address); }

// The fake tensors lie 1 TiB apart, so that no size these tests use makes
// two of them overlap.
constexpr uintptr_t kTiB = uintptr_t{1} << 40;
// 256-byte aligned, after every tensor of valid_args.
void* const kFakeWorkspace = fake_pointer(4 * kTiB);
// Larger than any workspace valid_args can need.
constexpr size_t kAmpleWorkspaceBytes = size_t{64} << 20;

// 1000 x 64 f32 out, 4096 x 64 f32 src, int64 index: valid for every mode.
scatterptx_scatter_add_args valid_args() {
  scatterptx_scatter_add_args args;
  scatterptx_scatter_add_args_init(&args);
  args.out = fake_pointer(1 * kTiB);
  args.out_rows = 1000;
  args.out_row_stride = 64;
  args.src = fake_pointer(2 * kTiB);
  args.src_rows = 4096;
  args.src_row_stride = 64;
  args.cols = 64;
  args.dtype = SCATTERPTX_F32;
  args.index = fake_pointer(3 * kTiB);
  args.index_type = SCATTERPTX_INDEX_INT64;
  return args;
}

scatterptx_group_options options_with(scatterptx_mode mode, int deterministic = 0,
                                      uint32_t warps_per_cta = 0) {
  scatterptx_group_options options;
  scatterptx_group_options_init(&options);
  options.mode = mode;
  options.deterministic = deterministic;
  options.warps_per_cta = warps_per_cta;
  return options;
}

// Whether the calling thread's last message names one of words.
::testing::AssertionResult message_names_one_of(const std::vector<std::string>& words) {
  const std::string message = scatterptx_last_error_message();
  for (const std::string& word : words) {
    if (lower(message).find(lower(word)) != std::string::npos) return ::testing::AssertionSuccess();
  }
  std::string wanted;
  for (const std::string& word : words) wanted += (wanted.empty() ? "" : " or ") + word;
  return ::testing::AssertionFailure() << "message should name " << wanted << ": \"" << message
                                       << "\"";
}

size_t workspace_size(const scatterptx_scatter_add_args& args,
                      const scatterptx_group_options& options) {
  size_t bytes = 0;
  const scatterptx_status status = scatterptx_plan_workspace_size(&args, &options, &bytes);
  EXPECT_EQ(status, SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  return bytes;
}

bool driver_present() { return scatterptx::detail::driver_api(nullptr) != nullptr; }

// ---- Options and args that plan_create and scatter_add_grouped refuse ----

struct InvalidGroupCase {
  std::string name;
  std::function<void(scatterptx_scatter_add_args&, scatterptx_group_options&)> spoil;
  std::vector<std::string> words;  // the message names one of them (case-insensitive)
};

// gtest prints parameters of failed tests: the name, not the bytes.
void PrintTo(const InvalidGroupCase& c, std::ostream* os) { *os << c.name; }

const scatterptx_schedule kSchedule = {64, 4, 2, 1};

std::vector<InvalidGroupCase> invalid_group_cases() {
  using Args = scatterptx_scatter_add_args;
  using Options = scatterptx_group_options;
  return {
      {"ModeAboveRange", [](Args&, Options& o) { set_raw_enum(o.mode, 4); }, {"mode"}},
      {"ModeFarAboveRange", [](Args&, Options& o) { set_raw_enum(o.mode, 99); }, {"mode"}},
      {"NegativeMode", [](Args&, Options& o) { set_raw_enum(o.mode, -1); }, {"mode"}},
      {"WarpsPerCta33", [](Args&, Options& o) { o.warps_per_cta = 33; }, {"warps_per_cta"}},
      {"WarpsPerCtaHuge", [](Args&, Options& o) { o.warps_per_cta = 0xFFFFFFFFu; },
       {"warps_per_cta"}},
      {"DeterministicStreaming",
       [](Args&, Options& o) {
         o.mode = SCATTERPTX_MODE_STREAMING;
         o.deterministic = 1;
       },
       {"deterministic", "streaming"}},
      {"RemovedBucketedMode", [](Args&, Options& o) { o.mode = SCATTERPTX_MODE_BUCKETED; },
       {"SCATTERPTX_MODE_BUCKETED", "no longer supported", "SEGMENTED"}},
      {"SegmentedWithTmaPath",
       [](Args& a, Options& o) {
         o.mode = SCATTERPTX_MODE_SEGMENTED;
         a.path = SCATTERPTX_PATH_TMA;
       },
       {"path"}},
      {"SegmentedWithRedPath",
       [](Args& a, Options& o) {
         o.mode = SCATTERPTX_MODE_SEGMENTED;
         a.path = SCATTERPTX_PATH_RED;
       },
       {"path"}},
      {"SegmentedWithPrivatePath",
       [](Args& a, Options& o) {
         o.mode = SCATTERPTX_MODE_SEGMENTED;
         a.path = SCATTERPTX_PATH_PRIVATE;
       },
       {"path"}},
      {"SegmentedWithSchedule",
       [](Args& a, Options& o) {
         o.mode = SCATTERPTX_MODE_SEGMENTED;
         a.schedule = &kSchedule;
       },
       {"schedule"}},
      {"StreamingAmax",
       [](Args& a, Options& o) {
         o.mode = SCATTERPTX_MODE_STREAMING;
         a.reduce = SCATTERPTX_REDUCE_AMAX;
       },
       {"runs grouped only"}},
      {"StreamingSumWithoutSelf",
       [](Args& a, Options& o) {
         o.mode = SCATTERPTX_MODE_STREAMING;
         a.include_self = 0;
       },
       {"include_self = 0"}},
      {"WeightedMean",
       [](Args& a, Options&) {
         a.weights = fake_pointer(5 * kTiB);
         a.reduce = SCATTERPTX_REDUCE_MEAN;
       },
       {"weights combine with SCATTERPTX_REDUCE_SUM only"}},
      // The checks scatter_add makes hold here too.
      {"NullOut", [](Args& a, Options&) { a.out = nullptr; }, {"out"}},
      {"NullSrc", [](Args& a, Options&) { a.src = nullptr; }, {"src"}},
      {"NullIndex", [](Args& a, Options&) { a.index = nullptr; }, {"index"}},
      {"NegativeCols", [](Args& a, Options&) { a.cols = -64; }, {"cols"}},
      {"OutRowStrideBelowCols", [](Args& a, Options&) { a.out_row_stride = 63; },
       {"out_row_stride"}},
      {"UnknownDtype", [](Args& a, Options&) { set_raw_enum(a.dtype, 4); }, {"dtype"}},
      {"UnknownIndexType", [](Args& a, Options&) { set_raw_enum(a.index_type, 2); },
       {"index_type"}},
      {"UnknownIndexCheck", [](Args& a, Options&) { set_raw_enum(a.index_check, 7); },
       {"index_check"}},
      {"SrcNotElementAligned", [](Args& a, Options&) { a.src = fake_pointer(2 * kTiB + 1); },
       {"src"}},
  };
}

class InvalidGroupTest : public ::testing::TestWithParam<InvalidGroupCase> {
 protected:
  void spoiled(scatterptx_scatter_add_args* args, scatterptx_group_options* options) const {
    *args = valid_args();
    *options = options_with(SCATTERPTX_MODE_AUTO);
    GetParam().spoil(*args, *options);
  }
};

TEST_P(InvalidGroupTest, PlanCreateRejectsAndMakesNoPlan) {
  scatterptx_scatter_add_args args;
  scatterptx_group_options options;
  spoiled(&args, &options);
  for (void* workspace : {static_cast<void*>(nullptr), kFakeWorkspace}) {
    scatterptx_plan plan = nullptr;
    EXPECT_EQ(scatterptx_plan_create(&args, &options, workspace,
                                     workspace == nullptr ? 0 : kAmpleWorkspaceBytes, nullptr,
                                     &plan),
              SCATTERPTX_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(message_names_one_of(GetParam().words));
    EXPECT_EQ(plan, nullptr);
  }
}

TEST_P(InvalidGroupTest, ScatterAddGroupedRejects) {
  scatterptx_scatter_add_args args;
  scatterptx_group_options options;
  spoiled(&args, &options);
  EXPECT_EQ(scatterptx_scatter_add_grouped(&args, &options, kFakeWorkspace, kAmpleWorkspaceBytes,
                                           nullptr),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of(GetParam().words));
}

INSTANTIATE_TEST_SUITE_P(GroupValidation, InvalidGroupTest,
                         ::testing::ValuesIn(invalid_group_cases()),
                         [](const ::testing::TestParamInfo<InvalidGroupCase>& info) {
                           return info.param.name;
                         });

// ---- NULL pointers and handles ----

TEST(GroupApiValidation, NullArgs) {
  const scatterptx_group_options options = options_with(SCATTERPTX_MODE_SEGMENTED);
  size_t bytes = 0;
  EXPECT_EQ(scatterptx_plan_workspace_size(nullptr, &options, &bytes),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({"args"}));
  scatterptx_plan plan = nullptr;
  EXPECT_EQ(scatterptx_plan_create(nullptr, &options, nullptr, 0, nullptr, &plan),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({"args"}));
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(scatterptx_scatter_add_grouped(nullptr, &options, kFakeWorkspace, kAmpleWorkspaceBytes,
                                           nullptr),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({"args"}));
}

TEST(GroupApiValidation, NullBytesPointer) {
  const scatterptx_scatter_add_args args = valid_args();
  const scatterptx_group_options options = options_with(SCATTERPTX_MODE_SEGMENTED);
  EXPECT_EQ(scatterptx_plan_workspace_size(&args, &options, nullptr),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({"bytes"}));
}

TEST(GroupApiValidation, NullPlanPointer) {
  const scatterptx_scatter_add_args args = valid_args();
  const scatterptx_group_options options = options_with(SCATTERPTX_MODE_SEGMENTED);
  EXPECT_EQ(scatterptx_plan_create(&args, &options, nullptr, 0, nullptr, nullptr),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({"plan"}));
}

TEST(GroupApiValidation, NullPlanHandle) {
  EXPECT_EQ(scatterptx_plan_destroy(nullptr), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  EXPECT_EQ(scatterptx_plan_execute(nullptr, fake_pointer(1 * kTiB), fake_pointer(2 * kTiB),
                                    nullptr),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({"plan"}));
  char buffer[256] = {};
  EXPECT_EQ(scatterptx_plan_describe(nullptr, buffer, sizeof buffer),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({"plan"}));
}

TEST(GroupApiValidation, OptionsInitDefaults) {
  scatterptx_group_options options;
  std::memset(&options, 0xCD, sizeof options);  // init must overwrite every field
  scatterptx_group_options_init(&options);
  EXPECT_EQ(options.mode, SCATTERPTX_MODE_AUTO);
  EXPECT_EQ(options.deterministic, 0);
  EXPECT_EQ(options.warps_per_cta, 0u);
}

// ---- Workspace: its size, and the caller's workspace checked against it ----

TEST(GroupWorkspaceSize, StreamingNeedsNone) {
  scatterptx_scatter_add_args args = valid_args();
  EXPECT_EQ(workspace_size(args, options_with(SCATTERPTX_MODE_STREAMING)), 0u);
  args.src_rows = 1000000;
  EXPECT_EQ(workspace_size(args, options_with(SCATTERPTX_MODE_STREAMING)), 0u);
}

TEST(GroupWorkspaceSize, SegmentedNeedsMoreThan16BytesPerSourceRow) {
  scatterptx_scatter_add_args args = valid_args();
  for (int64_t rows : {1, 4096, 100000, 1000000}) {
    args.src_rows = rows;
    const size_t keys = 16 * static_cast<size_t>(rows);
    EXPECT_GT(workspace_size(args, options_with(SCATTERPTX_MODE_SEGMENTED)), keys) << rows;
    // deterministic selects SEGMENTED with mode AUTO
    EXPECT_GT(workspace_size(args, options_with(SCATTERPTX_MODE_AUTO, 1)), keys) << rows;
  }
}

TEST(GroupWorkspaceSize, WithinTheHeadersFormula) {
  // At most 16*M + 4*256*ceil(M/2048) + 4*ceil(M/256)*row_bytes + 4 KB, with
  // row_bytes of the accumulator type rounded up to 16; the 4 KB holds the
  // digit totals, the error slot and each buffer's 256-byte alignment, so
  // that the size falls short of the formula by less than that.
  const auto ceil_div = [](size_t a, size_t b) { return (a + b - 1) / b; };
  for (scatterptx_dtype dtype : {SCATTERPTX_F32, SCATTERPTX_F16, SCATTERPTX_BF16, SCATTERPTX_F64}) {
    for (int64_t cols : {1, 64, 1000}) {
      for (int64_t rows : {1000, 100000, 1000001}) {
        scatterptx_scatter_add_args args = valid_args();
        args.dtype = dtype;
        args.cols = cols;
        args.out_row_stride = cols;
        args.src_row_stride = cols;
        args.src_rows = rows;
        const size_t m = static_cast<size_t>(rows);
        const size_t accumulator = dtype == SCATTERPTX_F64 ? 8 : 4;
        const size_t row_bytes = ceil_div(static_cast<size_t>(cols) * accumulator, 16) * 16;
        const size_t formula =
            16 * m + 4 * 256 * ceil_div(m, 2048) + 4 * ceil_div(m, 256) * row_bytes + 4096;
        const size_t bytes = workspace_size(args, options_with(SCATTERPTX_MODE_SEGMENTED));
        EXPECT_LE(bytes, formula) << scatterptx_dtype_name(dtype) << " " << rows << "x" << cols;
        EXPECT_GT(bytes, formula - 4096) << scatterptx_dtype_name(dtype) << " " << rows << "x" << cols;
      }
    }
  }
}

TEST(GroupWorkspaceSize, MonotoneInSourceRows) {
  scatterptx_scatter_add_args args = valid_args();
  size_t previous = 0;
  for (int64_t rows : {0, 1, 255, 256, 257, 4095, 4096, 4097, 100000, 1000000, 10000000}) {
    args.src_rows = rows;
    const size_t bytes = workspace_size(args, options_with(SCATTERPTX_MODE_SEGMENTED));
    EXPECT_GE(bytes, previous) << "src_rows " << rows;
    previous = bytes;
  }
}

TEST(GroupWorkspaceSize, RefusesASizePast2To64Bytes) {
  // Two bf16 rows of 2^60 columns (2^61 bytes each, within validation's
  // bounds): their f32 partial sums, twice over, pass 2^64 bytes.
  scatterptx_scatter_add_args args = valid_args();
  args.dtype = SCATTERPTX_BF16;
  args.cols = args.out_row_stride = args.src_row_stride = int64_t{1} << 60;
  args.src_rows = 2;
  args.out_rows = 1;
  // Apart by more than their extents (out 2^61 bytes, src 2^62).
  args.src = fake_pointer(uintptr_t{1} << 62);
  args.index = fake_pointer((uintptr_t{1} << 63) + kTiB);
  void* const workspace = fake_pointer((uintptr_t{1} << 63) + 2 * kTiB);
  const scatterptx_group_options segmented = options_with(SCATTERPTX_MODE_SEGMENTED);
  size_t bytes = 1;
  EXPECT_EQ(scatterptx_plan_workspace_size(&args, &segmented, &bytes), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({"2^64"}));
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(scatterptx_scatter_add_grouped(&args, &segmented, workspace, kAmpleWorkspaceBytes, nullptr),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({"2^64"})) << scatterptx_last_error_message();
  // Half the columns fit: 2^62-byte partial sums.
  args.cols = args.out_row_stride = args.src_row_stride = int64_t{1} << 59;
  EXPECT_GT(workspace_size(args, segmented), size_t{1} << 63);
}

TEST(GroupApiValidation, EmptyProblemsAreNoOpsInEveryMode) {
  // As scatterptx_scatter_add: no source rows or no columns read and write
  // nothing, need no workspace and meet no limit of grouping (rows above
  // 2^32 - 1 included), whatever the mode or reduce.
  struct Shape {
    int64_t src_rows, cols;
  };
  for (const Shape shape : {Shape{0, 64}, Shape{1000000000, 0}, Shape{int64_t{1} << 33, 0}}) {
    for (const scatterptx_group_options& options :
         {options_with(SCATTERPTX_MODE_AUTO), options_with(SCATTERPTX_MODE_SEGMENTED),
          options_with(SCATTERPTX_MODE_AUTO, /*deterministic=*/1)}) {
      for (const scatterptx_reduce reduce : {SCATTERPTX_REDUCE_SUM, SCATTERPTX_REDUCE_MEAN}) {
        scatterptx_scatter_add_args args = valid_args();
        args.src_rows = shape.src_rows;
        args.cols = shape.cols;
        args.reduce = reduce;
        args.include_self = reduce == SCATTERPTX_REDUCE_SUM;
        const std::string what = "src_rows " + std::to_string(shape.src_rows) + ", cols " +
                                 std::to_string(shape.cols) + ", mode " + std::to_string(options.mode) +
                                 ", deterministic " + std::to_string(options.deterministic) + ", reduce " +
                                 std::to_string(reduce);
        size_t bytes = 1;
        EXPECT_EQ(scatterptx_plan_workspace_size(&args, &options, &bytes), SCATTERPTX_SUCCESS)
            << what << ": " << scatterptx_last_error_message();
        EXPECT_EQ(bytes, 0u) << what;
        EXPECT_EQ(scatterptx_scatter_add_grouped(&args, &options, nullptr, 0, nullptr), SCATTERPTX_SUCCESS)
            << what << ": " << scatterptx_last_error_message();
        EXPECT_EQ(scatterptx_scatter_add_grouped(&args, nullptr, nullptr, 0, nullptr), SCATTERPTX_SUCCESS) << what;
      }
    }
  }
}

TEST(GroupWorkspaceSize, WiderAccumulatorsNeedMore) {
  // The per-tile partial sums are f64 for f64 and f32 for the rest.
  scatterptx_scatter_add_args args = valid_args();
  args.src_rows = 100000;
  args.cols = args.out_row_stride = args.src_row_stride = 1000;
  const size_t f32 = workspace_size(args, options_with(SCATTERPTX_MODE_SEGMENTED));
  args.dtype = SCATTERPTX_F64;
  const size_t f64 = workspace_size(args, options_with(SCATTERPTX_MODE_SEGMENTED));
  EXPECT_GT(f64, f32);
}

TEST(GroupWorkspaceSize, NullOptionsAreTheDefaults) {
  const scatterptx_scatter_add_args args = valid_args();
  size_t with_null = 0;
  ASSERT_EQ(scatterptx_plan_workspace_size(&args, nullptr, &with_null), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  scatterptx_group_options defaults;
  scatterptx_group_options_init(&defaults);
  EXPECT_EQ(with_null, workspace_size(args, defaults));
}

TEST(GroupWorkspaceSize, ReadsNoPointer) {
  scatterptx_scatter_add_args args = valid_args();
  const size_t with_pointers = workspace_size(args, options_with(SCATTERPTX_MODE_SEGMENTED));
  args.out = nullptr;
  args.src = nullptr;
  args.index = nullptr;
  EXPECT_EQ(workspace_size(args, options_with(SCATTERPTX_MODE_SEGMENTED)), with_pointers);
}

TEST(GroupWorkspaceSize, RejectsInvalidSizesAndTypes) {
  const scatterptx_group_options segmented = options_with(SCATTERPTX_MODE_SEGMENTED);
  const std::vector<std::pair<std::string, std::function<void(scatterptx_scatter_add_args&)>>>
      spoilers = {
          {"src_rows", [](scatterptx_scatter_add_args& a) { a.src_rows = -1; }},
          {"cols", [](scatterptx_scatter_add_args& a) { a.cols = -1; }},
          {"dtype", [](scatterptx_scatter_add_args& a) { set_raw_enum(a.dtype, 4); }},
          {"index_type", [](scatterptx_scatter_add_args& a) { set_raw_enum(a.index_type, 2); }},
      };
  for (const auto& [field, spoil] : spoilers) {
    scatterptx_scatter_add_args args = valid_args();
    spoil(args);
    size_t bytes = 0;
    EXPECT_EQ(scatterptx_plan_workspace_size(&args, &segmented, &bytes),
              SCATTERPTX_ERROR_INVALID_ARGUMENT)
        << field;
    EXPECT_TRUE(message_names_one_of({field}));
  }
  scatterptx_group_options bad_mode = segmented;
  set_raw_enum(bad_mode.mode, 4);
  const scatterptx_scatter_add_args args = valid_args();
  size_t bytes = 0;
  EXPECT_EQ(scatterptx_plan_workspace_size(&args, &bad_mode, &bytes),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({"mode"}));
}

TEST(GroupWorkspace, SingleShotRefusesTooSmallAWorkspace) {
  const scatterptx_scatter_add_args args = valid_args();
  const scatterptx_group_options options = options_with(SCATTERPTX_MODE_SEGMENTED);
  const size_t needed = workspace_size(args, options);
  ASSERT_GT(needed, 0u);
  for (size_t given : {needed - 1, needed / 2, size_t{0}}) {
    EXPECT_EQ(scatterptx_scatter_add_grouped(&args, &options, kFakeWorkspace, given, nullptr),
              SCATTERPTX_ERROR_INVALID_ARGUMENT)
        << given << " of " << needed << " bytes";
    EXPECT_TRUE(message_names_one_of({std::to_string(needed)}));
  }
}

TEST(GroupWorkspace, SingleShotRefusesNullWorkspaceWhenOneIsNeeded) {
  const scatterptx_scatter_add_args args = valid_args();
  const scatterptx_group_options options = options_with(SCATTERPTX_MODE_SEGMENTED);
  const size_t needed = workspace_size(args, options);
  ASSERT_GT(needed, 0u);
  for (size_t given : {needed, size_t{0}}) {
    EXPECT_EQ(scatterptx_scatter_add_grouped(&args, &options, nullptr, given, nullptr),
              SCATTERPTX_ERROR_INVALID_ARGUMENT)
        << given << " bytes";
    EXPECT_TRUE(message_names_one_of({"workspace"}));
  }
}

TEST(GroupWorkspace, PlanCreateRefusesTooSmallOrMisalignedWorkspace) {
  const scatterptx_scatter_add_args args = valid_args();
  const scatterptx_group_options options = options_with(SCATTERPTX_MODE_SEGMENTED);
  const size_t needed = workspace_size(args, options);
  ASSERT_GT(needed, 0u);
  scatterptx_plan plan = nullptr;
  EXPECT_EQ(scatterptx_plan_create(&args, &options, kFakeWorkspace, needed - 1, nullptr, &plan),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({std::to_string(needed)}));
  EXPECT_EQ(plan, nullptr);
  // 16-byte aligned but not 256-byte aligned.
  EXPECT_EQ(scatterptx_plan_create(&args, &options, fake_pointer(4 * kTiB + 16), needed, nullptr,
                                   &plan),
            SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_names_one_of({"workspace", "align"}));
  EXPECT_EQ(plan, nullptr);
}

// Valid inputs pass validation and go on to the driver; with fake pointers
// that is only safe to observe where there is no driver to launch on.
TEST(GroupApiValidation, ValidInputsReachTheDriver) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is present; fake pointers cannot launch";
  const scatterptx_scatter_add_args args = valid_args();
  scatterptx_scatter_add_args red = valid_args();
  red.path = SCATTERPTX_PATH_RED;
  const std::vector<std::pair<scatterptx_scatter_add_args, scatterptx_group_options>> valid = {
      {args, options_with(SCATTERPTX_MODE_AUTO)},
      {args, options_with(SCATTERPTX_MODE_SEGMENTED)},
      {args, options_with(SCATTERPTX_MODE_SEGMENTED, 1, 32)},
      {args, options_with(SCATTERPTX_MODE_AUTO, 1, 1)},
      {args, options_with(SCATTERPTX_MODE_STREAMING)},
      {red, options_with(SCATTERPTX_MODE_STREAMING)},
  };
  for (const auto& [a, options] : valid) {
    SCOPED_TRACE("mode " + std::to_string(options.mode) + ", deterministic " +
                 std::to_string(options.deterministic) + ", warps_per_cta " +
                 std::to_string(options.warps_per_cta) + ", path " + std::to_string(a.path));
    size_t needed = 0;
    ASSERT_EQ(scatterptx_plan_workspace_size(&a, &options, &needed), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    void* workspace = needed == 0 ? nullptr : kFakeWorkspace;
    scatterptx_plan plan = nullptr;
    EXPECT_EQ(scatterptx_plan_create(&a, &options, nullptr, 0, nullptr, &plan),
              SCATTERPTX_ERROR_NO_DRIVER)
        << scatterptx_last_error_message();
    EXPECT_EQ(plan, nullptr);
    EXPECT_EQ(scatterptx_plan_create(&a, &options, workspace, needed, nullptr, &plan),
              SCATTERPTX_ERROR_NO_DRIVER)
        << scatterptx_last_error_message();
    EXPECT_EQ(plan, nullptr);
    EXPECT_EQ(scatterptx_scatter_add_grouped(&a, &options, workspace, needed, nullptr),
              SCATTERPTX_ERROR_NO_DRIVER)
        << scatterptx_last_error_message();
  }
  // NULL options are the defaults here too, as plan_workspace_size documents.
  size_t needed = 0;
  ASSERT_EQ(scatterptx_plan_workspace_size(&args, nullptr, &needed), SCATTERPTX_SUCCESS)
      << scatterptx_last_error_message();
  scatterptx_plan plan = nullptr;
  EXPECT_EQ(scatterptx_plan_create(&args, nullptr, nullptr, 0, nullptr, &plan),
            SCATTERPTX_ERROR_NO_DRIVER)
      << scatterptx_last_error_message();
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(scatterptx_scatter_add_grouped(&args, nullptr, needed == 0 ? nullptr : kFakeWorkspace,
                                           needed, nullptr),
            SCATTERPTX_ERROR_NO_DRIVER)
      << scatterptx_last_error_message();
}

}  // namespace

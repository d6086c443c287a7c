#include "bad_inputs.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <stdexcept>

#include "raw_values.hpp"
#include "scatterptx/scatterptx.hpp"

namespace scatterptx_bad_inputs {
namespace {

using scatterptx_test::lower;
using scatterptx_test::set_raw_enum;

constexpr uintptr_t kTiB = uintptr_t{1} << 40;
// Larger than any workspace a case of the baseline shape can need.
constexpr size_t kAmpleWorkspaceBytes = size_t{64} << 20;

void* offset(const void* pointer, ptrdiff_t bytes) {
  return const_cast<char*>(static_cast<const char*>(pointer)) + bytes;
}

void* allocate_nothing(size_t, CUstream, void*) { return nullptr; }
void release_nothing(void*, size_t, CUstream, void*) {}

// The bytes a SEGMENTED plan needs for the call's args.
size_t segmented_workspace_bytes(const Call& c) {
  scatterptx_group_options options;
  scatterptx_group_options_init(&options);
  options.mode = SCATTERPTX_MODE_SEGMENTED;
  size_t bytes = 0;
  if (scatterptx_plan_workspace_size(&c.args, &options, &bytes) != SCATTERPTX_SUCCESS) {
    throw std::logic_error(std::string("plan_workspace_size of a valid call failed: ") +
                           scatterptx_last_error_message());
  }
  return bytes;
}

Outcome status_outcome(scatterptx_status status) {
  Outcome outcome;
  outcome.status = status;
  outcome.message = scatterptx_last_error_message();
  return outcome;
}

Outcome value_outcome(std::string value) {
  Outcome outcome;
  outcome.returns_status = false;
  outcome.value = std::move(value);
  return outcome;
}

// Entry lists: what the args reach.
using Entries = std::vector<Entry>;
// Every entry point that takes args and looks at the pointers in them.
const Entries kArgsEntries = {Entry::kScatterAdd, Entry::kDescribePlan, Entry::kPlanCreate,
                              Entry::kScatterAddGrouped};
// The same and plan_workspace_size, which looks at the shape only.
const Entries kShapeEntries = {Entry::kScatterAdd, Entry::kDescribePlan, Entry::kPlanWorkspaceSize,
                               Entry::kPlanCreate, Entry::kScatterAddGrouped};
// The entry points that take group options.
const Entries kOptionEntries = {Entry::kPlanWorkspaceSize, Entry::kPlanCreate, Entry::kScatterAddGrouped};
// Those that take a caller's workspace.
const Entries kWorkspaceEntries = {Entry::kPlanCreate, Entry::kScatterAddGrouped};

// A forced streaming path reaches plans and grouped calls in STREAMING mode.
void streaming_mode(Call& c) { c.options.mode = SCATTERPTX_MODE_STREAMING; }

std::vector<HostCase> make_host_cases() {
  const scatterptx_status invalid = SCATTERPTX_ERROR_INVALID_ARGUMENT;
  std::vector<HostCase> cases = {
      // ---- NULL pointers ----
      {"null_args", "`args` is NULL", kShapeEntries, [](Call& c) { c.args_null = true; }, invalid, "", {"args"}},
      {"null_out", "`out` is NULL, `src_rows` > 0", kArgsEntries, [](Call& c) { c.args.out = nullptr; }, invalid,
       "", {"out"}},
      {"null_src", "`src` is NULL, `src_rows` > 0", kArgsEntries, [](Call& c) { c.args.src = nullptr; }, invalid,
       "", {"src"}},
      {"null_index", "`index` is NULL, `src_rows` > 0", kArgsEntries, [](Call& c) { c.args.index = nullptr; },
       invalid, "", {"index"}},
      {"null_buffer", "describe's `buffer` is NULL", {Entry::kDescribePlan, Entry::kPlanDescribe},
       [](Call& c) { c.buffer_null = true; }, invalid, "", {"buffer"}},
      {"zero_buffer_size", "describe's `buffer_size` is 0", {Entry::kDescribePlan, Entry::kPlanDescribe},
       [](Call& c) { c.buffer_size = 0; }, invalid, "", {"buffer_size"}},
      {"null_position", "`position` is NULL", {Entry::kTakeIndexError}, [](Call& c) { c.answer_null = true; },
       invalid, "", {"position"}},
      {"null_bytes", "`bytes` is NULL", {Entry::kPlanWorkspaceSize}, [](Call& c) { c.answer_null = true; },
       invalid, "", {"bytes"}},
      {"null_plan_out", "`plan` (where the handle goes) is NULL", {Entry::kPlanCreate},
       [](Call& c) { c.answer_null = true; }, invalid, "", {"plan"}},
      {"null_plan", "the plan handle is NULL", {Entry::kPlanExecute, Entry::kPlanDescribe}, [](Call&) {}, invalid,
       "", {"plan"}},
      {"null_plan_destroyed", "the plan handle is NULL", {Entry::kPlanDestroy}, [](Call&) {}, SCATTERPTX_SUCCESS,
       "", {}},
      {"null_args_init", "the struct to initialise is NULL", {Entry::kArgsInit, Entry::kGroupOptionsInit},
       [](Call&) {}, SCATTERPTX_SUCCESS, "returns, writing nothing", {}},
      // ---- enum values no enumerator has ----
      {"dtype_4", "`dtype` = 4", kShapeEntries, [](Call& c) { set_raw_enum(c.args.dtype, 4); }, invalid, "",
       {"dtype"}},
      {"dtype_negative", "`dtype` = -1", kShapeEntries, [](Call& c) { set_raw_enum(c.args.dtype, -1); }, invalid,
       "", {"dtype"}},
      {"index_type_2", "`index_type` = 2", kShapeEntries, [](Call& c) { set_raw_enum(c.args.index_type, 2); },
       invalid, "", {"index_type"}},
      {"index_check_7", "`index_check` = 7", kShapeEntries, [](Call& c) { set_raw_enum(c.args.index_check, 7); },
       invalid, "", {"index_check"}},
      {"index_check_negative", "`index_check` = -1", kShapeEntries,
       [](Call& c) { set_raw_enum(c.args.index_check, -1); }, invalid, "", {"index_check"}},
      {"path_9", "`path` = 9", kShapeEntries, [](Call& c) { set_raw_enum(c.args.path, 9); }, invalid, "",
       {"path"}},
      {"path_negative", "`path` = -5", kShapeEntries, [](Call& c) { set_raw_enum(c.args.path, -5); }, invalid, "",
       {"path"}},
      {"grouping_3", "`grouping` = 3", kShapeEntries, [](Call& c) { set_raw_enum(c.args.grouping, 3); }, invalid,
       "", {"grouping"}},
      {"grouping_negative", "`grouping` = -1", kShapeEntries, [](Call& c) { set_raw_enum(c.args.grouping, -1); },
       invalid, "", {"grouping"}},
      {"reduce_4", "`reduce` = 4", kShapeEntries, [](Call& c) { set_raw_enum(c.args.reduce, 4); }, invalid, "",
       {"reduce"}},
      {"reduce_negative", "`reduce` = -1", kShapeEntries, [](Call& c) { set_raw_enum(c.args.reduce, -1); }, invalid,
       "", {"reduce"}},
      {"weights_dtype_9", "`weights_dtype` = 9", kShapeEntries, [](Call& c) { set_raw_enum(c.args.weights_dtype, 9); },
       invalid, "", {"weights_dtype"}},
      {"mode_4", "`options->mode` = 4", kOptionEntries, [](Call& c) { set_raw_enum(c.options.mode, 4); }, invalid,
       "", {"mode"}},
      {"mode_negative", "`options->mode` = -1", kOptionEntries, [](Call& c) { set_raw_enum(c.options.mode, -1); },
       invalid, "", {"mode"}},
      {"mode_bucketed", "`options->mode` = SCATTERPTX_MODE_BUCKETED (removed)", kOptionEntries,
       [](Call& c) { c.options.mode = SCATTERPTX_MODE_BUCKETED; }, invalid, "", {"BUCKETED"}},
      // ---- group options at odds with args ----
      {"warps_per_cta_33", "`options->warps_per_cta` = 33", kOptionEntries,
       [](Call& c) { c.options.warps_per_cta = 33; }, invalid, "", {"warps_per_cta"}},
      {"warps_per_cta_max", "`options->warps_per_cta` = 2^32 - 1", kOptionEntries,
       [](Call& c) { c.options.warps_per_cta = 0xFFFFFFFFu; }, invalid, "", {"warps_per_cta"}},
      {"warps_per_cta_weighted_f64", "`options->warps_per_cta` = 25 for f64 rows with `weights`", kOptionEntries,
       [](Call& c) {
         c.args.dtype = SCATTERPTX_F64;
         c.args.weights = c.args.src;
         c.args.weights_dtype = SCATTERPTX_F64;
         c.options.warps_per_cta = 25;
       },
       invalid, "", {"for weighted f64 rows"}},
      {"deterministic_streaming", "`options->deterministic` with mode STREAMING", kOptionEntries,
       [](Call& c) {
         c.options.mode = SCATTERPTX_MODE_STREAMING;
         c.options.deterministic = 1;
       },
       invalid, "", {"deterministic"}},
      {"segmented_forced_path", "mode SEGMENTED with `path` = TMA", kOptionEntries,
       [](Call& c) {
         c.options.mode = SCATTERPTX_MODE_SEGMENTED;
         c.args.path = SCATTERPTX_PATH_TMA;
       },
       invalid, "", {"path"}},
      {"auto_forced_path", "mode AUTO with `path` = RED", kOptionEntries,
       [](Call& c) { c.args.path = SCATTERPTX_PATH_RED; }, invalid, "", {"path"}},
      {"segmented_schedule", "mode SEGMENTED with a `schedule`", kOptionEntries,
       [](Call& c) {
         c.options.mode = SCATTERPTX_MODE_SEGMENTED;
         c.schedule = {64, 4, 2, 1};
         c.with_schedule = true;
       },
       invalid, "", {"schedule"}},
      // ---- reduces and weights at odds with each other or with the call ----
      {"weighted_mean", "`weights` with `reduce` = MEAN", kShapeEntries,
       [](Call& c) {
         c.args.weights = c.args.src;
         c.args.reduce = SCATTERPTX_REDUCE_MEAN;
       },
       invalid, "", {"weights combine with SCATTERPTX_REDUCE_SUM only"}},
      {"weighted_amax", "`weights` with `reduce` = AMAX (AMIN likewise)", kShapeEntries,
       [](Call& c) {
         c.args.weights = c.args.src;
         c.args.reduce = SCATTERPTX_REDUCE_AMAX;
       },
       invalid, "", {"weights combine with SCATTERPTX_REDUCE_SUM only"}},
      {"weights_dtype_other", "bf16 `weights` for f32 rows (weights are f32 or the rows' dtype)", kShapeEntries,
       [](Call& c) {
         c.args.weights = c.args.src;
         c.args.weights_dtype = SCATTERPTX_BF16;
       },
       invalid, "", {"weights_dtype"}},
      {"weighted_tma_path", "`weights` with `path` = TMA (PRIVATE likewise)", kShapeEntries,
       [](Call& c) {
         c.args.weights = c.args.src;
         c.args.path = SCATTERPTX_PATH_TMA;
       },
       invalid, "", {"takes no weights"}},
      {"weighted_schedule", "`weights` with a `schedule`", kShapeEntries,
       [](Call& c) {
         c.args.weights = c.args.src;
         c.schedule = {64, 4, 2, 1};
         c.with_schedule = true;
       },
       invalid, "", {"takes no weights"}},
      {"amax_forced_path", "`reduce` = AMAX (any reduce but a sum with `include_self`) with `path` = RED",
       kShapeEntries,
       [](Call& c) {
         c.args.reduce = SCATTERPTX_REDUCE_AMAX;
         c.args.path = SCATTERPTX_PATH_RED;
       },
       invalid, "", {"runs grouped only"}},
      {"no_self_schedule", "`include_self` = 0 with a `schedule`", kShapeEntries,
       [](Call& c) {
         c.args.include_self = 0;
         c.schedule = {64, 4, 2, 1};
         c.with_schedule = true;
       },
       invalid, "", {"runs grouped only"}},
      {"mean_grouping_off", "`reduce` = MEAN with `grouping` = OFF", {Entry::kScatterAdd, Entry::kDescribePlan},
       [](Call& c) {
         c.args.reduce = SCATTERPTX_REDUCE_MEAN;
         c.args.grouping = SCATTERPTX_GROUPING_OFF;
       },
       invalid, "", {"SCATTERPTX_GROUPING_OFF"}},
      {"amin_streaming_mode", "`reduce` = AMIN with `options->mode` = STREAMING", kOptionEntries,
       [](Call& c) {
         c.args.reduce = SCATTERPTX_REDUCE_AMIN;
         c.options.mode = SCATTERPTX_MODE_STREAMING;
       },
       invalid, "", {"runs grouped only"}},
      // ---- sizes ----
      {"negative_out_rows", "`out_rows` = -1", kShapeEntries, [](Call& c) { c.args.out_rows = -1; }, invalid, "",
       {"out_rows"}},
      {"negative_src_rows", "`src_rows` = -3", kShapeEntries, [](Call& c) { c.args.src_rows = -3; }, invalid, "",
       {"src_rows"}},
      {"int64_min_src_rows", "`src_rows` = INT64_MIN", kShapeEntries,
       [](Call& c) { c.args.src_rows = INT64_MIN; }, invalid, "", {"src_rows"}},
      {"negative_cols", "`cols` = -64", kShapeEntries, [](Call& c) { c.args.cols = -64; }, invalid, "", {"cols"}},
      {"zero_out_rows", "`out_rows` = 0, `src_rows` > 0", kArgsEntries, [](Call& c) { c.args.out_rows = 0; },
       invalid, "", {"out_rows"}},
      {"out_stride_below_cols", "`out_row_stride` = 63 < `cols`", kShapeEntries,
       [](Call& c) { c.args.out_row_stride = 63; }, invalid, "", {"out_row_stride"}},
      {"src_stride_below_cols", "`src_row_stride` = 1 < `cols`", kShapeEntries,
       [](Call& c) { c.args.src_row_stride = 1; }, invalid, "", {"src_row_stride"}},
      {"negative_out_stride", "`out_row_stride` = -64", kShapeEntries,
       [](Call& c) { c.args.out_row_stride = -64; }, invalid, "", {"out_row_stride"}},
      {"cols_overflow", "`cols` = 2^61 (rows of 2^63 bytes)", kShapeEntries,
       [](Call& c) {
         c.args.cols = int64_t{1} << 61;
         c.args.out_row_stride = c.args.src_row_stride = c.args.cols;
       },
       invalid, "", {"cols"}},
      {"stride_overflow", "`out_row_stride` = INT64_MAX", kShapeEntries,
       [](Call& c) { c.args.out_row_stride = INT64_MAX; }, invalid, "", {"stride"}},
      {"out_extent_overflow", "`out_rows` = 2^60 of 256 bytes (out spans 2^68 bytes)", kShapeEntries,
       [](Call& c) { c.args.out_rows = int64_t{1} << 60; }, invalid, "", {"out spans"}},
      {"src_extent_overflow", "`src_rows` = 2^60 of 256 bytes", kShapeEntries,
       [](Call& c) { c.args.src_rows = int64_t{1} << 60; }, invalid, "", {"src spans"}},
      {"index_extent_overflow", "`src_rows` = 2^60 int64 entries of index (rows of one f32)", kShapeEntries,
       [](Call& c) {
         c.args.cols = c.args.out_row_stride = c.args.src_row_stride = 1;
         c.args.src_rows = int64_t{1} << 60;
       },
       invalid, "", {"index spans"}},
      // ---- the TMA schedule override ----
      {"chunk_bytes_24", "`schedule.chunk_bytes` = 24 (not a multiple of 16)", kShapeEntries,
       [](Call& c) {
         c.schedule.chunk_bytes = 24;
         c.with_schedule = true;
       },
       invalid, "", {"chunk_bytes"}},
      {"chunk_bytes_above_64k", "`schedule.chunk_bytes` = 65552", kShapeEntries,
       [](Call& c) {
         c.schedule.chunk_bytes = 65552;
         c.with_schedule = true;
       },
       invalid, "", {"chunk_bytes"}},
      {"stages_1", "`schedule.stages` = 1", kShapeEntries,
       [](Call& c) {
         c.schedule.stages = 1;
         c.with_schedule = true;
       },
       invalid, "", {"stages"}},
      {"stages_33", "`schedule.stages` = 33", kShapeEntries,
       [](Call& c) {
         c.schedule.stages = 33;
         c.with_schedule = true;
       },
       invalid, "", {"stages"}},
      {"schedule_warps_33", "`schedule.warps_per_cta` = 33", kShapeEntries,
       [](Call& c) {
         c.schedule.warps_per_cta = 33;
         c.with_schedule = true;
       },
       invalid, "", {"warps_per_cta"}},
      {"schedule_ctas_33", "`schedule.ctas_per_sm` = 33", kShapeEntries,
       [](Call& c) {
         c.schedule.ctas_per_sm = 33;
         c.with_schedule = true;
       },
       invalid, "", {"ctas_per_sm"}},
      // ---- alignment ----
      {"out_misaligned", "f32 `out` 2 bytes off its element size", kArgsEntries,
       [](Call& c) { c.args.out = offset(c.args.out, 2); }, invalid, "", {"out"}},
      {"src_misaligned", "f32 `src` 1 byte off", kArgsEntries, [](Call& c) { c.args.src = offset(c.args.src, 1); },
       invalid, "", {"src"}},
      {"int64_index_misaligned", "int64 `index` 4 bytes off", kArgsEntries,
       [](Call& c) { c.args.index = offset(c.args.index, 4); }, invalid, "", {"index"}},
      {"int32_index_misaligned", "int32 `index` 2 bytes off", kArgsEntries,
       [](Call& c) {
         c.args.index_type = SCATTERPTX_INDEX_INT32;
         c.args.index = offset(c.args.index, 2);
       },
       invalid, "", {"index"}},
      {"f64_out_misaligned", "f64 `out` 4 bytes off", kArgsEntries,
       [](Call& c) {
         c.args.dtype = SCATTERPTX_F64;
         c.args.cols = c.args.out_row_stride = c.args.src_row_stride = 32;
         c.args.out = offset(c.args.out, 4);
       },
       invalid, "", {"out"}},
      // ---- a forced path the input cannot take ----
      {"tma_row_bytes", "`path` = TMA, rows of 12 bytes", kArgsEntries,
       [](Call& c) {
         streaming_mode(c);
         c.args.path = SCATTERPTX_PATH_TMA;
         c.args.cols = 3;
       },
       invalid, "", {"SCATTERPTX_PATH_TMA"}},
      {"tma_out_unaligned", "`path` = TMA, `out` 4 bytes off 16", kArgsEntries,
       [](Call& c) {
         streaming_mode(c);
         c.args.path = SCATTERPTX_PATH_TMA;
         c.args.out = offset(c.args.out, 4);
       },
       invalid, "", {"SCATTERPTX_PATH_TMA"}},
      {"tma_src_unaligned", "`path` = TMA, `src` 8 bytes off 16", kArgsEntries,
       [](Call& c) {
         streaming_mode(c);
         c.args.path = SCATTERPTX_PATH_TMA;
         c.args.src = offset(c.args.src, 8);
       },
       invalid, "", {"SCATTERPTX_PATH_TMA"}},
      {"tma_out_stride", "`path` = TMA, `out_row_stride` of 260 bytes", kArgsEntries,
       [](Call& c) {
         streaming_mode(c);
         c.args.path = SCATTERPTX_PATH_TMA;
         c.args.out_row_stride = 65;
       },
       invalid, "", {"SCATTERPTX_PATH_TMA"}},
      {"tma_src_stride", "`path` = TMA, `src_row_stride` of 264 bytes", kArgsEntries,
       [](Call& c) {
         streaming_mode(c);
         c.args.path = SCATTERPTX_PATH_TMA;
         c.args.src_row_stride = 66;
       },
       invalid, "", {"SCATTERPTX_PATH_TMA"}},
      {"private_too_many_targets", "`path` = PRIVATE, `out_rows` = 5000", kArgsEntries,
       [](Call& c) {
         streaming_mode(c);
         c.args.path = SCATTERPTX_PATH_PRIVATE;
         c.args.out_rows = 5000;
       },
       invalid, "", {"SCATTERPTX_PATH_PRIVATE"}},
      {"private_out_unaligned", "`path` = PRIVATE, `out` 4 bytes off 16", kArgsEntries,
       [](Call& c) {
         streaming_mode(c);
         c.args.path = SCATTERPTX_PATH_PRIVATE;
         c.args.out = offset(c.args.out, 4);
       },
       invalid, "", {"SCATTERPTX_PATH_PRIVATE"}},
      {"weights_misaligned", "f32 `weights` 2 bytes off", kArgsEntries,
       [](Call& c) { c.args.weights = offset(c.args.src, 2); }, invalid, "", {"weights"}},
      // ---- overlap and the address space ----
      {"src_overlaps_out", "`src` starts 16 rows into `out`", kArgsEntries,
       [](Call& c) { c.args.src = offset(c.args.out, 16 * 256); }, invalid, "", {"overlap"}},
      {"src_is_out", "`src` == `out`", kArgsEntries, [](Call& c) { c.args.src = c.args.out; }, invalid, "",
       {"overlap"}},
      {"weights_overlap_out", "`weights` starts 512 bytes into `out`", kArgsEntries,
       [](Call& c) { c.args.weights = offset(c.args.out, 512); }, invalid, "", {"overlap"}},
      {"index_overlaps_out", "`index` starts 512 bytes into `out`", kArgsEntries,
       [](Call& c) { c.args.index = offset(c.args.out, 512); }, invalid, "", {"overlap"}},
      {"out_wraps", "`out` ends past the top of the address space", kArgsEntries,
       [](Call& c) { c.args.out = reinterpret_cast<void*>(~uintptr_t{0} - 4095); }, invalid, "", {"wraps"}},
      {"src_wraps", "`src` ends past the top of the address space", kArgsEntries,
       [](Call& c) { c.args.src = reinterpret_cast<void*>(~uintptr_t{0} - 4095); }, invalid, "", {"wraps"}},
      // ---- a caller's workspace ----
      {"workspace_null", "mode SEGMENTED, `workspace` NULL", {Entry::kScatterAddGrouped},
       [](Call& c) {
         c.options.mode = SCATTERPTX_MODE_SEGMENTED;
         c.workspace = nullptr;
         c.workspace_bytes = 0;
       },
       invalid, "", {"workspace is NULL"}},
      {"workspace_one_byte_short", "mode SEGMENTED, `workspace_bytes` one below the size needed", kWorkspaceEntries,
       [](Call& c) {
         c.options.mode = SCATTERPTX_MODE_SEGMENTED;
         c.workspace_bytes = segmented_workspace_bytes(c) - 1;
       },
       invalid, "", {"workspace_bytes"}},
      {"workspace_bytes_zero", "mode SEGMENTED, a `workspace` of 0 bytes", kWorkspaceEntries,
       [](Call& c) {
         c.options.mode = SCATTERPTX_MODE_SEGMENTED;
         c.workspace_bytes = 0;
       },
       invalid, "", {"workspace_bytes"}},
      {"workspace_misaligned", "mode SEGMENTED, `workspace` 16 bytes off 256", kWorkspaceEntries,
       [](Call& c) {
         c.options.mode = SCATTERPTX_MODE_SEGMENTED;
         c.workspace = offset(c.workspace, 16);
         c.workspace_bytes -= 16;
       },
       invalid, "", {"256-byte aligned"}},
      // ---- the allocator ----
      {"allocator_without_release", "`allocator->release` is NULL", {Entry::kSetAllocator},
       [](Call& c) { c.allocator = {&allocate_nothing, nullptr, nullptr}; }, invalid, "", {"allocator"}},
      {"allocator_without_allocate", "`allocator->allocate` is NULL", {Entry::kSetAllocator},
       [](Call& c) { c.allocator = {nullptr, &release_nothing, nullptr}; }, invalid, "", {"allocator"}},
      {"call_allocator_without_release", "the call's `allocator->release` is NULL",
       {Entry::kScatterAddWithAllocator}, [](Call& c) { c.allocator = {&allocate_nothing, nullptr, nullptr}; },
       invalid, "", {"allocator->release"}},
      {"call_allocator_without_allocate", "the call's `allocator->allocate` is NULL",
       {Entry::kScatterAddWithAllocator}, [](Call& c) { c.allocator = {nullptr, &release_nothing, nullptr}; },
       invalid, "", {"allocator->allocate"}},
      // ---- values no enumerator has, outside a call ----
      {"status_name_99", "`status` = 99", {Entry::kStatusName}, [](Call& c) { c.raw_value = 99; },
       SCATTERPTX_SUCCESS, "returns \"SCATTERPTX_UNKNOWN_STATUS\"", {}},
      {"dtype_size_4", "`dtype` = 4", {Entry::kDtypeSize}, [](Call& c) { c.raw_value = 4; }, SCATTERPTX_SUCCESS,
       "returns 0", {}},
      {"dtype_size_negative", "`dtype` = -1", {Entry::kDtypeSize}, [](Call& c) { c.raw_value = -1; },
       SCATTERPTX_SUCCESS, "returns 0", {}},
      {"dtype_name_4", "`dtype` = 4", {Entry::kDtypeName}, [](Call& c) { c.raw_value = 4; }, SCATTERPTX_SUCCESS,
       "returns \"unknown\"", {}},
      // ---- the C++ layer ----
      {"cpp_columns_differ", "out and src matrices with different `cols` (64, 32)", {Entry::kCppMakeArgs},
       [](Call& c) { c.cpp_src_cols = 32; }, invalid, "", {"columns"}},
      {"cpp_empty_plan", "an empty (default-constructed or moved-from) `scatterptx::Plan`", {Entry::kCppEmptyPlan},
       [](Call&) {}, invalid, "", {"plan"}},
      // ---- nothing to do: accepted whatever the pointers ----
      {"empty_source_null_pointers", "`src_rows` = 0, `out`, `src`, `index` and `workspace` NULL",
       {Entry::kScatterAdd, Entry::kScatterAddGrouped},
       [](Call& c) {
         c.args.src_rows = 0;
         c.args.out = nullptr;
         c.args.src = nullptr;
         c.args.index = nullptr;
         c.workspace = nullptr;
         c.workspace_bytes = 0;
       },
       SCATTERPTX_SUCCESS, "", {}},
      {"zero_cols_null_pointers", "`cols` = 0 (strides 0), `out`, `src`, `index` NULL",
       {Entry::kScatterAdd, Entry::kScatterAddGrouped},
       [](Call& c) {
         c.args.cols = c.args.out_row_stride = c.args.src_row_stride = 0;
         c.args.out = nullptr;
         c.args.src = nullptr;
         c.args.index = nullptr;
         c.workspace = nullptr;
         c.workspace_bytes = 0;
       },
       SCATTERPTX_SUCCESS, "", {}},
  };
  return cases;
}

}  // namespace

const char* entry_name(Entry entry) {
  switch (entry) {
    case Entry::kScatterAdd: return "scatterptx_scatter_add";
    case Entry::kDescribePlan: return "scatterptx_describe_plan";
    case Entry::kPlanWorkspaceSize: return "scatterptx_plan_workspace_size";
    case Entry::kPlanCreate: return "scatterptx_plan_create";
    case Entry::kScatterAddGrouped: return "scatterptx_scatter_add_grouped";
    case Entry::kPlanExecute: return "scatterptx_plan_execute";
    case Entry::kPlanDescribe: return "scatterptx_plan_describe";
    case Entry::kPlanDestroy: return "scatterptx_plan_destroy";
    case Entry::kTakeIndexError: return "scatterptx_take_index_error";
    case Entry::kSetAllocator: return "scatterptx_set_allocator";
    case Entry::kScatterAddWithAllocator: return "scatterptx_scatter_add_with_allocator";
    case Entry::kStatusName: return "scatterptx_status_name";
    case Entry::kDtypeSize: return "scatterptx_dtype_size";
    case Entry::kDtypeName: return "scatterptx_dtype_name";
    case Entry::kArgsInit: return "scatterptx_scatter_add_args_init";
    case Entry::kGroupOptionsInit: return "scatterptx_group_options_init";
    case Entry::kCppMakeArgs: return "scatterptx::make_args";
    case Entry::kCppEmptyPlan: return "scatterptx::Plan::execute";
  }
  return "?";
}

Call baseline_call(void* out, const void* src, const void* index, void* workspace, size_t workspace_bytes) {
  Call c;
  scatterptx_scatter_add_args_init(&c.args);
  c.args.out = out;
  c.args.out_rows = kOutRows;
  c.args.out_row_stride = kCols;
  c.args.src = src;
  c.args.src_rows = kSrcRows;
  c.args.src_row_stride = kCols;
  c.args.cols = kCols;
  c.args.dtype = SCATTERPTX_F32;
  c.args.index = index;
  c.args.index_type = SCATTERPTX_INDEX_INT64;
  scatterptx_group_options_init(&c.options);
  c.workspace = workspace;
  c.workspace_bytes = workspace_bytes;
  return c;
}

Call fake_baseline_call() {
  const auto fake = [](uintptr_t address) { return reinterpret_cast<void*>(address); };
  return baseline_call(fake(1 * kTiB), fake(2 * kTiB), fake(3 * kTiB), fake(4 * kTiB), kAmpleWorkspaceBytes);
}

size_t baseline_workspace_bytes() { return segmented_workspace_bytes(fake_baseline_call()); }

std::string Outcome::result(Entry entry) const {
  if (!returns_status) return value;
  if (entry == Entry::kCppMakeArgs || entry == Entry::kCppEmptyPlan) {
    return std::string("throws scatterptx::Error(") + scatterptx_status_name(status) + ")";
  }
  return scatterptx_status_name(status);
}

Outcome run_entry(Entry entry, const Call& call) {
  Call c = call;  // args.schedule points into this copy
  c.args.schedule = c.with_schedule ? &c.schedule : nullptr;
  const scatterptx_scatter_add_args* args = c.args_null ? nullptr : &c.args;
  const scatterptx_group_options* options = c.options_null ? nullptr : &c.options;
  char buffer[1024] = {};
  char* const describe_buffer = c.buffer_null ? nullptr : buffer;
  const size_t describe_size = std::min(c.buffer_size, sizeof buffer);
  switch (entry) {
    case Entry::kScatterAdd:
      return status_outcome(scatterptx_scatter_add(args, c.stream));
    case Entry::kDescribePlan:
      return status_outcome(scatterptx_describe_plan(args, describe_buffer, describe_size));
    case Entry::kPlanWorkspaceSize: {
      size_t bytes = 0;
      return status_outcome(scatterptx_plan_workspace_size(args, options, c.answer_null ? nullptr : &bytes));
    }
    case Entry::kPlanCreate: {
      // Not NULL before the call: a refusal must clear it.
      scatterptx_plan plan = reinterpret_cast<scatterptx_plan>(uintptr_t{0x1});
      Outcome outcome = status_outcome(scatterptx_plan_create(args, options, c.workspace, c.workspace_bytes,
                                                              c.stream, c.answer_null ? nullptr : &plan));
      outcome.plan_left_null = c.answer_null || plan == nullptr;
      if (outcome.status == SCATTERPTX_SUCCESS && !outcome.plan_left_null) (void)scatterptx_plan_destroy(plan);
      return outcome;
    }
    case Entry::kScatterAddGrouped:
      return status_outcome(scatterptx_scatter_add_grouped(args, options, c.workspace, c.workspace_bytes, c.stream));
    case Entry::kPlanExecute:
      return status_outcome(scatterptx_plan_execute(nullptr, c.args.out, c.args.src, c.stream));
    case Entry::kPlanDescribe:
      return status_outcome(scatterptx_plan_describe(nullptr, describe_buffer, describe_size));
    case Entry::kPlanDestroy:
      return status_outcome(scatterptx_plan_destroy(nullptr));
    case Entry::kTakeIndexError: {
      int64_t position = 0;
      return status_outcome(scatterptx_take_index_error(c.answer_null ? nullptr : &position));
    }
    case Entry::kSetAllocator:
      return status_outcome(scatterptx_set_allocator(&c.allocator));
    case Entry::kScatterAddWithAllocator:
      return status_outcome(scatterptx_scatter_add_with_allocator(args, &c.allocator, c.stream));
    case Entry::kStatusName: {
      scatterptx_status status;
      set_raw_enum(status, c.raw_value);
      return value_outcome(std::string("returns \"") + scatterptx_status_name(status) + "\"");
    }
    case Entry::kDtypeSize: {
      scatterptx_dtype dtype;
      set_raw_enum(dtype, c.raw_value);
      return value_outcome("returns " + std::to_string(scatterptx_dtype_size(dtype)));
    }
    case Entry::kDtypeName: {
      scatterptx_dtype dtype;
      set_raw_enum(dtype, c.raw_value);
      return value_outcome(std::string("returns \"") + scatterptx_dtype_name(dtype) + "\"");
    }
    case Entry::kArgsInit:
      scatterptx_scatter_add_args_init(nullptr);
      return value_outcome("returns, writing nothing");
    case Entry::kGroupOptionsInit:
      scatterptx_group_options_init(nullptr);
      return value_outcome("returns, writing nothing");
    case Entry::kCppMakeArgs:
    case Entry::kCppEmptyPlan: {
      try {
        if (entry == Entry::kCppMakeArgs) {
          (void)scatterptx::make_args({c.args.out, c.args.out_rows, c.args.cols, c.args.out_row_stride},
                                      {c.args.src, c.args.src_rows, c.cpp_src_cols, c.args.src_row_stride},
                                      c.args.dtype, c.args.index, c.args.index_type);
        } else {
          scatterptx::Plan empty;
          empty.execute(c.args.out, c.args.src, c.stream);
        }
      } catch (const scatterptx::Error& error) {
        Outcome outcome;
        outcome.status = error.status();
        outcome.message = error.what();
        return outcome;
      }
      return status_outcome(SCATTERPTX_SUCCESS);
    }
  }
  throw std::logic_error("unknown entry");
}

const std::vector<HostCase>& host_cases() {
  static const std::vector<HostCase> cases = make_host_cases();
  return cases;
}

std::string outcome_mismatch(const HostCase& c, Entry entry, const Outcome& outcome) {
  if (!outcome.returns_status) {
    if (!c.value.empty() && outcome.value != c.value) {
      return "returned \"" + outcome.value + "\", not \"" + c.value + "\"";
    }
    return "";
  }
  if (outcome.status != c.status) {
    return std::string("answered ") + scatterptx_status_name(outcome.status) + " (\"" + outcome.message + "\"), not " +
           scatterptx_status_name(c.status);
  }
  if (entry == Entry::kPlanCreate && !outcome.plan_left_null) return "refused but left *plan set";
  if (c.status != SCATTERPTX_SUCCESS && outcome.message.empty()) return "refused without a message";
  if (c.names.empty()) return "";
  for (const std::string& word : c.names) {
    if (lower(outcome.message).find(lower(word)) != std::string::npos) return "";
  }
  return "the message \"" + outcome.message + "\" names none of the expected words (first: " + c.names[0] + ")";
}

std::string host_case_host_test(const HostCase& c) { return "Matrix/BadInputOnHost.AnsweredAsDocumented/" + c.id; }

std::string host_case_gpu_test(const HostCase& c) {
  return "Sm90/BadInputOnGpu.NothingChangesAndTheContextStillWorks/" + c.id;
}

std::string expand(std::string message, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [name, value] : values) {
    const std::string key = "<" + name + ">";
    for (size_t at = message.find(key); at != std::string::npos; at = message.find(key, at + value.size())) {
      message.replace(at, key.size(), value);
    }
  }
  return message;
}

namespace {

std::vector<DocumentedCase> make_device_cases() {
  const std::string out_of_range =
      "index[<position>] = <value> is outside [0, out_rows = <out_rows>); that row and any other bad one were "
      "skipped, valid rows were added";
  const std::string no_fallback =
      "grouping needs a workspace and falling back is forbidden (SCATTERPTX_GROUPING_NO_FALLBACK): <why>";
  return {
      // ---- out-of-range indices ----
      {"oor_record_streaming",
       "an index entry outside `[0, out_rows)` (negative, `out_rows`, INT32_MIN/MAX, int64 values whose low 32 bits "
       "are a valid row), RECORD mode",
       "`scatterptx_scatter_add` on a streaming path (AUTO, TMA, RED, PRIVATE)",
       "`SCATTERPTX_SUCCESS`; the bad rows are skipped, every valid row is added; `scatterptx_take_index_error` "
       "returns the smallest bad position, then -1",
       "",
       {"Sm90/OutOfRangeIndexStreaming.OnlyValidRowsChange/*Record", "Sm90/IndexErrorTest.*/*Record"}},
      {"oor_checked_streaming", "the same, CHECKED mode",
       "`scatterptx_scatter_add` on a streaming path (AUTO, TMA, RED, PRIVATE)",
       "`SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE` once the stream is synchronised; every valid row is added",
       out_of_range,
       {"Sm90/OutOfRangeIndexStreaming.OnlyValidRowsChange/*Checked", "Sm90/IndexErrorTest.*/*Checked"}},
      {"oor_record_default_call",
       "an index entry outside `[0, out_rows)`, RECORD mode, where the default call groups (a random index) or "
       "queues both plans (a sorted index, bad entries last)",
       "`scatterptx_scatter_add` (path AUTO, grouping AUTO)",
       "`SCATTERPTX_SUCCESS`; bad rows skipped and recorded, valid rows added", "",
       {"Sm90/OutOfRangeIndexDefaultCall.OnlyValidRowsChange/*Record",
        "Sm90/DefaultCallTest.ReportsABadIndexWhenItGroups/*",
        "Sm90/DefaultCallOrderTest.ASortedIndexEndingInBadEntriesStreamsAndReportsThem/*"}},
      {"oor_checked_default_call", "the same, CHECKED mode", "`scatterptx_scatter_add` (path AUTO, grouping AUTO)",
       "`SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE`; every valid row is added", out_of_range,
       {"Sm90/OutOfRangeIndexDefaultCall.OnlyValidRowsChange/*Checked"}},
      {"oor_record_grouped", "an index entry outside `[0, out_rows)`, RECORD mode",
       "`scatterptx_scatter_add_grouped` (SEGMENTED, AUTO, deterministic, STREAMING)",
       "`SCATTERPTX_SUCCESS`; bad rows skipped and recorded, valid rows added", "",
       {"Sm90/OutOfRangeIndexGrouped.OnlyValidRowsChange/*SingleShot*Record",
        "Sm90/GroupedIndexErrorTest.RecordedBySingleShotCall/*"}},
      {"oor_checked_grouped", "the same, CHECKED mode",
       "`scatterptx_scatter_add_grouped` (SEGMENTED, AUTO, deterministic, STREAMING)",
       "`SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE`; every valid row is added", out_of_range,
       {"Sm90/OutOfRangeIndexGrouped.OnlyValidRowsChange/*SingleShot*Checked"}},
      {"oor_record_plan", "an index entry outside `[0, out_rows)`, RECORD mode",
       "`scatterptx_plan_create` then `scatterptx_plan_execute` (own or caller's workspace; every mode)",
       "create: `SCATTERPTX_SUCCESS`, out untouched; each execute: `SCATTERPTX_SUCCESS`, bad rows skipped and "
       "recorded, valid rows added",
       "",
       {"Sm90/OutOfRangeIndexGrouped.OnlyValidRowsChange/*Plan*Record",
        "Sm90/GroupedIndexErrorTest.RecordedByEveryExecute/*"}},
      {"oor_checked_plan_grouping",
       "the same, CHECKED mode, a plan that groups (SEGMENTED, deterministic, AUTO where it groups)",
       "`scatterptx_plan_create`",
       "`SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE`, `*plan` = NULL; out untouched (a caller's workspace is written)",
       out_of_range, {"Sm90/OutOfRangeIndexGrouped.OnlyValidRowsChange/*Plan*Checked"}},
      {"oor_checked_plan_streaming", "the same, CHECKED mode, a plan that streams (STREAMING, AUTO where it streams)",
       "`scatterptx_plan_create` then `scatterptx_plan_execute`",
       "create: `SCATTERPTX_SUCCESS`; each execute: `SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE` after adding every valid row",
       out_of_range, {"Sm90/OutOfRangeIndexGrouped.OnlyValidRowsChange/*Plan*StreamingChecked"}},
      // ---- the default call's workspace ----
      {"allocator_null_auto", "the registered allocator returns NULL, grouping AUTO, a call that groups",
       "`scatterptx_scatter_add`", "`SCATTERPTX_SUCCESS`: the call streams instead; the allocator gets nothing back",
       "",
       {"Sm90/AllocatorFailureOnGpu.NothingElseChanges/NullAuto",
        "Sm90/DefaultCallTest.AFailingAllocatorMeansStreamingOrAClearError/*"}},
      {"allocator_null_no_fallback", "the same, grouping NO_FALLBACK", "`scatterptx_scatter_add`",
       "`SCATTERPTX_ERROR_OUT_OF_MEMORY`, nothing enqueued",
       expand(no_fallback, {{"why", "the registered allocator returned NULL for <bytes> bytes"}}),
       {"Sm90/AllocatorFailureOnGpu.NothingElseChanges/NullNoFallback"}},
      {"allocator_null_grouped_only_reduce",
       "the registered allocator returns NULL, grouping AUTO, a reduce that runs grouped only (mean, amax, amin, "
       "`include_self` = 0)",
       "`scatterptx_scatter_add`", "`SCATTERPTX_ERROR_OUT_OF_MEMORY`, nothing enqueued",
       "this reduce runs grouped only, and grouping needs a workspace: the registered allocator returned NULL for "
       "<bytes> bytes",
       {"Sm90/ReduceRefusalTest.RefusedCallsWriteNothing/*"}},
      {"allocator_misaligned_auto",
       "the registered allocator returns memory not 256-byte aligned, grouping AUTO, a call that groups",
       "`scatterptx_scatter_add`", "`SCATTERPTX_SUCCESS`: the memory is released at once, unused; the call streams",
       "", {"Sm90/AllocatorFailureOnGpu.NothingElseChanges/MisalignedAuto",
            "Sm90/DefaultCallTest.MisalignedMemoryFromTheAllocatorIsGivenBackAndNotUsed/*"}},
      {"allocator_misaligned_no_fallback", "the same, grouping NO_FALLBACK", "`scatterptx_scatter_add`",
       "`SCATTERPTX_ERROR_OUT_OF_MEMORY`, nothing enqueued",
       expand(no_fallback, {{"why", "the registered allocator returned memory not 256-byte aligned"}}),
       {"Sm90/AllocatorFailureOnGpu.NothingElseChanges/MisalignedNoFallback"}},
      {"pool_cannot_allocate", "no allocator registered and the library's pool cannot allocate",
       "`scatterptx_scatter_add`",
       "grouping AUTO: streams instead; NO_FALLBACK: `SCATTERPTX_ERROR_OUT_OF_MEMORY`, nothing enqueued",
       expand(no_fallback, {{"why", "cuMemAllocFromPoolAsync failed: <error> for <bytes> bytes"}}),
       {"CallWorkspaceTest.APoolThatCannotAllocateIsAnEmptyWorkspaceWithTheDriversError"},
       Verify::kNo, "host test against a scripted pool; a real pool failing on demand needs the device full"},
      // ---- streams, contexts, capture ----
      {"checked_in_capture", "CHECKED mode on a stream being captured", "`scatterptx_scatter_add`",
       "`SCATTERPTX_ERROR_INVALID_ARGUMENT`, nothing enqueued; the capture goes on",
       "index_check = SCATTERPTX_INDEX_CHECKED waits for the result and cannot run in a stream that is being "
       "captured; use SCATTERPTX_INDEX_RECORD",
       {"DeviceMisuseOnGpu.CheckedCallInACapturingStream", "StreamsAndGraphs.CheckedModeCannotBeCaptured"}},
      {"plan_create_in_capture", "a plan that groups, made on a stream being captured",
       "`scatterptx_plan_create`", "`SCATTERPTX_ERROR_INVALID_ARGUMENT`, nothing allocated or enqueued; the "
       "capture goes on",
       "a plan that groups synchronises its stream when it is made, which a stream being captured cannot do; make "
       "the plan before capturing (its executes can be captured)",
       {"DeviceMisuseOnGpu.PlanThatGroupsInACapturingStream"}},
      {"no_context", "no current CUDA context on the calling thread",
       "every entry point that needs the device", "`SCATTERPTX_ERROR_NO_CONTEXT`",
       "no current CUDA context on this thread (make one current, e.g. cudaSetDevice or cuCtxSetCurrent)",
       {"DeviceMisuseOnGpu.CallOnAThreadWithoutAContext", "StreamsAndGraphs.ThreadWithoutContextGetsNoContext"},
       Verify::kWithoutContext},
      {"no_driver", "no `libcuda.so.1`, one older than 12.0, or one whose `cuInit` fails",
       "every entry point that needs the device", "`SCATTERPTX_ERROR_NO_DRIVER`",
       "no CUDA driver: dlopen(\"libcuda.so.1\") failed: <reason> (or: CUDA driver too old: ..., CUDA driver "
       "lacks ..., no usable CUDA driver: cuInit failed: ...)",
       {"NoDriverTest.*", "ApiValidation.ValidInputsReachTheDriver", "GroupApiValidation.ValidInputsReachTheDriver"},
       Verify::kWithoutDriver, "the no-driver tests skip where a driver is present"},
      {"unsupported_device", "a current device below compute capability 9.0", "every entry point that needs the device",
       "`SCATTERPTX_ERROR_UNSUPPORTED_DEVICE`",
       "the current device has compute capability <major>.<minor>; libscatterptx needs sm_90 or newer",
       {"StreamingPlan.OlderGpusAreUnsupported"}, Verify::kNo,
       "the planner's refusal is host-tested; the context's needs a GPU below sm_90"},
      {"stream_other_context", "a stream of another CUDA context than the current one",
       "`scatterptx_scatter_add`, `scatterptx_plan_create`, `scatterptx_plan_execute`, "
       "`scatterptx_scatter_add_grouped`",
       "`SCATTERPTX_ERROR_INVALID_ARGUMENT`, nothing enqueued",
       "stream belongs to another CUDA context than the current one",
       {"DeviceMisuseOnGpu.StreamOfAnotherContext", "StreamsAndGraphs.StreamOfAnotherContextIsRefused"}, Verify::kNo,
       "needs two GPUs (skips with one)"},
      {"memory_other_device", "`out`, `src`, `index` or `weights` in memory of another device than the current "
       "context's (host, managed and unknown memory are left to the caller)",
       "`scatterptx_scatter_add`, `scatterptx_plan_create`, `scatterptx_plan_execute`, "
       "`scatterptx_scatter_add_grouped`",
       "`SCATTERPTX_ERROR_INVALID_ARGUMENT`, nothing enqueued",
       "<tensor> is memory of device <n>, not of the current context's device: make that device's context "
       "current, or move it there",
       {"DeviceMisuseOnGpu.MemoryOfAnotherDevice", "PointerDevicesTest.*"}, Verify::kNo,
       "the GPU test needs two GPUs (skips with one)"},
      // ---- plans ----
      {"plan_other_context", "a plan executed in another context than it was created in",
       "`scatterptx_plan_execute`", "`SCATTERPTX_ERROR_INVALID_ARGUMENT`, nothing enqueued",
       "the plan was created in another CUDA context than the current one",
       {"DeviceMisuseOnGpu.PlanExecutedInAnotherContext"}, Verify::kNo, "needs two GPUs (skips with one)"},
      {"plan_execute_null", "`out` or `src` NULL at execute", "`scatterptx_plan_execute`",
       "`SCATTERPTX_ERROR_INVALID_ARGUMENT`, nothing enqueued", "<tensor> is NULL",
       {"DeviceMisuseOnGpu.PlanExecuteWithNullOutOrSrc"}},
      {"plan_execute_misaligned", "`out` or `src` at execute less aligned than at create", "`scatterptx_plan_execute`",
       "`SCATTERPTX_ERROR_INVALID_ARGUMENT`, nothing enqueued",
       "<tensor> is not <alignment>-byte aligned, as the plan's <tensor> was",
       {"DeviceMisuseOnGpu.PlanExecuteLessAlignedThanAtCreate", "Sm90/GroupedPlanAlignmentTest.*"}},
      {"plan_execute_overlap", "`out` overlapping `src` at execute (create saw other pointers)",
       "`scatterptx_plan_execute`",
       "`SCATTERPTX_SUCCESS`: not checked at execute; every write stays inside out, the sums are unspecified", "",
       {"DeviceMisuseOnGpu.PlanExecuteWithOutOverlappingSrcStaysInsideOut"}},
      // ---- what the planner refuses with the device known ----
      {"private_does_not_fit", "`path` = PRIVATE where the accumulators do not fit in shared memory",
       "`scatterptx_scatter_add`, `scatterptx_describe_plan`, a STREAMING plan or grouped call",
       "`SCATTERPTX_ERROR_INVALID_ARGUMENT`, nothing enqueued",
       "path = SCATTERPTX_PATH_PRIVATE: <out_rows> accumulator rows of at least 64 columns do not fit in shared memory",
       {"DeviceMisuseOnGpu.ForcedPrivatePathThatDoesNotFit"}},
      {"tma_schedule_too_big", "a TMA `schedule` whose stages exceed the device's shared memory",
       "`scatterptx_scatter_add`, `scatterptx_describe_plan`, a STREAMING plan or grouped call",
       "`SCATTERPTX_ERROR_INVALID_ARGUMENT`, nothing enqueued",
       "TMA schedule needs <bytes> bytes of shared memory per CTA (warps_per_cta * stages * stage_bytes), more than "
       "the device's <limit>",
       {"DeviceMisuseOnGpu.TmaScheduleBeyondSharedMemory"}},
      // ---- launches over more than 2^31 source rows (several slices) ----
      {"slice_map_fails", "a later launch slice's src tensor map cannot be encoded",
       "a streaming TMA or PRIVATE launch",
       "`SCATTERPTX_ERROR_DRIVER`, nothing enqueued (every slice is prepared before the first launch)",
       "cuTensorMapEncodeTiled failed: <error>; tensor map fields: ...",
       {"LaunchSlicesTest.ATensorMapThatCannotBeMadeForALaterSliceEnqueuesNothing",
        "LaunchSlicesTest.APrivatisedPlanMakesEverySliceBeforeLaunching"}},
      {"first_launch_fails", "the driver refuses a streaming plan's first launch", "any launch",
       "`SCATTERPTX_ERROR_DRIVER`, nothing of the plan enqueued. Where the default call queues both plans (f32 "
       "rows it groups), the grouped kernels were queued before it and add every row when the index is not "
       "sorted; the message then says so",
       "cuLaunchKernelEx failed: <error> for launch 1 of <n> (source rows [0, <end>)), or with the grouped "
       "kernels queued: cuLaunchKernelEx failed: <error>; the grouped kernels were enqueued before it and add "
       "every row if the index is not in order",
       {"LaunchSlicesTest.AFirstLaunchRefusedEnqueuesNothingAndSaysSo",
        "LaunchSlicesTest.TheRedPathIsOneLaunchWhoseRefusalNamesNoSlices",
        "GroupLaunchTest.ARefusedStreamingLaunchSaysTheGroupedKernelsAreQueued"}},
      {"later_launch_fails", "the driver refuses launch k > 1 of a plan's slices", "a streaming TMA or PRIVATE launch",
       "`SCATTERPTX_ERROR_DRIVER`; launches 1..k-1 stay enqueued (a launch cannot be taken back) and add their "
       "rows when they run, the later rows are not launched. Where the default call queues both plans (f32 "
       "rows it groups, 2^31 to 2^32 - 1 of them), the order check decides whether they run: a grouped "
       "execute already queued adds every row when the index is not sorted",
       "cuLaunchKernelEx failed: <error> for launch <k> of <n> (source rows [<begin>, <end>)); launches 1-<k-1> "
       "(source rows [0, <begin>)) were enqueued before it and stay enqueued, the later rows are not launched",
       {"LaunchSlicesTest.ALaterLaunchRefusedNamesTheRowsAlreadyEnqueued",
        "LaunchSlicesTest.TheLastLaunchRefusedNamesEveryEarlierSlice"},
       Verify::kNo, "host tests against a scripted driver: a real driver does not refuse a launch on demand"},
      {"grouped_launch_fails", "the driver refuses a launch of the grouped kernels",
       "`scatterptx_scatter_add` where it groups, `scatterptx_scatter_add_grouped`, `scatterptx_plan_create`, "
       "`scatterptx_plan_execute`",
       "`SCATTERPTX_ERROR_DRIVER`; the launches the call queued before it stay enqueued (a launch cannot be taken "
       "back): the workspace's clear and the radix passes write only the workspace; summing launches write out",
       "cuLaunchKernelEx failed: <error>; launches this call queued before it stay enqueued (the grouping's write "
       "only the workspace, the sums' write out)",
       {"GroupLaunchTest.ARefusedLaunchSaysTheLaunchesBeforeItStayEnqueued"}, Verify::kNo,
       "host test against a scripted driver: a real driver does not refuse a launch on demand"},
  };
}

std::vector<DocumentedCase> make_undetected_cases() {
  return {
      {"not_device_memory",
       "`out`, `src`, `index` or a workspace that is not device memory of the current context, or smaller than the "
       "shape says",
       "every launching entry point",
       "not detectable from a pointer: the kernels read and write whatever lies there, or fault "
       "(`CUDA_ERROR_ILLEGAL_ADDRESS`) and the context is lost",
       "",
       {}},
      {"workspace_overlaps", "a caller's workspace overlapping `out`, `src` or `index`, or written by anything "
       "but the library while a plan holds it",
       "`scatterptx_plan_create`, `scatterptx_scatter_add_grouped`, `scatterptx_plan_execute`",
       "not checked: the grouping kernels write the workspace over them, and the sums come out wrong (reads of "
       "src at corrupted positions may fault); the summing kernels skip keys at or past out_rows, so no write "
       "leaves out",
       "", {"DeviceMisuseOnGpu.PlanWorkspaceWrittenOverByOthersWritesNothingOutsideOut"}},
      {"src_overlaps_index", "`src` overlapping `index`", "every entry point",
       "accepted: both are only read", "", {}},
      {"plan_shared_by_streams", "executes of one plan running at once on two streams", "`scatterptx_plan_execute`",
       "not detectable: they share the plan's workspace; the caller orders them (events)", "", {}},
      {"plan_after_destroy", "a plan used after `scatterptx_plan_destroy`, destroyed twice, or destroyed while an "
                             "execute runs",
       "`scatterptx_plan_*`", "undefined: the handle and its workspace are freed", "", {}},
      {"checked_waits_on_checked",
       "a CHECKED call that waits (through events) on another thread's CHECKED call in the same context",
       "`scatterptx_scatter_add`, `scatterptx_scatter_add_grouped`, `scatterptx_plan_execute`",
       "deadlock: CHECKED calls of one context run one at a time (the header says so)", "", {}},
      {"allocator_lies",
       "an allocator (registered, or the call's own) that returns memory of another context, too small, or in use",
       "`scatterptx_scatter_add`, `scatterptx_scatter_add_with_allocator`",
       "undefined: the library trusts it beyond NULL and alignment", "", {}},
  };
}

}  // namespace

const std::vector<DocumentedCase>& device_cases() {
  static const std::vector<DocumentedCase> cases = make_device_cases();
  return cases;
}

const std::vector<DocumentedCase>& undetected_cases() {
  static const std::vector<DocumentedCase> cases = make_undetected_cases();
  return cases;
}

const DocumentedCase& device_case(const std::string& id) {
  for (const DocumentedCase& c : device_cases()) {
    if (c.id == id) return c;
  }
  throw std::logic_error("no documented case " + id);
}

}  // namespace scatterptx_bad_inputs

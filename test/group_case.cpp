#include "group_case.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>
#include <utility>

namespace scatterptx_test {

const char* group_mode_name(GroupMode mode) {
  switch (mode) {
    case GroupMode::kSegmented: return "Segmented";
    case GroupMode::kAuto: return "Auto";
    case GroupMode::kDeterministic: return "Deterministic";
  }
  return "UnknownMode";
}

scatterptx_group_options group_options(GroupMode mode, uint32_t warps_per_cta) {
  scatterptx_group_options options;
  scatterptx_group_options_init(&options);
  if (mode == GroupMode::kSegmented) options.mode = SCATTERPTX_MODE_SEGMENTED;
  if (mode == GroupMode::kDeterministic) options.deterministic = 1;
  options.warps_per_cta = warps_per_cta;
  return options;
}

bool forces_segmented(const scatterptx_group_options& options) {
  return options.mode == SCATTERPTX_MODE_SEGMENTED || options.deterministic != 0;
}

const char* group_entry_name(GroupEntry entry) {
  switch (entry) {
    case GroupEntry::kSingleShot: return "scatter_add_grouped";
    case GroupEntry::kPlanOwnWorkspace: return "plan with its own workspace";
    case GroupEntry::kPlanCallerWorkspace: return "plan in a caller workspace";
  }
  return "unknown entry";
}

const std::vector<GroupEntry>& all_group_entries() {
  static const std::vector<GroupEntry> entries = {
      GroupEntry::kSingleShot, GroupEntry::kPlanOwnWorkspace, GroupEntry::kPlanCallerWorkspace};
  return entries;
}

ScopedPlan::~ScopedPlan() {
  if (plan_ == nullptr) return;
  const CUresult synced = driver().cuCtxSynchronize();
  if (synced != CUDA_SUCCESS) {  // a destructor must not throw: report instead
    ADD_FAILURE() << scatterptx::detail::describe_driver_error(driver(), "cuCtxSynchronize",
                                                               synced);
  }
  const scatterptx_status status = scatterptx_plan_destroy(plan_);
  EXPECT_EQ(status, SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
}

void query_workspace_size(const scatterptx_scatter_add_args& args,
                          const scatterptx_group_options& options, size_t* bytes) {
  *bytes = 0;
  const scatterptx_status status = scatterptx_plan_workspace_size(&args, &options, bytes);
  ASSERT_EQ(status, SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
}

void allocate_workspace(const scatterptx_scatter_add_args& args,
                        const scatterptx_group_options& options, Workspace* workspace) {
  size_t bytes = 0;
  query_workspace_size(args, options, &bytes);
  if (::testing::Test::HasFatalFailure()) return;
  // cuMemAlloc's alignment (at least 256 bytes) is the alignment plan_create asks for.
  workspace->buffer = bytes == 0 ? DeviceBuffer() : DeviceBuffer(bytes);
  workspace->bytes = bytes;
}

std::string describe_group_plan(scatterptx_plan plan) {
  char buffer[1024] = {};
  const scatterptx_status status = scatterptx_plan_describe(plan, buffer, sizeof buffer);
  if (status != SCATTERPTX_SUCCESS) {
    return std::string("(plan_describe failed: ") + scatterptx_status_name(status) + ": " +
           scatterptx_last_error_message() + ")";
  }
  return buffer;
}

void run_grouped(const DeviceScatter& device, const HostScatter& host,
                 const scatterptx_scatter_add_args& args, const scatterptx_group_options& options,
                 GroupEntry entry, CUstream stream) {
  SCOPED_TRACE(group_entry_name(entry));
  // Declared before the plan: a caller workspace must outlive it.
  Workspace workspace;
  if (entry != GroupEntry::kPlanOwnWorkspace) {
    allocate_workspace(args, options, &workspace);
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (entry == GroupEntry::kSingleShot) {
    const scatterptx_status status = scatterptx_scatter_add_grouped(
        &args, &options, workspace.pointer(), workspace.bytes, stream);
    ASSERT_EQ(status, SCATTERPTX_SUCCESS)
        << scatterptx_status_name(status) << ": " << scatterptx_last_error_message();
    synchronize_gpu();  // before the workspace is freed
    return;
  }
  ScopedPlan plan;
  const scatterptx_status created = scatterptx_plan_create(
      &args, &options, workspace.pointer(), workspace.bytes, stream, plan.receive());
  ASSERT_EQ(created, SCATTERPTX_SUCCESS)
      << scatterptx_status_name(created) << ": " << scatterptx_last_error_message();
  ASSERT_NE(plan.get(), nullptr);
  EXPECT_TRUE(device.download_out().bytes == host.out0.bytes) << "plan_create wrote to out";
  const std::string described = describe_group_plan(plan.get());
  EXPECT_NE(described.find("mode="), std::string::npos) << described;
  if (forces_segmented(options) && args.src_rows > 0 && args.cols > 0) {
    EXPECT_NE(described.find("mode=segmented"), std::string::npos) << described;
  }
  const scatterptx_status executed =
      scatterptx_plan_execute(plan.get(), args.out, args.src, stream);
  ASSERT_EQ(executed, SCATTERPTX_SUCCESS)
      << scatterptx_status_name(executed) << ": " << scatterptx_last_error_message();
  synchronize_gpu();
}

void run_grouped_and_check(const ScatterShape& shape, const HostScatter& host,
                           const scatterptx_group_options& options, Comparison comparison) {
  SCOPED_TRACE(shape.describe() + ", " + comparison_name(comparison));
  DeviceScatter device(shape, host);
  const scatterptx_scatter_add_args args =
      device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  for (GroupEntry entry : all_group_entries()) {
    SCOPED_TRACE(group_entry_name(entry));
    device.reset_out(host.out0);
    run_grouped(device, host, args, options, entry);
    if (::testing::Test::HasFatalFailure()) return;
    expect_scatter_result(shape, host, device, 1, comparison);
    int64_t bad_position = 0;
    ASSERT_EQ(scatterptx_take_index_error(&bad_position), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    EXPECT_EQ(bad_position, -1) << "every index was valid";
  }
}

std::vector<int64_t> permutation_index(int64_t rows, uint64_t seed) {
  std::vector<int64_t> index(static_cast<size_t>(rows));
  std::iota(index.begin(), index.end(), int64_t{0});
  Rng rng(seed);
  for (int64_t i = rows - 1; i > 0; --i) {  // Fisher-Yates
    std::swap(index[static_cast<size_t>(i)], index[static_cast<size_t>(rng.below(i + 1))]);
  }
  return index;
}

std::vector<int64_t> hot_target_index(int64_t count, int64_t out_rows, int64_t hot_row,
                                      int64_t hot_count, uint64_t seed) {
  std::vector<int64_t> index = random_indices(count, out_rows, derive_seed(seed, 1));
  // The hot positions are the first hot_count of a random permutation, so
  // they spread over every tile rather than filling the first ones.
  const std::vector<int64_t> order = permutation_index(count, derive_seed(seed, 2));
  for (int64_t k = 0; k < hot_count && k < count; ++k) {
    index[static_cast<size_t>(order[static_cast<size_t>(k)])] = hot_row;
  }
  return index;
}

double row_relative_error(const HostScatter& host, const HostMatrix& got, int64_t row) {
  const int64_t cols = host.out0.cols;
  std::vector<double> reference(static_cast<size_t>(cols));
  for (int64_t c = 0; c < cols; ++c) reference[static_cast<size_t>(c)] = host.out0.at(row, c);
  for (size_t i = 0; i < host.index.size(); ++i) {
    if (host.index[i] != row) continue;
    for (int64_t c = 0; c < cols; ++c) {
      reference[static_cast<size_t>(c)] += host.src.at(static_cast<int64_t>(i), c);
    }
  }
  double squared_error = 0;
  double squared_reference = 0;
  for (int64_t c = 0; c < cols; ++c) {
    const double error = got.at(row, c) - reference[static_cast<size_t>(c)];
    squared_error += error * error;  // NaN propagates and fails any bound
    squared_reference += reference[static_cast<size_t>(c)] * reference[static_cast<size_t>(c)];
  }
  return std::sqrt(squared_error / squared_reference);
}

std::string first_difference(const HostMatrix& a, const HostMatrix& b) {
  if (a.dtype != b.dtype || a.rows != b.rows || a.row_stride != b.row_stride ||
      a.bytes.size() != b.bytes.size()) {
    return "the matrices differ in shape";
  }
  size_t byte = 0;
  while (byte < a.bytes.size() && a.bytes[byte] == b.bytes[byte]) ++byte;
  if (byte == a.bytes.size()) return "";
  const auto row = static_cast<int64_t>(byte / a.row_bytes());
  const auto col = static_cast<int64_t>(byte % a.row_bytes() / element_bytes(a.dtype));
  std::ostringstream text;
  text.precision(17);
  text << "first difference at out[" << row << ", " << col << "]: " << a.at(row, col) << " vs "
       << b.at(row, col);
  return text.str();
}

}  // namespace scatterptx_test

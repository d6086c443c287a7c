// Grouped execution on the GPU: the option sets and entry points the grouped
// suites run under, index patterns that make long and hot segments, and the
// run-then-compare step they share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx_test {

// The option sets under test: SEGMENTED forced, the planner's choice, and the
// deterministic flag (which selects SEGMENTED with mode AUTO).
enum class GroupMode { kSegmented, kAuto, kDeterministic };
const char* group_mode_name(GroupMode mode);
// warps_per_cta 0 keeps the planner's.
scatterptx_group_options group_options(GroupMode mode, uint32_t warps_per_cta = 0);
// Whether the options force the segmented mode (and so a "mode=segmented" plan).
bool forces_segmented(const scatterptx_group_options& options);

// The three ways to run a grouped scatter_add.
enum class GroupEntry {
  kSingleShot,           // scatterptx_scatter_add_grouped in a caller workspace
  kPlanOwnWorkspace,     // plan_create with workspace NULL, execute, destroy
  kPlanCallerWorkspace,  // plan_create in a caller workspace, execute, destroy
};
const char* group_entry_name(GroupEntry entry);
const std::vector<GroupEntry>& all_group_entries();

// A plan destroyed with its scope, after the context is synchronised (no
// execute of it may still run); a failed destroy is a test failure.
class ScopedPlan {
 public:
  ScopedPlan() = default;
  ~ScopedPlan();
  ScopedPlan(const ScopedPlan&) = delete;
  ScopedPlan& operator=(const ScopedPlan&) = delete;
  scatterptx_plan* receive() { return &plan_; }  // plan_create's last argument
  scatterptx_plan get() const { return plan_; }

 private:
  scatterptx_plan plan_ = nullptr;
};

// plan_workspace_size's answer for args and options; a failure is a fatal
// test failure (check HasFatalFailure) and leaves *bytes at 0.
void query_workspace_size(const scatterptx_scatter_add_args& args,
                          const scatterptx_group_options& options, size_t* bytes);
// A device workspace of plan_workspace_size bytes, and the pointer to pass:
// NULL when the size is 0 (the one case where the API allows it).
struct Workspace {
  DeviceBuffer buffer;
  size_t bytes = 0;
  void* pointer() const { return bytes == 0 ? nullptr : buffer.pointer(); }
};
void allocate_workspace(const scatterptx_scatter_add_args& args,
                        const scatterptx_group_options& options, Workspace* workspace);

// plan_describe's text, or "(plan_describe failed: ...)".
std::string describe_group_plan(scatterptx_plan plan);

// Runs args once through entry on stream and waits for it. The plan entries
// also check that create wrote nothing to out (which must then hold
// host.out0) and that describe names the mode.
void run_grouped(const DeviceScatter& device, const HostScatter& host,
                 const scatterptx_scatter_add_args& args, const scatterptx_group_options& options,
                 GroupEntry entry, CUstream stream = nullptr);

// Every entry in turn on one upload of host's inputs (out reset in between),
// each checked against the reference as comparison says, guards included,
// with no index error recorded.
void run_grouped_and_check(const ScatterShape& shape, const HostScatter& host,
                           const scatterptx_group_options& options,
                           Comparison comparison = Comparison::kWithinBound);

// Index patterns. A random permutation of [0, rows).
std::vector<int64_t> permutation_index(int64_t rows, uint64_t seed);
// count positions: hot_count of them (at random positions) go to hot_row,
// the rest uniform over [0, out_rows).
std::vector<int64_t> hot_target_index(int64_t count, int64_t out_rows, int64_t hot_row,
                                      int64_t hot_count, uint64_t seed);

// ||got[row] - ref[row]|| / ||ref[row]|| over the row's columns in float64,
// ref[row] = out0[row] + the src rows whose index is row.
double row_relative_error(const HostScatter& host, const HostMatrix& got, int64_t row);

// "" when a and b hold the same bytes, else where they first differ.
std::string first_difference(const HostMatrix& a, const HostMatrix& b);

}  // namespace scatterptx_test

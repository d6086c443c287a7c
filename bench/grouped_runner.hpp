// Timing one grouped mode on one scenario: scatterptx_scatter_add_grouped
// into a workspace allocated beforehand (grouping and sums in one call),
// scatterptx_plan_create (the grouping alone, which synchronises) and
// execute of a plan built beforehand (the sums alone). Each of the two
// executions is checked on a prefix against the float64 reference first.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "execution_mode.hpp"
#include "floors.hpp"
#include "inputs.hpp"
#include "reference_check.hpp"
#include "timing.hpp"

namespace scatterptx_bench {

struct GroupedSettings {
  TimingConfig timing;      // single-shot and execute
  TimingConfig plan_build;  // each build synchronises, so a few are enough
  int64_t check_rows = 4096;
};

struct GroupedResult {
  ExecutionMode mode = ExecutionMode::segmented;
  // The library refused the mode for this problem (INVALID_ARGUMENT). Every
  // scenario of the suite is valid input, so this counts as a failure.
  bool refused = false;
  std::string refusal;
  std::string plan;            // scatterptx_plan_describe of the executed plan
  size_t workspace_bytes = 0;  // scatterptx_plan_workspace_size
  CheckResult single_shot_check;
  CheckResult plan_check;      // a plan built on the prefix, with its own workspace
  TimingResult single_shot;    // scatterptx_scatter_add_grouped
  TimingResult plan_build;     // scatterptx_plan_create into the preallocated workspace
  TimingResult plan_execute;
  // Filled by the scenario runner, which has the floors and the copy.
  FloorComparison single_shot_comparison;
  FloorComparison execute_comparison;

  // Every grouped mode takes every valid input, so a refusal is a failure.
  bool correct() const { return !refused && single_shot_check.ok && plan_check.ok; }
};

class GroupedRunner {
 public:
  GroupedRunner(CUstream stream, L2Flusher& flusher, EventTimer& timer, const GroupedSettings& settings)
      : stream_(stream), flusher_(flusher), timer_(timer), settings_(settings) {}

  // args: the whole problem, path AUTO and no schedule (grouped modes refuse
  // them). mode: any but streaming. Throws BenchError when a call
  // fails other than by refusing the mode.
  GroupedResult run(ExecutionMode mode, const scatterptx_scatter_add_args& args, const ProblemInputs& in);

 private:
  CheckResult check_single_shot(const scatterptx_scatter_add_args& args,
                                const scatterptx_group_options& options, const ProblemInputs& in);
  CheckResult check_plan(const scatterptx_scatter_add_args& args, const scatterptx_group_options& options,
                         const ProblemInputs& in);

  CUstream stream_;
  L2Flusher& flusher_;
  EventTimer& timer_;
  GroupedSettings settings_;
};

}  // namespace scatterptx_bench

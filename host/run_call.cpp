#include "run_call.hpp"

#include <string>

#include "errors.hpp"
#include "group_launch.hpp"
#include "index_errors.hpp"
#include "launch.hpp"
#include "plan.hpp"

namespace scatterptx::detail {
namespace {

// RECORD: the launches record a bad index in the context's record. CHECKED:
// they record it in a slot of their own, synchronised and reported.
template <typename Enqueue>
void run_with_index_check(const DriverApi& api, ContextState& state, const Problem& problem, CUstream stream,
                          Enqueue enqueue) {
  if (problem.index_check == SCATTERPTX_INDEX_CHECKED) {
    launch_checked(api, state, problem, enqueue, stream);
  } else {
    enqueue(state.index_error_slot(kRecordModeSlot));
  }
}

}  // namespace

void run_streaming(const DriverApi& api, ContextState& state, const Problem& problem, CUstream stream) {
  const StreamingPlan plan = make_plan(problem, state.limits);
  run_with_index_check(api, state, problem, stream,
                       [&](CUdeviceptr slot) { launch_plan(api, state, problem, plan, slot, stream); });
}

void run_grouped(const DriverApi& api, ContextState& state, const Problem& problem, const GroupPlan& plan,
                 CUdeviceptr workspace, CUstream stream) {
  if (!plan.streams_when_sorted) {
    run_with_index_check(api, state, problem, stream, [&](CUdeviceptr slot) {
      launch_grouping(api, state, problem, plan, workspace, stream);
      launch_grouped_execute(api, state, problem, plan, workspace, slot, stream);
    });
    return;
  }
  // Both queued; the first radix pass's order check lets one of them run.
  const StreamingPlan streaming = make_plan(problem, state.limits);
  const CUdeviceptr order_flag = workspace + plan.workspace.order_flag;
  run_with_index_check(api, state, problem, stream, [&](CUdeviceptr slot) {
    // The streaming launches are made first (tensor maps may fail), enqueued last.
    const PreparedLaunches streaming_launches =
        problem.is_empty() ? PreparedLaunches{}
                           : prepare_plan(api, state, problem, streaming, slot, LaunchGate{order_flag, kIndexInOrder});
    launch_grouping(api, state, problem, plan, workspace, stream, /*check_order=*/true);
    launch_grouped_execute(api, state, problem, plan, workspace, slot, stream, LaunchGate{order_flag, 0});
    if (!streaming_launches) return;
    try {
      streaming_launches(stream);
    } catch (const Failure& failure) {
      fail(failure.status(), std::string(failure.what()) +
                                 "; the grouped kernels were enqueued before it and add every row if the index is "
                                 "not in order");
    }
  });
}

}  // namespace scatterptx::detail

#include "run_call.hpp"

#include <string>

#include "errors.hpp"
#include "group_launch.hpp"
#include "index_errors.hpp"
#include "launch.hpp"
#include "plan.hpp"
#include "side_streams.hpp"

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
  // Both queued; the order check lets one of them run. The streaming plan
  // goes to a side stream, so that whichever of them is gated off ends
  // alongside the other rather than after it (not while capturing: a
  // captured side stream stays in the graph until the capture ends).
  const StreamingPlan streaming = make_plan(problem, state.limits);
  const CUdeviceptr order_flag = workspace + plan.workspace.order_flag;
  run_with_index_check(api, state, problem, stream, [&](CUdeviceptr slot) {
    // The streaming launches are made first (tensor maps may fail), enqueued last.
    const PreparedLaunches streaming_launches =
        problem.is_empty() ? PreparedLaunches{}
                           : prepare_plan(api, state, problem, streaming, slot, LaunchGate{order_flag, kIndexInOrder});
    const bool fork = streaming_launches && !is_capturing(api, stream);
    launch_order_check(api, state, problem, plan, workspace, stream);
    ForkedLane side(api, state.side_streams, fork ? state.side_streams.take(api, stream) : nullptr, stream);
    launch_grouping(api, state, problem, plan, workspace, stream, /*after_order_check=*/true);
    launch_grouped_execute(api, state, problem, plan, workspace, slot, stream, LaunchGate{order_flag, 0});
    if (!streaming_launches) return;
    try {
      streaming_launches(side.stream());
    } catch (const Failure& failure) {
      fail(failure.status(), std::string(failure.what()) +
                                 "; the grouped kernels were enqueued before it and add every row if the index is "
                                 "not in order");
    }
    side.join();
  });
}

}  // namespace scatterptx::detail

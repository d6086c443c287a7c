// The C ABI of grouped execution: plans (create, execute, destroy,
// describe), the workspace size and the single-shot call. Arguments and
// options are checked before the driver is touched.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "context_state.hpp"
#include "errors.hpp"
#include "group_launch.hpp"
#include "group_plan.hpp"
#include "index_errors.hpp"
#include "launch.hpp"
#include "plan.hpp"
#include "pointer_devices.hpp"
#include "problem.hpp"
#include "run_call.hpp"
#include "scatterptx/scatterptx.h"

using namespace scatterptx::detail;

struct scatterptx_plan_st {
  CUcontext context = nullptr;
  unsigned long long context_id = 0;  // a later context may get the same handle
  Problem problem;  // as at create: its out and src give the alignment executes keep
  GroupPlan grouping;
  CUdeviceptr workspace = 0;
  bool owns_workspace = false;
};

namespace {

constexpr uint64_t kNoPosition = UINT64_MAX;

void require_workspace(const GroupPlan& plan, const void* workspace, size_t workspace_bytes) {
  const uint64_t needed = plan.grouped() ? plan.workspace.bytes : 0;
  if (needed == 0) return;
  if (workspace == nullptr) {
    invalid_argument("workspace is NULL; this problem needs " + std::to_string(needed) +
                     " bytes (scatterptx_plan_workspace_size)");
  }
  if (workspace_bytes < needed) {
    invalid_argument("workspace_bytes = " + std::to_string(workspace_bytes) + " is below the " +
                     std::to_string(needed) + " bytes this problem needs (scatterptx_plan_workspace_size)");
  }
  if (reinterpret_cast<uintptr_t>(workspace) % kWorkspaceAlignment != 0) {
    invalid_argument("workspace is not 256-byte aligned");
  }
}

CUdeviceptr device_address(const void* pointer) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer));
}

// A plan's problem with another out and src, which must keep create's
// alignment (the kernels were chosen for it). An empty problem reads and
// writes nothing: as at create, its pointers may be anything.
Problem problem_for_execute(const scatterptx_plan_st& plan, void* out, const void* src) {
  Problem p = plan.problem;
  p.out_address = device_address(out);
  p.src_address = device_address(src);
  if (p.is_empty()) return p;
  if (out == nullptr) invalid_argument("out is NULL");
  if (src == nullptr) invalid_argument("src is NULL");
  uint64_t alignment = p.elem_bytes;
  if (plan.grouping.mode == SCATTERPTX_MODE_SEGMENTED && plan.grouping.vectorized) alignment = kLaneSliceBytes;
  if (plan.grouping.mode == SCATTERPTX_MODE_STREAMING) {
    // The streaming planner picks its path from the pointers themselves.
    alignment = p.elem_bytes;
  }
  if (p.out_address % alignment != 0) {
    invalid_argument("out is not " + std::to_string(alignment) + "-byte aligned, as the plan's out was");
  }
  if (p.src_address % alignment != 0) {
    invalid_argument("src is not " + std::to_string(alignment) + "-byte aligned, as the plan's src was");
  }
  return p;
}

}  // namespace

extern "C" {

void scatterptx_group_options_init(scatterptx_group_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->mode = SCATTERPTX_MODE_AUTO;
}

scatterptx_status scatterptx_plan_workspace_size(const scatterptx_scatter_add_args* args,
                                                 const scatterptx_group_options* options, size_t* bytes) {
  return guarded([&] {
    if (bytes == nullptr) invalid_argument("bytes is NULL");
    *bytes = 0;
    const Problem problem = validate_shape(args);
    const GroupPlan plan = make_group_plan(problem, validate_group_options(options, problem));
    if (plan.grouped()) *bytes = plan.workspace.bytes;
  });
}

scatterptx_status scatterptx_plan_create(const scatterptx_scatter_add_args* args,
                                         const scatterptx_group_options* options, void* workspace,
                                         size_t workspace_bytes, CUstream stream, scatterptx_plan* plan_out) {
  return guarded([&] {
    if (plan_out == nullptr) invalid_argument("plan is NULL");
    *plan_out = nullptr;
    auto made = std::make_unique<scatterptx_plan_st>();
    made->problem = validate_arguments(args);
    GroupOptions checked = validate_group_options(options, made->problem);
    checked.weights_read_at_execute = true;
    made->grouping = make_group_plan(made->problem, checked);
    if (workspace != nullptr && made->grouping.grouped()) require_workspace(made->grouping, workspace, workspace_bytes);
    const DriverApi& api = require_driver();
    ContextState& state = current_context_state(api);
    require_stream_in_context(api, state, stream);
    require_pointers_on_device(api, state, made->problem);
    made->context = state.context;
    made->context_id = state.context_id;
    // With the device known AUTO may stream instead (few targets).
    made->grouping = make_group_plan(made->problem, checked, &state.limits);
    const bool grouped = made->grouping.grouped();
    if (!grouped || made->problem.is_empty()) {
      // Nothing to group (an empty problem's executes do nothing); a
      // streaming plan is checked now against what execute would refuse.
      if (!grouped && !made->problem.is_empty()) (void)make_plan(made->problem, state.limits);
      *plan_out = made.release();
      return;
    }
    refuse_in_capture(api, stream,
                      "a plan that groups synchronises its stream when it is made, which a stream being captured "
                      "cannot do; make the plan before capturing (its executes can be captured)");
    // Frees an allocation of the plan's own if a later step fails.
    struct OwnedWorkspace {
      const DriverApi& api;
      CUdeviceptr address = 0;
      ~OwnedWorkspace() {
        if (address != 0) api.cuMemFree(address);
      }
    } owned{api};
    if (workspace == nullptr) {
      check_driver(api, "cuMemAlloc", api.cuMemAlloc(&owned.address, made->grouping.workspace.bytes));
      made->workspace = owned.address;
      made->owns_workspace = true;
    } else {
      made->workspace = device_address(workspace);
    }
    launch_grouping(api, state, made->problem, made->grouping, made->workspace, stream);
    check_driver(api, "cuStreamSynchronize", api.cuStreamSynchronize(stream));
    if (made->problem.index_check == SCATTERPTX_INDEX_CHECKED) {
      uint64_t bad = kNoPosition;
      check_driver(api, "cuMemcpyDtoH",
                   api.cuMemcpyDtoH(&bad, made->workspace + made->grouping.workspace.plan_error, 8));
      if (bad != kNoPosition) fail_index_out_of_range(api, made->problem, bad);
    }
    owned.address = 0;  // the plan owns it now
    *plan_out = made.release();
  });
}

scatterptx_status scatterptx_plan_execute(scatterptx_plan plan, void* out, const void* src, CUstream stream) {
  return guarded([&] {
    if (plan == nullptr) invalid_argument("plan is NULL");
    const Problem problem = problem_for_execute(*plan, out, src);
    if (problem.is_empty()) return;
    const DriverApi& api = require_driver();
    // Before the current context's state: another context gets nothing made for it.
    if (current_context_id(api) != plan->context_id) {
      invalid_argument("the plan was created in another CUDA context than the current one");
    }
    ContextState& state = current_context_state(api);
    require_stream_in_context(api, state, stream);
    require_pointers_on_device(api, state, problem);
    if (plan->grouping.mode == SCATTERPTX_MODE_STREAMING) {
      run_streaming(api, state, problem, stream);
      return;
    }
    // A CHECKED plan's index was found clean at create, so nothing is left to
    // wait for: the record slot only ever sees RECORD plans' positions.
    launch_grouped_execute(api, state, problem, plan->grouping, plan->workspace,
                           state.index_error_slot(kRecordModeSlot), stream);
  });
}

scatterptx_status scatterptx_plan_destroy(scatterptx_plan plan) {
  return guarded([&] {
    if (plan == nullptr) return;
    std::unique_ptr<scatterptx_plan_st> owned(plan);
    if (owned->owns_workspace) {
      // In the plan's context, whatever is current on this thread (or none).
      // A context destroyed since took the workspace with it; its handle may
      // now name another context, whose memory is not the plan's to free.
      const DriverApi& api = require_driver();
      unsigned long long id = 0;
      if (api.cuCtxGetId(owned->context, &id) != CUDA_SUCCESS || id != owned->context_id) return;
      CUcontext current = nullptr;
      check_driver(api, "cuCtxGetCurrent", api.cuCtxGetCurrent(&current));
      if (current != owned->context) check_driver(api, "cuCtxSetCurrent", api.cuCtxSetCurrent(owned->context));
      const CUresult freed = api.cuMemFree(owned->workspace);
      if (current != owned->context) check_driver(api, "cuCtxSetCurrent", api.cuCtxSetCurrent(current));
      check_driver(api, "cuMemFree", freed);
    }
  });
}

scatterptx_status scatterptx_plan_describe(scatterptx_plan plan, char* buffer, size_t buffer_size) {
  return guarded([&] {
    if (buffer == nullptr || buffer_size == 0) invalid_argument("buffer is NULL or buffer_size is 0");
    buffer[0] = '\0';
    if (plan == nullptr) invalid_argument("plan is NULL");
    const std::string text = plan->grouping.describe();
    const size_t length = std::min(text.size(), buffer_size - 1);
    std::memcpy(buffer, text.data(), length);
    buffer[length] = '\0';
  });
}

scatterptx_status scatterptx_scatter_add_grouped(const scatterptx_scatter_add_args* args,
                                                 const scatterptx_group_options* options, void* workspace,
                                                 size_t workspace_bytes, CUstream stream) {
  return guarded([&] {
    const Problem problem = validate_arguments(args);
    const GroupOptions checked = validate_group_options(options, problem);
    require_workspace(make_group_plan(problem, checked), workspace, workspace_bytes);
    if (problem.is_empty()) return;
    const DriverApi& api = require_driver();
    ContextState& state = current_context_state(api);
    require_stream_in_context(api, state, stream);
    require_pointers_on_device(api, state, problem);
    // With the device known AUTO may stream instead (few targets).
    const GroupPlan plan = make_group_plan(problem, checked, &state.limits);
    if (plan.mode == SCATTERPTX_MODE_STREAMING) {
      run_streaming(api, state, problem, stream);
      return;
    }
    run_grouped(api, state, problem, plan, device_address(workspace), stream);
  });
}

}  // extern "C"

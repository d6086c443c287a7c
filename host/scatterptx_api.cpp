// The C ABI: validation first (no driver needed), then the context's state,
// the plan and the launch. Every entry point is noexcept through guarded().
#include <algorithm>
#include <cstring>
#include <string>

#include "call_workspace.hpp"
#include "context_state.hpp"
#include "errors.hpp"
#include "group_plan.hpp"
#include "index_errors.hpp"
#include "plan.hpp"
#include "pointer_devices.hpp"
#include "problem.hpp"
#include "run_call.hpp"
#include "scatterptx/scatterptx.h"

using namespace scatterptx::detail;

extern "C" {

void scatterptx_scatter_add_args_init(scatterptx_scatter_add_args* args) {
  if (args == nullptr) return;
  std::memset(args, 0, sizeof(*args));
  args->dtype = SCATTERPTX_F32;
  args->index_type = SCATTERPTX_INDEX_INT64;
  args->index_check = SCATTERPTX_INDEX_RECORD;
  args->path = SCATTERPTX_PATH_AUTO;
  args->schedule = nullptr;
  args->grouping = SCATTERPTX_GROUPING_AUTO;
  args->weights = nullptr;
  args->weights_dtype = SCATTERPTX_F32;
  args->reduce = SCATTERPTX_REDUCE_SUM;
  args->include_self = 1;
}

scatterptx_status scatterptx_scatter_add(const scatterptx_scatter_add_args* args, CUstream stream) {
  return scatterptx_scatter_add_with_allocator(args, nullptr, stream);
}

scatterptx_status scatterptx_scatter_add_with_allocator(const scatterptx_scatter_add_args* args,
                                                        const scatterptx_allocator* allocator, CUstream stream) {
  return guarded([&] {
    if (allocator != nullptr) check_allocator(*allocator, "the registered allocator, else the pool");
    const Problem problem = validate_arguments(args);
    validate_default_call(problem);
    if (problem.is_empty()) return;
    const DriverApi& api = require_driver();
    ContextState& state = current_context_state(api);
    require_stream_in_context(api, state, stream);
    require_pointers_on_device(api, state, problem);
    refuse_checked_in_capture(api, problem, stream);  // before a workspace is taken
    const GroupPlan choice = plan_default_call(problem, state.limits);
    if (choice.grouped()) {
      // Whether a workspace can be had is settled before anything is enqueued.
      CallWorkspace workspace(api, state, choice.workspace.bytes, stream, allocator);
      if (!workspace.empty()) {
        run_grouped(api, state, problem, choice, workspace.address(), stream);
        workspace.release();
        return;
      }
      if (problem.grouping == SCATTERPTX_GROUPING_NO_FALLBACK) {
        fail(SCATTERPTX_ERROR_OUT_OF_MEMORY, "grouping needs a workspace and falling back is forbidden "
                                             "(SCATTERPTX_GROUPING_NO_FALLBACK): " + workspace.why());
      }
      if (problem.needs_grouping()) {
        fail(SCATTERPTX_ERROR_OUT_OF_MEMORY, "this reduce runs grouped only, and grouping needs a workspace: " +
                                                 workspace.why());
      }
    }
    run_streaming(api, state, problem, stream);
  });
}

scatterptx_status scatterptx_set_allocator(const scatterptx_allocator* allocator) {
  return guarded([&] { register_allocator(allocator); });
}

scatterptx_status scatterptx_trim_workspace_pool(void) {
  return guarded([] { trim_workspace_pool(require_driver()); });
}

scatterptx_status scatterptx_prepare(void) {
  return guarded([] { current_context_state(require_driver()); });
}

scatterptx_status scatterptx_take_index_error(int64_t* position) {
  return guarded([&] {
    if (position == nullptr) invalid_argument("position is NULL");
    *position = -1;
    const DriverApi& api = require_driver();
    *position = take_recorded_index_error(api, current_context_state(api));
  });
}

scatterptx_status scatterptx_describe_plan(const scatterptx_scatter_add_args* args, char* buffer,
                                           size_t buffer_size) {
  return guarded([&] {
    if (buffer == nullptr || buffer_size == 0) invalid_argument("buffer is NULL or buffer_size is 0");
    buffer[0] = '\0';
    const Problem problem = validate_arguments(args);
    validate_default_call(problem);
    const DriverApi& api = require_driver();
    const DeviceLimits& device = current_context_state(api).limits;
    const GroupPlan choice = plan_default_call(problem, device);
    const std::string text = choice.grouped() ? choice.describe() : make_plan(problem, device).describe();
    const size_t length = std::min(text.size(), buffer_size - 1);
    std::memcpy(buffer, text.data(), length);
    buffer[length] = '\0';
  });
}

const char* scatterptx_last_error_message(void) { return last_error_message_cstr(); }

const char* scatterptx_status_name(scatterptx_status status) {
  switch (status) {
    case SCATTERPTX_SUCCESS: return "SCATTERPTX_SUCCESS";
    case SCATTERPTX_ERROR_INVALID_ARGUMENT: return "SCATTERPTX_ERROR_INVALID_ARGUMENT";
    case SCATTERPTX_ERROR_NO_DRIVER: return "SCATTERPTX_ERROR_NO_DRIVER";
    case SCATTERPTX_ERROR_NO_CONTEXT: return "SCATTERPTX_ERROR_NO_CONTEXT";
    case SCATTERPTX_ERROR_UNSUPPORTED_DEVICE: return "SCATTERPTX_ERROR_UNSUPPORTED_DEVICE";
    case SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE: return "SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE";
    case SCATTERPTX_ERROR_DRIVER: return "SCATTERPTX_ERROR_DRIVER";
    case SCATTERPTX_ERROR_OUT_OF_MEMORY: return "SCATTERPTX_ERROR_OUT_OF_MEMORY";
  }
  return "SCATTERPTX_UNKNOWN_STATUS";
}

size_t scatterptx_dtype_size(scatterptx_dtype dtype) {
  switch (dtype) {
    case SCATTERPTX_F32: return 4;
    case SCATTERPTX_F16: return 2;
    case SCATTERPTX_BF16: return 2;
    case SCATTERPTX_F64: return 8;
  }
  return 0;
}

const char* scatterptx_dtype_name(scatterptx_dtype dtype) {
  switch (dtype) {
    case SCATTERPTX_F32: return "f32";
    case SCATTERPTX_F16: return "f16";
    case SCATTERPTX_BF16: return "bf16";
    case SCATTERPTX_F64: return "f64";
  }
  return "unknown";
}

}  // extern "C"

// What the library keeps per CUDA context: the loaded kernels, the device's
// limits and the index-error records. Created once per context on first use,
// thread-safe, never destroyed (a context's modules go with the context).
#pragma once

#include <cuda.h>

#include <mutex>
#include <optional>
#include <string>

#include "driver_api.hpp"
#include "kernel_manifest.hpp"
#include "module_loading.hpp"
#include "plan.hpp"
#include "side_streams.hpp"

namespace scatterptx::detail {

// Slots of the index-error record buffer: each a u64 holding the smallest
// offending source position, UINT64_MAX when none. kTakenSlot receives what
// a take read from the RECORD-mode slot (index_record_take).
enum IndexErrorSlot : unsigned { kRecordModeSlot = 0, kCheckedModeSlot = 1, kTakenSlot = 2, kIndexErrorSlots = 3 };

struct ContextState {
  CUcontext context = nullptr;
  unsigned long long context_id = 0;  // cuCtxGetId: unique for the process, unlike the handle
  CUdevice device = 0;
  DeviceLimits limits;
  CUfunction functions[kKernelVariantCount] = {};
  ModuleLoads module_loads;             // cubin or PTX, and the JIT's wall time, per variant
  CUdeviceptr index_error_records = 0;  // kIndexErrorSlots u64 words
  CUstream take_stream = nullptr;       // non-blocking: a take orders its own work only
  CUmemoryPool workspace_pool = nullptr;  // the default call's grouping workspaces
  SideStreams side_streams;             // the default call's streaming plan beside its grouped kernels
  std::mutex checked_mode_mutex;        // one CHECKED call at a time uses its slot
  std::mutex record_take_mutex;         // one take at a time: takes share kTakenSlot

  CUdeviceptr index_error_slot(IndexErrorSlot slot) const { return index_error_records + 8 * slot; }
};

// The calling thread's current context; NO_CONTEXT when there is none.
CUcontext require_current_context(const DriverApi& api);

// The id (cuCtxGetId) of the calling thread's current context; NO_CONTEXT
// when there is none.
unsigned long long current_context_id(const DriverApi& api);

// Throws INVALID_ARGUMENT unless stream belongs to state's context.
void require_stream_in_context(const DriverApi& api, const ContextState& state, CUstream stream);

// Whether stream is being captured into a CUDA graph.
bool is_capturing(const DriverApi& api, CUstream stream);

// Throws INVALID_ARGUMENT, with why_not (what cannot run there), when stream
// is being captured into a CUDA graph.
void refuse_in_capture(const DriverApi& api, CUstream stream, const std::string& why_not);

// The state of the current context, created (kernels loaded, records
// allocated and cleared) on the first call in that context. A creation that
// fails unloads the modules and frees the memory it took, and the next call
// tries again. UNSUPPORTED_DEVICE below sm_90. The kernels come from where
// source says, else from where SCATTERPTX_FORCE_PTX says (module_loading.hpp).
ContextState& current_context_state(const DriverApi& api, std::optional<ModuleSource> source = std::nullopt);

// The current context's state where a call in it has made one, else nullptr:
// makes nothing, for what only acts on a state that exists. NO_CONTEXT when
// there is no current context.
ContextState* existing_context_state(const DriverApi& api);

}  // namespace scatterptx::detail

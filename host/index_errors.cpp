#include "index_errors.hpp"

#include <mutex>
#include <string>

#include "errors.hpp"
#include "kernel_params.hpp"
#include "launch.hpp"
#include "launch_trace.hpp"

namespace scatterptx::detail {
namespace {
constexpr uint64_t kNoPosition = UINT64_MAX;  // the slot's cleared value (all bytes 0xFF)
}

void refuse_checked_in_capture(const DriverApi& api, const Problem& p, CUstream stream) {
  if (p.index_check != SCATTERPTX_INDEX_CHECKED) return;
  refuse_in_capture(api, stream,
                    "index_check = SCATTERPTX_INDEX_CHECKED waits for the result and cannot run in a stream that "
                    "is being captured; use SCATTERPTX_INDEX_RECORD");
}

void launch_checked(const DriverApi& api, ContextState& state, const Problem& p,
                    const std::function<void(CUdeviceptr slot)>& enqueue, CUstream stream) {
  refuse_checked_in_capture(api, p, stream);
  std::lock_guard<std::mutex> lock(state.checked_mode_mutex);
  const CUdeviceptr slot = state.index_error_slot(kCheckedModeSlot);
  check_driver(api, "cuMemsetD8Async", api.cuMemsetD8Async(slot, 0xFF, 8, stream));
  uint64_t bad = kNoPosition;
  try {
    enqueue(slot);
    check_driver(api, "cuMemcpyDtoHAsync", api.cuMemcpyDtoHAsync(&bad, slot, 8, stream));
  } catch (...) {
    // Launches queued before the failure still write the slot: the next
    // CHECKED call must not clear it and read their positions as its own.
    (void)api.cuStreamSynchronize(stream);
    throw;
  }
  check_driver(api, "cuStreamSynchronize", api.cuStreamSynchronize(stream));
  if (bad == kNoPosition) return;
  fail_index_out_of_range(api, p, bad);
}

void fail_index_out_of_range(const DriverApi& api, const Problem& p, uint64_t bad) {
  int64_t value = 0;
  if (p.index_type == SCATTERPTX_INDEX_INT32) {
    int32_t value32 = 0;
    check_driver(api, "cuMemcpyDtoH", api.cuMemcpyDtoH(&value32, p.index_address + bad * 4, 4));
    value = value32;
  } else {
    check_driver(api, "cuMemcpyDtoH", api.cuMemcpyDtoH(&value, p.index_address + bad * 8, 8));
  }
  fail(SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE,
       "index[" + std::to_string(bad) + "] = " + std::to_string(value) + " is outside [0, out_rows = " +
           std::to_string(p.out_rows) + "); that row and any other bad one were skipped, valid rows were added");
}

int64_t take_recorded_index_error(const DriverApi& api, ContextState& state) {
  std::lock_guard<std::mutex> lock(state.record_take_mutex);
  // Every launch enqueued before this call, on any stream, has recorded.
  check_driver(api, "cuCtxSynchronize", api.cuCtxSynchronize());
  // Read and clear in one atomic exchange on the device (a host read, then a
  // clear, would drop a record that another thread's launch adds between
  // the two), then copy what it read, on the state's own stream.
  IndexRecordTakeParams params{};
  params.record = state.index_error_slot(kRecordModeSlot);
  params.taken = state.index_error_slot(kTakenSlot);
  const CUdeviceptr taken = params.taken;
  const CUfunction take = state.functions[find_variant(KernelFamily::index_record_take, SCATTERPTX_F32,
                                                       SCATTERPTX_INDEX_INT32, 0)];
  const CUstream stream = state.take_stream;
  trace_launch(take);
  check_driver(api, "cuLaunchKernel", api.cuLaunchKernel(take, 1, 1, 1, 1, 1, 1, 0, stream, params.packed().data(), nullptr));
  uint64_t bad = kNoPosition;
  check_driver(api, "cuMemcpyDtoHAsync", api.cuMemcpyDtoHAsync(&bad, taken, 8, stream));
  check_driver(api, "cuStreamSynchronize", api.cuStreamSynchronize(stream));
  return bad == kNoPosition ? -1 : static_cast<int64_t>(bad);
}

}  // namespace scatterptx::detail

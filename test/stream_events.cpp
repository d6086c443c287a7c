#include "stream_events.hpp"

#include <dlfcn.h>

#include "gpu_harness.hpp"

namespace scatterptx_test {
namespace {

using StreamWaitEvent = decltype(&::cuStreamWaitEvent);
using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

// The library's driver table holds only the entry points the library itself
// calls, and it never makes one stream wait for another; this one is
// resolved the way the library resolves its own (cuGetProcAddress, ABI
// 12.0) from the libcuda.so.1 the library has already opened.
StreamWaitEvent resolve_stream_wait_event() {
  driver();  // throws DriverError when there is no driver
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) throw DriverError("libcuda.so.1 is not loaded");
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  CUresult result = CUDA_ERROR_NOT_FOUND;
  void* entry = nullptr;
  if (get_proc != nullptr) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    result = get_proc("cuStreamWaitEvent", &entry, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found);
  }
  dlclose(library);  // drops only the reference taken here: the library keeps its own
  check_driver(result, "cuGetProcAddress(cuStreamWaitEvent)");
  if (entry == nullptr) throw DriverError("the CUDA driver lacks cuStreamWaitEvent (ABI 12.0)");
  return reinterpret_cast<StreamWaitEvent>(entry);
}

}  // namespace

Event::Event() { DRIVER_CALL(cuEventCreate, &event_, CU_EVENT_DISABLE_TIMING); }

Event::~Event() {
  const CUresult result = driver().cuEventDestroy(event_);
  if (result != CUDA_SUCCESS) {  // a destructor must not throw: report instead
    ADD_FAILURE() << scatterptx::detail::describe_driver_error(driver(), "cuEventDestroy", result);
  }
}

void Event::record(CUstream stream) const { DRIVER_CALL(cuEventRecord, event_, stream); }

void stream_wait_event(CUstream stream, const Event& event) {
  static const StreamWaitEvent wait = resolve_stream_wait_event();  // thread-safe, once
  check_driver(wait(stream, event.get(), 0), "cuStreamWaitEvent");
}

}  // namespace scatterptx_test

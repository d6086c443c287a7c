// Driver entry points the stress needs beyond the library's table
// (scatterptx::detail::DriverApi holds only what the library calls): a
// second context, stream-ordered uploads, cross-stream events, and reading
// pool and graph memory. Resolved as test/stream_events.cpp resolves its
// one, through cuGetProcAddress from the libcuda.so.1 the library opened.
#pragma once

#include <cuda.h>

namespace scatterptx_stress {

struct ExtraDriver {
  // The three-argument cuCtxCreate (cuCtxCreate_v2): asked at ABI 3.2, since
  // later versions of the name take exec-affinity or creation parameters.
  CUresult (*cuCtxCreate)(CUcontext* context, unsigned int flags, CUdevice device) = nullptr;
  CUresult (*cuCtxDestroy)(CUcontext context) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr destination, const void* source, size_t bytes,
                                CUstream stream) = nullptr;
  CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event, unsigned int flags) = nullptr;
  CUresult (*cuDeviceGraphMemTrim)(CUdevice device) = nullptr;
  CUresult (*cuMemPoolGetAttribute)(CUmemoryPool pool, CUmemPool_attribute attribute, void* value) = nullptr;
};

// Resolved once; throws scatterptx_testing::DriverError when the driver is
// missing or lacks one of them.
const ExtraDriver& extra_driver();

}  // namespace scatterptx_stress

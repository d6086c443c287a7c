// The CUDA driver, loaded at run time.
//
// The library never links libcuda: it is opened with dlopen("libcuda.so.1")
// and every entry point is resolved through cuGetProcAddress, so the library
// (and its host tests) load on a machine with no driver and report
// SCATTERPTX_ERROR_NO_DRIVER instead of failing to start.
#pragma once

#include <cuda.h>

#include <string>

namespace scatterptx::detail {

// Every driver entry point the library and its tests use, with the ABI
// version asked of cuGetProcAddress. decltype(&::name) follows cuda.h's
// macros (cuMemAlloc -> cuMemAlloc_v2), so each pointer has the signature
// of the version requested.
#define SCATTERPTX_DRIVER_ENTRY_POINTS(X) \
  X(cuInit)                               \
  X(cuGetErrorName)                       \
  X(cuGetErrorString)                     \
  X(cuDriverGetVersion)                   \
  X(cuDeviceGet)                          \
  X(cuDeviceGetCount)                     \
  X(cuDeviceGetName)                      \
  X(cuDeviceGetAttribute)                 \
  X(cuDevicePrimaryCtxRetain)             \
  X(cuDevicePrimaryCtxRelease)            \
  X(cuCtxGetCurrent)                      \
  X(cuCtxSetCurrent)                      \
  X(cuCtxGetDevice)                       \
  X(cuCtxGetId)                           \
  X(cuCtxSynchronize)                     \
  X(cuStreamGetCtx)                       \
  X(cuStreamCreate)                       \
  X(cuStreamCreateWithPriority)           \
  X(cuStreamGetPriority)                  \
  X(cuStreamDestroy)                      \
  X(cuStreamSynchronize)                  \
  X(cuStreamQuery)                        \
  X(cuStreamBeginCapture)                 \
  X(cuStreamEndCapture)                   \
  X(cuStreamIsCapturing)                  \
  X(cuGraphInstantiateWithFlags)          \
  X(cuGraphLaunch)                        \
  X(cuGraphDestroy)                       \
  X(cuGraphExecDestroy)                   \
  X(cuEventCreate)                        \
  X(cuEventDestroy)                       \
  X(cuEventRecord)                        \
  X(cuStreamWaitEvent)                    \
  X(cuEventSynchronize)                   \
  X(cuEventElapsedTime)                   \
  X(cuMemAlloc)                           \
  X(cuMemFree)                            \
  X(cuMemGetInfo)                         \
  X(cuDeviceGetGraphMemAttribute)         \
  X(cuMemPoolCreate)                      \
  X(cuMemPoolDestroy)                     \
  X(cuMemPoolSetAttribute)                \
  X(cuMemPoolGetAttribute)                \
  X(cuMemPoolTrimTo)                      \
  X(cuMemAllocFromPoolAsync)              \
  X(cuMemFreeAsync)                       \
  X(cuMemcpyHtoD)                         \
  X(cuMemcpyDtoH)                         \
  X(cuMemcpyDtoD)                         \
  X(cuMemcpyDtoDAsync)                    \
  X(cuMemcpyDtoHAsync)                    \
  X(cuMemsetD8)                           \
  X(cuMemsetD8Async)                      \
  X(cuPointerGetAttributes)               \
  X(cuModuleLoadDataEx)                   \
  X(cuModuleUnload)                       \
  X(cuModuleGetFunction)                  \
  X(cuFuncSetAttribute)                   \
  X(cuFuncGetAttribute)                   \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(cuLaunchKernel)                       \
  X(cuLaunchKernelEx)                     \
  X(cuTensorMapEncodeTiled)

struct DriverApi {
#define SCATTERPTX_DECLARE_ENTRY(name) decltype(&::name) name = nullptr;
  SCATTERPTX_DRIVER_ENTRY_POINTS(SCATTERPTX_DECLARE_ENTRY)
#undef SCATTERPTX_DECLARE_ENTRY
};

// The driver, opened and initialised (cuInit) once per process; nullptr when
// that failed, with *why_not saying why. Thread-safe.
const DriverApi* driver_api(std::string* why_not);

// "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (invalid argument)".
std::string describe_driver_error(const DriverApi& api, const char* call, CUresult result);

}  // namespace scatterptx::detail

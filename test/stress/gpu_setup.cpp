#include "gpu_setup.hpp"

#include <cstdio>

#include "context_state.hpp"
#include "extra_driver.hpp"
#include "gpu_resources.hpp"

namespace scatterptx_stress {

using scatterptx_testing::check_driver;
using scatterptx_testing::driver;

GpuProbe probe_gpu(int ordinal) {
  GpuProbe probe;
  std::string why_not;
  const scatterptx::detail::DriverApi* api = scatterptx::detail::driver_api(&why_not);
  if (api == nullptr) {
    probe.why_not = why_not;
    return probe;
  }
  const auto broken = [&](const char* call, CUresult result) {
    probe.why_not = scatterptx::detail::describe_driver_error(*api, call, result);
    return probe;
  };
  int count = 0;
  if (CUresult r = api->cuDeviceGetCount(&count); r != CUDA_SUCCESS) return broken("cuDeviceGetCount", r);
  if (count == 0) {
    probe.why_not = "the driver reports no CUDA device";
    return probe;
  }
  if (ordinal >= count) {
    probe.why_not = "device " + std::to_string(ordinal) + " requested but the driver reports " +
                    std::to_string(count) + " device(s)";
    return probe;
  }
  if (CUresult r = api->cuDeviceGet(&probe.device, ordinal); r != CUDA_SUCCESS) return broken("cuDeviceGet", r);
  char name[256] = {};
  if (CUresult r = api->cuDeviceGetName(name, sizeof name, probe.device); r != CUDA_SUCCESS) {
    return broken("cuDeviceGetName", r);
  }
  probe.name = name;
  if (CUresult r = api->cuDeviceGetAttribute(&probe.compute_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                             probe.device);
      r != CUDA_SUCCESS) {
    return broken("cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)", r);
  }
  if (CUresult r = api->cuDeviceGetAttribute(&probe.compute_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                             probe.device);
      r != CUDA_SUCCESS) {
    return broken("cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)", r);
  }
  if (probe.compute_major < 9) {
    probe.why_not = "device " + std::to_string(ordinal) + " (" + probe.name + ") is sm_" +
                    std::to_string(probe.compute_major) + std::to_string(probe.compute_minor) +
                    "; libscatterptx needs sm_90 or newer";
    return probe;
  }
  probe.usable = true;
  return probe;
}

StressContexts::StressContexts(CUdevice device) : device_(device) {
  check_driver(driver().cuDevicePrimaryCtxRetain(&contexts_[0], device_), "cuDevicePrimaryCtxRetain");
  try {
    // cuCtxCreate makes the new context current: the primary goes back on top.
    check_driver(extra_driver().cuCtxCreate(&contexts_[1], 0, device_), "cuCtxCreate");
    make_current(0);
  } catch (...) {
    if (contexts_[1] != nullptr) (void)extra_driver().cuCtxDestroy(contexts_[1]);
    throw;
  }
}

StressContexts::~StressContexts() {
  if (closed_) return;
  // Destructors must not throw: an error here is already being reported.
  if (contexts_[1] != nullptr) (void)extra_driver().cuCtxDestroy(contexts_[1]);
}

void StressContexts::make_current(int which) const {
  check_driver(driver().cuCtxSetCurrent(contexts_[which]), "cuCtxSetCurrent");
}

void StressContexts::synchronize_all() const {
  for (int which = 0; which < kContexts; ++which) {
    make_current(which);
    check_driver(driver().cuCtxSynchronize(), "cuCtxSynchronize");
  }
  make_current(0);
}

void StressContexts::close() {
  closed_ = true;
  check_driver(driver().cuCtxSetCurrent(nullptr), "cuCtxSetCurrent");
  check_driver(extra_driver().cuCtxDestroy(contexts_[1]), "cuCtxDestroy");
}

MemoryReading read_memory(const StressContexts& contexts) {
  contexts.synchronize_all();
  const ExtraDriver& extra = extra_driver();
  check_driver(extra.cuDeviceGraphMemTrim(contexts.device()), "cuDeviceGraphMemTrim");
  MemoryReading reading;
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  check_driver(driver().cuMemGetInfo(&free_bytes, &total_bytes), "cuMemGetInfo");
  reading.device_used_bytes = static_cast<int64_t>(total_bytes - free_bytes);
  cuuint64_t graph_reserved = 0;
  check_driver(driver().cuDeviceGetGraphMemAttribute(contexts.device(), CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT,
                                                     &graph_reserved),
               "cuDeviceGetGraphMemAttribute");
  reading.graph_reserved_bytes = static_cast<int64_t>(graph_reserved);
  for (int which = 0; which < kContexts; ++which) {
    contexts.make_current(which);
    const CUmemoryPool pool = scatterptx::detail::current_context_state(driver()).workspace_pool;
    cuuint64_t reserved = 0;
    cuuint64_t used = 0;
    check_driver(extra.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved),
                 "cuMemPoolGetAttribute(RESERVED_MEM_CURRENT)");
    check_driver(extra.cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used),
                 "cuMemPoolGetAttribute(USED_MEM_CURRENT)");
    reading.pool_reserved_bytes += static_cast<int64_t>(reserved);
    reading.pool_used_bytes += static_cast<int64_t>(used);
  }
  contexts.make_current(0);
  reading.rss_bytes = current_rss_bytes();
  return reading;
}

}  // namespace scatterptx_stress

#include "gpu_sleep.hpp"

#include <cstdio>
#include <string>

#include "driver.hpp"
#include "bench_data.hpp"

namespace scatterptx_bench {

GpuSleep::GpuSleep() {
  char error_log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log, reinterpret_cast<void*>(sizeof(error_log))};
  const CUresult loaded = driver().cuModuleLoadDataEx(&module_, kGpuSleepPtx, 2, options, values);
  if (loaded != CUDA_SUCCESS) {
    throw BenchError(scatterptx::detail::describe_driver_error(driver(), "cuModuleLoadDataEx", loaded) +
                     " (the head-start sleep kernel): " + error_log);
  }
  const CUresult found = driver().cuModuleGetFunction(&function_, module_, kGpuSleepEntry);
  if (found != CUDA_SUCCESS) {
    driver().cuModuleUnload(module_);
    check_driver(found, "cuModuleGetFunction");
  }
}

GpuSleep::~GpuSleep() {
  const CUresult result = driver().cuModuleUnload(module_);
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr, "scatterptx-bench: warning: %s\n",
                 scatterptx::detail::describe_driver_error(driver(), "cuModuleUnload", result).c_str());
  }
}

void GpuSleep::enqueue(CUstream stream, uint64_t cycles) const {
  void* params[] = {&cycles};
  check_driver(driver().cuLaunchKernel(function_, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr),
               "cuLaunchKernel");
}

}  // namespace scatterptx_bench

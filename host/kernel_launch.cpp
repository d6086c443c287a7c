#include "kernel_launch.hpp"

#include <cstdlib>
#include <cstring>

#include "launch_trace.hpp"

namespace scatterptx::detail {

bool programmatic_launches() {
  static const bool on = [] {
    const char* value = std::getenv(kSerialLaunchesVariable);
    return value == nullptr || std::strcmp(value, "1") != 0;
  }();
  return on;
}

const char* launch_call_name() { return programmatic_launches() ? "cuLaunchKernelEx" : "cuLaunchKernel"; }

CUresult launch_kernel(const DriverApi& api, const KernelLaunch& k) {
  trace_launch(k.function);
  if (!programmatic_launches()) {
    return api.cuLaunchKernel(k.function, k.grid_x, k.grid_y, 1, k.threads, 1, 1, k.shared_bytes, k.stream, k.params,
                              nullptr);
  }
  CUlaunchAttribute programmatic{};
  programmatic.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  programmatic.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = k.grid_x;
  config.gridDimY = k.grid_y;
  config.gridDimZ = 1;
  config.blockDimX = k.threads;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = k.shared_bytes;
  config.hStream = k.stream;
  config.attrs = &programmatic;
  config.numAttrs = 1;
  return api.cuLaunchKernelEx(&config, k.function, k.params, nullptr);
}

}  // namespace scatterptx::detail

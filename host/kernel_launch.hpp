// How every row and grouping kernel is launched: with programmatic stream
// serialization (cuLaunchKernelEx), so that a kernel's CTAs may start while
// the kernel before it in the stream drains. Each such kernel begins with
// griddepcontrol.wait (gen/gate_snippets.py) and reads nothing before it, so
// ordering is the stream's as before; what it saves is the gap between
// kernels, most of the cost of a chain of gated-off launches.
// SCATTERPTX_SERIAL_LAUNCHES=1 launches with plain cuLaunchKernel instead.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "driver_api.hpp"

namespace scatterptx::detail {

inline constexpr const char* kSerialLaunchesVariable = "SCATTERPTX_SERIAL_LAUNCHES";

struct KernelLaunch {
  CUfunction function = nullptr;
  uint32_t grid_x = 1;
  uint32_t grid_y = 1;
  uint32_t threads = 1;
  uint32_t shared_bytes = 0;
  CUstream stream = nullptr;
  void** params = nullptr;
};

// Whether launches are programmatic: true unless the variable is "1"
// (read once per process).
bool programmatic_launches();

// The driver call launch_kernel makes, for error messages.
const char* launch_call_name();

// Traces and launches k; returns the driver's result.
CUresult launch_kernel(const DriverApi& api, const KernelLaunch& k);

}  // namespace scatterptx::detail

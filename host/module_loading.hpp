// Loading the embedded kernels into the current context: each variant's
// sm_90 cubin where the GPU runs it, else its PTX through the driver's JIT;
// SCATTERPTX_FORCE_PTX=1 takes the PTX for every variant, so that the path
// a newer GPU takes can be tried on an H100/H200. A JIT failure's error log
// goes into the failure's message (scatterptx_last_error_message()).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>

#include "driver_api.hpp"
#include "kernel_manifest.hpp"

namespace scatterptx::detail {

inline constexpr const char* kForcePtxVariable = "SCATTERPTX_FORCE_PTX";

enum class ModuleSource {
  cubin_then_ptx,  // the sm_90 cubin, the PTX where the driver refuses the cubin
  ptx_only,        // the PTX through the JIT, every variant
};

// SCATTERPTX_FORCE_PTX's value (getenv's answer): unset, "" or "0" keep the
// cubins, "1" forces the PTX; anything else is INVALID_ARGUMENT, so that a
// mistyped switch is not silently ignored.
ModuleSource module_source_from_env(const char* value);

// How each variant's module was loaded, and what the JIT reported
// (CU_JIT_WALL_TIME, milliseconds; about zero for a cubin).
struct ModuleLoads {
  bool from_ptx[kKernelVariantCount] = {};
  float wall_ms[kKernelVariantCount] = {};

  std::size_t ptx_count() const;
  double total_wall_ms() const;
  // "64 modules: 64 from PTX through the JIT, 0 from sm_90 cubins; JIT wall
  // time 1234.5 ms in all, longest 80.2 ms (row_private_f32_i32)".
  std::string describe() const;
};

// Loads variant's module as source says and records how in loads; throws
// SCATTERPTX_ERROR_DRIVER naming the variant, each attempt's driver error
// and the JIT's error and info logs when no attempt succeeds.
CUmodule load_variant_module(const DriverApi& api, std::size_t variant, ModuleSource source, ModuleLoads& loads);

// One failed cuModuleLoadDataEx, for the failure message: "PTX JIT:
// cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (...); JIT log: <log>",
// without the log part when the driver wrote none.
std::string describe_load_attempt(const char* image_kind, const std::string& driver_error, const std::string& log);

}  // namespace scatterptx::detail

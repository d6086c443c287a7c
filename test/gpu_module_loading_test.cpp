// Where the current context's kernels came from: every sm_90 cubin on an
// sm_90 GPU, every PTX through the JIT under SCATTERPTX_FORCE_PTX=1 and on
// a GPU newer than the cubins; every variant loaded either way. Prints the
// JIT's wall time, so a
// run of the whole suite under SCATTERPTX_FORCE_PTX=1 CUDA_CACHE_DISABLE=1
// says what the JIT cost.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "context_state.hpp"
#include "errors.hpp"
#include "gpu_harness.hpp"

namespace scatterptx_test {
namespace {

using scatterptx::detail::ContextState;
using scatterptx::detail::kForcePtxVariable;
using scatterptx::detail::kKernelVariantCount;
using scatterptx::detail::kKernelVariants;
using scatterptx::detail::ModuleLoads;
using scatterptx::detail::ModuleSource;

TEST(ModuleLoading, ReportsWhereEachKernelCameFromAndTheJitTime) {
  SCATTERPTX_REQUIRE_GPU();
  const ContextState& state = scatterptx::detail::current_context_state(scatterptx::detail::require_driver());
  const ModuleLoads& loads = state.module_loads;
  std::cout << "[ modules  ] " << loads.describe() << std::endl;
  RecordProperty("module_loads", loads.describe());
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
    EXPECT_NE(state.functions[i], nullptr) << "variant " << kKernelVariants[i].name << " was not loaded";
  }
  if (scatterptx::detail::module_source_from_env(std::getenv(kForcePtxVariable)) == ModuleSource::ptx_only) {
    EXPECT_EQ(loads.ptx_count(), kKernelVariantCount);
    // A module the driver's JIT cache holds (~/.nv/ComputeCache) loads
    // without compiling and reports 0 ms; CUDA_CACHE_DISABLE=1 makes every
    // load compile (2.9 s for the 64 on an H200, driver 580).
    const char* cache_disabled = std::getenv("CUDA_CACHE_DISABLE");
    if (cache_disabled != nullptr && std::string(cache_disabled) == "1") EXPECT_GT(loads.total_wall_ms(), 0.0);
  } else if (state.limits.compute_capability / 10 == 9) {
    EXPECT_EQ(loads.ptx_count(), 0u) << "an sm_90 GPU runs every embedded cubin";
  } else {
    // The state refuses a GPU below sm_90, so this one is of a newer major
    // version, which runs no sm_90 cubin: the JIT compiles every PTX.
    EXPECT_EQ(loads.ptx_count(), kKernelVariantCount) << "a GPU newer than sm_90 loads every variant from PTX";
  }
}

}  // namespace
}  // namespace scatterptx_test

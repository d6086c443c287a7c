// A whole stress run on a usable GPU: the warm-up, the first memory reading,
// the main phase (or one replayed call), the last takes and reading, and
// the report. Returns the exit status (options.hpp).
#pragma once

#include <cstdint>

#include "gpu_setup.hpp"
#include "options.hpp"

namespace scatterptx_stress {

int run_stress(const Options& options, uint64_t seed, const GpuProbe& gpu);

}  // namespace scatterptx_stress

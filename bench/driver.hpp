// Checked library calls, and the shared testing library's driver access
// (the run-time loaded driver table, so the benchmark links no libcuda).
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>

#include "gpu_resources.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx_bench {

using scatterptx_testing::check_driver;
using scatterptx_testing::copy_to_device;
using scatterptx_testing::copy_to_host;
using scatterptx_testing::DeviceBuffer;
using scatterptx_testing::driver;
using scatterptx_testing::DriverApi;
using scatterptx_testing::Stream;

// A failure the benchmark cannot continue after: a library call failed, or
// the inputs could not be built. main() prints it (like a DriverError) and
// exits 1.
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "scatterptx_scatter_add: SCATTERPTX_ERROR_...: <the library's message>".
std::string describe_scatterptx_failure(scatterptx_status status, const char* call);

// Throws BenchError with describe_scatterptx_failure() when status fails.
void check_scatterptx(scatterptx_status status, const char* call);

}  // namespace scatterptx_bench

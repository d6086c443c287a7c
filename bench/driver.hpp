// Access to the run-time-loaded CUDA driver and checking of every result.
//
// All driver calls go through scatterptx::detail::driver_api(), the same
// table the library uses, so the benchmark needs no libcuda at link time.
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>

#include "driver_api.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx_bench {

using DriverApi = scatterptx::detail::DriverApi;

// A failure the benchmark cannot continue after: a driver or library call
// failed, or the inputs could not be built. main() prints it and exits 1.
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Loads the driver once; nullptr with *why_not filled when there is none.
const DriverApi* load_driver(std::string* why_not);

// The loaded driver. Only valid after load_driver() succeeded.
const DriverApi& driver();

// Throws BenchError naming the call and the driver's error when result fails.
void check_cu(CUresult result, const char* call);

// "scatterptx_scatter_add: SCATTERPTX_ERROR_...: <the library's message>".
std::string describe_scatterptx_failure(scatterptx_status status, const char* call);

// Throws BenchError with describe_scatterptx_failure() when status fails.
void check_scatterptx(scatterptx_status status, const char* call);

}  // namespace scatterptx_bench

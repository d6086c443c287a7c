// The GPU the tests run on, reached only through the run-time-loaded driver
// (scatterptx::detail::driver_api), so the test binary starts on a machine
// without libcuda and the GPU tests skip there.
#pragma once

#include <cuda.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpu_resources.hpp"

namespace scatterptx_test {

using scatterptx_testing::check_driver;
using scatterptx_testing::DeviceBuffer;
using scatterptx_testing::driver;
using scatterptx_testing::DriverApi;
using scatterptx_testing::DriverError;
using scatterptx_testing::Stream;

// DRIVER_CALL(cuMemAlloc, &ptr, bytes): calls the entry point through
// driver() and throws on failure. #name stays unexpanded ("cuMemAlloc") while
// the call goes to the versioned member cuda.h maps it to (cuMemAlloc_v2).
#define DRIVER_CALL(name, ...) \
  ::scatterptx_test::check_driver(::scatterptx_test::driver().name(__VA_ARGS__), #name)

struct GpuStatus {
  enum class State { kReady, kSkip, kBroken };
  State state = State::kSkip;
  std::string reason;  // why not ready
};

// Device 0's primary context, retained once per process (and kept for the
// life of the process), made current on the calling thread.
GpuStatus make_gpu_current();
CUdevice gpu_device();
CUcontext gpu_context();

// Skips the test with the reason when there is no driver, no device, or a
// device below compute capability 9.0; fails it when the driver misbehaves;
// otherwise makes the GPU's context current on this thread.
#define SCATTERPTX_REQUIRE_GPU()                                                        \
  do {                                                                                  \
    const ::scatterptx_test::GpuStatus gpu_status_ = ::scatterptx_test::make_gpu_current(); \
    if (gpu_status_.state == ::scatterptx_test::GpuStatus::State::kSkip) {              \
      GTEST_SKIP() << gpu_status_.reason;                                               \
    }                                                                                   \
    if (gpu_status_.state == ::scatterptx_test::GpuStatus::State::kBroken) {            \
      FAIL() << gpu_status_.reason;                                                     \
    }                                                                                   \
  } while (0)

// Copies host -> device, then synchronises the context: an HtoD copy from
// pageable memory may return before its DMA lands, and later launches go to
// streams that do not wait for the legacy stream.
void upload(CUdeviceptr destination, const void* source, size_t bytes);
// Synchronises the context (work on any stream is finished), then copies.
void download(void* destination, CUdeviceptr source, size_t bytes);
void fill_device_bytes(CUdeviceptr destination, unsigned char value, size_t bytes);
void synchronize_gpu();
size_t free_device_memory();
// An attribute of the current device.
int device_attribute(CUdevice_attribute attribute);

}  // namespace scatterptx_test

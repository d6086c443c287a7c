// Two GPUs at once: a thread per device makes that device's primary context
// current and runs default calls on it (a streaming shape and two that
// group), each checked against float64 with out poisoned first. The library
// keeps its kernels, records and workspace pool per context, so neither
// device's calls may see the other's. Skips with fewer than two devices.
#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"

namespace scatterptx_test {
namespace {

std::vector<ScatterShape> shapes() {
  ScatterShape streaming;
  streaming.dtype = SCATTERPTX_F32;
  streaming.cols = 37;
  streaming.out_rows = 3000;
  streaming.src_rows = 20000;
  ScatterShape grouped_f32;  // 512-byte rows into an out beyond 16 MiB: the default call groups
  grouped_f32.dtype = SCATTERPTX_F32;
  grouped_f32.cols = 128;
  grouped_f32.out_rows = 40000;
  grouped_f32.src_rows = 100000;
  ScatterShape grouped_bf16 = grouped_f32;
  grouped_bf16.dtype = SCATTERPTX_BF16;
  grouped_bf16.cols = 256;
  grouped_bf16.index_type = SCATTERPTX_INDEX_INT32;
  return {streaming, grouped_f32, grouped_bf16};
}

void run_calls_on(int ordinal, uint64_t seed) {
  CUdevice device = 0;
  CUcontext context = nullptr;
  try {
    DRIVER_CALL(cuDeviceGet, &device, ordinal);
    DRIVER_CALL(cuDevicePrimaryCtxRetain, &context, device);
    DRIVER_CALL(cuCtxSetCurrent, context);
    const std::vector<ScatterShape> all = shapes();
    for (int round = 0; round < 3; ++round) {
      for (std::size_t k = 0; k < all.size(); ++k) {
        SCOPED_TRACE("device " + std::to_string(ordinal) + ", round " + std::to_string(round) + ", " +
                     all[k].describe());
        const HostScatter host = make_random_scatter(all[k], derive_seed(seed, 100 * ordinal + 10 * round + k));
        DeviceScatter scatter(all[k], host);
        const scatterptx_scatter_add_args args = scatter.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
        EXPECT_EQ(scatterptx_scatter_add(&args, nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
        expect_scatter_result(all[k], host, scatter, 1);
      }
    }
    int64_t position = 0;
    EXPECT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    EXPECT_EQ(position, -1) << "device " << ordinal << ": every index was valid";
  } catch (const std::exception& error) {
    ADD_FAILURE() << "device " << ordinal << ": " << error.what();
  }
  if (context != nullptr) {
    (void)driver().cuCtxSetCurrent(nullptr);
    (void)driver().cuDevicePrimaryCtxRelease(device);
  }
}

TEST(MultiDevice, CallsOnTwoGpusFromTwoThreadsAtOnce) {
  SCATTERPTX_REQUIRE_GPU();
  int count = 0;
  DRIVER_CALL(cuDeviceGetCount, &count);
  if (count < 2) GTEST_SKIP() << "needs two CUDA devices, found " << count;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  std::thread first(run_calls_on, 0, seed);
  std::thread second(run_calls_on, 1, seed);
  first.join();
  second.join();
}

}  // namespace
}  // namespace scatterptx_test

// Stream ordering and CUDA graphs: concurrent launches on two streams, a
// captured scatter_add replayed twice, takes of the index-error record while
// another thread launches, and the context rules (no current context,
// CHECKED mode under capture, a stream of another context).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bad_inputs.hpp"
#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"

namespace scatterptx_test {
namespace {

namespace bad = scatterptx_bad_inputs;

TEST(StreamsAndGraphs, TwoStreamsAtOnce) {
  SCATTERPTX_REQUIRE_GPU();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  // Different dtypes and paths so the two streams run different kernels.
  const ScatterShape first_shape = contiguous_shape(SCATTERPTX_F32, 700, 40000, 256);
  const ScatterShape second_shape = contiguous_shape(SCATTERPTX_BF16, 300, 30000, 100);
  const HostScatter first = make_random_scatter(first_shape, derive_seed(seed, 1));
  const HostScatter second = make_random_scatter(second_shape, derive_seed(seed, 2));
  DeviceScatter first_device(first_shape, first);
  DeviceScatter second_device(second_shape, second);
  const auto first_args = first_device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const auto second_args = second_device.args(SCATTERPTX_PATH_RED, SCATTERPTX_INDEX_RECORD);
  Stream first_stream;
  Stream second_stream;
  // Interleaved, three launches each, nothing synchronised in between.
  constexpr int kLaunches = 3;
  for (int launch = 0; launch < kLaunches; ++launch) {
    ASSERT_EQ(scatterptx_scatter_add(&first_args, first_stream.get()), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
    ASSERT_EQ(scatterptx_scatter_add(&second_args, second_stream.get()), SCATTERPTX_SUCCESS)
        << scatterptx_last_error_message();
  }
  first_stream.synchronize();
  second_stream.synchronize();
  expect_scatter_result(first_shape, first, first_device, kLaunches);
  expect_scatter_result(second_shape, second, second_device, kLaunches);
}

TEST(StreamsAndGraphs, TakesWhileAnotherThreadLaunchesLoseNoRecord) {
  // One thread launches RECORD-mode scatters on its stream, each with one bad
  // row, earlier in each launch than in the one before, so that the last
  // launch's is the smallest position; this thread takes the record
  // meanwhile. Some take, at the latest the one after the launches, must
  // report the last launch's position. A take that read the record and then
  // cleared it in a second step would lose it whenever that launch's record
  // landed between the two.
  SCATTERPTX_REQUIRE_GPU();
  int64_t position = 0;
  ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  constexpr int kLaunches = 8;
  constexpr int kRounds = 50;
  const ScatterShape s = contiguous_shape(SCATTERPTX_F32, 64, 4096, 16);
  std::vector<std::unique_ptr<DeviceScatter>> devices;
  std::vector<scatterptx_scatter_add_args> args;
  for (int k = 0; k < kLaunches; ++k) {
    HostScatter host = make_random_scatter(s, derive_seed(seed, static_cast<uint64_t>(k)));
    host.index[static_cast<size_t>(100 * (kLaunches - k))] = -1;
    devices.push_back(std::make_unique<DeviceScatter>(s, host));
    args.push_back(devices.back()->args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD));
  }
  Stream stream;
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<bool> launched{false};
    std::vector<scatterptx_status> statuses(kLaunches, SCATTERPTX_SUCCESS);
    bool launcher_ready = false;
    std::thread launcher([&] {
      launcher_ready = make_gpu_current().state == GpuStatus::State::kReady;
      for (int k = 0; launcher_ready && k < kLaunches; ++k) statuses[k] = scatterptx_scatter_add(&args[k], stream.get());
      launched = true;
    });
    int64_t smallest = std::numeric_limits<int64_t>::max();
    scatterptx_status take = SCATTERPTX_SUCCESS;
    while (!launched && take == SCATTERPTX_SUCCESS) {
      take = scatterptx_take_index_error(&position);
      if (position >= 0) smallest = std::min(smallest, position);
    }
    launcher.join();
    ASSERT_EQ(take, SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    ASSERT_TRUE(launcher_ready);
    for (int k = 0; k < kLaunches; ++k) ASSERT_EQ(statuses[k], SCATTERPTX_SUCCESS) << k;
    ASSERT_EQ(scatterptx_take_index_error(&position), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    if (position >= 0) smallest = std::min(smallest, position);
    ASSERT_EQ(smallest, 100) << "round " << round << ": the last launch's bad row was not reported";
  }
}

class GraphCaptureTest : public ::testing::TestWithParam<scatterptx_path> {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }
};

TEST_P(GraphCaptureTest, CapturedLaunchReplaysTwice) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (scatterptx_dtype dtype : {SCATTERPTX_F32, SCATTERPTX_BF16}) {
    const ScatterShape s = contiguous_shape(dtype, 900, 12000, 264);
    SCOPED_TRACE(s.describe());
    const HostScatter host = make_random_scatter(s, derive_seed(seed, dtype));
    DeviceScatter device(s, host);
    const auto args = device.args(GetParam(), SCATTERPTX_INDEX_RECORD);
    ASSERT_EQ(scatterptx_prepare(), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    Stream stream;
    DRIVER_CALL(cuStreamBeginCapture, stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL);
    const scatterptx_status captured = scatterptx_scatter_add(&args, stream.get());
    CUgraph graph = nullptr;
    DRIVER_CALL(cuStreamEndCapture, stream.get(), &graph);
    ASSERT_EQ(captured, SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
    ASSERT_NE(graph, nullptr);
    CUgraphExec exec = nullptr;
    DRIVER_CALL(cuGraphInstantiateWithFlags, &exec, graph, 0);
    // Capturing records the launch without running it.
    synchronize_gpu();
    EXPECT_TRUE(device.download_out().bytes == host.out0.bytes) << "capture ran the kernel";
    DRIVER_CALL(cuGraphLaunch, exec, stream.get());
    DRIVER_CALL(cuGraphLaunch, exec, stream.get());
    stream.synchronize();
    expect_scatter_result(s, host, device, 2);
    DRIVER_CALL(cuGraphExecDestroy, exec);
    DRIVER_CALL(cuGraphDestroy, graph);
    int64_t bad_position = 0;
    ASSERT_EQ(scatterptx_take_index_error(&bad_position), SCATTERPTX_SUCCESS);
    EXPECT_EQ(bad_position, -1);
  }
}

INSTANTIATE_TEST_SUITE_P(Sm90, GraphCaptureTest,
                         ::testing::Values(SCATTERPTX_PATH_AUTO, SCATTERPTX_PATH_TMA,
                                           SCATTERPTX_PATH_RED),
                         [](const ::testing::TestParamInfo<scatterptx_path>& info) {
                           return std::string(path_name(info.param));
                         });

TEST(StreamsAndGraphs, CheckedModeCannotBeCaptured) {
  SCATTERPTX_REQUIRE_GPU();
  const ScatterShape s = contiguous_shape(SCATTERPTX_F32, 64, 500, 32);
  const HostScatter host = make_random_scatter(s, fresh_seed());
  DeviceScatter device(s, host);
  const auto args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_CHECKED);
  ASSERT_EQ(scatterptx_prepare(), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  Stream stream;
  DRIVER_CALL(cuStreamBeginCapture, stream.get(), CU_STREAM_CAPTURE_MODE_GLOBAL);
  const scatterptx_status status = scatterptx_scatter_add(&args, stream.get());
  // The capture may have been invalidated by the refused call: ending it is
  // then an error too, and the graph is discarded either way.
  CUgraph graph = nullptr;
  const CUresult ended = driver().cuStreamEndCapture(stream.get(), &graph);
  if (ended == CUDA_SUCCESS && graph != nullptr) DRIVER_CALL(cuGraphDestroy, graph);
  // CHECKED mode synchronises, so it cannot be captured: refused up front.
  EXPECT_EQ(status, SCATTERPTX_ERROR_INVALID_ARGUMENT) << scatterptx_last_error_message();
  EXPECT_EQ(std::string(scatterptx_last_error_message()), bad::device_case("checked_in_capture").message);
  EXPECT_TRUE(device.download_out().bytes == host.out0.bytes);
}

TEST(StreamsAndGraphs, ThreadWithoutContextGetsNoContext) {
  SCATTERPTX_REQUIRE_GPU();
  const ScatterShape s = contiguous_shape(SCATTERPTX_F32, 64, 500, 32);
  const HostScatter host = make_random_scatter(s, fresh_seed());
  DeviceScatter device(s, host);
  const auto args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  scatterptx_status status = SCATTERPTX_SUCCESS;
  std::string message;
  CUcontext current = nullptr;
  CUresult query = CUDA_SUCCESS;
  std::thread bare([&] {  // a new thread has no current context
    query = driver().cuCtxGetCurrent(&current);
    status = scatterptx_scatter_add(&args, nullptr);
    message = scatterptx_last_error_message();
  });
  bare.join();
  check_driver(query, "cuCtxGetCurrent");
  ASSERT_EQ(current, nullptr);
  EXPECT_EQ(status, SCATTERPTX_ERROR_NO_CONTEXT) << message;
  EXPECT_NE(message, "");
  EXPECT_TRUE(device.download_out().bytes == host.out0.bytes);
}

TEST(StreamsAndGraphs, StreamOfAnotherContextIsRefused) {
  SCATTERPTX_REQUIRE_GPU();
  int count = 0;
  DRIVER_CALL(cuDeviceGetCount, &count);
  if (count < 2) GTEST_SKIP() << "needs a second CUDA device for a second context";
  CUdevice other_device = 0;
  DRIVER_CALL(cuDeviceGet, &other_device, 1);
  CUcontext other_context = nullptr;
  DRIVER_CALL(cuDevicePrimaryCtxRetain, &other_context, other_device);
  CUstream other_stream = nullptr;
  DRIVER_CALL(cuCtxSetCurrent, other_context);
  DRIVER_CALL(cuStreamCreate, &other_stream, CU_STREAM_NON_BLOCKING);
  DRIVER_CALL(cuCtxSetCurrent, gpu_context());

  const ScatterShape s = contiguous_shape(SCATTERPTX_F32, 64, 500, 32);
  const HostScatter host = make_random_scatter(s, fresh_seed());
  DeviceScatter device(s, host);
  const auto args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const scatterptx_status status = scatterptx_scatter_add(&args, other_stream);
  // The stream belongs to device 1's context.
  EXPECT_EQ(status, SCATTERPTX_ERROR_INVALID_ARGUMENT) << scatterptx_last_error_message();
  EXPECT_EQ(std::string(scatterptx_last_error_message()), bad::device_case("stream_other_context").message);
  EXPECT_TRUE(device.download_out().bytes == host.out0.bytes);

  DRIVER_CALL(cuCtxSetCurrent, other_context);
  DRIVER_CALL(cuStreamDestroy, other_stream);
  DRIVER_CALL(cuCtxSetCurrent, gpu_context());
  DRIVER_CALL(cuDevicePrimaryCtxRelease, other_device);
}

}  // namespace
}  // namespace scatterptx_test

// Host-only: taking the RECORD-mode index-error record against a scripted
// driver. The read and the clear must be one device-side exchange (the
// index_record_take kernel, launched with the record and the taken slot)
// ordered after a context synchronisation, with its result copied back on
// the state's own stream; a host read followed by a host clear would drop a
// record that another thread's launch adds in between. The scripted launch
// does the exchange itself: what the kernel does is a GPU test's question.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "context_state.hpp"
#include "errors.hpp"
#include "index_errors.hpp"

namespace {

using scatterptx::detail::ContextState;
using scatterptx::detail::DriverApi;
using scatterptx::detail::Failure;
using scatterptx::detail::find_variant;
using scatterptx::detail::KernelFamily;
using scatterptx::detail::kKernelVariantCount;
using scatterptx::detail::kRecordModeSlot;
using scatterptx::detail::kTakenSlot;
using scatterptx::detail::take_recorded_index_error;

constexpr CUdeviceptr kRecords = 0x7000;

// What the scripted driver saw, and what its device holds.
struct ScriptedDriver {
  std::vector<std::string> calls;
  uint64_t record = 0;               // the RECORD-mode slot on the device
  uint64_t taken = 0;                // kTakenSlot on the device
  CUresult launch_result = CUDA_SUCCESS;
  CUfunction launched = nullptr;
  unsigned grid[3] = {};
  unsigned block[3] = {};
  CUdeviceptr launch_record = 0;
  CUdeviceptr launch_taken = 0;
  std::vector<CUstream> streams;  // of the launch, the copy and the synchronisation, in order
};
ScriptedDriver script;

CUresult ctx_synchronize() {
  script.calls.push_back("cuCtxSynchronize");
  return CUDA_SUCCESS;
}
CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned, CUstream stream, void** params, void**) {
  script.calls.push_back("cuLaunchKernel");
  script.streams.push_back(stream);
  if (script.launch_result != CUDA_SUCCESS) return script.launch_result;
  script.launched = f;
  script.grid[0] = gx, script.grid[1] = gy, script.grid[2] = gz;
  script.block[0] = bx, script.block[1] = by, script.block[2] = bz;
  std::memcpy(&script.launch_record, params[0], sizeof(CUdeviceptr));
  std::memcpy(&script.launch_taken, params[1], sizeof(CUdeviceptr));
  // What the kernel does: an exchange of the record with "no position".
  script.taken = script.record;
  script.record = UINT64_MAX;
  return CUDA_SUCCESS;
}
CUresult copy_to_host_async(void* destination, CUdeviceptr source, size_t bytes, CUstream stream) {
  script.calls.push_back("cuMemcpyDtoHAsync");
  script.streams.push_back(stream);
  if (source != kRecords + 8 * kTakenSlot || bytes != 8) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(destination, &script.taken, 8);
  return CUDA_SUCCESS;
}
CUresult stream_synchronize(CUstream stream) {
  script.calls.push_back("cuStreamSynchronize");
  script.streams.push_back(stream);
  return CUDA_SUCCESS;
}
// The two-step take this replaces: any use of them is a failure below.
CUresult copy_to_host(void*, CUdeviceptr, size_t) {
  script.calls.push_back("cuMemcpyDtoH");
  return CUDA_SUCCESS;
}
CUresult memset_d8(CUdeviceptr, unsigned char, size_t) {
  script.calls.push_back("cuMemsetD8");
  return CUDA_SUCCESS;
}

DriverApi scripted_api() {
  DriverApi api;  // entry points left null are never reached by a take
  api.cuCtxSynchronize = ctx_synchronize;
  api.cuLaunchKernel = launch_kernel;
  api.cuMemcpyDtoHAsync = copy_to_host_async;
  api.cuStreamSynchronize = stream_synchronize;
  api.cuMemcpyDtoH = copy_to_host;
  api.cuMemsetD8 = memset_d8;
  return api;
}

std::size_t take_variant() {
  return find_variant(KernelFamily::index_record_take, SCATTERPTX_F32, SCATTERPTX_INDEX_INT32, 0);
}

// A state whose every function is a distinct fake handle.
struct FakeState {
  ContextState state;
  FakeState() {
    for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
      state.functions[i] = reinterpret_cast<CUfunction>(uintptr_t{0x100} + i);
    }
    state.index_error_records = kRecords;
    state.take_stream = reinterpret_cast<CUstream>(uintptr_t{0x5EA});
  }
};

class IndexRecordTakeTest : public ::testing::Test {
 protected:
  void SetUp() override { script = ScriptedDriver{}; }
  const DriverApi api = scripted_api();
  FakeState fake;
};

TEST_F(IndexRecordTakeTest, ExchangesTheRecordOnTheDeviceAfterSynchronising) {
  script.record = 41;
  EXPECT_EQ(take_recorded_index_error(api, fake.state), 41);
  EXPECT_EQ(script.calls, (std::vector<std::string>{"cuCtxSynchronize", "cuLaunchKernel", "cuMemcpyDtoHAsync",
                                                    "cuStreamSynchronize"}));
  EXPECT_EQ(script.launched, fake.state.functions[take_variant()]);
  for (int axis = 0; axis < 3; ++axis) {
    EXPECT_EQ(script.grid[axis], 1u) << axis;
    EXPECT_EQ(script.block[axis], 1u) << axis;
  }
  // All on the state's own stream: the copy is ordered after the exchange,
  // and no other thread's stream waits for them.
  EXPECT_EQ(script.streams, std::vector<CUstream>(3, fake.state.take_stream));
  EXPECT_EQ(script.launch_record, kRecords + 8 * kRecordModeSlot);
  EXPECT_EQ(script.launch_taken, kRecords + 8 * kTakenSlot);
  EXPECT_EQ(script.record, UINT64_MAX) << "the record must be left cleared";
}

TEST_F(IndexRecordTakeTest, AClearedRecordIsMinusOneAndATakeAfterATakeFindsNothing) {
  script.record = UINT64_MAX;
  EXPECT_EQ(take_recorded_index_error(api, fake.state), -1);
  script.record = 7;
  EXPECT_EQ(take_recorded_index_error(api, fake.state), 7);
  EXPECT_EQ(take_recorded_index_error(api, fake.state), -1);
}

TEST_F(IndexRecordTakeTest, ALaunchFailureIsADriverErrorAndNothingIsRead) {
  script.record = 3;
  script.launch_result = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  try {
    take_recorded_index_error(api, fake.state);
    FAIL() << "expected a driver failure";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_DRIVER);
    EXPECT_NE(std::string(failure.what()).find("cuLaunchKernel"), std::string::npos) << failure.what();
  }
  EXPECT_EQ(script.calls, (std::vector<std::string>{"cuCtxSynchronize", "cuLaunchKernel"}));
  EXPECT_EQ(script.record, 3u) << "a failed take must leave the record for the next one";
}

}  // namespace

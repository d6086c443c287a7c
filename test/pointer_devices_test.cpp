// Host-only: the check that a call's memory lives on the current context's
// device (host/pointer_devices.cpp), against a scripted driver that says
// where each address lives.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "context_state.hpp"
#include "errors.hpp"
#include "pointer_devices.hpp"

namespace {

using scatterptx::detail::ContextState;
using scatterptx::detail::DriverApi;
using scatterptx::detail::Failure;
using scatterptx::detail::Problem;
using scatterptx::detail::require_pointers_on_device;

struct Memory {
  CUmemorytype type = static_cast<CUmemorytype>(0);  // 0: an address the driver does not know
  bool managed = false;
  int ordinal = -1;
};

struct Script {
  std::map<CUdeviceptr, Memory> memory;
  int queries = 0;
  CUresult answer = CUDA_SUCCESS;
};
Script script;

CUresult pointer_attributes(unsigned count, CUpointer_attribute* attributes, void** data, CUdeviceptr address) {
  ++script.queries;
  if (script.answer != CUDA_SUCCESS) return script.answer;
  const Memory found = script.memory.count(address) ? script.memory[address] : Memory{};
  for (unsigned i = 0; i < count; ++i) {
    switch (attributes[i]) {
      case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *static_cast<uint32_t*>(data[i]) = found.type; break;
      case CU_POINTER_ATTRIBUTE_IS_MANAGED: *static_cast<bool*>(data[i]) = found.managed; break;  // a bool, as the driver writes
      case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *static_cast<int*>(data[i]) = found.ordinal; break;
      default: ADD_FAILURE() << "unexpected attribute " << attributes[i];
    }
  }
  return CUDA_SUCCESS;
}

// Handles twice the ordinal, so that the check cannot pass by comparing an
// ordinal with a handle where they differ.
CUresult device_get(CUdevice* device, int ordinal) {
  *device = 2 * ordinal;
  return CUDA_SUCCESS;
}

CUresult error_name(CUresult, const char** name) {
  *name = "CUDA_ERROR_INVALID_VALUE";
  return CUDA_SUCCESS;
}

constexpr CUdeviceptr kOut = 0x100000, kSrc = 0x200000, kIndex = 0x300000, kWeights = 0x400000;

class PointerDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    script = Script{};
    api_.cuPointerGetAttributes = pointer_attributes;
    api_.cuDeviceGet = device_get;
    api_.cuGetErrorName = error_name;
    state_.device = 2;  // ordinal 1
    problem_.src_rows = 10;
    problem_.out_rows = 10;
    problem_.cols = 4;
    problem_.out_address = kOut;
    problem_.src_address = kSrc;
    problem_.index_address = kIndex;
    for (CUdeviceptr address : {kOut, kSrc, kIndex, kWeights}) script.memory[address] = {CU_MEMORYTYPE_DEVICE, false, 1};
  }

  // The refusal's message, or "" when the check passed.
  std::string refusal() {
    try {
      require_pointers_on_device(api_, state_, problem_);
    } catch (const Failure& failure) {
      EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_INVALID_ARGUMENT) << failure.what();
      return failure.what();
    }
    return "";
  }

  DriverApi api_;
  ContextState state_;
  Problem problem_;
};

TEST_F(PointerDevicesTest, MemoryOfTheContextsDevicePasses) {
  EXPECT_EQ(refusal(), "");
  EXPECT_EQ(script.queries, 3) << "out, src and index";
  problem_.weighted = true;
  problem_.weights_address = kWeights;
  EXPECT_EQ(refusal(), "");
  EXPECT_EQ(script.queries, 7) << "and the weights";
}

TEST_F(PointerDevicesTest, EachOperandOnAnotherDeviceIsRefusedByName) {
  problem_.weighted = true;
  problem_.weights_address = kWeights;
  for (const auto& [address, name] : std::map<CUdeviceptr, std::string>{
           {kOut, "out"}, {kSrc, "src"}, {kIndex, "index"}, {kWeights, "weights"}}) {
    SCOPED_TRACE(name);
    script.memory[address].ordinal = 0;
    const std::string message = refusal();
    EXPECT_EQ(message.rfind(name + " is memory of device 0, not of the current context's device", 0), 0u)
        << message;
    script.memory[address].ordinal = 1;
  }
}

TEST_F(PointerDevicesTest, HostManagedAndUnknownMemoryAreLeftToTheCaller) {
  script.memory[kOut] = {CU_MEMORYTYPE_HOST, false, 0};     // pinned host memory, allocated under device 0
  script.memory[kSrc] = {CU_MEMORYTYPE_DEVICE, true, 0};    // managed memory, placed on device 0
  script.memory.erase(kIndex);                              // an address no allocation covers
  EXPECT_EQ(refusal(), "");
}

TEST_F(PointerDevicesTest, AnEmptyProblemAsksNothing) {
  script.memory[kOut].ordinal = 0;
  problem_.src_rows = 0;
  EXPECT_EQ(refusal(), "");
  problem_.src_rows = 10;
  problem_.cols = 0;
  EXPECT_EQ(refusal(), "");
  EXPECT_EQ(script.queries, 0);
}

TEST_F(PointerDevicesTest, ADriverErrorIsReportedAsOne) {
  script.answer = CUDA_ERROR_INVALID_VALUE;
  try {
    require_pointers_on_device(api_, state_, problem_);
    ADD_FAILURE() << "no failure";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_DRIVER);
    EXPECT_NE(std::string(failure.what()).find("cuPointerGetAttributes"), std::string::npos) << failure.what();
  }
}

}  // namespace

// Host-only: where a default call's grouping workspace comes from (a
// registered allocator, else the context's pool), against scripted
// allocators and a scripted driver.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "call_workspace.hpp"
#include "errors.hpp"

namespace {

using scatterptx::detail::CallWorkspace;
using scatterptx::detail::ContextState;
using scatterptx::detail::DriverApi;
using scatterptx::detail::Failure;
using scatterptx::detail::register_allocator;

CUstream const kStream = reinterpret_cast<CUstream>(uintptr_t{0x5700});

// What the scripted allocator and driver were asked.
struct Script {
  uintptr_t hand_out = 0x100000;  // what allocate returns (0: NULL)
  int allocations = 0;
  int releases = 0;
  uintptr_t released = 0;
  CUstream stream = nullptr;
  CUresult pool_result = CUDA_SUCCESS;
  int pool_allocations = 0;
  int pool_frees = 0;
  CUresult free_result = CUDA_SUCCESS;
};
Script script;

void* allocate(size_t, CUstream stream, void* user_data) {
  EXPECT_EQ(user_data, &script);
  ++script.allocations;
  script.stream = stream;
  return reinterpret_cast<void*>(script.hand_out);
}

void release(void* pointer, size_t, CUstream, void*) {
  ++script.releases;
  script.released = reinterpret_cast<uintptr_t>(pointer);
}

CUresult alloc_from_pool(CUdeviceptr* pointer, size_t, CUmemoryPool, CUstream stream) {
  ++script.pool_allocations;
  script.stream = stream;
  if (script.pool_result == CUDA_SUCCESS) *pointer = 0x200000;
  return script.pool_result;
}

CUresult free_async(CUdeviceptr, CUstream) {
  ++script.pool_frees;
  return script.free_result;
}

DriverApi scripted_api() {
  DriverApi api;  // entry points left null are never reached here
  api.cuMemAllocFromPoolAsync = alloc_from_pool;
  api.cuMemFreeAsync = free_async;
  return api;
}

class CallWorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override { script = Script{}; }
  void TearDown() override { register_allocator(nullptr); }

  void use_scripted_allocator() {
    const scatterptx_allocator allocator{&allocate, &release, &script};
    register_allocator(&allocator);
  }

  const DriverApi api_ = scripted_api();
  ContextState state_;
};

TEST_F(CallWorkspaceTest, ARegisteredAllocatorServesTheCallAndGetsItsMemoryBackOnce) {
  use_scripted_allocator();
  {
    CallWorkspace workspace(api_, state_, 4096, kStream);
    ASSERT_FALSE(workspace.empty());
    EXPECT_EQ(workspace.address(), 0x100000u);
    EXPECT_EQ(script.stream, kStream);
    workspace.release();
    EXPECT_EQ(script.releases, 1);
    EXPECT_EQ(script.released, 0x100000u);
  }
  EXPECT_EQ(script.releases, 1) << "released again on destruction";
  EXPECT_EQ(script.pool_allocations, 0);
}

// A second scripted allocator: the call's own.
int own_allocations = 0;
int own_releases = 0;

void* allocate_own(size_t, CUstream, void* user_data) {
  EXPECT_EQ(user_data, &own_allocations);
  ++own_allocations;
  return reinterpret_cast<void*>(uintptr_t{0x300000});
}

void release_own(void* pointer, size_t, CUstream, void*) {
  EXPECT_EQ(reinterpret_cast<uintptr_t>(pointer), 0x300000u);
  ++own_releases;
}

TEST_F(CallWorkspaceTest, TheCallsOwnAllocatorServesItInsteadOfTheRegisteredOne) {
  use_scripted_allocator();
  own_allocations = own_releases = 0;
  const scatterptx_allocator own{&allocate_own, &release_own, &own_allocations};
  {
    CallWorkspace workspace(api_, state_, 4096, kStream, &own);
    ASSERT_FALSE(workspace.empty());
    EXPECT_EQ(workspace.address(), 0x300000u);
    workspace.release();
  }
  EXPECT_EQ(own_allocations, 1);
  EXPECT_EQ(own_releases, 1);
  EXPECT_EQ(script.allocations, 0) << "the registered allocator was asked";
  EXPECT_EQ(script.pool_allocations, 0);
}

TEST_F(CallWorkspaceTest, NullFromTheCallsOwnAllocatorNamesIt) {
  const scatterptx_allocator own{&allocate, &release, &script};
  script.hand_out = 0;
  CallWorkspace workspace(api_, state_, 4096, kStream, &own);
  EXPECT_TRUE(workspace.empty());
  EXPECT_NE(workspace.why().find("the call's allocator returned NULL for 4096 bytes"), std::string::npos)
      << workspace.why();
  EXPECT_EQ(script.pool_allocations, 0) << "the pool stood in for the call's allocator";
}

TEST_F(CallWorkspaceTest, AWorkspaceNeverReleasedIsReleasedOnDestruction) {
  use_scripted_allocator();
  { CallWorkspace workspace(api_, state_, 4096, kStream); }
  EXPECT_EQ(script.releases, 1);
}

TEST_F(CallWorkspaceTest, NullFromTheAllocatorIsAnEmptyWorkspaceWithItsReason) {
  use_scripted_allocator();
  script.hand_out = 0;
  CallWorkspace workspace(api_, state_, 4096, kStream);
  EXPECT_TRUE(workspace.empty());
  EXPECT_NE(workspace.why().find("returned NULL for 4096 bytes"), std::string::npos) << workspace.why();
  workspace.release();
  EXPECT_EQ(script.releases, 0);
}

TEST_F(CallWorkspaceTest, MisalignedMemoryIsGivenBackAtOnceAndNotUsed) {
  use_scripted_allocator();
  script.hand_out = 0x100010;
  CallWorkspace workspace(api_, state_, 4096, kStream);
  EXPECT_TRUE(workspace.empty());
  EXPECT_EQ(script.releases, 1);
  EXPECT_EQ(script.released, 0x100010u);
  EXPECT_NE(workspace.why().find("256-byte aligned"), std::string::npos) << workspace.why();
}

TEST_F(CallWorkspaceTest, WithoutAnAllocatorThePoolServesTheCallInStreamOrder) {
  {
    CallWorkspace workspace(api_, state_, 4096, kStream);
    ASSERT_FALSE(workspace.empty());
    EXPECT_EQ(workspace.address(), 0x200000u);
    EXPECT_EQ(script.stream, kStream);
    workspace.release();
  }
  EXPECT_EQ(script.pool_allocations, 1);
  EXPECT_EQ(script.pool_frees, 1);
  EXPECT_EQ(script.allocations, 0);
}

TEST_F(CallWorkspaceTest, APoolThatCannotAllocateIsAnEmptyWorkspaceWithTheDriversError) {
  script.pool_result = CUDA_ERROR_OUT_OF_MEMORY;
  CallWorkspace workspace(api_, state_, 4096, kStream);
  EXPECT_TRUE(workspace.empty());
  EXPECT_NE(workspace.why().find("cuMemAllocFromPoolAsync"), std::string::npos) << workspace.why();
  EXPECT_EQ(script.pool_frees, 0);
}

TEST_F(CallWorkspaceTest, AFailedFreeIsReportedByReleaseOnly) {
  script.free_result = CUDA_ERROR_INVALID_VALUE;
  CallWorkspace workspace(api_, state_, 4096, kStream);
  ASSERT_FALSE(workspace.empty());
  EXPECT_THROW(workspace.release(), Failure);
  EXPECT_EQ(script.pool_frees, 1);
}

}  // namespace

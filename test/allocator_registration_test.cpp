// Host-only: registering the default call's workspace allocator.
#include <gtest/gtest.h>

#include <string>

#include "scatterptx/scatterptx.h"

namespace {

void* never_allocate(size_t, CUstream, void*) { return nullptr; }
void never_release(void*, size_t, CUstream, void*) {}

TEST(AllocatorRegistration, BothFunctionsAreRequired) {
  scatterptx_allocator half{&never_allocate, nullptr, nullptr};
  EXPECT_EQ(scatterptx_set_allocator(&half), SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(scatterptx_last_error_message()).find("allocator->release"), std::string::npos)
      << scatterptx_last_error_message();
  half = scatterptx_allocator{nullptr, &never_release, nullptr};
  EXPECT_EQ(scatterptx_set_allocator(&half), SCATTERPTX_ERROR_INVALID_ARGUMENT);
}

TEST(AllocatorRegistration, AnAllocatorAndThePoolAgainAreAccepted) {
  const scatterptx_allocator allocator{&never_allocate, &never_release, nullptr};
  EXPECT_EQ(scatterptx_set_allocator(&allocator), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
  EXPECT_EQ(scatterptx_set_allocator(nullptr), SCATTERPTX_SUCCESS) << scatterptx_last_error_message();
}

TEST(AllocatorRegistration, OutOfMemoryHasItsName) {
  EXPECT_STREQ(scatterptx_status_name(SCATTERPTX_ERROR_OUT_OF_MEMORY), "SCATTERPTX_ERROR_OUT_OF_MEMORY");
}

}  // namespace

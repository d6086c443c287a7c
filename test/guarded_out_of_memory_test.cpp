// Host-only, in a program of its own: the global operator new here can be
// told to fail, so that keeping a call's error message runs out of memory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>
#include <utility>

#include "errors.hpp"

namespace {
thread_local bool allocations_fail = false;
}  // namespace

void* operator new(std::size_t bytes) {
  if (allocations_fail) throw std::bad_alloc();
  if (void* memory = std::malloc(bytes != 0 ? bytes : 1)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

namespace {

using scatterptx::detail::Failure;
using scatterptx::detail::guarded;
using scatterptx::detail::last_error_message_cstr;

TEST(GuardedOutOfMemory, AMessageThatCannotBeKeptGivesAFixedOneAndTheStatus) {
  // Longer than any message kept so far on this thread: keeping it must allocate.
  Failure failure(SCATTERPTX_ERROR_INVALID_ARGUMENT, std::string(100000, 'x'));
  const scatterptx_status status = guarded([&] {
    allocations_fail = true;
    throw std::move(failure);
  });
  allocations_fail = false;
  EXPECT_EQ(status, SCATTERPTX_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(last_error_message_cstr(), "out of host memory while keeping this call's error message");

  EXPECT_EQ(guarded([] {}), SCATTERPTX_SUCCESS);
  EXPECT_STREQ(last_error_message_cstr(), "") << "a success after it reads as one";
}

}  // namespace

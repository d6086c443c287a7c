// Host-only: what guarded() turns a body's outcome into at the C boundary.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

#include "errors.hpp"

namespace {

using scatterptx::detail::fail;
using scatterptx::detail::guarded;
using scatterptx::detail::last_error_message_cstr;

TEST(Guarded, AFailureKeepsItsStatusAndMessage) {
  EXPECT_EQ(guarded([] { fail(SCATTERPTX_ERROR_NO_CONTEXT, "no context here"); }), SCATTERPTX_ERROR_NO_CONTEXT);
  EXPECT_STREQ(last_error_message_cstr(), "no context here");
}

TEST(Guarded, ASuccessClearsTheMessage) {
  (void)guarded([] { fail(SCATTERPTX_ERROR_INVALID_ARGUMENT, "before"); });
  EXPECT_EQ(guarded([] {}), SCATTERPTX_SUCCESS);
  EXPECT_STREQ(last_error_message_cstr(), "");
}

TEST(Guarded, OtherExceptionsAreInternalErrorsNamedByWhat) {
  EXPECT_EQ(guarded([] { throw std::bad_alloc(); }), SCATTERPTX_ERROR_DRIVER);
  EXPECT_EQ(std::string(last_error_message_cstr()), std::string("internal error: ") + std::bad_alloc().what());
  EXPECT_EQ(guarded([] { throw std::runtime_error("odd"); }), SCATTERPTX_ERROR_DRIVER);
  EXPECT_STREQ(last_error_message_cstr(), "internal error: odd");
  EXPECT_EQ(guarded([] { throw 7; }), SCATTERPTX_ERROR_DRIVER);
  EXPECT_STREQ(last_error_message_cstr(), "internal error: unknown exception");
}

}  // namespace

// Errors inside the library: one exception type carrying a status and a
// message, turned into the C ABI's status plus a thread-local message at the
// API boundary (guarded()).
#pragma once

#include <cuda.h>

#include <exception>
#include <string>
#include <utility>

#include "driver_api.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx::detail {

class Failure : public std::exception {
 public:
  Failure(scatterptx_status status, std::string message)
      : status_(status), message_(std::move(message)) {}
  scatterptx_status status() const noexcept { return status_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  scatterptx_status status_;
  std::string message_;
};

[[noreturn]] void fail(scatterptx_status status, const std::string& message);
[[noreturn]] inline void invalid_argument(const std::string& message) {
  fail(SCATTERPTX_ERROR_INVALID_ARGUMENT, message);
}

// Throws SCATTERPTX_ERROR_DRIVER naming the call, unless result is success.
void check_driver(const DriverApi& api, const char* call, CUresult result);

// The loaded driver, or a NO_DRIVER failure saying why.
const DriverApi& require_driver();

// Keeps prefix + message for scatterptx_last_error_message(); without host
// memory for it, a fixed message instead (nothing may throw on the way out).
void set_last_error_message(const char* prefix, const char* message) noexcept;
const char* last_error_message_cstr();

// Runs body; returns SUCCESS, or the failure's status with its message kept
// for scatterptx_last_error_message(). Nothing escapes into C callers, a
// std::bad_alloc included.
template <typename Body>
scatterptx_status guarded(Body&& body) noexcept {
  try {
    body();
    set_last_error_message("", "");
    return SCATTERPTX_SUCCESS;
  } catch (const Failure& failure) {
    set_last_error_message("", failure.what());
    return failure.status();
  } catch (const std::exception& error) {
    set_last_error_message("internal error: ", error.what());
    return SCATTERPTX_ERROR_DRIVER;
  } catch (...) {
    set_last_error_message("internal error: ", "unknown exception");
    return SCATTERPTX_ERROR_DRIVER;
  }
}

}  // namespace scatterptx::detail

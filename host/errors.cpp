#include "errors.hpp"

namespace scatterptx::detail {
namespace {
thread_local std::string last_error_message;
// Set when the message could not be kept (no host memory for it).
thread_local const char* message_not_kept = nullptr;
}

void fail(scatterptx_status status, const std::string& message) { throw Failure(status, message); }

void check_driver(const DriverApi& api, const char* call, CUresult result) {
  if (result != CUDA_SUCCESS) fail(SCATTERPTX_ERROR_DRIVER, describe_driver_error(api, call, result));
}

const DriverApi& require_driver() {
  std::string why_not;
  const DriverApi* api = driver_api(&why_not);
  if (api == nullptr) fail(SCATTERPTX_ERROR_NO_DRIVER, why_not);
  return *api;
}

void set_last_error_message(const char* prefix, const char* message) noexcept {
  try {
    last_error_message.assign(prefix);
    last_error_message.append(message);
    message_not_kept = nullptr;
  } catch (...) {
    last_error_message.clear();
    message_not_kept = "out of host memory while keeping this call's error message";
  }
}

const char* last_error_message_cstr() {
  return message_not_kept != nullptr ? message_not_kept : last_error_message.c_str();
}

}  // namespace scatterptx::detail

#include "errors.hpp"

namespace scatterptx::detail {
namespace {
thread_local std::string last_error_message;
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

void set_last_error_message(const std::string& message) { last_error_message = message; }

const char* last_error_message_cstr() { return last_error_message.c_str(); }

}  // namespace scatterptx::detail

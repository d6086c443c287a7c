#include "driver.hpp"

namespace scatterptx_bench {
namespace {
const DriverApi* g_driver = nullptr;
}  // namespace

const DriverApi* load_driver(std::string* why_not) {
  g_driver = scatterptx::detail::driver_api(why_not);
  return g_driver;
}

const DriverApi& driver() {
  if (g_driver == nullptr) throw BenchError("internal error: driver used before load_driver()");
  return *g_driver;
}

void check_cu(CUresult result, const char* call) {
  if (result != CUDA_SUCCESS) {
    throw BenchError(scatterptx::detail::describe_driver_error(driver(), call, result));
  }
}

std::string describe_scatterptx_failure(scatterptx_status status, const char* call) {
  const char* message = scatterptx_last_error_message();
  return std::string(call) + ": " + scatterptx_status_name(status) + ": " +
         (message != nullptr && message[0] != '\0' ? message : "(no message)");
}

void check_scatterptx(scatterptx_status status, const char* call) {
  if (status != SCATTERPTX_SUCCESS) throw BenchError(describe_scatterptx_failure(status, call));
}

}  // namespace scatterptx_bench

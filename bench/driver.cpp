#include "driver.hpp"

namespace scatterptx_bench {

std::string describe_scatterptx_failure(scatterptx_status status, const char* call) {
  const char* message = scatterptx_last_error_message();
  return std::string(call) + ": " + scatterptx_status_name(status) + ": " +
         (message != nullptr && message[0] != '\0' ? message : "(no message)");
}

void check_scatterptx(scatterptx_status status, const char* call) {
  if (status != SCATTERPTX_SUCCESS) throw BenchError(describe_scatterptx_failure(status, call));
}

}  // namespace scatterptx_bench

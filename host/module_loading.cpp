#include "module_loading.hpp"

#include <cstdio>
#include <cstring>
#include <string>

#include "errors.hpp"
#include "kernel_images.hpp"

namespace scatterptx::detail {
namespace {

constexpr std::size_t kJitLogBytes = 8192;  // per log; the driver truncates beyond it

struct LoadAttempt {
  CUresult result = CUDA_SUCCESS;
  std::string log;  // the error log, then the info log
  float wall_ms = 0;
};

// A log buffer's text without its trailing newlines; never reads past the
// buffer, terminated or not.
std::string log_text(const char* buffer, std::size_t size) {
  std::string text(buffer, strnlen(buffer, size));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// One cuModuleLoadDataEx with the JIT's logs and wall time captured.
LoadAttempt load_image(const DriverApi& api, const void* image, CUmodule* module) {
  char info[kJitLogBytes] = {};
  char error[kJitLogBytes] = {};
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME};
  void* values[] = {info, reinterpret_cast<void*>(sizeof(info)), error, reinterpret_cast<void*>(sizeof(error)),
                    nullptr};
  constexpr unsigned kOptions = sizeof(options) / sizeof(options[0]);
  LoadAttempt attempt;
  attempt.result = api.cuModuleLoadDataEx(module, image, kOptions, options, values);
  // The driver writes its outputs over the option values themselves: the
  // wall time as a float in the first bytes of its value (the log sizes as
  // the bytes written, unused here: the logs are read up to their NUL).
  static_assert(sizeof(float) <= sizeof(void*));
  std::memcpy(&attempt.wall_ms, &values[kOptions - 1], sizeof(float));
  const std::string error_log = log_text(error, sizeof(error));
  const std::string info_log = log_text(info, sizeof(info));
  attempt.log = error_log + (!error_log.empty() && !info_log.empty() ? "\n" : "") + info_log;
  return attempt;
}

std::string describe_failed(const DriverApi& api, const char* image_kind, const LoadAttempt& attempt) {
  return describe_load_attempt(image_kind, describe_driver_error(api, "cuModuleLoadDataEx", attempt.result),
                               attempt.log);
}

}  // namespace

ModuleSource module_source_from_env(const char* value) {
  if (value == nullptr || std::strcmp(value, "") == 0 || std::strcmp(value, "0") == 0) {
    return ModuleSource::cubin_then_ptx;
  }
  if (std::strcmp(value, "1") == 0) return ModuleSource::ptx_only;
  invalid_argument(std::string(kForcePtxVariable) + "=\"" + value +
                   "\": set it to 1 to load every kernel from its PTX through the driver's JIT, or to 0 or "
                   "nothing for the sm_90 cubins");
}

std::size_t ModuleLoads::ptx_count() const {
  std::size_t count = 0;
  for (bool ptx : from_ptx) count += ptx ? 1 : 0;
  return count;
}

double ModuleLoads::total_wall_ms() const {
  double total = 0;
  for (float ms : wall_ms) total += ms;
  return total;
}

std::string ModuleLoads::describe() const {
  std::size_t longest = 0;
  for (std::size_t i = 1; i < kKernelVariantCount; ++i) {
    if (wall_ms[i] > wall_ms[longest]) longest = i;
  }
  char times[160];
  std::snprintf(times, sizeof(times), "JIT wall time %.1f ms in all, longest %.1f ms (%s)", total_wall_ms(),
                static_cast<double>(wall_ms[longest]), kKernelVariants[longest].name);
  const std::size_t ptx = ptx_count();
  return std::to_string(kKernelVariantCount) + " modules: " + std::to_string(ptx) + " from PTX through the JIT, " +
         std::to_string(kKernelVariantCount - ptx) + " from sm_90 cubins; " + times;
}

std::string describe_load_attempt(const char* image_kind, const std::string& driver_error, const std::string& log) {
  return std::string(image_kind) + ": " + driver_error + (log.empty() ? "" : "; JIT log: " + log);
}

CUmodule load_variant_module(const DriverApi& api, std::size_t variant, ModuleSource source, ModuleLoads& loads) {
  const KernelImage& image = kKernelImages[variant];
  const std::string name = kKernelVariants[variant].name;
  CUmodule module = nullptr;
  std::string cubin_failure;
  if (source == ModuleSource::cubin_then_ptx) {
    const LoadAttempt cubin = load_image(api, image.cubin, &module);
    if (cubin.result == CUDA_SUCCESS) {
      loads.from_ptx[variant] = false;
      loads.wall_ms[variant] = cubin.wall_ms;
      return module;
    }
    cubin_failure = describe_failed(api, "cubin", cubin) + "; ";
  }
  const LoadAttempt ptx = load_image(api, image.ptx, &module);
  if (ptx.result == CUDA_SUCCESS) {
    loads.from_ptx[variant] = true;
    loads.wall_ms[variant] = ptx.wall_ms;
    return module;
  }
  const std::string forced = source == ModuleSource::ptx_only ? std::string(" (") + kForcePtxVariable + "=1)" : "";
  fail(SCATTERPTX_ERROR_DRIVER,
       "cannot load kernel " + name + forced + ": " + cubin_failure + describe_failed(api, "PTX JIT", ptx));
}

}  // namespace scatterptx::detail

#include "driver_api.hpp"

#include <dlfcn.h>

#include <mutex>

namespace scatterptx::detail {
namespace {

// The ABI version asked of cuGetProcAddress: CUDA 12.0 is the first with
// cuTensorMapEncodeTiled and cuCtxGetId, and sm_90 needs a 12.x driver anyway.
constexpr int kDriverAbiVersion = 12000;

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

struct LoadedDriver {
  DriverApi api;
  bool ok = false;
  std::string why_not;
};

LoadedDriver load_driver() {
  LoadedDriver loaded;
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    loaded.why_not = std::string("no CUDA driver: dlopen(\"libcuda.so.1\") failed: ") +
                     (reason != nullptr ? reason : "unknown reason");
    return loaded;
  }
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    loaded.why_not = "CUDA driver too old: libcuda.so.1 has no cuGetProcAddress_v2 (need 12.0+)";
    return loaded;
  }
#define SCATTERPTX_RESOLVE_ENTRY(name)                                                        \
  {                                                                                           \
    void* entry = nullptr;                                                                    \
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;              \
    if (get_proc(#name, &entry, kDriverAbiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=    \
            CUDA_SUCCESS ||                                                                   \
        entry == nullptr) {                                                                   \
      loaded.why_not = "CUDA driver lacks " #name " (ABI 12.0); update the driver";           \
      return loaded;                                                                          \
    }                                                                                         \
    loaded.api.name = reinterpret_cast<decltype(loaded.api.name)>(entry);                     \
  }
  SCATTERPTX_DRIVER_ENTRY_POINTS(SCATTERPTX_RESOLVE_ENTRY)
#undef SCATTERPTX_RESOLVE_ENTRY

  const CUresult init = loaded.api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    loaded.why_not = "no usable CUDA driver: " + describe_driver_error(loaded.api, "cuInit", init);
    return loaded;
  }
  loaded.ok = true;
  return loaded;  // the library handle stays open for the life of the process
}

}  // namespace

const DriverApi* driver_api(std::string* why_not) {
  static const LoadedDriver loaded = load_driver();  // thread-safe static init
  if (!loaded.ok) {
    if (why_not != nullptr) *why_not = loaded.why_not;
    return nullptr;
  }
  return &loaded.api;
}

std::string describe_driver_error(const DriverApi& api, const char* call, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName == nullptr || api.cuGetErrorName(result, &name) != CUDA_SUCCESS) {
    name = nullptr;
  }
  if (api.cuGetErrorString == nullptr || api.cuGetErrorString(result, &text) != CUDA_SUCCESS) {
    text = nullptr;
  }
  std::string message = std::string(call) + " failed: ";
  message += name != nullptr ? name : ("CUresult " + std::to_string(static_cast<int>(result)));
  if (text != nullptr) message += std::string(" (") + text + ")";
  return message;
}

}  // namespace scatterptx::detail

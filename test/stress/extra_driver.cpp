#include "extra_driver.hpp"

#include <dlfcn.h>

#include <string>

#include "gpu_resources.hpp"

namespace scatterptx_stress {
namespace {

using scatterptx_testing::DriverError;
using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

template <typename Entry>
void resolve(GetProcAddress get_proc, const char* name, int abi_version, Entry* entry) {
  void* found = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult result = get_proc(name, &found, abi_version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  scatterptx_testing::check_driver(result, (std::string("cuGetProcAddress(") + name + ")").c_str());
  if (found == nullptr) {
    throw DriverError(std::string("the CUDA driver lacks ") + name + " (ABI " + std::to_string(abi_version) + ")");
  }
  *entry = reinterpret_cast<Entry>(found);
}

ExtraDriver load_extra_driver() {
  scatterptx_testing::driver();  // throws DriverError when there is no driver
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) throw DriverError("libcuda.so.1 is not loaded");
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  dlclose(library);  // drops only the reference taken here: the library keeps its own
  if (get_proc == nullptr) throw DriverError("libcuda.so.1 has no cuGetProcAddress_v2");
  ExtraDriver api;
  resolve(get_proc, "cuCtxCreate", 3020, &api.cuCtxCreate);
  resolve(get_proc, "cuCtxDestroy", 4000, &api.cuCtxDestroy);
  resolve(get_proc, "cuMemcpyHtoDAsync", 3020, &api.cuMemcpyHtoDAsync);
  resolve(get_proc, "cuStreamWaitEvent", 12000, &api.cuStreamWaitEvent);
  resolve(get_proc, "cuDeviceGraphMemTrim", 11040, &api.cuDeviceGraphMemTrim);
  resolve(get_proc, "cuMemPoolGetAttribute", 11020, &api.cuMemPoolGetAttribute);
  return api;
}

}  // namespace

const ExtraDriver& extra_driver() {
  static const ExtraDriver api = load_extra_driver();  // thread-safe, once
  return api;
}

}  // namespace scatterptx_stress

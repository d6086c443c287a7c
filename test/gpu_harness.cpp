#include "gpu_harness.hpp"


namespace scatterptx_test {
namespace {

struct GpuEnvironment {
  const DriverApi* api = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  GpuStatus status;
};

GpuEnvironment open_gpu_environment() {
  GpuEnvironment env;
  std::string why_not;
  env.api = scatterptx::detail::driver_api(&why_not);
  if (env.api == nullptr) {
    env.status = {GpuStatus::State::kSkip, why_not};  // says "no CUDA driver: ..." or why
    return env;
  }
  const DriverApi& api = *env.api;
  const auto broken = [&](const char* call, CUresult result) {
    env.status = {GpuStatus::State::kBroken,
                  scatterptx::detail::describe_driver_error(api, call, result)};
    return env;
  };
  int count = 0;
  if (CUresult r = api.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    return broken("cuDeviceGetCount", r);
  }
  if (count == 0) {
    env.status = {GpuStatus::State::kSkip, "no CUDA device"};
    return env;
  }
  if (CUresult r = api.cuDeviceGet(&env.device, 0); r != CUDA_SUCCESS) {
    return broken("cuDeviceGet", r);
  }
  int major = 0;
  int minor = 0;
  if (CUresult r = api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                            env.device);
      r != CUDA_SUCCESS) {
    return broken("cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)", r);
  }
  if (CUresult r = api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                            env.device);
      r != CUDA_SUCCESS) {
    return broken("cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)", r);
  }
  if (major < 9) {
    env.status = {GpuStatus::State::kSkip, "device 0 has compute capability " +
                                               std::to_string(major) + "." +
                                               std::to_string(minor) + ", below 9.0"};
    return env;
  }
  // Retained for the life of the process: releasing it at exit would race
  // with static destructors in the library.
  if (CUresult r = api.cuDevicePrimaryCtxRetain(&env.context, env.device); r != CUDA_SUCCESS) {
    return broken("cuDevicePrimaryCtxRetain", r);
  }
  env.status = {GpuStatus::State::kReady, ""};
  return env;
}

const GpuEnvironment& gpu_environment() {
  static const GpuEnvironment env = open_gpu_environment();  // thread-safe, once
  return env;
}

}  // namespace

GpuStatus make_gpu_current() {
  const GpuEnvironment& env = gpu_environment();
  if (env.status.state != GpuStatus::State::kReady) return env.status;
  if (CUresult r = env.api->cuCtxSetCurrent(env.context); r != CUDA_SUCCESS) {
    return {GpuStatus::State::kBroken,
            scatterptx::detail::describe_driver_error(*env.api, "cuCtxSetCurrent", r)};
  }
  return env.status;
}

CUdevice gpu_device() { return gpu_environment().device; }
CUcontext gpu_context() { return gpu_environment().context; }

void upload(CUdeviceptr destination, const void* source, size_t bytes) {
  if (bytes == 0) return;
  scatterptx_testing::copy_to_device(destination, source, bytes);
  synchronize_gpu();
}

void download(void* destination, CUdeviceptr source, size_t bytes) {
  synchronize_gpu();
  if (bytes == 0) return;
  scatterptx_testing::copy_to_host(destination, source, bytes);
}

void fill_device_bytes(CUdeviceptr destination, unsigned char value, size_t bytes) {
  if (bytes == 0) return;
  DRIVER_CALL(cuMemsetD8, destination, value, bytes);
  synchronize_gpu();
}

void synchronize_gpu() { check_driver(driver().cuCtxSynchronize(), "cuCtxSynchronize"); }

size_t free_device_memory() {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  DRIVER_CALL(cuMemGetInfo, &free_bytes, &total_bytes);
  return free_bytes;
}

int device_attribute(CUdevice_attribute attribute) {
  int value = 0;
  DRIVER_CALL(cuDeviceGetAttribute, &value, attribute, gpu_device());
  return value;
}

}  // namespace scatterptx_test

#include "device.hpp"

#include <cstdio>
#include <string>

#include "driver.hpp"

namespace scatterptx_bench {
namespace {

// The name is only printed, so a failure here is reported in the name
// itself rather than stopping the run.
std::string query_device_name(CUdevice device) {
  char name[256] = {};
  const CUresult result = driver().cuDeviceGetName(name, static_cast<int>(sizeof(name)), device);
  if (result != CUDA_SUCCESS) {
    return "(name unavailable: " +
           scatterptx::detail::describe_driver_error(driver(), "cuDeviceGetName", result) + ")";
  }
  return name;
}

int device_attribute(CUdevice device, CUdevice_attribute attribute, const char* what) {
  int value = 0;
  const CUresult result = driver().cuDeviceGetAttribute(&value, attribute, device);
  if (result != CUDA_SUCCESS) {
    throw BenchError(
        scatterptx::detail::describe_driver_error(driver(), "cuDeviceGetAttribute", result) +
        " (" + what + ")");
  }
  return value;
}

}  // namespace

std::string format_driver_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

DeviceProbe probe_device(int ordinal) {
  DeviceProbe probe;
  std::string why_not;
  if (scatterptx::detail::driver_api(&why_not) == nullptr) {
    probe.why_not = why_not;
    return probe;
  }
  const DriverApi& api = driver();
  int count = 0;
  const CUresult counted = api.cuDeviceGetCount(&count);
  if (counted != CUDA_SUCCESS) {
    probe.why_not = scatterptx::detail::describe_driver_error(api, "cuDeviceGetCount", counted);
    return probe;
  }
  if (count == 0) {
    probe.why_not = "the driver reports no CUDA device";
    return probe;
  }
  if (ordinal < 0 || ordinal >= count) {
    probe.why_not = "device " + std::to_string(ordinal) + " requested but the driver reports " +
                    std::to_string(count) + " device(s)";
    return probe;
  }

  DeviceInfo& info = probe.info;
  info.ordinal = ordinal;
  check_driver(api.cuDeviceGet(&info.device, ordinal), "cuDeviceGet");
  check_driver(api.cuDriverGetVersion(&info.driver_version), "cuDriverGetVersion");
  info.name = query_device_name(info.device);
  info.compute_major = device_attribute(info.device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                        "compute capability major");
  info.compute_minor = device_attribute(info.device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                        "compute capability minor");
  info.sm_count =
      device_attribute(info.device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
  info.l2_bytes = device_attribute(info.device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size");

  if (info.compute_major < 9) {
    probe.why_not = "device " + std::to_string(ordinal) + " (" + info.name + ") is sm_" +
                    std::to_string(info.compute_major) + std::to_string(info.compute_minor) +
                    "; libscatterptx needs sm_90 or newer";
    return probe;
  }
  probe.usable = true;
  return probe;
}

PrimaryContext::PrimaryContext(CUdevice device) : device_(device) {
  check_driver(driver().cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  const CUresult result = driver().cuCtxSetCurrent(context_);
  if (result != CUDA_SUCCESS) {
    driver().cuDevicePrimaryCtxRelease(device_);
    check_driver(result, "cuCtxSetCurrent");
  }
}

PrimaryContext::~PrimaryContext() {
  // Destructors must not throw: report and carry on.
  CUresult result = driver().cuCtxSetCurrent(nullptr);
  if (result == CUDA_SUCCESS) result = driver().cuDevicePrimaryCtxRelease(device_);
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr, "scatterptx-bench: warning: %s\n",
                 scatterptx::detail::describe_driver_error(driver(), "cuDevicePrimaryCtxRelease",
                                                           result)
                     .c_str());
  }
}

}  // namespace scatterptx_bench

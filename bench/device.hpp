// Finding the GPU to measure on and making its primary context current.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

namespace scatterptx_bench {

struct DeviceInfo {
  int ordinal = 0;
  CUdevice device = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int driver_version = 0;  // as cuDriverGetVersion reports it: 13000 is 13.0
  size_t total_memory_bytes = 0;  // filled once a context is current
};

// Either a usable sm_90+ device, or the one-line reason there is none.
struct DeviceProbe {
  bool usable = false;
  std::string why_not;
  DeviceInfo info;
};

// Loads the driver and inspects device `ordinal`. Never throws for a missing
// driver, device or a too-old GPU: those come back as why_not.
DeviceProbe probe_device(int ordinal);

// "13.0" for 13000.
std::string format_driver_version(int version);

// Retains the device's primary context and makes it current on this thread
// for the object's lifetime, so the library finds it as "the current context".
class PrimaryContext {
 public:
  explicit PrimaryContext(CUdevice device);
  ~PrimaryContext();
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

 private:
  CUdevice device_;
  CUcontext context_ = nullptr;
};

}  // namespace scatterptx_bench

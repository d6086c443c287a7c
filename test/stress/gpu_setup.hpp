// The GPU a stress run uses: whether there is a usable one (sm_90+), and the
// two contexts its calls run in: the device's primary context and a second
// one made with cuCtxCreate, each with its own library state.
#pragma once

#include <cuda.h>

#include <string>

#include "memory_usage.hpp"
#include "run_shared.hpp"

namespace scatterptx_stress {

struct GpuProbe {
  bool usable = false;
  std::string why_not;  // when not usable: no driver, no such device, below sm_90
  CUdevice device = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
};

// Never throws for a missing driver or device or a too-old GPU.
GpuProbe probe_gpu(int ordinal);

class StressContexts {
 public:
  // Retains the primary context (for the life of the process, as
  // test/gpu_harness.cpp does: the library keeps state for it until exit),
  // creates the second, leaves the primary current on the calling thread.
  explicit StressContexts(CUdevice device);
  ~StressContexts();
  StressContexts(const StressContexts&) = delete;
  StressContexts& operator=(const StressContexts&) = delete;

  CUdevice device() const { return device_; }
  CUcontext get(int which) const { return contexts_[which]; }
  // Makes context `which` current on the calling thread.
  void make_current(int which) const;
  // Waits for every stream of both contexts.
  void synchronize_all() const;
  // Destroys the created context, checked, with the library's state for it
  // still alive. No thread may use it afterwards.
  void close();

 private:
  CUdevice device_;
  CUcontext contexts_[kContexts] = {};
  bool closed_ = false;
};

// Waits for both contexts, trims the driver's cached graph memory, then
// reads device memory (the library's pools and graph memory apart) and RSS.
// Leaves the primary context current.
MemoryReading read_memory(const StressContexts& contexts);

}  // namespace scatterptx_stress

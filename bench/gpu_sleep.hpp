// A GPU sleep queued between the L2 flush and the start event (the "head
// start"): the host queues the timed call while the GPU still sleeps, so no
// host time of the call can land between the events. bench/compare.py does
// the same with torch.cuda._sleep.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace scatterptx_bench {

// About 100 us at the H200's 1.98 GHz: more than one call's host time, with
// room for a busy host. compare.py takes this default from the bench's JSON.
constexpr int64_t kDefaultHeadStartCycles = 200000;

// One thread spinning on %clock64 (bench/gpu_sleep.ptx, JIT-compiled when
// constructed).
class GpuSleep {
 public:
  GpuSleep();
  ~GpuSleep();
  GpuSleep(const GpuSleep&) = delete;
  GpuSleep& operator=(const GpuSleep&) = delete;

  // Enqueues a sleep of at least `cycles` SM clock cycles on stream.
  void enqueue(CUstream stream, uint64_t cycles) const;

 private:
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
};

}  // namespace scatterptx_bench

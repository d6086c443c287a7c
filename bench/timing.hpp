// Timing a stream operation with CUDA events, the same way for the copy and
// for scatter_add (and as bench/compare.py times every system): warm-up
// runs, then timed runs, each preceded by an L2 flush and a GPU sleep (the
// head start) outside the timed region; the median is the figure reported.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "driver.hpp"
#include "gpu_sleep.hpp"

namespace scatterptx_bench {

struct TimingConfig {
  int warmup_runs = 3;
  int timed_runs = 20;
};

struct TimingResult {
  std::vector<double> run_ms;  // in the order run
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
};

// Evicts the L2 by writing a buffer of twice its size, so every timed run
// starts from DRAM rather than from what the previous run left cached.
class L2Flusher {
 public:
  explicit L2Flusher(int64_t l2_bytes);
  void flush(CUstream stream);
  size_t bytes() const { return buffer_.size(); }

 private:
  DeviceBuffer buffer_;
  unsigned char value_ = 0;  // changes every flush, so no write is a repeat
};

// Owns the start/stop events of a timed run and the head-start sleep.
class EventTimer {
 public:
  // head_start_cycles: the GPU sleep queued after each flush; 0: none.
  explicit EventTimer(int64_t head_start_cycles);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Runs operation(stream) config.warmup_runs times, then config.timed_runs
  // times between two events, flushing L2 before each run. operation must
  // only enqueue work on stream (and check its own result). after_run, when
  // given, is called after every run, warm-up or timed, once the stream has
  // finished it, outside the timed region (to free what the run made).
  TimingResult time(CUstream stream, L2Flusher& flusher, const TimingConfig& config,
                    const std::function<void(CUstream)>& operation,
                    const std::function<void()>& after_run = {});

 private:
  // The flush, then the head start, before every run.
  void prepare_run(CUstream stream, L2Flusher& flusher) const;

  uint64_t head_start_cycles_;
  std::unique_ptr<GpuSleep> sleep_;  // null without a head start
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
};

// Median (mean of the middle two for an even count), min and max of run_ms.
TimingResult summarise_runs(std::vector<double> run_ms);

}  // namespace scatterptx_bench

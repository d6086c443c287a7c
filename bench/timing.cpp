#include "timing.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "driver.hpp"

namespace scatterptx_bench {

L2Flusher::L2Flusher(int64_t l2_bytes) : buffer_(static_cast<size_t>(2 * l2_bytes)) {}

void L2Flusher::flush(CUstream stream) {
  ++value_;
  check_driver(driver().cuMemsetD8Async(buffer_.address(), value_, buffer_.size(), stream),
           "cuMemsetD8Async");
}

EventTimer::EventTimer(int64_t head_start_cycles)
    : head_start_cycles_(static_cast<uint64_t>(head_start_cycles > 0 ? head_start_cycles : 0)) {
  if (head_start_cycles_ > 0) sleep_ = std::make_unique<GpuSleep>();
  check_driver(driver().cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
  const CUresult result = driver().cuEventCreate(&stop_, CU_EVENT_DEFAULT);
  if (result != CUDA_SUCCESS) {
    driver().cuEventDestroy(start_);
    check_driver(result, "cuEventCreate");
  }
}

EventTimer::~EventTimer() {
  for (CUevent event : {start_, stop_}) {
    const CUresult result = driver().cuEventDestroy(event);
    if (result != CUDA_SUCCESS) {
      std::fprintf(stderr, "scatterptx-bench: warning: %s\n",
                   scatterptx::detail::describe_driver_error(driver(), "cuEventDestroy", result)
                       .c_str());
    }
  }
}

TimingResult EventTimer::time(CUstream stream, L2Flusher& flusher, const TimingConfig& config,
                              const std::function<void(CUstream)>& operation,
                              const std::function<void()>& after_run) {
  const DriverApi& api = driver();
  for (int run = 0; run < config.warmup_runs; ++run) {
    prepare_run(stream, flusher);
    operation(stream);
    if (after_run) {
      check_driver(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
      after_run();
    }
  }
  check_driver(api.cuStreamSynchronize(stream), "cuStreamSynchronize");

  std::vector<double> run_ms;
  run_ms.reserve(static_cast<size_t>(config.timed_runs));
  for (int run = 0; run < config.timed_runs; ++run) {
    // The flush and the sleep are enqueued before the start event, so they
    // are not timed; they keep the GPU busy while the host enqueues the
    // operation, so the timed region holds no host launch gap.
    prepare_run(stream, flusher);
    check_driver(api.cuEventRecord(start_, stream), "cuEventRecord");
    operation(stream);
    check_driver(api.cuEventRecord(stop_, stream), "cuEventRecord");
    check_driver(api.cuEventSynchronize(stop_), "cuEventSynchronize");
    float elapsed_ms = 0;
    check_driver(api.cuEventElapsedTime(&elapsed_ms, start_, stop_), "cuEventElapsedTime");
    run_ms.push_back(elapsed_ms);
    if (after_run) after_run();
  }
  return summarise_runs(std::move(run_ms));
}

void EventTimer::prepare_run(CUstream stream, L2Flusher& flusher) const {
  flusher.flush(stream);
  if (sleep_) sleep_->enqueue(stream, head_start_cycles_);
}

TimingResult summarise_runs(std::vector<double> run_ms) {
  TimingResult result;
  result.run_ms = run_ms;
  if (run_ms.empty()) return result;
  std::sort(run_ms.begin(), run_ms.end());
  const size_t n = run_ms.size();
  result.median_ms = n % 2 == 1 ? run_ms[n / 2] : 0.5 * (run_ms[n / 2 - 1] + run_ms[n / 2]);
  result.min_ms = run_ms.front();
  result.max_ms = run_ms.back();
  return result;
}

}  // namespace scatterptx_bench

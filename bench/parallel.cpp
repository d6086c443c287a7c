#include "parallel.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace scatterptx_bench {

void parallel_for(size_t count, const std::function<void(size_t, size_t)>& body) {
  // Below this a thread costs more to start than its block takes to fill.
  constexpr size_t kMinimumBlock = size_t{1} << 16;
  const size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const size_t blocks = std::max<size_t>(1, std::min(hardware, count / kMinimumBlock));
  if (blocks == 1) {
    body(0, count);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> workers;
  workers.reserve(blocks);
  for (size_t b = 0; b < blocks; ++b) {
    const size_t begin = count * b / blocks;
    const size_t end = count * (b + 1) / blocks;
    workers.emplace_back([&, begin, end] {
      try {
        body(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace scatterptx_bench

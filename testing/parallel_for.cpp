#include "parallel_for.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace scatterptx_testing {

void parallel_for(int64_t begin, int64_t end, int64_t min_per_thread,
                  const std::function<void(int64_t, int64_t)>& body) {
  const int64_t count = end - begin;
  if (count <= 0) return;
  const int64_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const int64_t blocks = std::max<int64_t>(1, std::min(hardware, count / std::max<int64_t>(1, min_per_thread)));
  if (blocks == 1) {
    body(begin, end);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(blocks));
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t first = begin + count * b / blocks;
    const int64_t last = begin + count * (b + 1) / blocks;
    workers.emplace_back([&, first, last] {
      try {
        body(first, last);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace scatterptx_testing

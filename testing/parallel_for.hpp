// Splitting host-side work (input generation, the reference) over every core.
#pragma once

#include <cstdint>
#include <functional>

namespace scatterptx_testing {

// Calls body(first, last) on disjoint contiguous blocks covering [begin, end),
// one per hardware thread but none smaller than min_per_thread (a thread
// costs more to start than a tiny block takes), and waits for all. An
// exception thrown by a block is rethrown here.
void parallel_for(int64_t begin, int64_t end, int64_t min_per_thread,
                  const std::function<void(int64_t first, int64_t last)>& body);

}  // namespace scatterptx_testing

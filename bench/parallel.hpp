// Splitting host-side input generation over every core.
#pragma once

#include <cstddef>
#include <functional>

namespace scatterptx_bench {

// Calls body(begin, end) on disjoint contiguous blocks covering [0, count),
// one block per hardware thread (fewer for small counts), and waits for all.
// An exception thrown by a block is rethrown here.
void parallel_for(size_t count, const std::function<void(size_t begin, size_t end)>& body);

}  // namespace scatterptx_bench

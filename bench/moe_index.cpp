#include "moe_index.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>

#include "parallel_for.hpp"
#include "random_fill.hpp"

namespace scatterptx_bench {
namespace {

// A token's routing is a few draws: only large batches are worth a thread.
constexpr int64_t kMinimumTokens = int64_t{1} << 12;

}  // namespace

std::vector<int64_t> make_moe_index(int64_t tokens, int64_t top_k, int64_t experts, uint64_t seed) {
  if (tokens < 1 || top_k < 1 || top_k > experts) {
    throw std::invalid_argument("make_moe_index: needs tokens >= 1 and 1 <= top_k <= experts");
  }
  const size_t k = static_cast<size_t>(top_k);
  // choice[t * k + s]: the expert of token t's slot s.
  std::vector<int64_t> choice(static_cast<size_t>(tokens) * k);
  int64_t* chosen = choice.data();
  scatterptx_testing::parallel_for(0, tokens, kMinimumTokens, [=](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      // Each token draws from its own stream, so its routing does not depend
      // on how many draws the others rejected.
      const uint64_t token_seed = mix64(seed ^ static_cast<uint64_t>(t));
      int64_t* slots = chosen + static_cast<size_t>(t) * k;
      uint64_t draw = 0;
      for (size_t s = 0; s < k;) {
        const int64_t expert = static_cast<int64_t>(
            random_below(random_bits(token_seed, draw++), static_cast<uint64_t>(experts)));
        if (std::find(slots, slots + s, expert) == slots + s) slots[s++] = expert;
      }
    }
  });

  // Counting sort by expert; tokens stay ascending within each expert.
  std::vector<size_t> next_row(static_cast<size_t>(experts) + 1, 0);
  for (int64_t expert : choice) ++next_row[static_cast<size_t>(expert) + 1];
  for (size_t e = 1; e < next_row.size(); ++e) next_row[e] += next_row[e - 1];
  std::vector<int64_t> index(choice.size());
  for (size_t j = 0; j < choice.size(); ++j) {
    index[next_row[static_cast<size_t>(choice[j])]++] = static_cast<int64_t>(j / k);
  }
  return index;
}

}  // namespace scatterptx_bench

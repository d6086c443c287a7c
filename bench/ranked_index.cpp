#include "ranked_index.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "parallel_for.hpp"
#include "random_fill.hpp"

namespace scatterptx_bench {
namespace {

// Below this a thread costs more to start than its block takes to fill.
constexpr int64_t kMinimumBlock = int64_t{1} << 16;

// Names the stream that shuffles ranks onto targets, apart from the draws.
constexpr uint64_t kRankPermutationSalt = 0x7a2d5c3bu;

}  // namespace

void fill_ranked_index(int64_t* index, size_t count, int64_t targets, double rank_exponent,
                       uint64_t seed) {
  const size_t t = static_cast<size_t>(targets);
  std::vector<double> cumulative(t);
  double total = 0;
  for (size_t r = 0; r < t; ++r) {
    total += std::pow(static_cast<double>(r + 1), -rank_exponent);
    cumulative[r] = total;
  }
  std::vector<int64_t> target_of_rank(t);
  for (size_t r = 0; r < t; ++r) target_of_rank[r] = static_cast<int64_t>(r);
  shuffle(target_of_rank.data(), t, seed ^ kRankPermutationSalt);

  const double* cdf = cumulative.data();
  const int64_t* targets_by_rank = target_of_rank.data();
  scatterptx_testing::parallel_for(0, static_cast<int64_t>(count), kMinimumBlock, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      // 53 random bits: a double uniform in [0, total).
      const double u = static_cast<double>(random_bits(seed, i) >> 11) * 0x1.0p-53 * total;
      const size_t rank = std::min<size_t>(std::upper_bound(cdf, cdf + t, u) - cdf, t - 1);
      index[i] = targets_by_rank[rank];
    }
  });
}

}  // namespace scatterptx_bench

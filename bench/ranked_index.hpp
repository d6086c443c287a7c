// Indices whose targets' frequencies fall off as a power of their rank: a
// power-law graph's in-degrees, a vocabulary's Zipf-distributed ids.
//
// The target of rank r (1-based) is drawn with probability proportional to
// r^-rank_exponent, and ranks map to targets through a random permutation,
// so the hot targets lie anywhere in [0, T) and in no particular order.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scatterptx_bench {

// power_law: in-degree distribution P(degree = k) ~ k^-2.5, inside the 2-3
// range of web and social graphs. Expected degrees by rank r^(-1/(gamma-1))
// give that exponent (Chung and Lu's model of graphs with given degrees).
constexpr double kPowerLawDegreeExponent = 2.5;
constexpr double kPowerLawRankExponent = 1.0 / (kPowerLawDegreeExponent - 1.0);

// zipf: Zipf's law for word frequencies, frequency ~ 1 / rank.
constexpr double kZipfRankExponent = 1.0;

// count indices in [0, targets), each drawn independently as above;
// element i depends only on (seed, i), whatever the thread count.
void fill_ranked_index(int64_t* index, size_t count, int64_t targets, double rank_exponent,
                       uint64_t seed);

}  // namespace scatterptx_bench

// Fast reproducible random inputs, generated on every core.
//
// Counter-based: element i's value depends only on (seed, i), so a parallel
// fill draws exactly what a serial one would, whatever the thread count.
#pragma once

#include <cstddef>
#include <cstdint>

#include "scatterptx/scatterptx.h"

namespace scatterptx_bench {

// splitmix64's finaliser: a bijective 64-bit mix with full avalanche.
inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// 64 random bits for position `counter` of the stream named by `seed`.
inline uint64_t random_bits(uint64_t seed, uint64_t counter) {
  return mix64(seed + (counter + 1) * 0x9e3779b97f4a7c15ull);
}

// A value in [0, bound) from 64 random bits (Lemire's multiply-shift; the
// bias is below 2^-40 for every bound used here).
inline uint64_t random_below(uint64_t bits, uint64_t bound) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(bits) * bound) >> 64);
}

// A value uniform in (-1, 1) on a grid of step 2^-23 offset by 2^-24, so it
// is never zero, is exact in f32/f64 and stays non-zero when rounded to
// f16/bf16 (the smallest magnitude, 2^-24, is a half subnormal).
inline float random_unit_nonzero(uint64_t bits) {
  const int64_t grid = static_cast<int64_t>(bits >> 40);  // 24 bits
  return static_cast<float>(2 * grid + 1 - (int64_t{1} << 24)) * (1.0f / 16777216.0f);
}

// count elements of dtype at data, each random_unit_nonzero rounded to dtype.
void fill_random_nonzero(scatterptx_dtype dtype, void* data, size_t count, uint64_t seed);

// count indices uniform in [0, targets).
void fill_uniform_index(int64_t* index, size_t count, int64_t targets, uint64_t seed);

// Fisher-Yates shuffle of values (serial: each step depends on the last).
void shuffle(int64_t* values, size_t count, uint64_t seed);

// A seed for one input, from the numbers that define it, so equal inputs get
// equal data whatever order the scenarios run in.
uint64_t seed_for(uint64_t role, uint64_t a, uint64_t b, uint64_t c);

}  // namespace scatterptx_bench

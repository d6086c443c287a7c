#include "random_fill.hpp"

#include <utility>

#include "element_types.hpp"
#include "parallel_for.hpp"

namespace scatterptx_bench {
namespace {

using scatterptx_testing::float_to_bf16_bits;
using scatterptx_testing::float_to_half_bits;
using scatterptx_testing::parallel_for;

// Below this a thread costs more to start than its block takes to fill.
constexpr int64_t kMinimumBlock = int64_t{1} << 16;

template <typename Element, typename Convert>
void fill_with(Element* data, size_t count, uint64_t seed, Convert convert) {
  parallel_for(0, static_cast<int64_t>(count), kMinimumBlock, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) data[i] = convert(random_unit_nonzero(random_bits(seed, i)));
  });
}

}  // namespace

void fill_random_nonzero(scatterptx_dtype dtype, void* data, size_t count, uint64_t seed) {
  switch (dtype) {
    case SCATTERPTX_F32:
      fill_with(static_cast<float*>(data), count, seed, [](float v) { return v; });
      return;
    case SCATTERPTX_F64:
      fill_with(static_cast<double*>(data), count, seed, [](float v) { return double{v}; });
      return;
    case SCATTERPTX_F16:
      fill_with(static_cast<uint16_t*>(data), count, seed, float_to_half_bits);
      return;
    case SCATTERPTX_BF16:
      fill_with(static_cast<uint16_t*>(data), count, seed, float_to_bf16_bits);
      return;
  }
}

void fill_uniform_index(int64_t* index, size_t count, int64_t targets, uint64_t seed) {
  const uint64_t bound = static_cast<uint64_t>(targets);
  parallel_for(0, static_cast<int64_t>(count), kMinimumBlock, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      index[i] = static_cast<int64_t>(random_below(random_bits(seed, i), bound));
    }
  });
}

void shuffle(int64_t* values, size_t count, uint64_t seed) {
  for (size_t i = count; i > 1; --i) {
    const size_t j = static_cast<size_t>(random_below(random_bits(seed, i), i));
    std::swap(values[i - 1], values[j]);
  }
}

uint64_t seed_for(uint64_t role, uint64_t a, uint64_t b, uint64_t c) {
  uint64_t seed = mix64(role + 0x5ca77e9u);
  seed = mix64(seed ^ a);
  seed = mix64(seed ^ b);
  return mix64(seed ^ c);
}

}  // namespace scatterptx_bench

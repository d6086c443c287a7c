// Element types on the host: parsing, sizes and IEEE half / bfloat16 bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "scatterptx/scatterptx.h"

namespace scatterptx_bench {

// Accepts f32/fp32/float32, f16/fp16/float16/half, bf16/bfloat16, f64/fp64/float64.
bool parse_dtype(const std::string& text, scatterptx_dtype* dtype);

// Bytes of one element (scatterptx_dtype_size).
size_t dtype_bytes(scatterptx_dtype dtype);

// Round-to-nearest-even, as the GPU's cvt.rn does.
inline uint16_t float_to_bf16_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float bf16_bits_to_float(uint16_t bits) {
  const uint32_t widened = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &widened, sizeof(value));
  return value;
}

uint16_t float_to_half_bits(float value);
float half_bits_to_float(uint16_t bits);

// Element `i` of an array of `dtype`, widened to double for the reference.
double load_element_as_double(scatterptx_dtype dtype, const void* base, size_t i);

}  // namespace scatterptx_bench

#include "dtype.hpp"

#include <cmath>

namespace scatterptx_bench {

bool parse_dtype(const std::string& text, scatterptx_dtype* dtype) {
  if (text == "f32" || text == "fp32" || text == "float32" || text == "float") {
    *dtype = SCATTERPTX_F32;
  } else if (text == "f16" || text == "fp16" || text == "float16" || text == "half") {
    *dtype = SCATTERPTX_F16;
  } else if (text == "bf16" || text == "bfloat16") {
    *dtype = SCATTERPTX_BF16;
  } else if (text == "f64" || text == "fp64" || text == "float64" || text == "double") {
    *dtype = SCATTERPTX_F64;
  } else {
    return false;
  }
  return true;
}

size_t dtype_bytes(scatterptx_dtype dtype) { return scatterptx_dtype_size(dtype); }

uint16_t float_to_half_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (magnitude < 0x38800000u) {
    // Below the smallest normal half (2^-14): scale so the subnormal step
    // 2^-24 becomes 1 and let the FPU's round-to-nearest-even do the rest.
    float scaled;
    std::memcpy(&scaled, &magnitude, sizeof(scaled));
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled * 16777216.0f)));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits.
  const uint32_t rebiased = magnitude - (112u << 23);
  const uint32_t rounded = rebiased + 0xfffu + ((rebiased >> 13) & 1u);
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

float half_bits_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  float value;
  if (exponent == 0) {
    value = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal
    return sign != 0 ? -value : value;
  }
  uint32_t widened;
  if (exponent == 31) {
    widened = sign | 0x7f800000u | (mantissa << 13);  // inf or NaN
  } else {
    widened = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  std::memcpy(&value, &widened, sizeof(value));
  return value;
}

double load_element_as_double(scatterptx_dtype dtype, const void* base, size_t i) {
  switch (dtype) {
    case SCATTERPTX_F32: return static_cast<const float*>(base)[i];
    case SCATTERPTX_F64: return static_cast<const double*>(base)[i];
    case SCATTERPTX_F16: return half_bits_to_float(static_cast<const uint16_t*>(base)[i]);
    case SCATTERPTX_BF16: return bf16_bits_to_float(static_cast<const uint16_t*>(base)[i]);
  }
  return std::nan("");
}

}  // namespace scatterptx_bench

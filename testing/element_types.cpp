#include "element_types.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace scatterptx_testing {
namespace {

uint32_t float_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float bits_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace

uint16_t float_to_half_bits(float value) {
  const uint32_t x = float_bits(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t magnitude = x & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {  // NaN: keep the top payload bits, force quiet
    return static_cast<uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  }
  // 65520 = 0x477FF000 is halfway between 65504 (max half, odd mantissa) and
  // 2^16: ties-to-even rounds it, and everything above, to infinity.
  if (magnitude >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
  if (magnitude >= 0x38800000u) {  // normal half (>= 2^-14): rebias 127 -> 15
    const uint32_t rebiased = magnitude - 0x38000000u;
    const uint32_t rounded = rebiased + 0xFFFu + ((rebiased >> 13) & 1u);
    return static_cast<uint16_t>(sign | (rounded >> 13));
  }
  // Subnormal half: value / 2^-24 = mantissa * 2^(exponent - 126).
  const int exponent = static_cast<int>(magnitude >> 23);
  const int shift = 126 - exponent;  // >= 14 here
  if (shift > 24) return static_cast<uint16_t>(sign);  // below 2^-25: rounds to zero
  const uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
  uint32_t quotient = mantissa >> shift;
  const uint32_t remainder = mantissa & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (quotient & 1u))) ++quotient;
  return static_cast<uint16_t>(sign | quotient);  // 0x400 is the smallest normal, correctly
}

float half_bits_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F) return bits_float(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint16_t float_to_bf16_bits(float value) {
  const uint32_t x = float_bits(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
    return static_cast<uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
  }
  // Carries propagate into the exponent, so overflow lands on infinity.
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

float bf16_bits_to_float(uint16_t bits) { return bits_float(static_cast<uint32_t>(bits) << 16); }

size_t element_bytes(scatterptx_dtype dtype) {
  const size_t bytes = scatterptx_dtype_size(dtype);
  if (bytes == 0) throw std::invalid_argument("element_bytes: unknown dtype");
  return bytes;
}

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

double unit_roundoff(scatterptx_dtype dtype) {
  switch (dtype) {
    case SCATTERPTX_F32: return std::ldexp(1.0, -24);
    case SCATTERPTX_F16: return std::ldexp(1.0, -11);
    case SCATTERPTX_BF16: return std::ldexp(1.0, -8);
    case SCATTERPTX_F64: return std::ldexp(1.0, -53);
  }
  throw std::invalid_argument("unit_roundoff: unknown dtype");
}

double smallest_normal(scatterptx_dtype dtype) {
  switch (dtype) {
    case SCATTERPTX_F32: return std::numeric_limits<float>::min();
    case SCATTERPTX_F16: return std::ldexp(1.0, -14);
    case SCATTERPTX_BF16: return std::numeric_limits<float>::min();
    case SCATTERPTX_F64: return std::numeric_limits<double>::min();
  }
  throw std::invalid_argument("smallest_normal: unknown dtype");
}

double load_element(scatterptx_dtype dtype, const unsigned char* element) {
  switch (dtype) {
    case SCATTERPTX_F32: {
      float value;
      std::memcpy(&value, element, sizeof value);
      return value;
    }
    case SCATTERPTX_F16:
    case SCATTERPTX_BF16: {
      uint16_t bits;
      std::memcpy(&bits, element, sizeof bits);
      return dtype == SCATTERPTX_F16 ? half_bits_to_float(bits) : bf16_bits_to_float(bits);
    }
    case SCATTERPTX_F64: {
      double value;
      std::memcpy(&value, element, sizeof value);
      return value;
    }
  }
  throw std::invalid_argument("load_element: unknown dtype");
}

void store_element(scatterptx_dtype dtype, unsigned char* element, double value) {
  switch (dtype) {
    case SCATTERPTX_F32: {
      const float narrow = static_cast<float>(value);
      std::memcpy(element, &narrow, sizeof narrow);
      return;
    }
    case SCATTERPTX_F16:
    case SCATTERPTX_BF16: {
      const float narrow = static_cast<float>(value);
      const uint16_t bits =
          dtype == SCATTERPTX_F16 ? float_to_half_bits(narrow) : float_to_bf16_bits(narrow);
      std::memcpy(element, &bits, sizeof bits);
      return;
    }
    case SCATTERPTX_F64:
      std::memcpy(element, &value, sizeof value);
      return;
  }
  throw std::invalid_argument("store_element: unknown dtype");
}

}  // namespace scatterptx_testing

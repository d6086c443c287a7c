// Element types on the host: sizes, parsing, IEEE half / bfloat16 bits
// (round-to-nearest-even, as the GPU's cvt.rn), and widening to double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "scatterptx/scatterptx.h"

namespace scatterptx_testing {

uint16_t float_to_half_bits(float value);
float half_bits_to_float(uint16_t bits);
uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(uint16_t bits);

// Bytes of one element; throws std::invalid_argument for an unknown dtype.
size_t element_bytes(scatterptx_dtype dtype);

// Accepts f32/fp32/float32/float, f16/fp16/float16/half, bf16/bfloat16,
// f64/fp64/float64/double.
bool parse_dtype(const std::string& text, scatterptx_dtype* dtype);

// 2^-24 f32, 2^-11 f16, 2^-8 bf16, 2^-53 f64.
double unit_roundoff(scatterptx_dtype dtype);
// Smallest positive normal: what one flush-to-zero can lose.
double smallest_normal(scatterptx_dtype dtype);

double load_element(scatterptx_dtype dtype, const unsigned char* element);
void store_element(scatterptx_dtype dtype, unsigned char* element, double value);

}  // namespace scatterptx_testing

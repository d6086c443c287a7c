// The one rounding-error bound every float64 reference check uses: the C++
// tests, scatterptx-bench, and (through the bench's JSON) bench/compare.py.
#pragma once

#include <string>

#include "scatterptx/scatterptx.h"

namespace scatterptx_testing {

// Largest |got - ref| allowed for an element of dtype into which `additions`
// terms were added, ref being the float64 sum of out0 and the terms and
// magnitude the float64 sum of their absolute values:
//   (additions + 1) * ((u + u_f64) * magnitude + smallest_normal)
// Each rounded addition errs by at most u times the running sum's
// magnitude, in whatever order the additions ran; u_f64 covers the float64
// reference's own rounding (which matters for f64), smallest_normal one
// flush-to-zero per addition.
double rounding_error_bound(scatterptx_dtype dtype, double additions, double magnitude);

// The same for sums accumulated on chip (f32 for f32, f16 and bf16, f64 for
// f64) and rounded to dtype at most twice (the sum, then out0 plus the sum):
//   2 (u + u_f64) magnitude + rounding_error_bound(accumulator, additions, magnitude)
//     + 2 smallest_normal
// Far tighter than the per-add bound for f16 and bf16 at high fan-in, so it
// tells a call that sums on chip from one that rounds every add.
double on_chip_sum_error_bound(scatterptx_dtype dtype, double additions, double magnitude);

// u_f64 = 2^-53: the float64 reference's own rounding.
double reference_unit_roundoff();

// The formula above as text, for reports.
std::string rounding_error_bound_text();

}  // namespace scatterptx_testing

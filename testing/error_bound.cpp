#include "error_bound.hpp"

#include <cmath>

#include "element_types.hpp"

namespace scatterptx_testing {

double reference_unit_roundoff() { return std::ldexp(1.0, -53); }

double rounding_error_bound(scatterptx_dtype dtype, double additions, double magnitude) {
  return (additions + 1) *
         ((unit_roundoff(dtype) + reference_unit_roundoff()) * magnitude + smallest_normal(dtype));
}

double on_chip_sum_error_bound(scatterptx_dtype dtype, double additions, double magnitude) {
  const scatterptx_dtype accumulator = dtype == SCATTERPTX_F64 ? SCATTERPTX_F64 : SCATTERPTX_F32;
  return 2 * ((unit_roundoff(dtype) + reference_unit_roundoff()) * magnitude + smallest_normal(dtype)) +
         rounding_error_bound(accumulator, additions, magnitude);
}

std::string rounding_error_bound_text() {
  return "|got - ref| <= (count + 1) ((u + u_f64) (|out0| + sum |src|) + smallest_normal)";
}

}  // namespace scatterptx_testing

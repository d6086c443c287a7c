// A stress case's inputs on the host: out0 (the poison out starts from:
// fresh random non-zero values, padding bytes after each row), src, and the
// index with the case's bad positions holding out-of-range values.
#pragma once

#include <cstdint>
#include <vector>

#include "reference.hpp"
#include "stress_case.hpp"

namespace scatterptx_stress {

struct CaseInputs {
  scatterptx_test::HostMatrix out0;
  scatterptx_test::HostMatrix src;
  std::vector<int64_t> index;         // bad positions included
  std::vector<unsigned char> index_bytes;  // as the device holds it
};

CaseInputs make_case_inputs(const StressCase& c);

// The out-of-range value the case puts at bad position number k (negative,
// out_rows, beyond, or the index type's extremes).
int64_t bad_index_value(const StressShape& shape, uint64_t draw);

}  // namespace scatterptx_stress

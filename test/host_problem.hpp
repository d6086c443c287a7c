// Problems as the host planners see them, at fixed made-up addresses: for
// host-only tests of plans and launches, which never touch the memory.
#pragma once

#include <cstdint>

#include "problem.hpp"

namespace scatterptx_test {

// Contiguous rows of cols elements, an int64 index.
scatterptx::detail::Problem contiguous(scatterptx_dtype dtype, uint64_t src_rows, uint64_t out_rows, uint64_t cols);

// p with a weight per source row.
scatterptx::detail::Problem weighted(scatterptx::detail::Problem p, scatterptx_dtype weights_dtype = SCATTERPTX_F32);

}  // namespace scatterptx_test

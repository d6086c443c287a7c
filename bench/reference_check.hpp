// Correctness of one execution (streaming or grouped) on a prefix of a
// scenario, against a float64 CPU reference.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "inputs.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx_bench {

struct CheckResult {
  bool ok = false;
  int64_t src_rows_checked = 0;
  int64_t touched_rows = 0;    // distinct targets of the checked src rows
  int64_t neighbour_rows = 0;  // untouched rows next to them, which must not change
  double max_relative_error = 0;  // worst touched row: max |got - ref| / max |ref|
  double tolerance = 0;           // unit roundoff used in the bound
  std::string failure;  // why it is wrong; empty when ok
};

// Enqueues out[index[i], :] += src[i, :] for prefix_args on stream, the way
// the execution being checked does it; throws BenchError when a call fails.
using PrefixLaunch = std::function<void(const scatterptx_scatter_add_args& prefix_args, CUstream stream)>;

// Restores out from its pristine copy, launches args on the first check_rows
// src rows, then compares every touched out row against out + sum(src) in
// float64 (within testing/error_bound.hpp) and checks that the untouched rows on either side of each are
// bit-for-bit unchanged and that no index error was recorded. args describe
// the whole problem (pointers into inputs); only src_rows is cut down.
// Throws BenchError when a driver or library call fails.
CheckResult check_prefix(const scatterptx_scatter_add_args& args, const ProblemInputs& inputs,
                         int64_t check_rows, CUstream stream, const PrefixLaunch& launch);

// Timed runs use the same in-range index as the check, so an index error
// recorded since the check means a kernel misread it: *check is marked wrong.
void require_no_index_error(CheckResult* check);

}  // namespace scatterptx_bench

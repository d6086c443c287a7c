#include "case_inputs.hpp"

#include <algorithm>
#include <limits>

namespace scatterptx_stress {
namespace {

using scatterptx_test::derive_seed;
using scatterptx_test::Rng;

std::vector<int64_t> draw_index(const StressCase& c) {
  const StressShape& s = c.shape;
  std::vector<int64_t> index = scatterptx_test::random_indices(s.src_rows, s.out_rows, derive_seed(c.input_seed, 3));
  if (c.pattern == IndexPattern::kSorted) {
    std::sort(index.begin(), index.end());
  } else if (c.pattern == IndexPattern::kHot) {
    // About 30% of the rows onto one target, at random positions.
    Rng rng(derive_seed(c.input_seed, 4));
    const int64_t hot_row = rng.below(s.out_rows);
    for (int64_t& target : index) {
      if (rng.uniform() < 0.3) target = hot_row;
    }
  }
  for (size_t k = 0; k < c.bad_positions.size(); ++k) {
    index[static_cast<size_t>(c.bad_positions[k])] = bad_index_value(s, derive_seed(c.input_seed, 10 + k));
  }
  return index;
}

}  // namespace

int64_t bad_index_value(const StressShape& shape, uint64_t draw) {
  const bool narrow = shape.index_type == SCATTERPTX_INDEX_INT32;
  const int64_t largest = narrow ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
  const int64_t smallest = narrow ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
  Rng rng(draw);
  switch (rng.below(6)) {
    case 0: return -1;
    case 1: return -shape.out_rows;
    case 2: return shape.out_rows;
    case 3: return shape.out_rows + 1 + rng.below(1000);
    case 4: return largest;
    default: return smallest;
  }
}

CaseInputs make_case_inputs(const StressCase& c) {
  const StressShape& s = c.shape;
  CaseInputs inputs;
  inputs.out0 = scatterptx_test::random_matrix(s.dtype, s.out_rows, s.cols, s.out_row_stride,
                                               scatterptx_test::kOutPaddingByte, derive_seed(c.input_seed, 1));
  inputs.src = scatterptx_test::random_matrix(s.dtype, s.src_rows, s.cols, s.src_row_stride,
                                              scatterptx_test::kSrcPaddingByte, derive_seed(c.input_seed, 2));
  inputs.index = draw_index(c);
  inputs.index_bytes = scatterptx_test::encode_indices(inputs.index, s.index_type);
  return inputs;
}

}  // namespace scatterptx_stress

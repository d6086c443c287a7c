// The index of an MoE layer's dispatch backward: the gradient rows of the
// expert inputs flow back to their tokens, grad_x.index_add_(0, index, rows).
//
// Each token picks top_k distinct experts uniformly (a balanced router) and
// the rows lie expert-major, tokens ascending within an expert, as a stable
// sort by expert leaves them. Entry j is the token of row j, so each token
// appears exactly top_k times, once in each of its experts' groups.
#pragma once

#include <cstdint>
#include <vector>

namespace scatterptx_bench {

// tokens * top_k entries in [0, tokens); needs 1 <= top_k <= experts.
std::vector<int64_t> make_moe_index(int64_t tokens, int64_t top_k, int64_t experts, uint64_t seed);

}  // namespace scatterptx_bench

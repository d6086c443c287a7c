// The benchmark's scenarios and the index pattern of each kind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scatterptx/scatterptx.h"

namespace scatterptx_bench {

enum class IndexKind {
  uniform,      // every src row picks a target uniformly in [0, T)
  high_cont,    // half of the src rows hit target 0, the rest uniform, positions shuffled
  sorted,       // uniform targets, ascending
  few_targets,  // uniform over a small T (the same generator as uniform; named apart)
  few_idx,      // src row i goes to perm[i % T] for a random permutation of [0, T)
  power_law,    // a GNN's messages: target in-degrees follow a power law (bench/ranked_index.hpp)
  zipf,         // embedding ids: Zipf-distributed over the vocabulary, s = 1
  moe_topk,     // MoE dispatch backward: each target k = M / T times, rows grouped by expert
};

const char* index_kind_name(IndexKind kind);
bool parse_index_kind(const std::string& text, IndexKind* kind);

struct Scenario {
  std::string name;  // what --scenario matches against
  IndexKind kind = IndexKind::uniform;
  int64_t src_rows = 0;  // M
  int64_t out_rows = 0;  // T
  int64_t cols = 0;      // D
  scatterptx_dtype dtype = SCATTERPTX_F32;
  int64_t experts = 0;   // moe_topk only: the experts the rows are grouped by
};

int64_t row_bytes(const Scenario& scenario);

// The kind as the table writes it: "uniform", or "moe_topk/256" with the experts.
std::string index_kind_text(const Scenario& scenario);

// Scenarios from the text of bench/scenarios.tsv (its header says the
// columns); quick takes the quick_* sizes. False with *error on a bad line.
bool parse_scenario_table(const std::string& text, bool quick, std::vector<Scenario>* scenarios,
                          std::string* error);

// The suite of bench/scenarios.tsv, compiled in.
std::vector<Scenario> default_scenarios(bool quick);

// "kind:M:T:D:dtype"; M and T take 7.77e6, 1.72M, 500K as well as integers;
// kind moe_topk is written moe_topk/E with E the experts.
bool parse_shape(const std::string& text, Scenario* scenario, std::string* error);

// How many distinct values index holds (each in [0, out_rows)).
int64_t count_distinct_targets(const std::vector<int64_t>& index, int64_t out_rows);

// The int64 index of a scenario's kind: src_rows entries in [0, out_rows).
// experts: moe_topk's (which needs src_rows = k * out_rows, k <= experts).
std::vector<int64_t> make_index(IndexKind kind, int64_t src_rows, int64_t out_rows, int64_t experts,
                                uint64_t seed);

}  // namespace scatterptx_bench

#include "scenarios.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "bench_data.hpp"

#include "element_types.hpp"
#include "moe_index.hpp"
#include "random_fill.hpp"
#include "ranked_index.hpp"

namespace scatterptx_bench {
namespace {

// "7.77e6", "1.72M", "500K", "640000" -> a positive row count.
bool parse_count(const std::string& text, int64_t* value) {
  if (text.empty()) return false;
  double scale = 1;
  std::string number = text;
  const char suffix = number.back();
  if (suffix == 'K' || suffix == 'k') scale = 1e3;
  if (suffix == 'M' || suffix == 'm') scale = 1e6;
  if (suffix == 'G' || suffix == 'g') scale = 1e9;
  if (scale != 1) number.pop_back();
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || errno != 0) return false;
  const double rows = std::round(parsed * scale);
  if (!(rows >= 1) || rows > 9.0e15) return false;
  *value = static_cast<int64_t>(rows);
  return true;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == separator) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

constexpr IndexKind kAllKinds[] = {IndexKind::uniform,     IndexKind::high_cont, IndexKind::sorted,
                                   IndexKind::few_targets, IndexKind::few_idx,   IndexKind::power_law,
                                   IndexKind::zipf,        IndexKind::moe_topk};

// "uniform" or "moe_topk/256": the kind and, for moe_topk, its experts.
bool parse_kind_text(const std::string& text, IndexKind* kind, int64_t* experts) {
  const std::vector<std::string> parts = split(text, '/');
  if (!parse_index_kind(parts[0], kind)) return false;
  *experts = 0;
  if (*kind != IndexKind::moe_topk) return parts.size() == 1;
  return parts.size() == 2 && parse_count(parts[1], experts);
}

// moe_topk routes each of the T targets to k = M / T of its experts.
bool check_kind_sizes(const Scenario& s, std::string* error) {
  if (s.kind != IndexKind::moe_topk) return true;
  if (s.src_rows % s.out_rows != 0 || s.src_rows / s.out_rows > s.experts) {
    *error = "moe_topk/" + std::to_string(s.experts) + " wants M = k * T with k <= " +
             std::to_string(s.experts) + " experts, has M " + std::to_string(s.src_rows) +
             " and T " + std::to_string(s.out_rows);
    return false;
  }
  return true;
}

}  // namespace

const char* index_kind_name(IndexKind kind) {
  switch (kind) {
    case IndexKind::uniform: return "uniform";
    case IndexKind::high_cont: return "high_cont";
    case IndexKind::sorted: return "sorted";
    case IndexKind::few_targets: return "few_targets";
    case IndexKind::few_idx: return "few_idx";
    case IndexKind::power_law: return "power_law";
    case IndexKind::zipf: return "zipf";
    case IndexKind::moe_topk: return "moe_topk";
  }
  return "?";
}

bool parse_index_kind(const std::string& text, IndexKind* kind) {
  for (IndexKind k : kAllKinds) {
    if (text == index_kind_name(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

std::string index_kind_text(const Scenario& scenario) {
  std::string text = index_kind_name(scenario.kind);
  if (scenario.kind == IndexKind::moe_topk) text += "/" + std::to_string(scenario.experts);
  return text;
}

int64_t row_bytes(const Scenario& scenario) {
  return scenario.cols * static_cast<int64_t>(scatterptx_testing::element_bytes(scenario.dtype));
}

bool parse_scenario_table(const std::string& text, bool quick, std::vector<Scenario>* scenarios,
                          std::string* error) {
  std::vector<Scenario> parsed;
  int line_number = 0;
  for (const std::string& line : split(text, '\n')) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> fields = split(line, '\t');
    const std::string where = "scenario table line " + std::to_string(line_number);
    if (fields.size() != 9) {
      *error = where + ": wants 9 tab-separated fields, has " + std::to_string(fields.size());
      return false;
    }
    Scenario s;
    s.name = fields[0];
    const int size_column = quick ? 6 : 2;  // src_rows, out_rows, cols of the chosen sizes
    if (s.name.empty() || !parse_kind_text(fields[1], &s.kind, &s.experts) ||
        !scatterptx_testing::parse_dtype(fields[5], &s.dtype) ||
        !parse_count(fields[size_column], &s.src_rows) ||
        !parse_count(fields[size_column + 1], &s.out_rows) ||
        !parse_count(fields[size_column + 2], &s.cols)) {
      *error = where + ": bad name, kind, dtype or count in '" + line + "'";
      return false;
    }
    std::string sizes_error;
    if (!check_kind_sizes(s, &sizes_error)) {
      *error = where + ": " + sizes_error;
      return false;
    }
    for (const Scenario& earlier : parsed) {
      if (earlier.name == s.name) {
        *error = where + ": scenario '" + s.name + "' named twice";
        return false;
      }
    }
    parsed.push_back(s);
  }
  *scenarios = std::move(parsed);
  return true;
}

std::vector<Scenario> default_scenarios(bool quick) {
  std::vector<Scenario> suite;
  std::string error;
  if (!parse_scenario_table(kScenarioTable, quick, &suite, &error)) {
    throw std::logic_error("bench/scenarios.tsv: " + error);
  }
  return suite;
}

int64_t count_distinct_targets(const std::vector<int64_t>& index, int64_t out_rows) {
  std::vector<uint8_t> seen(static_cast<size_t>(out_rows), 0);
  int64_t distinct = 0;
  for (int64_t target : index) {
    uint8_t& flag = seen[static_cast<size_t>(target)];
    distinct += flag == 0;
    flag = 1;
  }
  return distinct;
}

bool parse_shape(const std::string& text, Scenario* scenario, std::string* error) {
  const std::vector<std::string> parts = split(text, ':');
  if (parts.size() != 5) {
    *error = "--shape wants kind:M:T:D:dtype, got '" + text + "'";
    return false;
  }
  Scenario s;
  if (!parse_kind_text(parts[0], &s.kind, &s.experts)) {
    *error = "--shape: unknown kind '" + parts[0] +
             "' (uniform, high_cont, sorted, few_targets, few_idx, power_law, zipf, moe_topk/E)";
    return false;
  }
  if (!parse_count(parts[1], &s.src_rows) || !parse_count(parts[2], &s.out_rows) ||
      !parse_count(parts[3], &s.cols)) {
    *error = "--shape: M, T and D must be positive counts in '" + text + "'";
    return false;
  }
  if (!scatterptx_testing::parse_dtype(parts[4], &s.dtype)) {
    *error = "--shape: unknown dtype '" + parts[4] + "' (f32, f16, bf16, f64)";
    return false;
  }
  if (!check_kind_sizes(s, error)) {
    *error = "--shape: " + *error;
    return false;
  }
  s.name = "shape-" + std::string(index_kind_name(s.kind)) +
           (s.experts > 0 ? "-e" + std::to_string(s.experts) : std::string()) + "-" + std::to_string(s.src_rows) +
           "-" + std::to_string(s.out_rows) + "-d" + std::to_string(s.cols) + "-" +
           scatterptx_dtype_name(s.dtype);
  *scenario = s;
  return true;
}

std::vector<int64_t> make_index(IndexKind kind, int64_t src_rows, int64_t out_rows, int64_t experts,
                                uint64_t seed) {
  if (kind == IndexKind::moe_topk) return make_moe_index(out_rows, src_rows / out_rows, experts, seed);
  const size_t m = static_cast<size_t>(src_rows);
  std::vector<int64_t> index(m);
  switch (kind) {
    case IndexKind::uniform:
    case IndexKind::few_targets:
      fill_uniform_index(index.data(), m, out_rows, seed);
      break;
    case IndexKind::high_cont: {
      // Exactly half the positions hold target 0, chosen by shuffling.
      const size_t hot = m / 2;
      std::fill(index.begin(), index.begin() + static_cast<std::ptrdiff_t>(hot), 0);
      fill_uniform_index(index.data() + hot, m - hot, out_rows, seed);
      shuffle(index.data(), m, seed ^ 0x5bd1e995u);
      break;
    }
    case IndexKind::sorted: {
      // Ascending uniform targets by counting: O(M + T) instead of a sort.
      fill_uniform_index(index.data(), m, out_rows, seed);
      std::vector<int64_t> counts(static_cast<size_t>(out_rows), 0);
      for (int64_t target : index) ++counts[static_cast<size_t>(target)];
      size_t position = 0;
      for (int64_t target = 0; target < out_rows; ++target) {
        for (int64_t c = 0; c < counts[static_cast<size_t>(target)]; ++c) index[position++] = target;
      }
      break;
    }
    case IndexKind::few_idx: {
      std::vector<int64_t> permutation(static_cast<size_t>(out_rows));
      for (int64_t t = 0; t < out_rows; ++t) permutation[static_cast<size_t>(t)] = t;
      shuffle(permutation.data(), permutation.size(), seed);
      for (size_t i = 0; i < m; ++i) index[i] = permutation[i % permutation.size()];
      break;
    }
    case IndexKind::power_law:
      fill_ranked_index(index.data(), m, out_rows, kPowerLawRankExponent, seed);
      break;
    case IndexKind::zipf:
      fill_ranked_index(index.data(), m, out_rows, kZipfRankExponent, seed);
      break;
    case IndexKind::moe_topk:
      break;  // made above
  }
  return index;
}

}  // namespace scatterptx_bench

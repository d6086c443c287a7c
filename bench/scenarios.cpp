#include "scenarios.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <utility>

#include "element_types.hpp"
#include "random_fill.hpp"

namespace scatterptx_bench {
namespace {

constexpr int64_t kThousand = 1000;
constexpr int64_t kMillion = 1000 * 1000;

// --quick divides row counts by this (and few_idx's huge D instead).
constexpr int64_t kQuickDivisor = 16;

std::string default_name(const Scenario& s) {
  return std::string(index_kind_name(s.kind)) + "-d" + std::to_string(s.cols) + "-" +
         scatterptx_dtype_name(s.dtype);
}

Scenario make(IndexKind kind, int64_t src_rows, int64_t out_rows, int64_t cols,
              scatterptx_dtype dtype, std::string name = "") {
  Scenario s;
  s.kind = kind;
  s.src_rows = src_rows;
  s.out_rows = out_rows;
  s.cols = cols;
  s.dtype = dtype;
  s.name = name.empty() ? default_name(s) : std::move(name);
  return s;
}

Scenario shrink_for_quick(Scenario s) {
  if (s.kind == IndexKind::few_idx) {
    s.cols = std::max<int64_t>(1, s.cols / kQuickDivisor);
  } else {
    s.src_rows = std::max<int64_t>(1, s.src_rows / kQuickDivisor);
    if (s.kind != IndexKind::few_targets) s.out_rows = std::max<int64_t>(1, s.out_rows / kQuickDivisor);
  }
  return s;
}

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

}  // namespace

const char* index_kind_name(IndexKind kind) {
  switch (kind) {
    case IndexKind::uniform: return "uniform";
    case IndexKind::high_cont: return "high_cont";
    case IndexKind::sorted: return "sorted";
    case IndexKind::few_targets: return "few_targets";
    case IndexKind::few_idx: return "few_idx";
  }
  return "?";
}

bool parse_index_kind(const std::string& text, IndexKind* kind) {
  for (IndexKind k : {IndexKind::uniform, IndexKind::high_cont, IndexKind::sorted,
                      IndexKind::few_targets, IndexKind::few_idx}) {
    if (text == index_kind_name(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

int64_t row_bytes(const Scenario& scenario) {
  return scenario.cols * static_cast<int64_t>(scatterptx_testing::element_bytes(scenario.dtype));
}

std::vector<Scenario> default_scenarios(bool quick) {
  const int64_t m7 = 7770 * kThousand, t7 = 1720 * kThousand;
  const int64_t m2 = 2 * kMillion, t2 = 500 * kThousand;
  const int64_t m4 = 4 * kMillion, t4 = kMillion;
  using K = IndexKind;
  std::vector<Scenario> suite = {
      // 7.77M -> 1.72M, D=128: uniform f32 and bf16 share an index; high_cont
      // bf16 then reuses bf16's src/out and high_cont f32 reuses that index.
      make(K::uniform, m7, t7, 128, SCATTERPTX_F32),
      make(K::uniform, m7, t7, 128, SCATTERPTX_BF16),
      make(K::high_cont, m7, t7, 128, SCATTERPTX_BF16),
      make(K::high_cont, m7, t7, 128, SCATTERPTX_F32),
      // 2M -> 500K: one index for the three.
      make(K::uniform, m2, t2, 512, SCATTERPTX_F32),
      make(K::uniform, m2, t2, 1024, SCATTERPTX_BF16),
      make(K::uniform, m2, t2, 128, SCATTERPTX_F64),
      // 4M rows of D=256 f32: sorted and few_targets share src.
      make(K::sorted, m4, t4, 256, SCATTERPTX_F32),
      make(K::few_targets, m4, 100, 256, SCATTERPTX_F32),
      // uniform 4M -> 1M: one index for f16 and all small-row cases.
      make(K::uniform, m4, t4, 128, SCATTERPTX_F16),
  };
  auto small_rows = [&](scatterptx_dtype dtype, int64_t bytes) {
    const int64_t cols = bytes / static_cast<int64_t>(scatterptx_testing::element_bytes(dtype));
    suite.push_back(make(K::uniform, m4, t4, cols, dtype,
                         "small_rows-" + std::to_string(bytes) + "B-d" + std::to_string(cols) + "-" +
                             scatterptx_dtype_name(dtype)));
  };
  for (scatterptx_dtype dtype : {SCATTERPTX_F32, SCATTERPTX_BF16}) {
    for (int64_t bytes : {8, 16, 32, 64, 128}) small_rows(dtype, bytes);
  }
  // f16 and f64 over the 32-128 byte rows that the small-row targets name.
  for (scatterptx_dtype dtype : {SCATTERPTX_F16, SCATTERPTX_F64}) {
    for (int64_t bytes : {32, 64, 128}) small_rows(dtype, bytes);
  }
  suite.push_back(make(K::few_idx, 100, 100, 640000, SCATTERPTX_F32));
  if (quick) {
    for (Scenario& s : suite) s = shrink_for_quick(s);
  }
  return suite;
}

bool parse_shape(const std::string& text, Scenario* scenario, std::string* error) {
  const std::vector<std::string> parts = split(text, ':');
  if (parts.size() != 5) {
    *error = "--shape wants kind:M:T:D:dtype, got '" + text + "'";
    return false;
  }
  Scenario s;
  if (!parse_index_kind(parts[0], &s.kind)) {
    *error = "--shape: unknown kind '" + parts[0] +
             "' (uniform, high_cont, sorted, few_targets, few_idx)";
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
  s.name = "shape-" + std::string(index_kind_name(s.kind)) + "-" + std::to_string(s.src_rows) +
           "-" + std::to_string(s.out_rows) + "-d" + std::to_string(s.cols) + "-" +
           scatterptx_dtype_name(s.dtype);
  *scenario = s;
  return true;
}

std::vector<int64_t> make_index(IndexKind kind, int64_t src_rows, int64_t out_rows, uint64_t seed) {
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
  }
  return index;
}

}  // namespace scatterptx_bench

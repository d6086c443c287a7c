#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include "error_bound.hpp"
#include "parallel_for.hpp"

namespace scatterptx_test {
namespace {

// A few rows can be wide: split them too.
constexpr int64_t kMinRowsPerThread = 4;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

const char* dtype_name(scatterptx_dtype dtype) {
  switch (dtype) {
    case SCATTERPTX_F32: return "F32";
    case SCATTERPTX_F16: return "F16";
    case SCATTERPTX_BF16: return "BF16";
    case SCATTERPTX_F64: return "F64";
  }
  return "UnknownDtype";
}

const char* index_type_name(scatterptx_index_type type) {
  return type == SCATTERPTX_INDEX_INT32 ? "Int32" : "Int64";
}

const char* path_name(scatterptx_path path) {
  switch (path) {
    case SCATTERPTX_PATH_AUTO: return "Auto";
    case SCATTERPTX_PATH_TMA: return "Tma";
    case SCATTERPTX_PATH_RED: return "Red";
    case SCATTERPTX_PATH_PRIVATE: return "Private";
  }
  return "UnknownPath";
}

size_t index_bytes(scatterptx_index_type type) { return type == SCATTERPTX_INDEX_INT32 ? 4 : 8; }

Rng::Rng(uint64_t seed) {
  for (uint64_t& word : state_) word = splitmix64(seed);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * std::ldexp(1.0, -53); }

int64_t Rng::below(int64_t bound) {
  const unsigned __int128 wide = static_cast<unsigned __int128>(next()) * static_cast<uint64_t>(bound);
  return static_cast<int64_t>(wide >> 64);
}

double Rng::nonzero_value() {
  for (;;) {
    const double value = 2.0 * uniform() - 1.0;
    if (std::fabs(value) >= 1e-3) return value;
  }
}

uint64_t fresh_seed() {
  if (const char* replay = std::getenv("SCATTERPTX_TEST_SEED")) {
    return std::strtoull(replay, nullptr, 0);
  }
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

std::string seed_trace(uint64_t seed) {
  return "seed=" + std::to_string(seed) + " (replay with SCATTERPTX_TEST_SEED=" +
         std::to_string(seed) + ")";
}

uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  uint64_t state = seed ^ (stream * 0xD1B54A32D192ED03ull);
  return splitmix64(state);
}

HostMatrix::HostMatrix(scatterptx_dtype dtype_, int64_t rows_, int64_t cols_, int64_t row_stride_,
                       unsigned char fill_byte)
    : dtype(dtype_), rows(rows_), cols(cols_), row_stride(row_stride_) {
  if (rows < 0 || cols < 0 || row_stride < cols) throw std::invalid_argument("bad HostMatrix shape");
  bytes.assign(static_cast<size_t>(rows) * row_bytes(), fill_byte);
}

HostMatrix random_matrix(scatterptx_dtype dtype, int64_t rows, int64_t cols, int64_t row_stride,
                         unsigned char padding_byte, uint64_t seed) {
  HostMatrix matrix(dtype, rows, cols, row_stride, padding_byte);
  const size_t element = element_bytes(dtype);
  scatterptx_testing::parallel_for(0, rows, kMinRowsPerThread, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      Rng rng(derive_seed(seed, static_cast<uint64_t>(r)));
      unsigned char* row = matrix.row(r);
      for (int64_t c = 0; c < cols; ++c) {
        store_element(dtype, row + static_cast<size_t>(c) * element, rng.nonzero_value());
      }
    }
  });
  return matrix;
}

std::vector<int64_t> random_indices(int64_t count, int64_t out_rows, uint64_t seed) {
  std::vector<int64_t> index(static_cast<size_t>(count));
  Rng rng(seed);
  for (int64_t& value : index) value = rng.below(out_rows);
  return index;
}

std::vector<unsigned char> encode_indices(const std::vector<int64_t>& index,
                                          scatterptx_index_type type) {
  std::vector<unsigned char> bytes(index.size() * index_bytes(type));
  for (size_t i = 0; i < index.size(); ++i) {
    if (type == SCATTERPTX_INDEX_INT32) {
      if (index[i] < INT32_MIN || index[i] > INT32_MAX) {
        throw std::invalid_argument("index value does not fit int32");
      }
      const int32_t narrow = static_cast<int32_t>(index[i]);
      std::memcpy(bytes.data() + 4 * i, &narrow, 4);
    } else {
      std::memcpy(bytes.data() + 8 * i, &index[i], 8);
    }
  }
  return bytes;
}

std::string CheckReport::summary() const {
  std::ostringstream text;
  text << (ok ? "match" : "MISMATCH") << ": " << bad_elements << " bad elements, " << rows_added
       << " rows added, ||got-ref||/||ref|| = " << relative_error;
  if (!first_failure.empty()) text << "; first failure: " << first_failure;
  return text.str();
}

namespace {

// Source rows grouped by target row (counting sort), so every out row can
// be checked on its own, in parallel, without a full float64 copy of out.
struct RowsByTarget {
  std::vector<int64_t> offsets;  // out_rows + 1
  std::vector<int64_t> sources;
};

RowsByTarget group_by_target(const std::vector<int64_t>& index, int64_t out_rows) {
  RowsByTarget groups;
  groups.offsets.assign(static_cast<size_t>(out_rows) + 1, 0);
  for (int64_t target : index) {
    if (target >= 0 && target < out_rows) ++groups.offsets[static_cast<size_t>(target) + 1];
  }
  for (size_t r = 1; r < groups.offsets.size(); ++r) groups.offsets[r] += groups.offsets[r - 1];
  groups.sources.resize(static_cast<size_t>(groups.offsets.back()));
  std::vector<int64_t> cursor(groups.offsets.begin(), groups.offsets.end() - 1);
  for (size_t i = 0; i < index.size(); ++i) {
    const int64_t target = index[i];
    if (target >= 0 && target < out_rows) {
      groups.sources[static_cast<size_t>(cursor[static_cast<size_t>(target)]++)] =
          static_cast<int64_t>(i);
    }
  }
  return groups;
}

std::string hex_bytes(const unsigned char* bytes, size_t count) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text = "0x";
  for (size_t i = count; i-- > 0;) {  // little-endian element: most significant byte first
    text += kDigits[bytes[i] >> 4];
    text += kDigits[bytes[i] & 15];
  }
  return text;
}

bool shapes_agree(const HostMatrix& out0, const HostMatrix& src, const std::vector<int64_t>& index,
                  const HostMatrix& got) {
  return got.dtype == out0.dtype && got.rows == out0.rows && got.cols == out0.cols &&
         got.row_stride == out0.row_stride && got.bytes.size() == out0.bytes.size() && src.cols == out0.cols &&
         src.dtype == out0.dtype && static_cast<int64_t>(index.size()) == src.rows;
}

struct PartialCheck {
  int64_t first_bad_row = std::numeric_limits<int64_t>::max();
  std::string first_failure;
  int64_t bad_elements = 0;
  int64_t rows_added = 0;
  double squared_error = 0;
  double squared_reference = 0;

  void fail(int64_t row, std::string message) {
    ++bad_elements;
    if (row < first_bad_row) {
      first_bad_row = row;
      first_failure = std::move(message);
    }
  }

  // Adds a thread's part; the first failure stays the lowest row's.
  void merge(PartialCheck& part) {
    bad_elements += part.bad_elements;
    rows_added += part.rows_added;
    squared_error += part.squared_error;
    squared_reference += part.squared_reference;
    if (part.first_bad_row < first_bad_row) {
      first_bad_row = part.first_bad_row;
      first_failure = std::move(part.first_failure);
    }
  }

  void report_into(CheckReport& report) const {
    report.ok = bad_elements == 0;
    report.bad_elements = bad_elements;
    report.rows_added = rows_added;
    report.first_failure = first_failure;
    report.relative_error = squared_reference > 0 ? std::sqrt(squared_error / squared_reference) : 0.0;
  }
};

CheckReport shapes_disagree(const char* what) {
  CheckReport report;
  report.ok = false;
  report.bad_elements = 1;
  report.first_failure = std::string("shapes of ") + what + " do not agree";
  return report;
}

// The walk every check shares: out0's rows split over threads; a row no
// valid index reaches must equal got's byte for byte, and a reached one's
// padding too. make_row_check() gives each thread its checker of a reached
// row's values: check_row(row, out0's row, got's row, begin, end, part),
// [begin, end) the row's sources in groups.
template <typename MakeRowCheck>
CheckReport walk_rows(const HostMatrix& out0, const HostMatrix& got, const RowsByTarget& groups,
                      MakeRowCheck make_row_check) {
  const size_t element = element_bytes(out0.dtype);
  const size_t value_bytes = static_cast<size_t>(out0.cols) * element;
  std::mutex merge_mutex;
  PartialCheck total;
  scatterptx_testing::parallel_for(0, out0.rows, kMinRowsPerThread, [&](int64_t first, int64_t last) {
    PartialCheck part;
    auto check_row = make_row_check();
    for (int64_t r = first; r < last; ++r) {
      const unsigned char* before = out0.row(r);
      const unsigned char* after = got.row(r);
      const int64_t begin = groups.offsets[static_cast<size_t>(r)];
      const int64_t end = groups.offsets[static_cast<size_t>(r) + 1];
      if (begin == end) {
        if (std::memcmp(before, after, out0.row_bytes()) != 0) {
          size_t byte = 0;
          while (before[byte] == after[byte]) ++byte;
          const size_t at = byte / element * element;
          part.fail(r, "out row " + std::to_string(r) + " has no valid index but changed at col " +
                           std::to_string(byte / element) + ": got " + hex_bytes(after + at, element) +
                           ", expected " + hex_bytes(before + at, element));
        }
        continue;
      }
      ++part.rows_added;
      if (std::memcmp(before + value_bytes, after + value_bytes, out0.row_bytes() - value_bytes) != 0) {
        part.fail(r, "padding after col " + std::to_string(out0.cols) + " of out row " + std::to_string(r) +
                         " changed");
      }
      check_row(r, before, after, begin, end, part);
    }
    std::lock_guard<std::mutex> lock(merge_mutex);
    total.merge(part);
  });
  CheckReport report;
  total.report_into(report);
  return report;
}

// check_scatter_add's walk with the bound of one element as bound_of(dtype,
// additions, magnitude).
template <typename BoundOf>
CheckReport check_sums_within(const HostMatrix& out0, const HostMatrix& src, const std::vector<int64_t>& index,
                              const HostMatrix& got, int repeats, BoundOf bound_of) {
  if (!shapes_agree(out0, src, index, got)) return shapes_disagree("out0, src, index and got");
  const RowsByTarget groups = group_by_target(index, out0.rows);
  const scatterptx_dtype dtype = out0.dtype;
  const size_t element = element_bytes(dtype);
  return walk_rows(out0, got, groups, [&] {
    std::vector<double> sum(static_cast<size_t>(out0.cols));
    std::vector<double> magnitude(static_cast<size_t>(out0.cols));
    return [&, sum, magnitude](int64_t r, const unsigned char* before, const unsigned char* after, int64_t begin,
                               int64_t end, PartialCheck& part) mutable {
      for (int64_t c = 0; c < out0.cols; ++c) {
        const double initial = load_element(dtype, before + static_cast<size_t>(c) * element);
        sum[static_cast<size_t>(c)] = initial;
        magnitude[static_cast<size_t>(c)] = std::fabs(initial);
      }
      for (int64_t k = begin; k < end; ++k) {
        const unsigned char* source = src.row(groups.sources[static_cast<size_t>(k)]);
        for (int64_t c = 0; c < out0.cols; ++c) {
          const double term = load_element(dtype, source + static_cast<size_t>(c) * element);
          sum[static_cast<size_t>(c)] += repeats * term;
          magnitude[static_cast<size_t>(c)] += repeats * std::fabs(term);
        }
      }
      const double adds = static_cast<double>(end - begin) * repeats;
      for (int64_t c = 0; c < out0.cols; ++c) {
        const double reference = sum[static_cast<size_t>(c)];
        const double value = load_element(dtype, after + static_cast<size_t>(c) * element);
        const double bound = bound_of(dtype, adds, magnitude[static_cast<size_t>(c)]);
        const double error = std::fabs(value - reference);
        if (!(error <= bound)) {  // written so that NaN fails
          std::ostringstream text;
          text.precision(17);
          text << "out[" << r << ", " << c << "]: got " << value << ", ref " << reference
               << ", |diff| " << error << " > bound " << bound << " (" << adds << " adds)";
          part.fail(r, text.str());
        }
        if (std::isfinite(error)) part.squared_error += error * error;
        part.squared_reference += reference * reference;
      }
    };
  });
}

}  // namespace

CheckReport check_scatter_add(const HostMatrix& out0, const HostMatrix& src,
                              const std::vector<int64_t>& index, const HostMatrix& got,
                              int repeats) {
  return check_sums_within(out0, src, index, got, repeats, scatterptx_testing::rounding_error_bound);
}

CheckReport check_on_chip_sums(const HostMatrix& out0, const HostMatrix& src, const std::vector<int64_t>& index,
                               const HostMatrix& got) {
  return check_sums_within(out0, src, index, got, 1, scatterptx_testing::on_chip_sum_error_bound);
}

int64_t most_exact_rows_per_target(scatterptx_dtype dtype, int repeats) {
  // 2^p values of 1/8 sum to 2^p / 8, still exact; out0's value is one of them.
  const auto most_terms = static_cast<int64_t>(1 / unit_roundoff(dtype));
  return (most_terms - 1) / repeats;
}

int64_t most_exact_eighths(scatterptx_dtype dtype, int64_t terms) {
  // Values up to 8: varied enough that a row read in place of another shows.
  constexpr int64_t kMostEighths = 64;
  const auto most_terms = static_cast<int64_t>(1 / unit_roundoff(dtype));
  return terms <= 0 ? kMostEighths : std::min(kMostEighths, most_terms / terms);
}

void fill_eighths(HostMatrix& m, int64_t most_eighths, uint64_t seed) {
  if (most_eighths < 1) throw std::invalid_argument("fill_eighths: most_eighths must be at least 1");
  const size_t element = element_bytes(m.dtype);
  scatterptx_testing::parallel_for(0, m.rows, kMinRowsPerThread, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      Rng rng(derive_seed(seed, static_cast<uint64_t>(r)));
      unsigned char* row = m.row(r);
      for (int64_t c = 0; c < m.cols; ++c) {
        const int64_t eighths = 1 + rng.below(most_eighths);
        store_element(m.dtype, row + static_cast<size_t>(c) * element,
                      static_cast<double>(rng.below(2) != 0 ? eighths : -eighths) / 8);
      }
    }
  });
}

namespace {

bool is_finite_eighths(double value) { return std::isfinite(value) && std::floor(value * 8) == value * 8; }

}  // namespace

CheckReport check_exact_sums(const HostMatrix& out0, const HostMatrix& src, const std::vector<int64_t>& index,
                             const HostMatrix& got, int repeats, bool include_self) {
  if (!shapes_agree(out0, src, index, got)) return shapes_disagree("out0, src, index and got");
  const RowsByTarget groups = group_by_target(index, out0.rows);
  const scatterptx_dtype dtype = out0.dtype;
  const size_t element = element_bytes(dtype);
  const double most_exact_sum = 1 / (8 * unit_roundoff(dtype));  // 2^p / 8
  return walk_rows(out0, got, groups, [&] {
    std::vector<unsigned char> expected(element);
    return [&, expected](int64_t r, const unsigned char* before, const unsigned char* after, int64_t begin,
                         int64_t end, PartialCheck& part) mutable {
      for (int64_t c = 0; c < out0.cols; ++c) {
        const size_t at = static_cast<size_t>(c) * element;
        const double initial = include_self ? load_element(dtype, before + at) : 0.0;
        double sum = initial;
        double magnitude = std::fabs(initial);
        bool eighths = is_finite_eighths(initial);
        for (int64_t k = begin; k < end; ++k) {
          const double term = load_element(dtype, src.row(groups.sources[static_cast<size_t>(k)]) + at);
          sum += repeats * term;
          magnitude += repeats * std::fabs(term);
          eighths = eighths && is_finite_eighths(term);
        }
        if (!eighths || !(magnitude <= most_exact_sum)) {
          part.fail(r, "out[" + std::to_string(r) + ", " + std::to_string(c) +
                           "]: the terms are not finite eighths whose absolute values sum to at most " +
                           std::to_string(most_exact_sum) + ", so the sum may round: no exact check");
          continue;
        }
        store_element(dtype, expected.data(), sum);  // exact: sum is a short multiple of 1/8
        const double value = load_element(dtype, after + at);
        if (std::memcmp(expected.data(), after + at, element) != 0) {
          std::ostringstream text;
          text.precision(17);
          text << "out[" << r << ", " << c << "]: got " << value << " (" << hex_bytes(after + at, element)
               << "), the exact sum is " << sum << " (" << hex_bytes(expected.data(), element) << ", "
               << (end - begin) * repeats << " adds)";
          part.fail(r, text.str());
        }
        if (std::isfinite(value)) part.squared_error += (value - sum) * (value - sum);
        part.squared_reference += sum * sum;
      }
    };
  });
}

CheckReport check_scatter_reduce(const HostMatrix& out0, const HostMatrix& src, const std::vector<int64_t>& index,
                                 const HostMatrix& got, const ReduceCheck& check) {
  if (!shapes_agree(out0, src, index, got) ||
      (!check.weights.empty() && static_cast<int64_t>(check.weights.size()) != src.rows)) {
    return shapes_disagree("out0, src, index, weights and got");
  }
  const RowsByTarget groups = group_by_target(index, out0.rows);
  const scatterptx_dtype dtype = out0.dtype;
  const size_t element = element_bytes(dtype);
  const bool extreme = check.reduce == SCATTERPTX_REDUCE_AMAX || check.reduce == SCATTERPTX_REDUCE_AMIN;
  const bool weighted = !check.weights.empty();
  return walk_rows(out0, got, groups, [&] {
    return [&](int64_t r, const unsigned char* before, const unsigned char* after, int64_t begin, int64_t end,
               PartialCheck& part) {
      const int64_t rows = end - begin;
      const double count = static_cast<double>(rows + (check.include_self ? 1 : 0));
      for (int64_t c = 0; c < out0.cols; ++c) {
        const size_t at = static_cast<size_t>(c) * element;
        const double initial = load_element(dtype, before + at);
        double sum = check.include_self ? initial : 0.0;
        double magnitude = check.include_self ? std::fabs(initial) : 0.0;
        bool nan = check.include_self && std::isnan(initial);
        double extremum = check.include_self ? initial
                          : check.reduce == SCATTERPTX_REDUCE_AMAX ? -HUGE_VAL
                                                                    : HUGE_VAL;
        for (int64_t k = begin; k < end; ++k) {
          const int64_t source_row = groups.sources[static_cast<size_t>(k)];
          const double x = load_element(dtype, src.row(source_row) + at);
          const double term = weighted ? x * check.weights[static_cast<size_t>(source_row)] : x;
          nan = nan || std::isnan(term);
          sum += term;
          magnitude += std::fabs(term);
          if (!std::isnan(x)) {
            extremum = check.reduce == SCATTERPTX_REDUCE_AMAX ? std::max(extremum, x) : std::min(extremum, x);
          }
        }
        double reference = extreme ? (nan ? std::nan("") : extremum)
                           : check.reduce == SCATTERPTX_REDUCE_MEAN ? sum / count
                                                                    : sum;
        const double value = load_element(dtype, after + at);
        bool ok = false;
        double bound = 0;
        if (std::isnan(reference)) {
          ok = std::isnan(value);
        } else if (std::isinf(reference) || extreme) {
          ok = value == reference;
        } else {
          const double adds = static_cast<double>(rows) + (weighted ? 1 : 0);
          bound = check.reduce == SCATTERPTX_REDUCE_MEAN
                      ? scatterptx_testing::rounding_error_bound(dtype, adds + 2, magnitude) / count +
                            smallest_normal(dtype)
                      : scatterptx_testing::rounding_error_bound(dtype, adds, magnitude);
          ok = std::fabs(value - reference) <= bound;  // NaN fails
          if (std::isfinite(value)) part.squared_error += (value - reference) * (value - reference);
          part.squared_reference += reference * reference;
        }
        if (!ok) {
          std::ostringstream text;
          text.precision(17);
          text << "out[" << r << ", " << c << "]: got " << value << ", ref " << reference;
          if (bound > 0) text << ", bound " << bound;
          text << " (" << rows << " rows)";
          part.fail(r, text.str());
        }
      }
    };
  });
}

HostWeights random_weights(int64_t count, scatterptx_dtype dtype, uint64_t seed) {
  HostWeights w;
  w.dtype = dtype;
  const size_t element = element_bytes(dtype);
  w.bytes.resize(static_cast<size_t>(count) * element);
  w.values.resize(static_cast<size_t>(count));
  Rng rng(seed);
  for (int64_t i = 0; i < count; ++i) {
    unsigned char* at = w.bytes.data() + static_cast<size_t>(i) * element;
    store_element(dtype, at, 2.0 * rng.nonzero_value());
    w.values[static_cast<size_t>(i)] = load_element(dtype, at);
  }
  return w;
}

std::vector<int64_t> distinct_positions(int64_t count, int64_t begin, int64_t end, uint64_t seed) {
  if (count < 0 || end - begin < count) throw std::invalid_argument("distinct_positions: too few positions");
  Rng rng(seed);
  std::unordered_set<int64_t> taken;
  std::vector<int64_t> positions;
  while (static_cast<int64_t>(positions.size()) < count) {
    const int64_t position = begin + rng.below(end - begin);
    if (taken.insert(position).second) positions.push_back(position);
  }
  return positions;
}

std::string index_error_phrase(int64_t position, int64_t value) {
  return "index[" + std::to_string(position) + "] = " + std::to_string(value) + " is outside";
}

}  // namespace scatterptx_test

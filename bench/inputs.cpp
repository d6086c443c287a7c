#include "inputs.hpp"

#include <algorithm>
#include <cstdio>

#include "driver.hpp"
#include "element_types.hpp"
#include "random_fill.hpp"

namespace scatterptx_bench {
namespace {

// Names the stream of random numbers each part draws from.
enum SeedRole : uint64_t { kSourceSeed = 1, kOutSeed = 2, kIndexSeed = 3 };

void log_generation(const char* what, size_t bytes) {
  std::fprintf(stderr, "scatterptx-bench:   generating %s (%.1f MB)\n", what, bytes / 1e6);
}

// A host buffer left uninitialised: zeroing gigabytes serially would take
// longer than the parallel fill that overwrites it (and faults its pages in).
std::unique_ptr<uint8_t[]> random_host_array(scatterptx_dtype dtype, size_t elements,
                                             uint64_t seed) {
  std::unique_ptr<uint8_t[]> host(new uint8_t[elements * scatterptx_testing::element_bytes(dtype)]);
  fill_random_nonzero(dtype, host.get(), elements, seed);
  return host;
}

std::unique_ptr<SourceInputs> make_source(const Scenario& s, int64_t host_prefix_rows) {
  auto source = std::make_unique<SourceInputs>();
  source->rows = s.src_rows;
  source->cols = s.cols;
  source->dtype = s.dtype;
  const size_t elements = static_cast<size_t>(s.src_rows * s.cols);
  const size_t bytes = elements * scatterptx_testing::element_bytes(s.dtype);
  log_generation("src", bytes);
  const std::unique_ptr<uint8_t[]> host = random_host_array(
      s.dtype, elements, seed_for(kSourceSeed, s.src_rows, s.cols, s.dtype));
  source->src = DeviceBuffer(bytes);
  source->copy_target = DeviceBuffer(bytes);
  copy_to_device(source->src.address(), host.get(), bytes);
  // Only the rows the correctness check reads stay on the host.
  source->host_prefix_rows = std::min(s.src_rows, host_prefix_rows);
  const size_t prefix_bytes = static_cast<size_t>(source->host_prefix_rows) *
                              static_cast<size_t>(row_bytes(s));
  source->host_prefix.assign(host.get(), host.get() + prefix_bytes);
  return source;
}

std::unique_ptr<OutInputs> make_out(const Scenario& s) {
  auto out = std::make_unique<OutInputs>();
  out->rows = s.out_rows;
  out->cols = s.cols;
  out->dtype = s.dtype;
  const size_t elements = static_cast<size_t>(s.out_rows * s.cols);
  const size_t bytes = elements * scatterptx_testing::element_bytes(s.dtype);
  log_generation("out", bytes);
  out->host = random_host_array(s.dtype, elements, seed_for(kOutSeed, s.out_rows, s.cols, s.dtype));
  out->out = DeviceBuffer(bytes);
  out->pristine = DeviceBuffer(bytes);
  copy_to_device(out->pristine.address(), out->host.get(), bytes);
  check_driver(driver().cuMemcpyDtoD(out->out.address(), out->pristine.address(), bytes),
           "cuMemcpyDtoD");
  return out;
}

std::unique_ptr<IndexInputs> make_index_inputs(const Scenario& s, int64_t host_prefix_rows) {
  auto index = std::make_unique<IndexInputs>();
  index->kind = s.kind;
  index->experts = s.experts;
  index->src_rows = s.src_rows;
  index->out_rows = s.out_rows;
  log_generation("index", static_cast<size_t>(s.src_rows) * sizeof(int64_t));
  const std::vector<int64_t> host = scenario_index(s);
  index->distinct_targets = count_distinct_targets(host, s.out_rows);
  index->index = DeviceBuffer(host.size() * sizeof(int64_t));
  copy_to_device(index->index.address(), host.data(), host.size() * sizeof(int64_t));
  const size_t prefix = static_cast<size_t>(std::min(s.src_rows, host_prefix_rows));
  index->host_prefix.assign(host.begin(), host.begin() + static_cast<std::ptrdiff_t>(prefix));
  return index;
}

}  // namespace

std::vector<int64_t> scenario_index(const Scenario& s) {
  // The experts enter above the kind's bits: zero for every other kind,
  // whose seeds stay what they were before moe_topk existed.
  const uint64_t kind_and_experts =
      static_cast<uint64_t>(s.kind) | static_cast<uint64_t>(s.experts) << 32;
  return make_index(s.kind, s.src_rows, s.out_rows, s.experts,
                    seed_for(kIndexSeed, kind_and_experts, s.src_rows, s.out_rows));
}

ProblemInputs InputCache::prepare(const Scenario& s) {
  const bool source_stale = !source_ || source_->rows != s.src_rows || source_->cols != s.cols ||
                            source_->dtype != s.dtype;
  const bool out_stale =
      !out_ || out_->rows != s.out_rows || out_->cols != s.cols || out_->dtype != s.dtype;
  const bool index_stale = !index_ || index_->kind != s.kind || index_->experts != s.experts ||
                           index_->src_rows != s.src_rows || index_->out_rows != s.out_rows;
  // Free every stale part before allocating any replacement, so device
  // memory never holds two scenarios' worth.
  if (source_stale) source_.reset();
  if (out_stale) out_.reset();
  if (index_stale) index_.reset();
  if (source_stale) source_ = make_source(s, host_prefix_rows_);
  if (out_stale) out_ = make_out(s);
  if (index_stale) index_ = make_index_inputs(s, host_prefix_rows_);
  return ProblemInputs{source_.get(), out_.get(), index_.get()};
}

}  // namespace scatterptx_bench

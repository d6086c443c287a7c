// The inputs of a scenario on the device, plus the host copies the
// correctness check needs, cached so neighbouring scenarios reuse them.
//
// Three independent parts, each regenerated only when its defining numbers
// change: src (M, D, dtype), out (T, D, dtype) and index (kind, M, T; moe_topk's experts). A part
// is freed before its replacement is allocated, so device memory holds one
// scenario's worth at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "driver.hpp"
#include "scenarios.hpp"

namespace scatterptx_bench {

struct SourceInputs {
  int64_t rows = 0;
  int64_t cols = 0;
  scatterptx_dtype dtype = SCATTERPTX_F32;
  DeviceBuffer src;
  DeviceBuffer copy_target;  // where the reference copy of src is written
  std::vector<uint8_t> host_prefix;  // the first host_prefix_rows rows, for the reference
  int64_t host_prefix_rows = 0;
};

struct OutInputs {
  int64_t rows = 0;
  int64_t cols = 0;
  scatterptx_dtype dtype = SCATTERPTX_F32;
  DeviceBuffer out;       // what scatter_add writes into
  DeviceBuffer pristine;  // out as generated, to restore out before a check
  std::unique_ptr<uint8_t[]> host;  // out as generated, on the host
};

struct IndexInputs {
  IndexKind kind = IndexKind::uniform;
  int64_t experts = 0;  // moe_topk's
  int64_t src_rows = 0;
  int64_t out_rows = 0;
  DeviceBuffer index;  // int64, src_rows entries
  std::vector<int64_t> host_prefix;  // the first host_prefix_rows entries
  int64_t distinct_targets = 0;      // distinct values in the whole index
};

struct ProblemInputs {
  const SourceInputs* source = nullptr;
  const OutInputs* out = nullptr;
  const IndexInputs* index = nullptr;
};

// The scenario's index on the host, the same whenever it is made.
std::vector<int64_t> scenario_index(const Scenario& scenario);

class InputCache {
 public:
  // host_prefix_rows: how many leading src rows and index entries to keep on
  // the host (the most any correctness check will use).
  explicit InputCache(int64_t host_prefix_rows) : host_prefix_rows_(host_prefix_rows) {}

  // Generates (or reuses) and uploads the inputs of scenario. Throws
  // BenchError on a failed driver call. The pointers stay valid until the
  // next prepare().
  ProblemInputs prepare(const Scenario& scenario);

 private:
  int64_t host_prefix_rows_;
  std::unique_ptr<SourceInputs> source_;
  std::unique_ptr<OutInputs> out_;
  std::unique_ptr<IndexInputs> index_;
};

}  // namespace scatterptx_bench

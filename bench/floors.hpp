// The two memory-traffic floors of the performance model and how a
// measured time compares with them.
//
//   ideal    = M*row_bytes + M*idx_bytes + 2*T*row_bytes  (each out row read and written once)
//   no-reuse = M*row_bytes + M*idx_bytes + 2*M*row_bytes  (every reduction a DRAM read-modify-write)
//
// T is the number of distinct target rows. A floor's time is its bytes at
// the bandwidth of this scenario's own device-to-device copy of src
// (bytes read + written), so both are measured in the same run.
#pragma once

#include <cstdint>

namespace scatterptx_bench {

struct FloorBytes {
  double ideal = 0;
  double no_reuse = 0;
};

FloorBytes floor_bytes(int64_t src_rows, int64_t distinct_targets, int64_t row_bytes,
                       int64_t index_bytes);

// Bytes a copy of src moves: read once and written once.
double copy_bytes(int64_t src_rows, int64_t row_bytes);

struct FloorComparison {
  double copy_bandwidth_gbs = 0;  // copy_bytes / copy time
  double ideal_gbs = 0;           // ideal bytes / scatter time
  double percent_of_ideal = 0;    // ideal floor time / scatter time * 100
  double percent_of_no_reuse = 0; // no-reuse floor time / scatter time * 100
  double scatter_over_copy = 0;   // scatter time / copy time
};

FloorComparison compare_with_floors(const FloorBytes& floors, double copy_bytes_moved,
                                    double copy_ms, double scatter_ms);

}  // namespace scatterptx_bench

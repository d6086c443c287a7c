#include "floors.hpp"

namespace scatterptx_bench {

FloorBytes floor_bytes(int64_t src_rows, int64_t distinct_targets, int64_t row_bytes,
                       int64_t index_bytes) {
  const double m = static_cast<double>(src_rows);
  const double t = static_cast<double>(distinct_targets);
  const double row = static_cast<double>(row_bytes);
  const double streamed = m * row + m * static_cast<double>(index_bytes);
  FloorBytes floors;
  floors.ideal = streamed + 2 * t * row;
  floors.no_reuse = streamed + 2 * m * row;
  return floors;
}

double copy_bytes(int64_t src_rows, int64_t row_bytes) {
  return 2.0 * static_cast<double>(src_rows) * static_cast<double>(row_bytes);
}

FloorComparison compare_with_floors(const FloorBytes& floors, double copy_bytes_moved,
                                    double copy_ms, double scatter_ms) {
  FloorComparison c;
  if (copy_ms <= 0 || scatter_ms <= 0) return c;
  const double bandwidth = copy_bytes_moved / (copy_ms * 1e-3);  // bytes per second
  const double scatter_s = scatter_ms * 1e-3;
  c.copy_bandwidth_gbs = bandwidth / 1e9;
  c.ideal_gbs = floors.ideal / scatter_s / 1e9;
  c.percent_of_ideal = 100.0 * (floors.ideal / bandwidth) / scatter_s;
  c.percent_of_no_reuse = 100.0 * (floors.no_reuse / bandwidth) / scatter_s;
  c.scatter_over_copy = scatter_ms / copy_ms;
  return c;
}

}  // namespace scatterptx_bench

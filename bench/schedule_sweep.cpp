#include "schedule_sweep.hpp"

namespace scatterptx_bench {

uint64_t schedule_shared_bytes(const scatterptx_schedule& s) {
  return uint64_t{s.warps_per_cta} * s.stages * s.chunk_bytes;
}

std::vector<scatterptx_schedule> sweep_schedules() {
  std::vector<scatterptx_schedule> grid;
  for (uint32_t chunk_bytes : {512u, 1024u, 2048u, 4096u, 8192u, 16384u}) {
    for (uint32_t stages : {2u, 3u, 4u, 6u}) {
      for (uint32_t warps : {1u, 2u, 4u}) {
        for (uint32_t ctas_per_sm : {0u, 4u, 8u, 16u}) {
          const scatterptx_schedule schedule{chunk_bytes, stages, warps, ctas_per_sm};
          if (schedule_shared_bytes(schedule) > kSweepMaxSharedBytes) continue;
          grid.push_back(schedule);
        }
      }
    }
  }
  return grid;
}

std::string describe_schedule(const scatterptx_schedule& s) {
  auto field = [](uint32_t value) { return value == 0 ? std::string("auto") : std::to_string(value); };
  return "chunk=" + field(s.chunk_bytes) + " stages=" + field(s.stages) +
         " warps=" + field(s.warps_per_cta) + " ctas/sm=" + field(s.ctas_per_sm);
}

}  // namespace scatterptx_bench

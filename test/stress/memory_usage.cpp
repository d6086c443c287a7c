#include "memory_usage.hpp"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace scatterptx_stress {

int64_t rss_bytes_from_statm(const std::string& statm, int64_t page_bytes) {
  std::istringstream fields(statm);
  long long size_pages = -1;
  long long resident_pages = -1;
  if (!(fields >> size_pages >> resident_pages) || resident_pages < 0) return -1;
  return static_cast<int64_t>(resident_pages) * page_bytes;
}

void map_large_blocks_alone() { mallopt(M_MMAP_THRESHOLD, 128 * 1024); }

int64_t current_rss_bytes() {
  malloc_trim(0);
  std::ifstream file("/proc/self/statm");
  std::string text;
  if (!std::getline(file, text)) return -1;
  return rss_bytes_from_statm(text, static_cast<int64_t>(sysconf(_SC_PAGESIZE)));
}

std::string format_mib(int64_t bytes) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

std::string memory_growth_verdict(const MemoryReading& before, const MemoryReading& after,
                                  int64_t device_slack_mib, int64_t rss_slack_mib) {
  std::string verdict;
  const auto add = [&](const std::string& sentence) { verdict += (verdict.empty() ? "" : "; ") + sentence; };
  const int64_t device_growth = after.device_outside_pools() - before.device_outside_pools();
  if (device_growth > device_slack_mib * (int64_t{1} << 20)) {
    add("device memory in use outside the workspace pools grew by " + format_mib(device_growth) + " (" +
        format_mib(before.device_outside_pools()) + " -> " + format_mib(after.device_outside_pools()) +
        "), more than the " + std::to_string(device_slack_mib) + " MiB allowed");
  }
  if (after.pool_used_bytes != 0) {
    add(std::to_string(after.pool_used_bytes) +
        " bytes of the library's workspace pools are still in use after every call finished");
  }
  if (before.rss_bytes < 0 || after.rss_bytes < 0) {
    add("host RSS could not be read from /proc/self/statm");
  } else if (after.rss_bytes - before.rss_bytes > rss_slack_mib * (int64_t{1} << 20)) {
    add("host RSS grew by " + format_mib(after.rss_bytes - before.rss_bytes) + " (" + format_mib(before.rss_bytes) +
        " -> " + format_mib(after.rss_bytes) + "), more than the " + std::to_string(rss_slack_mib) +
        " MiB allowed");
  }
  return verdict;
}

}  // namespace scatterptx_stress

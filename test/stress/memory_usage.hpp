// Device memory and host RSS, read after the warm-up and at the end: a leak
// per call shows as growth between the two. The library's workspace pools
// keep what they have handed out for reuse (a release threshold of
// UINT64_MAX, as PyTorch's caching allocator), and graph memory is cached
// by the driver, so both are read on their own and taken out of the device
// figure: what they hold may grow to the run's peak of concurrent calls
// without being a leak. A workspace never given back shows instead as pool
// memory still in use once every call has finished.
#pragma once

#include <cstdint>
#include <string>

namespace scatterptx_stress {

struct MemoryReading {
  int64_t device_used_bytes = 0;    // total - free (cuMemGetInfo): the whole device
  int64_t pool_reserved_bytes = 0;  // held by the library's workspace pools, every context
  int64_t pool_used_bytes = 0;      // of which handed out and not given back
  int64_t graph_reserved_bytes = 0; // graph memory the driver still holds after a trim
  int64_t rss_bytes = 0;            // resident set of this process; -1 unreadable

  // Device memory in use outside the pools and graph memory.
  int64_t device_outside_pools() const { return device_used_bytes - pool_reserved_bytes - graph_reserved_bytes; }
};

// Resident bytes from the text of /proc/self/statm ("size resident ...", in
// pages); -1 when the text does not parse.
int64_t rss_bytes_from_statm(const std::string& statm, int64_t page_bytes);

// Has the C library map every heap block of 128 KiB or more on its own and
// unmap it when freed. Left to itself, glibc raises that threshold after
// such a free, and the workers' freed input buffers then stay behind as
// fragments of their threads' arenas that malloc_trim cannot hand back, and
// RSS reads them as growth (docs/stress.md). Call before any thread starts.
void map_large_blocks_alone();

// This process's resident bytes after handing the C library's free heap
// memory back to the system (malloc_trim), so that memory kept for reuse
// does not read as growth. -1 when /proc/self/statm cannot be read.
int64_t current_rss_bytes();

// "" when device memory outside the pools grew by at most device_slack_mib,
// RSS by at most rss_slack_mib, and no pool memory is in use at the end;
// else what is wrong.
std::string memory_growth_verdict(const MemoryReading& before, const MemoryReading& after,
                                  int64_t device_slack_mib, int64_t rss_slack_mib);

// "1234.5 MiB".
std::string format_mib(int64_t bytes);

}  // namespace scatterptx_stress

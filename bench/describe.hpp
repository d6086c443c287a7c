// scatterptx-bench --describe FILE: the scenarios with their floors' bytes,
// the error bound and the timing defaults as JSON, without a GPU. This is
// how bench/compare.py gets them, so each is defined once, here in C++.
#pragma once

#include <string>
#include <vector>

#include "scenarios.hpp"

namespace scatterptx_bench {

// Builds each scenario's index on the host (as the timed run does) to count
// its distinct targets. With an index_dir, also writes that index there as
// <name>.int64 (raw little-endian int64, the file's path in the JSON), so
// that compare.py times the very index the bench does. Throws BenchError
// when a file cannot be written.
void write_description(const std::string& path, const std::vector<Scenario>& scenarios, bool quick,
                       int64_t head_start_cycles, const std::string& index_dir);

}  // namespace scatterptx_bench

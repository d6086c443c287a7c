// The command line of scatterptx_stress.
#pragma once

#include <cstdint>
#include <string>

namespace scatterptx_stress {

struct Options {
  int64_t calls = 1000;        // --calls: checked calls after the warm-up
  double seconds = 0;          // --seconds: run for this long instead (a soak); 0: count calls
  int threads = 4;             // --threads: host threads making calls
  int streams = 4;             // --streams: streams per thread in each context
  uint64_t seed = 0;           // --seed; seed_given false: a fresh one, printed
  bool seed_given = false;
  int64_t replay = -1;         // --replay N: only call N of the seed, on one thread
  int graph_replays = 1000;    // --graph-replays: launches of each captured graph
  int64_t device_slack_mib = 64;  // --device-slack-mib: device memory growth allowed
  int64_t rss_slack_mib = 64;     // --rss-slack-mib: host RSS growth allowed
  int max_failures = 20;       // --max-failures: stop early after this many
  int hang_seconds = 300;      // --hang-seconds: no call finished for this long is a hang
  int device = 0;              // --device: CUDA device ordinal
  bool help = false;
};

// Fills *options, or returns false with *error saying what is wrong.
bool parse_options(int argc, const char* const* argv, Options* options, std::string* error);

// The --help text.
std::string usage_text();

// Exit statuses, as scatterptx-bench's.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // a call failed, a result was wrong, memory grew, or a hang
constexpr int kExitNoGpu = 2;    // no driver, no device, or a GPU below sm_90
constexpr int kExitUsage = 64;   // bad command line

}  // namespace scatterptx_stress

#include "options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace scatterptx_stress {
namespace {

bool parse_integer(const std::string& text, int64_t minimum, int64_t maximum, int64_t* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size() || parsed < minimum || parsed > maximum) return false;
  *value = parsed;
  return true;
}

bool parse_seed(const std::string& text, uint64_t* value) {
  if (text.empty() || text[0] == '-') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(text.c_str(), &end, 0);  // 0x... too
  if (errno != 0 || end != text.c_str() + text.size()) return false;
  *value = parsed;
  return true;
}

bool parse_seconds(const std::string& text, double* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(parsed) || parsed <= 0 ||
      parsed > 7 * 24 * 3600.0) {
    return false;
  }
  *value = parsed;
  return true;
}

}  // namespace

std::string usage_text() {
  return R"(usage: scatterptx_stress [options]

Random-shape calls of every kind libscatterptx has, from several threads on
several streams in two CUDA contexts at once, each checked against a float64
host reference; device memory and host RSS must stay flat. Kinds: the
default call (grouping AUTO), forced paths (tma, red, private; grouping
OFF), scatter_add_grouped in a caller workspace (segmented, deterministic,
auto, streaming), plans created, executed and destroyed concurrently,
RECORD-mode calls with out-of-range indices racing take_index_error (and
CHECKED-mode ones), and captured CUDA graphs replayed --graph-replays times.

  --calls N             checked calls after the warm-up (default 1000)
  --seconds S           run for S seconds instead of a call count (a soak)
  --threads T           host threads making calls (default 4)
  --streams S           streams per thread in each context (default 4)
  --seed N              seed of every case (default: a fresh one, printed)
  --replay N            run only call N of --seed, alone, and report it
  --graph-replays N     launches of each captured graph (default 1000)
  --device-slack-mib N  growth of device memory outside the library's workspace
                        pools allowed, warm-up to end (default 64)
  --rss-slack-mib N     host RSS growth allowed, warm-up to end (default 64)
  --max-failures N      stop after N failed calls (default 20)
  --hang-seconds N      fail when no call finishes for N seconds (default 300)
  --device N            CUDA device ordinal (default 0)
  --help                this text

Exit status: 0 every call correct and memory flat, 1 a failure (the first
few are printed with their shapes and a --replay line), 2 no CUDA GPU
(sm_90+) available, 64 bad command line.
)";
}

bool parse_options(int argc, const char* const* argv, Options* options, std::string* error) {
  Options parsed;
  bool calls_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      parsed.help = true;
      continue;
    }
    static const char* const kValueOptions[] = {
        "--calls",         "--seconds",         "--threads",       "--streams",
        "--seed",          "--replay",          "--graph-replays", "--device-slack-mib",
        "--rss-slack-mib", "--max-failures",    "--hang-seconds",  "--device"};
    bool takes_value = false;
    for (const char* known : kValueOptions) takes_value = takes_value || flag == known;
    if (!takes_value) {
      *error = flag.rfind("-", 0) == 0 ? "unknown option '" + flag + "'" : "unexpected argument '" + flag + "'";
      return false;
    }
    if (i + 1 >= argc) {
      *error = flag + " needs a value";
      return false;
    }
    const std::string value = argv[++i];
    int64_t number = 0;
    // An integer option in [minimum, maximum], or false with the error set.
    auto integer = [&](int64_t minimum, int64_t maximum) {
      if (parse_integer(value, minimum, maximum, &number)) return true;
      *error = flag + " wants an integer in [" + std::to_string(minimum) + ", " + std::to_string(maximum) +
               "], got '" + value + "'";
      return false;
    };
    if (flag == "--calls") {
      if (!integer(1, int64_t{1} << 40)) return false;
      parsed.calls = number;
      calls_given = true;
    } else if (flag == "--seconds") {
      if (!parse_seconds(value, &parsed.seconds)) {
        *error = "--seconds wants a positive number of seconds (at most a week), got '" + value + "'";
        return false;
      }
    } else if (flag == "--threads") {
      if (!integer(1, 64)) return false;
      parsed.threads = static_cast<int>(number);
    } else if (flag == "--streams") {
      if (!integer(1, 64)) return false;
      parsed.streams = static_cast<int>(number);
    } else if (flag == "--seed") {
      if (!parse_seed(value, &parsed.seed)) {
        *error = "--seed wants an unsigned 64-bit integer, got '" + value + "'";
        return false;
      }
      parsed.seed_given = true;
    } else if (flag == "--replay") {
      if (!integer(0, int64_t{1} << 40)) return false;
      parsed.replay = number;
    } else if (flag == "--graph-replays") {
      if (!integer(1, 1000000)) return false;
      parsed.graph_replays = static_cast<int>(number);
    } else if (flag == "--device-slack-mib") {
      if (!integer(0, int64_t{1} << 20)) return false;
      parsed.device_slack_mib = number;
    } else if (flag == "--rss-slack-mib") {
      if (!integer(0, int64_t{1} << 20)) return false;
      parsed.rss_slack_mib = number;
    } else if (flag == "--max-failures") {
      if (!integer(1, 1000000)) return false;
      parsed.max_failures = static_cast<int>(number);
    } else if (flag == "--hang-seconds") {
      if (!integer(10, 86400)) return false;
      parsed.hang_seconds = static_cast<int>(number);
    } else if (flag == "--device") {
      if (!integer(0, 1023)) return false;
      parsed.device = static_cast<int>(number);
    }
  }
  if (calls_given && parsed.seconds > 0) {
    *error = "--calls and --seconds both bound the run; give one";
    return false;
  }
  if (parsed.replay >= 0 && !parsed.seed_given) {
    *error = "--replay needs the --seed of the run it replays";
    return false;
  }
  if (parsed.replay >= 0 && (calls_given || parsed.seconds > 0)) {
    *error = "--replay runs one call; it takes no --calls or --seconds";
    return false;
  }
  *options = parsed;
  return true;
}

}  // namespace scatterptx_stress

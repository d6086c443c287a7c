#include "options.hpp"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>

namespace scatterptx_bench {
namespace {

bool parse_int(const std::string& text, long minimum, long maximum, long* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long parsed = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size() || parsed < minimum || parsed > maximum) {
    return false;
  }
  *value = parsed;
  return true;
}

bool parse_path(const std::string& text, scatterptx_path* path) {
  if (text == "auto") {
    *path = SCATTERPTX_PATH_AUTO;
  } else if (text == "tma") {
    *path = SCATTERPTX_PATH_TMA;
  } else if (text == "red") {
    *path = SCATTERPTX_PATH_RED;
  } else if (text == "private") {
    *path = SCATTERPTX_PATH_PRIVATE;
  } else {
    return false;
  }
  return true;
}

}  // namespace

const char* path_name(scatterptx_path path) {
  switch (path) {
    case SCATTERPTX_PATH_AUTO: return "auto";
    case SCATTERPTX_PATH_TMA: return "tma";
    case SCATTERPTX_PATH_RED: return "red";
    case SCATTERPTX_PATH_PRIVATE: return "private";
  }
  return "?";
}

std::string usage_text() {
  return R"(usage: scatterptx-bench [options]

Times out[index[i], :] += src[i, :] through libscatterptx against a
device-to-device copy of src on a suite of scenarios, after checking each
execution on a prefix against a float64 CPU reference. CUDA events, warm-up
runs, median of the timed runs, L2 flushed and a GPU sleep queued before
every run.

  --json FILE           also write every result, with the raw run times, as JSON
  --describe FILE       write the selected scenarios with their floors' bytes,
                        the error bound and the head start as JSON, and exit
                        (no GPU needed; bench/compare.py reads it)
  --index-dir DIR       with --describe: also write each scenario's index to
                        DIR/NAME.int64 (raw int64), the index the bench times
  --scenario NAME       run only scenarios whose name contains NAME (repeatable)
  --shape K:M:T:D:DT    run this one case instead of the suite (repeatable);
                        K uniform|high_cont|sorted|few_targets|few_idx|
                        power_law|zipf|moe_topk/E (E experts, M = k * T),
                        M and T counts (7.77e6, 1.72M, 500K), DT f32|f16|bf16|f64
  --mode M              what to time (repeatable; default: streaming, segmented)
                        streaming: scatterptx_scatter_add, grouping off
                        segmented: grouped by target, three timings:
                          scatterptx_scatter_add_grouped (workspace
                          allocated beforehand), scatterptx_plan_create,
                          and execute of a plan built beforehand
                        deterministic: segmented, bitwise reproducible
                        auto: the grouped API with mode AUTO (the
                          planner's choice; same three timings)
                        all: every mode
  --path auto|tma|red|private  streaming: force a kernel path (default auto)
  --chunk-bytes N       TMA schedule override: bytes of a row per stage
  --stages N            TMA schedule override: shared-memory stages per warp
                        (path private: stages per CTA)
  --warps N             TMA schedule override: pipelines per CTA
                        (path private: consumer warps per CTA)
  --ctas-per-sm N       TMA schedule override: persistent CTAs per SM
  --runs N              timed runs per measurement (default 20)
  --warmup N            untimed runs first (default 3)
  --head-start-cycles N GPU clock cycles of sleep queued after each flush,
                        before the start event, so that no host time lands
                        in a timing (default 200000, about 100 us; 0: none)
  --quick               smaller sizes, for smoke runs
  --sweep               also time a grid of TMA schedules per scenario and
                        report the best (path tma unless --path is given;
                        needs the streaming mode)
  --path-choice         also time every forced path (tma, red, private) after
                        the planner's choice, and report AUTO against the
                        fastest (needs the streaming mode, no --path)
  --device N            CUDA device ordinal (default 0)
  --help                this text

Exit status: 0 all correct, 1 a call failed or a result was WRONG,
2 no CUDA GPU (sm_90+) available, 64 bad command line.
)";
}

bool parse_options(int argc, char** argv, Options* options, std::string* error) {
  Options parsed;
  bool modes_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      parsed.help = true;
      continue;
    }
    if (flag == "--quick") {
      parsed.quick = true;
      continue;
    }
    if (flag == "--sweep") {
      parsed.sweep = true;
      continue;
    }
    if (flag == "--path-choice") {
      parsed.path_choice = true;
      continue;
    }
    static const char* const kValueOptions[] = {
        "--json",  "--describe",    "--index-dir", "--scenario", "--shape",  "--mode",
        "--path",  "--chunk-bytes", "--stages",    "--warps",    "--ctas-per-sm", "--runs",
        "--warmup", "--device",     "--head-start-cycles"};
    bool takes_value = false;
    for (const char* known : kValueOptions) takes_value = takes_value || flag == known;
    if (!takes_value) {
      *error = flag.rfind("-", 0) == 0 ? "unknown option '" + flag + "'"
                                       : "unexpected argument '" + flag + "'";
      return false;
    }
    if (i + 1 >= argc) {
      *error = flag + " needs a value";
      return false;
    }
    const std::string value = argv[++i];
    long number = 0;
    auto schedule_field = [&](uint32_t* field) {
      if (!parse_int(value, 1, static_cast<long>(UINT32_MAX), &number)) {
        *error = flag + " wants a positive integer, got '" + value + "'";
        return false;
      }
      *field = static_cast<uint32_t>(number);
      parsed.schedule_given = true;
      return true;
    };
    if (flag == "--json") {
      parsed.json_path = value;
    } else if (flag == "--describe") {
      parsed.describe_path = value;
    } else if (flag == "--index-dir") {
      parsed.index_dir = value;
    } else if (flag == "--scenario") {
      parsed.scenario_filters.push_back(value);
    } else if (flag == "--shape") {
      parsed.shapes.push_back(value);
    } else if (flag == "--mode") {
      if (!modes_given) parsed.modes.clear();  // the first --mode replaces the default
      modes_given = true;
      if (!add_execution_modes(value, &parsed.modes)) {
        *error = "--mode wants streaming, segmented, deterministic, auto or all, got '" + value + "'";
        return false;
      }
    } else if (flag == "--path") {
      if (!parse_path(value, &parsed.path)) {
        *error = "--path wants auto, tma, red or private, got '" + value + "'";
        return false;
      }
      parsed.path_given = true;
    } else if (flag == "--chunk-bytes") {
      if (!schedule_field(&parsed.schedule.chunk_bytes)) return false;
    } else if (flag == "--stages") {
      if (!schedule_field(&parsed.schedule.stages)) return false;
    } else if (flag == "--warps") {
      if (!schedule_field(&parsed.schedule.warps_per_cta)) return false;
    } else if (flag == "--ctas-per-sm") {
      if (!schedule_field(&parsed.schedule.ctas_per_sm)) return false;
    } else if (flag == "--runs") {
      if (!parse_int(value, 1, 100000, &number)) {
        *error = "--runs wants an integer in [1, 100000], got '" + value + "'";
        return false;
      }
      parsed.runs = static_cast<int>(number);
    } else if (flag == "--warmup") {
      if (!parse_int(value, 0, 100000, &number)) {
        *error = "--warmup wants an integer in [0, 100000], got '" + value + "'";
        return false;
      }
      parsed.warmup_runs = static_cast<int>(number);
    } else if (flag == "--head-start-cycles") {
      if (!parse_int(value, 0, 1000000000, &number)) {
        *error = "--head-start-cycles wants an integer in [0, 1e9], got '" + value + "'";
        return false;
      }
      parsed.head_start_cycles = number;
    } else if (flag == "--device") {
      if (!parse_int(value, 0, INT_MAX, &number)) {
        *error = "--device wants a device ordinal, got '" + value + "'";
        return false;
      }
      parsed.device = static_cast<int>(number);
    }
  }
  if (!parsed.index_dir.empty() && parsed.describe_path.empty()) {
    *error = "--index-dir goes with --describe";
    return false;
  }
  if (parsed.sweep && parsed.schedule_given) {
    *error = "--sweep chooses the schedules itself; drop --chunk-bytes/--stages/--warps/--ctas-per-sm";
    return false;
  }
  if (parsed.path_choice && (parsed.path_given || parsed.schedule_given)) {
    *error = "--path-choice compares the planner's own choice with every path; drop --path and the schedule";
    return false;
  }
  if (parsed.path_choice && !has_mode(parsed.modes, ExecutionMode::streaming)) {
    *error = "--path-choice times paths of the streaming mode; add --mode streaming";
    return false;
  }
  if (parsed.sweep && !has_mode(parsed.modes, ExecutionMode::streaming)) {
    *error = "--sweep times schedules of the streaming path; add --mode streaming";
    return false;
  }
  *options = parsed;
  return true;
}

}  // namespace scatterptx_bench

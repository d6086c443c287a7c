#include "report.hpp"

#include <fstream>

#include "driver.hpp"
#include "element_types.hpp"
#include "json_writer.hpp"
#include "options.hpp"
#include "path_choice.hpp"
#include "schedule_sweep.hpp"
#include "text_table.hpp"

namespace scatterptx_bench {
namespace {

using Align = TextTable::Align;

std::string format_bytes_mib(double bytes) { return format_fixed(bytes / (1024.0 * 1024.0), 1) + " MiB"; }

std::string mode_list(const std::vector<ExecutionMode>& modes) {
  std::string text;
  for (ExecutionMode mode : modes) text += (text.empty() ? "" : ", ") + std::string(execution_mode_name(mode));
  return text;
}

bool has_grouped_mode(const std::vector<ExecutionMode>& modes) {
  for (ExecutionMode mode : modes) {
    if (mode != ExecutionMode::streaming) return true;
  }
  return false;
}

void write_schedule(JsonWriter& json, const scatterptx_schedule& s) {
  json.begin_object();
  json.field("chunk_bytes", s.chunk_bytes);
  json.field("stages", s.stages);
  json.field("warps_per_cta", s.warps_per_cta);
  json.field("ctas_per_sm", s.ctas_per_sm);
  json.end_object();
}

void write_timing(JsonWriter& json, const TimingResult& t) {
  json.begin_object();
  json.field("median_ms", t.median_ms);
  json.field("min_ms", t.min_ms);
  json.field("max_ms", t.max_ms);
  json.field("runs_ms", t.run_ms);
  json.end_object();
}

void write_check(JsonWriter& json, const CheckResult& c) {
  json.begin_object();
  json.field("ok", c.ok);
  json.field("src_rows_checked", c.src_rows_checked);
  json.field("touched_rows", c.touched_rows);
  json.field("neighbour_rows", c.neighbour_rows);
  json.field("max_relative_error", c.max_relative_error);
  json.field("tolerance", c.tolerance);
  json.field("failure", c.failure);
  json.end_object();
}

// The fields every forced run has, after the keys that say what was forced.
void write_forced_run_fields(JsonWriter& json, const ForcedRun& run) {
  json.field("accepted", run.accepted);
  if (run.accepted) {
    json.field("plan", run.plan);
    json.key("check");
    write_check(json, run.check);
    json.key("scatter");
    write_timing(json, run.timing);
  } else {
    json.field("rejection", run.rejection);
  }
}

void write_sweep_point(JsonWriter& json, const SweepPoint& p) {
  json.begin_object();
  json.key("schedule");
  write_schedule(json, p.schedule);
  json.field("shared_bytes", static_cast<int64_t>(schedule_shared_bytes(p.schedule)));
  write_forced_run_fields(json, p);
  json.end_object();
}

void write_path_point(JsonWriter& json, const PathPoint& p) {
  json.begin_object();
  json.field("path", path_name(p.path));
  write_forced_run_fields(json, p);
  json.end_object();
}

void write_floor_comparison(JsonWriter& json, const std::string& prefix, const FloorComparison& c) {
  json.field(prefix + "ideal_gbs", c.ideal_gbs);
  json.field(prefix + "percent_of_ideal_floor", c.percent_of_ideal);
  json.field(prefix + "percent_of_no_reuse_floor", c.percent_of_no_reuse);
}

void write_grouped(JsonWriter& json, const GroupedResult& g, const ScenarioResult& r) {
  json.begin_object();
  json.field("mode", execution_mode_name(g.mode));
  json.field("check_result", check_label(g));
  if (g.refused) {
    json.field("refusal", g.refusal);
    json.end_object();
    return;
  }
  json.field("plan", g.plan);
  json.field("workspace_bytes", static_cast<int64_t>(g.workspace_bytes));
  json.key("single_shot_check");
  write_check(json, g.single_shot_check);
  json.key("plan_check");
  write_check(json, g.plan_check);
  json.key("single_shot");
  write_timing(json, g.single_shot);
  json.key("plan_build");
  write_timing(json, g.plan_build);
  json.key("plan_execute");
  write_timing(json, g.plan_execute);
  write_floor_comparison(json, "single_shot_", g.single_shot_comparison);
  write_floor_comparison(json, "execute_", g.execute_comparison);
  if (r.streaming_selected && !r.skipped) {
    json.field("streaming_over_single_shot", r.scatter.median_ms / g.single_shot.median_ms);
    json.field("streaming_over_execute", r.scatter.median_ms / g.plan_execute.median_ms);
  }
  json.end_object();
}

void write_scenario(JsonWriter& json, const ScenarioResult& r) {
  const Scenario& s = r.scenario;
  json.begin_object();
  json.field("name", s.name);
  json.field("kind", index_kind_text(s));
  json.field("dtype", scatterptx_dtype_name(s.dtype));
  json.field("src_rows", s.src_rows);
  json.field("out_rows", s.out_rows);
  json.field("cols", s.cols);
  json.field("row_bytes", r.row_bytes);
  json.field("index_bytes", r.index_bytes);
  json.field("distinct_targets", r.distinct_targets);
  json.key("copy");
  write_timing(json, r.copy);
  json.field("copy_bytes", r.copy_bytes_moved);
  json.field("copy_bandwidth_gbs", r.copy_bytes_moved / (r.copy.median_ms * 1e-3) / 1e9);
  json.field("ideal_floor_bytes", r.floors.ideal);
  json.field("no_reuse_floor_bytes", r.floors.no_reuse);
  if (!r.grouped.empty()) {
    json.key("grouped");
    json.begin_array();
    for (const GroupedResult& grouped : r.grouped) write_grouped(json, grouped, r);
    json.end_array();
  }
  // The streaming mode's fields, as before grouped modes existed.
  json.field("check_result", check_label(r));
  if (!r.streaming_selected) {
    json.end_object();
    return;
  }
  json.field("path", path_name(r.path));
  json.key("schedule");
  if (r.has_schedule) {
    write_schedule(json, r.schedule);
  } else {
    json.null();
  }
  if (r.skipped) {
    json.field("skip_reason", r.skip_reason);
    json.end_object();
    return;
  }
  json.field("plan", r.plan);
  json.key("check");
  write_check(json, r.check);
  json.key("scatter");
  write_timing(json, r.scatter);
  json.field("ideal_gbs", r.comparison.ideal_gbs);
  json.field("percent_of_ideal_floor", r.comparison.percent_of_ideal);
  json.field("percent_of_no_reuse_floor", r.comparison.percent_of_no_reuse);
  json.field("scatter_over_copy", r.comparison.scatter_over_copy);
  if (!r.sweep.empty()) {
    json.key("sweep");
    json.begin_array();
    for (const SweepPoint& point : r.sweep) write_sweep_point(json, point);
    json.end_array();
    const SweepPoint* best = fastest_run(r.sweep);
    json.key("sweep_best");
    if (best != nullptr) {
      write_sweep_point(json, *best);
    } else {
      json.null();
    }
  }
  if (!r.paths.empty()) {
    json.key("paths");
    json.begin_array();
    for (const PathPoint& point : r.paths) write_path_point(json, point);
    json.end_array();
  }
  json.end_object();
}

}  // namespace

const char* check_label(const ScenarioResult& result) {
  if (!result.streaming_selected) return "not run";
  if (result.skipped) return "skipped";
  return result.check.ok ? "ok" : "WRONG";
}

const char* check_label(const GroupedResult& result) {
  if (result.refused) return "REFUSED";
  if (!result.single_shot_check.ok) return result.plan_check.ok ? "WRONG (1-shot)" : "WRONG (both)";
  return result.plan_check.ok ? "ok" : "WRONG (plan)";
}

void print_device_header(std::ostream& stream, const DeviceInfo& d, const RunDescription& run) {
  stream << "device " << d.ordinal << ": " << d.name << " (sm_" << d.compute_major
         << d.compute_minor << ", " << d.sm_count << " SMs, L2 " << format_bytes_mib(double(d.l2_bytes))
         << ", " << format_fixed(d.total_memory_bytes / 1e9, 1) << " GB)\n"
         << "CUDA driver " << format_driver_version(d.driver_version) << "\n"
         << "timing: CUDA events, " << run.warmup_runs << " warm-up + median of " << run.timed_runs
         << " runs, L2 flushed before each run (" << format_bytes_mib(double(run.flush_bytes))
         << " memset)"
         << (run.head_start_cycles > 0
                 ? ", then a GPU sleep of " + std::to_string(run.head_start_cycles) + " cycles (head start)"
                 : std::string(", no head start"))
         << (run.quick ? ", quick sizes" : "") << (run.sweep ? ", schedule sweep" : "")
         << "\n"
         << "modes: " << mode_list(run.modes);
  if (has_grouped_mode(run.modes)) {
    stream << " (plan build: " << run.plan_build.warmup_runs << " warm-up + median of "
           << run.plan_build.timed_runs << " scatterptx_plan_create into a preallocated workspace)";
  }
  stream << "\n\n";
  stream.flush();
}

void print_results_table(std::ostream& stream, const std::vector<ScenarioResult>& results) {
  TextTable table({{"scenario", Align::left},
                   {"dtype", Align::left},
                   {"M", Align::right},
                   {"T", Align::right},
                   {"D", Align::right},
                   {"row B", Align::right},
                   {"copy ms", Align::right},
                   {"scatter ms", Align::right},
                   {"min..max ms", Align::right},
                   {"GB/s ideal", Align::right},
                   {"% ideal", Align::right},
                   {"% no-reuse", Align::right},
                   {"copy GB/s", Align::right},
                   {"scatter/copy", Align::right},
                   {"check", Align::left},
                   {"plan", Align::left}});
  for (const ScenarioResult& r : results) {
    const Scenario& s = r.scenario;
    std::vector<std::string> row = {s.name,
                                    scatterptx_dtype_name(s.dtype),
                                    std::to_string(s.src_rows),
                                    std::to_string(s.out_rows),
                                    std::to_string(s.cols),
                                    std::to_string(r.row_bytes)};
    if (!r.streaming_selected || r.skipped) {
      row.push_back(format_ms(r.copy.median_ms));
      row.insert(row.end(), 7, "-");
      row.push_back(check_label(r));
      row.push_back(r.skip_reason);
    } else {
      const FloorComparison& c = r.comparison;
      row.push_back(format_ms(r.copy.median_ms));
      row.push_back(format_ms(r.scatter.median_ms));
      row.push_back(format_ms(r.scatter.min_ms) + ".." + format_ms(r.scatter.max_ms));
      row.push_back(format_fixed(c.ideal_gbs, 0));
      row.push_back(format_fixed(c.percent_of_ideal, 1));
      row.push_back(format_fixed(c.percent_of_no_reuse, 1));
      row.push_back(format_fixed(c.copy_bandwidth_gbs, 0));
      row.push_back(format_fixed(c.scatter_over_copy, 2));
      row.push_back(check_label(r));
      row.push_back(r.plan);
    }
    table.add_row(std::move(row));
  }
  table.print(stream);
}

void print_grouped_table(std::ostream& stream, const std::vector<ScenarioResult>& results) {
  TextTable table({{"scenario", Align::left},
                   {"dtype", Align::left},
                   {"mode", Align::left},
                   {"workspace", Align::right},
                   {"build ms", Align::right},
                   {"1-shot ms", Align::right},
                   {"execute ms", Align::right},
                   {"streaming ms", Align::right},
                   {"stream/1-shot", Align::right},
                   {"stream/exec", Align::right},
                   {"% ideal 1-shot", Align::right},
                   {"% ideal exec", Align::right},
                   {"check", Align::left},
                   {"plan", Align::left}});
  bool any = false;
  for (const ScenarioResult& r : results) {
    const bool streamed = r.streaming_selected && !r.skipped;
    for (const GroupedResult& g : r.grouped) {
      any = true;
      std::vector<std::string> row = {r.scenario.name, scatterptx_dtype_name(r.scenario.dtype),
                                      execution_mode_name(g.mode)};
      if (g.refused) {
        row.insert(row.end(), 9, "-");
        row.push_back(check_label(g));
        row.push_back(g.refusal);
        table.add_row(std::move(row));
        continue;
      }
      row.push_back(format_bytes_mib(double(g.workspace_bytes)));
      row.push_back(format_ms(g.plan_build.median_ms));
      row.push_back(format_ms(g.single_shot.median_ms));
      row.push_back(format_ms(g.plan_execute.median_ms));
      row.push_back(streamed ? format_ms(r.scatter.median_ms) : "-");
      row.push_back(streamed ? format_fixed(r.scatter.median_ms / g.single_shot.median_ms, 2) + "x" : "-");
      row.push_back(streamed ? format_fixed(r.scatter.median_ms / g.plan_execute.median_ms, 2) + "x" : "-");
      row.push_back(format_fixed(g.single_shot_comparison.percent_of_ideal, 1));
      row.push_back(format_fixed(g.execute_comparison.percent_of_ideal, 1));
      row.push_back(check_label(g));
      row.push_back(g.plan);
      table.add_row(std::move(row));
    }
  }
  if (!any) return;
  stream << "\ngrouped execution (1-shot: scatterptx_scatter_add_grouped; build: scatterptx_plan_create; "
            "exec: scatterptx_plan_execute; stream/x: streaming time over x):\n";
  table.print(stream);
}

void print_sweep_table(std::ostream& stream, const std::vector<ScenarioResult>& results) {
  TextTable table({{"scenario", Align::left},
                   {"default ms", Align::right},
                   {"best ms", Align::right},
                   {"speed-up", Align::right},
                   {"% ideal", Align::right},
                   {"best schedule", Align::left},
                   {"timed", Align::right},
                   {"rejected", Align::right},
                   {"wrong", Align::right},
                   {"best plan", Align::left}});
  bool any = false;
  for (const ScenarioResult& r : results) {
    if (r.sweep.empty()) continue;
    any = true;
    int timed = 0, rejected = 0, wrong = 0;
    for (const SweepPoint& p : r.sweep) {
      if (!p.accepted) {
        ++rejected;
        continue;
      }
      ++timed;
      wrong += p.check.ok ? 0 : 1;
    }
    const SweepPoint* best = fastest_run(r.sweep);
    std::vector<std::string> row = {r.scenario.name, format_ms(r.scatter.median_ms)};
    if (best != nullptr) {
      const FloorComparison c = compare_with_floors(r.floors, r.copy_bytes_moved, r.copy.median_ms,
                                                    best->timing.median_ms);
      row.push_back(format_ms(best->timing.median_ms));
      row.push_back(format_fixed(r.scatter.median_ms / best->timing.median_ms, 2) + "x");
      row.push_back(format_fixed(c.percent_of_ideal, 1));
      row.push_back(describe_schedule(best->schedule));
    } else {
      row.insert(row.end(), 4, "-");
    }
    row.push_back(std::to_string(timed));
    row.push_back(std::to_string(rejected));
    row.push_back(std::to_string(wrong));
    row.push_back(best != nullptr ? best->plan : "(no accepted, correct schedule)");
    table.add_row(std::move(row));
  }
  if (!any) return;
  stream << "\nschedule sweep (best accepted, correct schedule per scenario):\n";
  table.print(stream);
}

void print_path_choice_table(std::ostream& stream, const std::vector<ScenarioResult>& results) {
  std::vector<TextTable::Column> columns = {{"scenario", Align::left}, {"auto path", Align::left},
                                            {"auto ms", Align::right}};
  for (scatterptx_path path : forced_paths()) columns.push_back({std::string(path_name(path)) + " ms", Align::right});
  columns.push_back({"fastest", Align::left});
  columns.push_back({"auto / fastest", Align::right});
  TextTable table(columns);
  bool any = false;
  for (const ScenarioResult& r : results) {
    if (r.paths.empty()) continue;
    any = true;
    std::vector<std::string> row = {r.scenario.name, plan_path_name(r.plan), format_ms(r.scatter.median_ms)};
    for (const PathPoint& p : r.paths) {
      row.push_back(!p.accepted ? "refused" : p.check.ok ? format_ms(p.timing.median_ms) : "WRONG");
    }
    const PathPoint* best = fastest_run(r.paths);
    row.push_back(best != nullptr ? path_name(best->path) : "-");
    row.push_back(best != nullptr ? format_fixed(r.scatter.median_ms / best->timing.median_ms, 3) : "-");
    table.add_row(std::move(row));
  }
  if (!any) return;
  stream << "\npath choice (each forced path with its default schedule, same inputs; auto / fastest "
            "<= 1.05 is within 5%):\n";
  table.print(stream);
}

void write_json_report(const std::string& path, const DeviceInfo& d, const RunDescription& run,
                       const std::vector<ScenarioResult>& results, bool all_correct) {
  std::ofstream file(path);
  if (!file) throw BenchError("cannot open '" + path + "' for writing");
  JsonWriter json(file);
  json.begin_object();
  json.key("device");
  json.begin_object();
  json.field("ordinal", d.ordinal);
  json.field("name", d.name);
  json.field("compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor));
  json.field("sm_count", d.sm_count);
  json.field("l2_bytes", d.l2_bytes);
  json.field("total_memory_bytes", static_cast<int64_t>(d.total_memory_bytes));
  json.field("driver_version", format_driver_version(d.driver_version));
  json.end_object();
  json.key("timing");
  json.begin_object();
  json.field("method", "CUDA events; L2 flushed by cuMemsetD8Async, then a GPU sleep of head_start_cycles, "
                      "before every run, outside the timed region");
  json.field("head_start_cycles", run.head_start_cycles);
  json.field("warmup_runs", run.warmup_runs);
  json.field("timed_runs", run.timed_runs);
  json.field("flush_bytes", static_cast<int64_t>(run.flush_bytes));
  json.field("statistic", "median");
  json.field("plan_build_warmup_runs", run.plan_build.warmup_runs);
  json.field("plan_build_timed_runs", run.plan_build.timed_runs);
  json.end_object();
  json.key("modes");
  json.begin_array();
  for (ExecutionMode mode : run.modes) json.value(execution_mode_name(mode));
  json.end_array();
  json.field("quick", run.quick);
  json.field("sweep", run.sweep);
  json.field("path_choice", run.path_choice);
  json.field("all_correct", all_correct);
  json.key("scenarios");
  json.begin_array();
  for (const ScenarioResult& r : results) write_scenario(json, r);
  json.end_array();
  json.end_object();
  file.flush();
  if (!file) throw BenchError("writing '" + path + "' failed");
}

}  // namespace scatterptx_bench

#include "scenario_runner.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "driver.hpp"
#include "options.hpp"

namespace scatterptx_bench {
namespace {

scatterptx_scatter_add_args problem_args(const Scenario& s, const ProblemInputs& in) {
  scatterptx_scatter_add_args args;
  scatterptx_scatter_add_args_init(&args);
  args.out = in.out->out.pointer();
  args.out_rows = s.out_rows;
  args.out_row_stride = s.cols;
  args.src = in.source->src.pointer();
  args.src_rows = s.src_rows;
  args.src_row_stride = s.cols;
  args.cols = s.cols;
  args.dtype = s.dtype;
  args.index = in.index->index.pointer();
  args.index_type = SCATTERPTX_INDEX_INT64;
  args.index_check = SCATTERPTX_INDEX_RECORD;  // the stream-ordered mode, the one worth timing
  return args;
}

// The plan text, or false with *rejection holding the library's message when
// it rejects args as INVALID_ARGUMENT; any other failure throws.
bool describe_plan(const scatterptx_scatter_add_args& args, std::string* plan,
                   std::string* rejection) {
  char buffer[4096] = {};
  const scatterptx_status status = scatterptx_describe_plan(&args, buffer, sizeof(buffer));
  if (status == SCATTERPTX_ERROR_INVALID_ARGUMENT) {
    *rejection = describe_scatterptx_failure(status, "scatterptx_describe_plan");
    return false;
  }
  check_scatterptx(status, "scatterptx_describe_plan");
  *plan = buffer;
  return true;
}

TimingResult time_scatter(EventTimer& timer, CUstream stream, L2Flusher& flusher,
                          const TimingConfig& config, const scatterptx_scatter_add_args& args) {
  return timer.time(stream, flusher, config, [&args](CUstream s) {
    check_scatterptx(scatterptx_scatter_add(&args, s), "scatterptx_scatter_add");
  });
}

void launch_scatter_add(const scatterptx_scatter_add_args& args, CUstream stream) {
  check_scatterptx(scatterptx_scatter_add(&args, stream), "scatterptx_scatter_add");
}

}  // namespace

bool scenario_correct(const ScenarioResult& result) {
  bool correct = !result.streaming_selected || result.skipped || result.check.ok;
  for (const SweepPoint& point : result.sweep) correct = correct && (!point.accepted || point.check.ok);
  for (const PathPoint& point : result.paths) correct = correct && (!point.accepted || point.check.ok);
  for (const GroupedResult& grouped : result.grouped) correct = correct && grouped.correct();
  return correct;
}

ScenarioResult ScenarioRunner::run(const Scenario& s) {
  ScenarioResult result;
  result.scenario = s;
  result.row_bytes = row_bytes(s);

  const ProblemInputs in = inputs_.prepare(s);
  result.distinct_targets = in.index->distinct_targets;
  // Path AUTO, no schedule: what the grouped modes take; streaming sets its own.
  const scatterptx_scatter_add_args args = problem_args(s, in);

  // Every mode is compared with the floors at this copy's bandwidth.
  const size_t src_bytes = in.source->src.size();
  const CUdeviceptr src = in.source->src.address();
  const CUdeviceptr copy_target = in.source->copy_target.address();
  result.copy = timer_.time(stream_, flusher_, settings_.timing, [&](CUstream stream) {
    check_driver(driver().cuMemcpyDtoDAsync(copy_target, src, src_bytes, stream), "cuMemcpyDtoDAsync");
  });
  result.floors = floor_bytes(s.src_rows, result.distinct_targets, result.row_bytes,
                              result.index_bytes);
  result.copy_bytes_moved = copy_bytes(s.src_rows, result.row_bytes);
  std::fprintf(stderr, "scatterptx-bench:   copy %.4f ms\n", result.copy.median_ms);

  for (ExecutionMode mode : settings_.modes) {
    if (mode == ExecutionMode::streaming) {
      run_streaming(args, in, &result);
      continue;
    }
    GroupedResult grouped = grouped_.run(mode, args, in);
    if (!grouped.refused) {
      grouped.single_shot_comparison = compare_with_floors(
          result.floors, result.copy_bytes_moved, result.copy.median_ms, grouped.single_shot.median_ms);
      grouped.execute_comparison = compare_with_floors(
          result.floors, result.copy_bytes_moved, result.copy.median_ms, grouped.plan_execute.median_ms);
      std::fprintf(stderr, "scatterptx-bench:   %s: %.1f%% of ideal floor single-shot, %.1f%% plan execute\n",
                   execution_mode_name(mode), grouped.single_shot_comparison.percent_of_ideal,
                   grouped.execute_comparison.percent_of_ideal);
    }
    result.grouped.push_back(std::move(grouped));
  }
  return result;
}

void ScenarioRunner::run_streaming(const scatterptx_scatter_add_args& base, const ProblemInputs& in,
                                   ScenarioResult* result) {
  result->streaming_selected = true;
  result->path = settings_.path;
  result->has_schedule = settings_.has_schedule;
  result->schedule = settings_.schedule;
  scatterptx_scatter_add_args args = base;
  args.path = settings_.path;
  args.schedule = settings_.has_schedule ? &settings_.schedule : nullptr;
  // The streaming paths alone; the default call would group where that wins,
  // which the grouped modes time.
  args.grouping = SCATTERPTX_GROUPING_OFF;

  std::string rejection;
  if (!describe_plan(args, &result->plan, &rejection)) {
    // With the planner free to choose, every scenario here is valid input,
    // so a rejection is a failure; a forced path or schedule may simply not
    // apply to this shape.
    if (settings_.path == SCATTERPTX_PATH_AUTO && !settings_.has_schedule) throw BenchError(rejection);
    result->skipped = true;
    result->skip_reason = rejection;
    std::fprintf(stderr, "scatterptx-bench:   streaming skipped: %s\n", rejection.c_str());
    return;
  }
  std::fprintf(stderr, "scatterptx-bench:   streaming plan: %s\n", result->plan.c_str());

  result->check = check_prefix(args, in, settings_.check_rows, stream_, launch_scatter_add);
  std::fprintf(stderr, "scatterptx-bench:   streaming check on %lld rows: %s (max rel err %.3g)\n",
               static_cast<long long>(result->check.src_rows_checked),
               result->check.ok ? "ok" : result->check.failure.c_str(),
               result->check.max_relative_error);

  result->scatter = time_scatter(timer_, stream_, flusher_, settings_.timing, args);
  require_no_index_error(&result->check);
  result->comparison = compare_with_floors(result->floors, result->copy_bytes_moved,
                                           result->copy.median_ms, result->scatter.median_ms);
  std::fprintf(stderr, "scatterptx-bench:   streaming scatter %.4f ms (%.1f%% of ideal floor)\n",
               result->scatter.median_ms, result->comparison.percent_of_ideal);

  if (settings_.sweep) result->sweep = sweep(args, in);
  if (settings_.path_choice) result->paths = time_paths(base, in);
}

std::vector<PathPoint> ScenarioRunner::time_paths(const scatterptx_scatter_add_args& base,
                                                  const ProblemInputs& in) {
  std::vector<PathPoint> points;
  for (scatterptx_path path : forced_paths()) {
    PathPoint point;
    point.path = path;
    scatterptx_scatter_add_args args = base;
    args.path = path;
    args.schedule = nullptr;  // each path's default schedule, as AUTO would run it
    point.accepted = describe_plan(args, &point.plan, &point.rejection);
    if (point.accepted) {
      point.check = check_prefix(args, in, settings_.check_rows, stream_, launch_scatter_add);
      point.timing = time_scatter(timer_, stream_, flusher_, settings_.timing, args);
      require_no_index_error(&point.check);
      std::fprintf(stderr, "scatterptx-bench:   path %s: %.4f ms (%s)\n", path_name(path), point.timing.median_ms,
                   point.check.ok ? "ok" : point.check.failure.c_str());
    } else {
      std::fprintf(stderr, "scatterptx-bench:   path %s refused: %s\n", path_name(path), point.rejection.c_str());
    }
    points.push_back(std::move(point));
  }
  return points;
}

std::vector<SweepPoint> ScenarioRunner::sweep(const scatterptx_scatter_add_args& base,
                                              const ProblemInputs& in) {
  const std::vector<scatterptx_schedule> grid = sweep_schedules();
  const int64_t check_rows = std::clamp<int64_t>(settings_.sweep_check_elements / std::max<int64_t>(base.cols, 1), 1,
                                                 settings_.sweep_check_rows);
  std::vector<SweepPoint> points;
  points.reserve(grid.size());
  int rejected = 0;
  for (const scatterptx_schedule& schedule : grid) {
    SweepPoint point;
    point.schedule = schedule;
    scatterptx_scatter_add_args args = base;
    args.path = settings_.sweep_path;
    args.schedule = &point.schedule;
    point.accepted = describe_plan(args, &point.plan, &point.rejection);
    if (point.accepted) {
      point.check = check_prefix(args, in, check_rows, stream_, launch_scatter_add);
      point.timing = time_scatter(timer_, stream_, flusher_, settings_.timing, args);
      require_no_index_error(&point.check);
    } else {
      ++rejected;
    }
    points.push_back(std::move(point));
  }
  const SweepPoint* best = fastest_run(points);
  std::fprintf(stderr, "scatterptx-bench:   sweep: %zu schedules, %d rejected, best %s\n",
               points.size(), rejected,
               best != nullptr ? (describe_schedule(best->schedule) + " " +
                                  std::to_string(best->timing.median_ms) + " ms")
                                     .c_str()
                               : "(none)");
  return points;
}

}  // namespace scatterptx_bench

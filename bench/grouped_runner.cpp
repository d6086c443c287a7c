#include "grouped_runner.hpp"

#include <cstdio>

#include "driver.hpp"
#include "driver.hpp"
#include "owned_plan.hpp"

namespace scatterptx_bench {
namespace {

// True, with the library's message kept, when status is the library
// refusing the problem; other failures throw.
bool refused(scatterptx_status status, const char* call, GroupedResult* result) {
  if (status == SCATTERPTX_ERROR_INVALID_ARGUMENT) {
    result->refused = true;
    result->refusal = describe_scatterptx_failure(status, call);
    return true;
  }
  check_scatterptx(status, call);
  return false;
}

size_t workspace_bytes(const scatterptx_scatter_add_args& args, const scatterptx_group_options& options) {
  size_t bytes = 0;
  check_scatterptx(scatterptx_plan_workspace_size(&args, &options, &bytes), "scatterptx_plan_workspace_size");
  return bytes;
}

void log_check(const char* mode, const char* what, const CheckResult& check) {
  std::fprintf(stderr, "scatterptx-bench:   %s %s check on %lld rows: %s (max rel err %.3g)\n", mode, what,
               static_cast<long long>(check.src_rows_checked), check.ok ? "ok" : check.failure.c_str(),
               check.max_relative_error);
}

}  // namespace

CheckResult GroupedRunner::check_single_shot(const scatterptx_scatter_add_args& args,
                                             const scatterptx_group_options& options,
                                             const ProblemInputs& in) {
  DeviceBuffer workspace;  // sized for the prefix; lives until the check has synchronised
  return check_prefix(args, in, settings_.check_rows, stream_,
                      [&](const scatterptx_scatter_add_args& prefix, CUstream stream) {
                        workspace = DeviceBuffer(workspace_bytes(prefix, options));
                        check_scatterptx(scatterptx_scatter_add_grouped(&prefix, &options, workspace.pointer(),
                                                                        workspace.size(), stream),
                                         "scatterptx_scatter_add_grouped");
                      });
}

CheckResult GroupedRunner::check_plan(const scatterptx_scatter_add_args& args,
                                      const scatterptx_group_options& options, const ProblemInputs& in) {
  OwnedPlan plan;  // destroyed after the check has synchronised
  return check_prefix(args, in, settings_.check_rows, stream_,
                      [&](const scatterptx_scatter_add_args& prefix, CUstream stream) {
                        check_scatterptx(plan.create(prefix, options, nullptr, 0, stream), "scatterptx_plan_create");
                        check_scatterptx(scatterptx_plan_execute(plan.get(), prefix.out, prefix.src, stream),
                                         "scatterptx_plan_execute");
                      });
}

GroupedResult GroupedRunner::run(ExecutionMode mode, const scatterptx_scatter_add_args& args,
                                 const ProblemInputs& in) {
  GroupedResult result;
  result.mode = mode;
  const char* name = execution_mode_name(mode);
  const scatterptx_group_options options = group_options(mode);

  if (refused(scatterptx_plan_workspace_size(&args, &options, &result.workspace_bytes),
              "scatterptx_plan_workspace_size", &result)) {
    std::fprintf(stderr, "scatterptx-bench:   %s REFUSED: %s\n", name, result.refusal.c_str());
    return result;
  }
  // The plan whose executes are timed allocates its own workspace, so the
  // single-shot calls and the timed builds can share `workspace` below.
  OwnedPlan plan;
  if (refused(plan.create(args, options, nullptr, 0, stream_), "scatterptx_plan_create", &result)) {
    std::fprintf(stderr, "scatterptx-bench:   %s REFUSED: %s\n", name, result.refusal.c_str());
    return result;
  }
  result.plan = plan.describe();
  std::fprintf(stderr, "scatterptx-bench:   %s plan: %s\n", name, result.plan.c_str());

  result.single_shot_check = check_single_shot(args, options, in);
  log_check(name, "single-shot", result.single_shot_check);
  result.plan_check = check_plan(args, options, in);
  log_check(name, "plan", result.plan_check);

  DeviceBuffer workspace(result.workspace_bytes);
  result.single_shot = timer_.time(stream_, flusher_, settings_.timing, [&](CUstream stream) {
    check_scatterptx(scatterptx_scatter_add_grouped(&args, &options, workspace.pointer(), workspace.size(), stream),
                     "scatterptx_scatter_add_grouped");
  });
  require_no_index_error(&result.single_shot_check);

  // Each timed build is destroyed before the next reuses the workspace.
  OwnedPlan built;
  result.plan_build = timer_.time(
      stream_, flusher_, settings_.plan_build,
      [&](CUstream stream) {
        check_scatterptx(built.create(args, options, workspace.pointer(), workspace.size(), stream),
                         "scatterptx_plan_create");
      },
      [&] { built.reset(); });
  result.plan_execute = timer_.time(stream_, flusher_, settings_.timing, [&](CUstream stream) {
    check_scatterptx(scatterptx_plan_execute(plan.get(), args.out, args.src, stream), "scatterptx_plan_execute");
  });
  require_no_index_error(&result.plan_check);

  std::fprintf(stderr, "scatterptx-bench:   %s build %.4f ms, single-shot %.4f ms, execute %.4f ms\n", name,
               result.plan_build.median_ms, result.single_shot.median_ms, result.plan_execute.median_ms);
  return result;
}

}  // namespace scatterptx_bench

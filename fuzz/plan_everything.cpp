#include "plan_everything.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "address_model.hpp"
#include "errors.hpp"
#include "group_plan.hpp"

namespace scatterptx::fuzz {
namespace {

using namespace scatterptx::detail;

// Problems whose src spans more than 2^48 bytes cannot exist on any device
// (a GPU's virtual addresses are 49 bits); the streaming planners split them
// into one launch per 2^31 rows, a list that would reach gigabytes for the
// 2^62-byte tensors validation accepts.
constexpr uint64_t kMaxModelledSrcRows = uint64_t{1} << 44;

void check_streaming(const Problem& p, const DeviceLimits& device) {
  try {
    const StreamingPlan plan = make_plan(p, device);
    require(!plan.describe().empty(), "a streaming plan describes itself", p);
    check_streaming_plan(p, device, plan);
  } catch (const Failure& failure) {
    require_clear_failure("make_plan", failure.status(), failure.what());
  }
}

void check_grouped(const Problem& p, const DeviceLimits& device, const scatterptx_group_options* options,
                   uint64_t workspace_address) {
  try {
    const GroupOptions checked = validate_group_options(options, p);
    // The workspace is sized without a device (scatterptx_plan_workspace_size,
    // plan_create's check of the caller's buffer); the device may only turn
    // grouping off, never need more.
    const GroupPlan sized = make_group_plan(p, checked);
    check_group_plan(p, device, sized, workspace_address);
    const GroupPlan planned = make_group_plan(p, checked, &device);
    check_group_plan(p, device, planned, workspace_address);
    require(!planned.describe().empty(), "a grouped plan describes itself", p);
    if (planned.grouped()) {
      require(sized.grouped() && sized.workspace.bytes == planned.workspace.bytes,
              "the device's grouped plan needs the workspace sized without it", p);
    } else if (!p.is_empty()) {
      check_streaming(p, device);  // what plan_create then checks and execute runs
    }
    // A plan object reads the weights at each execute: the sort carries none,
    // and the workspace size asked for beforehand still covers it.
    GroupOptions object_options = checked;
    object_options.weights_read_at_execute = true;
    const GroupPlan object = make_group_plan(p, object_options, &device);
    check_group_plan(p, device, object, workspace_address);
    require(!object.weights_in_sort, "a plan object's sort carries no weights", p);
    require(!object.grouped() || (sized.grouped() && object.workspace.bytes <= sized.workspace.bytes),
            "a plan object fits the workspace sized for the problem", p);
  } catch (const Failure& failure) {
    require_clear_failure("grouped planning", failure.status(), failure.what());
  }
}

void check_default_call(const Problem& p, const DeviceLimits& device, uint64_t workspace_address) {
  try {
    const GroupPlan plan = plan_default_call(p, device);
    const bool may_group =
        p.grouping != SCATTERPTX_GROUPING_OFF && p.path == SCATTERPTX_PATH_AUTO && !p.has_schedule;
    require(may_group || !plan.grouped(), "the default call groups only where the call lets it", p);
    check_group_plan(p, device, plan, workspace_address);
    require(plan.grouped() || !p.needs_grouping() || p.is_empty(),
            "the default call groups every reduce that runs grouped only", p);
    if (plan.grouped() && !p.is_empty() && !p.needs_grouping()) {
      require(make_plan(p, device).path != SCATTERPTX_PATH_PRIVATE,
              "the default call leaves few targets to the privatised path", p);
    }
  } catch (const Failure& failure) {
    require_clear_failure("plan_default_call", failure.status(), failure.what());
  }
}

}  // namespace

void require_clear_failure(const char* where, scatterptx_status status, const char* message) {
  const bool clear = status == SCATTERPTX_ERROR_INVALID_ARGUMENT || status == SCATTERPTX_ERROR_UNSUPPORTED_DEVICE ||
                     status == SCATTERPTX_ERROR_NO_DRIVER;
  if (clear && message != nullptr && std::strlen(message) != 0) return;
  std::fprintf(stderr, "%s: unclear failure: status %d (%s), message \"%s\"\n", where, static_cast<int>(status),
               scatterptx_status_name(status), message == nullptr ? "(null)" : message);
  std::abort();
}

void plan_everything(const Problem& p, const DeviceLimits& device, const scatterptx_group_options* options,
                     uint64_t workspace_address) {
  if (p.src_rows > kMaxModelledSrcRows) return;
  check_streaming(p, device);
  check_grouped(p, device, options, workspace_address);
  check_default_call(p, device, workspace_address);
}

}  // namespace scatterptx::fuzz

#include "owned_plan.hpp"

#include <cstdio>
#include <utility>

#include "driver.hpp"

namespace scatterptx_bench {

OwnedPlan::~OwnedPlan() { reset(); }

OwnedPlan::OwnedPlan(OwnedPlan&& other) noexcept : plan_(std::exchange(other.plan_, nullptr)) {}

OwnedPlan& OwnedPlan::operator=(OwnedPlan&& other) noexcept {
  if (this != &other) {
    reset();
    plan_ = std::exchange(other.plan_, nullptr);
  }
  return *this;
}

scatterptx_status OwnedPlan::create(const scatterptx_scatter_add_args& args,
                                    const scatterptx_group_options& options, void* workspace,
                                    size_t workspace_bytes, CUstream stream) {
  reset();
  scatterptx_plan made = nullptr;
  const scatterptx_status status =
      scatterptx_plan_create(&args, &options, workspace, workspace_bytes, stream, &made);
  if (status == SCATTERPTX_SUCCESS) plan_ = made;
  return status;
}

std::string OwnedPlan::describe() const {
  char buffer[4096] = {};
  check_scatterptx(scatterptx_plan_describe(plan_, buffer, sizeof(buffer)), "scatterptx_plan_describe");
  return buffer;
}

void OwnedPlan::reset() {
  if (plan_ == nullptr) return;
  // Called from the destructor too, so a failure is reported, not thrown.
  const scatterptx_status status = scatterptx_plan_destroy(plan_);
  if (status != SCATTERPTX_SUCCESS) {
    std::fprintf(stderr, "scatterptx-bench: warning: %s\n",
                 describe_scatterptx_failure(status, "scatterptx_plan_destroy").c_str());
  }
  plan_ = nullptr;
}

}  // namespace scatterptx_bench

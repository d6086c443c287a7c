// A scatterptx_plan destroyed with the object.
#pragma once

#include <string>

#include "scatterptx/scatterptx.h"

namespace scatterptx_bench {

class OwnedPlan {
 public:
  OwnedPlan() = default;
  ~OwnedPlan();
  OwnedPlan(OwnedPlan&& other) noexcept;
  OwnedPlan& operator=(OwnedPlan&& other) noexcept;
  OwnedPlan(const OwnedPlan&) = delete;
  OwnedPlan& operator=(const OwnedPlan&) = delete;

  // Destroys the plan held, then scatterptx_plan_create; on success the new
  // plan is held. Returns the library's status, for the caller to judge.
  scatterptx_status create(const scatterptx_scatter_add_args& args, const scatterptx_group_options& options,
                           void* workspace, size_t workspace_bytes, CUstream stream);

  scatterptx_plan get() const { return plan_; }

  // scatterptx_plan_describe's text; throws BenchError on failure.
  std::string describe() const;

  // Destroys the plan: no execute of it may still be running.
  void reset();

 private:
  scatterptx_plan plan_ = nullptr;
};

}  // namespace scatterptx_bench

// One stress call from its inputs to its verdict, in three steps so that a
// thread can keep several calls in flight: start (upload and enqueue on a
// stream), collect (wait for that stream, download, free) and verify (host
// only: the float64 comparison). start and collect hold the capture gate
// themselves and expect the case's context to be current.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <vector>

#include "case_inputs.hpp"
#include "device_memory.hpp"
#include "run_shared.hpp"
#include "stress_case.hpp"

namespace scatterptx_stress {

class StressCall {
 public:
  // Draws the host inputs (host work only).
  StressCall(const StressCase& c, RunShared& shared);
  ~StressCall();
  StressCall(const StressCall&) = delete;
  StressCall& operator=(const StressCall&) = delete;

  // other: a second stream of the same context, for a plan's executes
  // chained across two streams.
  void start(CUstream stream, CUstream other);
  void collect();
  void verify();

  const StressCase& stress_case() const { return case_; }
  // What went wrong, each a sentence; empty when the call passed.
  const std::vector<std::string>& failures() const { return failures_; }

 private:
  void start_call(CUstream other);
  void start_graph();
  scatterptx_status run_default_or_forced(void* out);
  scatterptx_status run_grouped(void* out);
  void expect_call_status(scatterptx_status status, const char* call);
  void fail(const std::string& what);

  StressCase case_;
  RunShared& shared_;
  CaseInputs inputs_;
  CUstream stream_ = nullptr;
  CUstream other_ = nullptr;  // set once a plan's execute went to the second stream
  scatterptx_scatter_add_args args_{};
  std::string plan_text_;  // describe_plan's or plan_describe's, for failure reports
  std::unique_ptr<GuardedOut> out_;
  std::unique_ptr<GuardedOut> twin_;
  DeviceMemory src_;
  DeviceMemory index_;
  DeviceMemory workspace_;
  size_t workspace_bytes_ = 0;
  scatterptx_plan plan_ = nullptr;
  CUevent events_[2] = {};
  CUgraph graph_ = nullptr;
  CUgraphExec graph_exec_ = nullptr;
  bool refused_ = false;    // the call was refused (as it must or may be)
  int repeats_ = 1;         // how many times out received the rows
  bool started_ = false;
  bool collected_ = false;
  bool synchronized_ = false;  // nothing of this call is left running
  DownloadedOut got_;
  DownloadedOut twin_got_;
  std::vector<std::string> failures_;
};

}  // namespace scatterptx_stress

#include "stress_call.hpp"

#include <cstdio>
#include <exception>
#include <utility>

#include "extra_driver.hpp"
#include "gpu_resources.hpp"
#include "reference.hpp"

namespace scatterptx_stress {
namespace {

using scatterptx_test::index_error_phrase;
using scatterptx_testing::check_driver;
using scatterptx_testing::driver;

std::string status_text(scatterptx_status status) {
  return std::string(scatterptx_status_name(status)) + " (" + scatterptx_last_error_message() + ")";
}

std::string describe_default_plan(const scatterptx_scatter_add_args& args) {
  char buffer[1024] = {};
  const scatterptx_status status = scatterptx_describe_plan(&args, buffer, sizeof buffer);
  return status == SCATTERPTX_SUCCESS ? buffer : "describe_plan: " + status_text(status);
}

std::string describe_group_plan(scatterptx_plan plan) {
  char buffer[1024] = {};
  const scatterptx_status status = scatterptx_plan_describe(plan, buffer, sizeof buffer);
  return status == SCATTERPTX_SUCCESS ? buffer : "plan_describe: " + status_text(status);
}

CUevent create_event() {
  CUevent event = nullptr;
  check_driver(driver().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  return event;
}

// Work enqueued on `waiting` from now on starts after what `first` holds now.
void order_after(CUstream waiting, CUstream first, CUevent event) {
  check_driver(driver().cuEventRecord(event, first), "cuEventRecord");
  check_driver(extra_driver().cuStreamWaitEvent(waiting, event, 0), "cuStreamWaitEvent");
}

}  // namespace

StressCall::StressCall(const StressCase& c, RunShared& shared)
    : case_(c), shared_(shared), inputs_(make_case_inputs(c)) {}

StressCall::~StressCall() {
  // Only on a path that threw: collect() has released everything otherwise.
  // A destructor reports instead of throwing.
  const auto warn = [](CUresult result, const char* call) {
    if (result != CUDA_SUCCESS) {
      std::fprintf(stderr, "scatterptx_stress: warning: %s\n",
                   scatterptx::detail::describe_driver_error(driver(), call, result).c_str());
    }
  };
  if (started_ && !synchronized_) {  // its buffers may still be in use
    warn(driver().cuStreamSynchronize(stream_), "cuStreamSynchronize");
    if (other_ != nullptr) warn(driver().cuStreamSynchronize(other_), "cuStreamSynchronize");
  }
  if (plan_ != nullptr) (void)scatterptx_plan_destroy(plan_);
  if (graph_exec_ != nullptr) warn(driver().cuGraphExecDestroy(graph_exec_), "cuGraphExecDestroy");
  if (graph_ != nullptr) warn(driver().cuGraphDestroy(graph_), "cuGraphDestroy");
  for (CUevent event : events_) {
    if (event != nullptr) warn(driver().cuEventDestroy(event), "cuEventDestroy");
  }
}

void StressCall::fail(const std::string& what) {
  failures_.push_back(plan_text_.empty() ? what : what + " [plan: " + plan_text_ + "]");
}

void StressCall::start(CUstream stream, CUstream other) {
  stream_ = stream;
  started_ = true;
  try {
    if (case_.kind == CallKind::kGraph) {
      start_graph();
    } else {
      GateCall call(shared_.gate);
      start_call(other);
    }
  } catch (const std::exception& error) {
    fail(std::string("error while starting: ") + error.what());
  }
}

void StressCall::expect_call_status(scatterptx_status status, const char* call) {
  const std::string message = scatterptx_last_error_message();  // before any other call resets it
  if (case_.must_refuse) {
    if (status == SCATTERPTX_ERROR_INVALID_ARGUMENT) {
      refused_ = true;
    } else {
      fail(std::string(call) + " should refuse a forced path on an ineligible layout but returned " +
           scatterptx_status_name(status));
    }
    return;
  }
  if (case_.may_refuse && status == SCATTERPTX_ERROR_INVALID_ARGUMENT) {
    refused_ = true;
    return;
  }
  if (case_.check == SCATTERPTX_INDEX_CHECKED && !case_.bad_positions.empty()) {
    const int64_t first = case_.bad_positions.front();
    const std::string named = index_error_phrase(first, inputs_.index[static_cast<size_t>(first)]);
    if (status != SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE) {
      fail(std::string(call) + " in CHECKED mode with a bad index returned " + scatterptx_status_name(status) +
           " (" + message + "), not SCATTERPTX_ERROR_INDEX_OUT_OF_RANGE");
    } else if (message.find(named) == std::string::npos) {
      fail(std::string(call) + "'s message does not name the first bad position and its value (\"" + named +
           "\"): " + message);
    }
    return;
  }
  if (status != SCATTERPTX_SUCCESS) {
    fail(std::string(call) + " returned " + scatterptx_status_name(status) + " (" + message + ")");
  }
}

scatterptx_status StressCall::run_default_or_forced(void* out) {
  scatterptx_scatter_add_args args = args_;
  args.out = out;
  return scatterptx_scatter_add(&args, stream_);
}

scatterptx_status StressCall::run_grouped(void* out) {
  scatterptx_scatter_add_args args = args_;
  args.out = out;
  return scatterptx_scatter_add_grouped(&args, &case_.options, workspace_bytes_ > 0 ? workspace_.pointer() : nullptr,
                                        workspace_bytes_, stream_);
}

void StressCall::start_call(CUstream other) {
  const StressShape& s = case_.shape;
  src_ = DeviceMemory(s.src_offset_bytes + inputs_.src.bytes.size());
  index_ = DeviceMemory(s.index_offset_bytes + inputs_.index_bytes.size());
  out_ = std::make_unique<GuardedOut>(inputs_.out0, stream_);
  if (case_.twin) twin_ = std::make_unique<GuardedOut>(inputs_.out0, stream_);
  upload_async(src_.address(s.src_offset_bytes), inputs_.src.bytes.data(), inputs_.src.bytes.size(), stream_);
  upload_async(index_.address(s.index_offset_bytes), inputs_.index_bytes.data(), inputs_.index_bytes.size(), stream_);

  scatterptx_scatter_add_args_init(&args_);
  args_.out = out_->pointer();
  args_.out_rows = s.out_rows;
  args_.out_row_stride = s.out_row_stride;
  args_.src = src_.pointer(s.src_offset_bytes);
  args_.src_rows = s.src_rows;
  args_.src_row_stride = s.src_row_stride;
  args_.cols = s.cols;
  args_.dtype = s.dtype;
  args_.index = index_.pointer(s.index_offset_bytes);
  args_.index_type = s.index_type;
  args_.index_check = case_.check;
  if (case_.kind == CallKind::kForcedPath) {
    args_.path = case_.path;
    args_.grouping = SCATTERPTX_GROUPING_OFF;
  }
  if (!case_.bad_positions.empty()) {
    // Noted before the launch, so that a take that sees it finds it noted.
    if (case_.check == SCATTERPTX_INDEX_RECORD) shared_.ledgers[case_.context].expect(case_.bad_positions);
    ++shared_.bad_index_calls;
  }

  switch (case_.kind) {
    case CallKind::kDefault:
    case CallKind::kForcedPath:
      plan_text_ = describe_default_plan(args_);
      expect_call_status(run_default_or_forced(out_->pointer()), "scatterptx_scatter_add");
      return;
    case CallKind::kGrouped: {
      const scatterptx_status sized = scatterptx_plan_workspace_size(&args_, &case_.options, &workspace_bytes_);
      if (sized != SCATTERPTX_SUCCESS) return fail("scatterptx_plan_workspace_size returned " + status_text(sized));
      if (workspace_bytes_ > 0) workspace_ = DeviceMemory(workspace_bytes_);
      expect_call_status(run_grouped(out_->pointer()), "scatterptx_scatter_add_grouped");
      // The twin shares the workspace: stream order keeps the two apart.
      if (twin_ != nullptr) expect_call_status(run_grouped(twin_->pointer()), "scatterptx_scatter_add_grouped (twin)");
      return;
    }
    case CallKind::kPlan: {
      if (!case_.plan_own_workspace) {
        const scatterptx_status sized = scatterptx_plan_workspace_size(&args_, &case_.options, &workspace_bytes_);
        if (sized != SCATTERPTX_SUCCESS) return fail("scatterptx_plan_workspace_size returned " + status_text(sized));
        if (workspace_bytes_ > 0) workspace_ = DeviceMemory(workspace_bytes_);
      }
      void* workspace = workspace_bytes_ > 0 ? workspace_.pointer() : nullptr;
      const scatterptx_status created =
          scatterptx_plan_create(&args_, &case_.options, workspace, workspace_bytes_, stream_, &plan_);
      if (created != SCATTERPTX_SUCCESS) return fail("scatterptx_plan_create returned " + status_text(created));
      plan_text_ = describe_group_plan(plan_);
      const auto execute = [&](void* out, CUstream stream, const char* what) {
        const scatterptx_status status = scatterptx_plan_execute(plan_, out, args_.src, stream);
        if (status != SCATTERPTX_SUCCESS) fail(std::string(what) + " returned " + status_text(status));
      };
      if (case_.plan_executes == 2) {
        // The first execute on the other stream, the second back on this
        // one: executes of a plan share its workspace, so events chain them.
        events_[0] = create_event();
        events_[1] = create_event();
        other_ = other;
        order_after(other, stream_, events_[0]);
        execute(out_->pointer(), other, "scatterptx_plan_execute on a second stream");
        order_after(stream_, other, events_[1]);
      }
      execute(out_->pointer(), stream_, "scatterptx_plan_execute");
      repeats_ = case_.plan_executes;
      if (twin_ != nullptr) execute(twin_->pointer(), stream_, "scatterptx_plan_execute (twin out)");
      return;
    }
    case CallKind::kGraph:
      return;  // start_graph
  }
}

void StressCall::start_graph() {
  scatterptx_status captured = SCATTERPTX_SUCCESS;
  std::string captured_message;
  CUresult began = CUDA_SUCCESS;
  CUresult ended = CUDA_SUCCESS;
  {
    GateCall call(shared_.gate);
    start_call(nullptr);  // uploads, args; kind kGraph enqueues no call
    // Module loading cannot be captured: the context is prepared first.
    const scatterptx_status prepared = scatterptx_prepare();
    if (prepared != SCATTERPTX_SUCCESS) return fail("scatterptx_prepare returned " + status_text(prepared));
    if (case_.captured != CapturedCall::kDefault) {
      const scatterptx_status sized = scatterptx_plan_workspace_size(&args_, &case_.options, &workspace_bytes_);
      if (sized != SCATTERPTX_SUCCESS) return fail("scatterptx_plan_workspace_size returned " + status_text(sized));
      if (workspace_bytes_ > 0) workspace_ = DeviceMemory(workspace_bytes_);
    }
    if (case_.captured == CapturedCall::kPlanExecute) {
      const scatterptx_status created = scatterptx_plan_create(
          &args_, &case_.options, workspace_bytes_ > 0 ? workspace_.pointer() : nullptr, workspace_bytes_, stream_, &plan_);
      if (created != SCATTERPTX_SUCCESS) return fail("scatterptx_plan_create returned " + status_text(created));
      plan_text_ = describe_group_plan(plan_);
    } else if (case_.captured == CapturedCall::kDefault) {
      plan_text_ = describe_default_plan(args_);
    }
    synchronize_stream(stream_);  // the uploads land before the capture
  }
  {
    // Thread-local capture: only this thread's calls are captured, and the
    // gate keeps every other thread out meanwhile.
    GateCapture capture(shared_.gate);
    began = driver().cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (began == CUDA_SUCCESS) {
      switch (case_.captured) {
        case CapturedCall::kDefault: captured = run_default_or_forced(out_->pointer()); break;
        case CapturedCall::kGrouped: captured = run_grouped(out_->pointer()); break;
        case CapturedCall::kPlanExecute: captured = scatterptx_plan_execute(plan_, out_->pointer(), args_.src, stream_); break;
      }
      captured_message = scatterptx_last_error_message();
      ended = driver().cuStreamEndCapture(stream_, &graph_);
    }
  }
  check_driver(began, "cuStreamBeginCapture");
  if (captured != SCATTERPTX_SUCCESS) {
    return fail(std::string("the captured ") + captured_call_name(case_.captured) + " returned " +
                scatterptx_status_name(captured) + " (" + captured_message + ")");
  }
  check_driver(ended, "cuStreamEndCapture");
  if (graph_ == nullptr) return fail("cuStreamEndCapture gave no graph");
  GateCall call(shared_.gate);
  check_driver(driver().cuGraphInstantiateWithFlags(&graph_exec_, graph_, 0), "cuGraphInstantiateWithFlags");
  for (int replay = 0; replay < shared_.graph_replays; ++replay) {
    check_driver(driver().cuGraphLaunch(graph_exec_, stream_), "cuGraphLaunch");
  }
  repeats_ = shared_.graph_replays;
  shared_.graph_launches += shared_.graph_replays;
}

void StressCall::collect() {
  if (!started_ || collected_) return;
  collected_ = true;
  try {
    GateCall call(shared_.gate);
    synchronize_stream(stream_);
    // Normally a no-op (stream_ waited for it), but not if the chain broke.
    if (other_ != nullptr) synchronize_stream(other_);
    synchronized_ = true;
    if (plan_ != nullptr) {
      const scatterptx_status destroyed = scatterptx_plan_destroy(plan_);
      plan_ = nullptr;
      if (destroyed != SCATTERPTX_SUCCESS) fail("scatterptx_plan_destroy returned " + status_text(destroyed));
    }
    if (graph_exec_ != nullptr) check_driver(driver().cuGraphExecDestroy(std::exchange(graph_exec_, nullptr)), "cuGraphExecDestroy");
    if (graph_ != nullptr) check_driver(driver().cuGraphDestroy(std::exchange(graph_, nullptr)), "cuGraphDestroy");
    for (CUevent& event : events_) {
      if (event != nullptr) check_driver(driver().cuEventDestroy(std::exchange(event, nullptr)), "cuEventDestroy");
    }
    if (out_ != nullptr) got_ = out_->download(stream_);
    if (twin_ != nullptr) twin_got_ = twin_->download(stream_);
    if (out_ != nullptr) out_->release();
    if (twin_ != nullptr) twin_->release();
    src_.release();
    index_.release();
    workspace_.release();
    if (case_.take_after) {
      int64_t position = -1;
      const scatterptx_status taken = scatterptx_take_index_error(&position);
      if (taken != SCATTERPTX_SUCCESS) {
        fail("scatterptx_take_index_error returned " + status_text(taken));
      } else {
        shared_.ledgers[case_.context].taken(position);
      }
    }
  } catch (const std::exception& error) {
    fail(std::string("error while collecting: ") + error.what());
  }
}

void StressCall::verify() {
  // A call that already failed has nothing trustworthy in out.
  if (!failures_.empty() || !collected_ || out_ == nullptr) return;
  if (refused_) {
    ++shared_.refused;
    const std::string untouched = check_untouched(inputs_, got_);
    if (!untouched.empty()) fail(untouched);
    return;
  }
  const std::string result = check_result(inputs_, got_, repeats_);
  if (!result.empty()) fail("out after " + std::to_string(repeats_) + " addition(s): " + result);
  if (twin_ == nullptr) return;
  const std::string twin_result = check_result(inputs_, twin_got_, 1);
  if (!twin_result.empty()) fail("twin out: " + twin_result);
  if (case_.options.deterministic != 0 && repeats_ == 1) {
    const std::string identical = check_identical(got_, twin_got_);
    if (!identical.empty()) fail(identical);
  }
}

}  // namespace scatterptx_stress

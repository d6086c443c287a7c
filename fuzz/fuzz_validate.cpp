// Fuzz target: raw C ABI arguments (any sizes, strides, enum values,
// pointers, schedule and options) through validation, the planners and the
// entry points that answer without a driver. Every input must end in a
// clear status with a message, or in plans the address model accepts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "address_model.hpp"
#include "byte_reader.hpp"
#include "errors.hpp"
#include "fuzzed_device.hpp"
#include "group_plan.hpp"
#include "plan_everything.hpp"
#include "problem.hpp"

namespace {

using namespace scatterptx::detail;
using namespace scatterptx::fuzz;

struct Input {
  scatterptx_scatter_add_args args{};
  scatterptx_schedule schedule{};
  scatterptx_group_options options{};
  bool null_args = false;
  bool null_options = false;
  DeviceLimits device;
  uint64_t workspace = 0;
  uint64_t workspace_bytes = 0;
};

Input read_input(ByteReader& in) {
  Input input;
  scatterptx_scatter_add_args& a = input.args;
  scatterptx_scatter_add_args_init(&a);
  const uint8_t flags = in.u8();
  input.null_args = (flags & 0x80) != 0;
  input.null_options = (flags & 2) == 0;
  a.out_rows = in.i64();
  a.out_row_stride = in.i64();
  a.src_rows = in.i64();
  a.src_row_stride = in.i64();
  a.cols = in.i64();
  a.dtype = static_cast<scatterptx_dtype>(in.i32());
  a.index_type = static_cast<scatterptx_index_type>(in.i32());
  a.index_check = static_cast<scatterptx_index_check>(in.i32());
  a.path = static_cast<scatterptx_path>(in.i32());
  a.grouping = static_cast<scatterptx_grouping>(in.i32());
  a.out = reinterpret_cast<void*>(static_cast<uintptr_t>(in.u64()));
  a.src = reinterpret_cast<const void*>(static_cast<uintptr_t>(in.u64()));
  a.index = reinterpret_cast<const void*>(static_cast<uintptr_t>(in.u64()));
  input.schedule = {in.u32(), in.u32(), in.u32(), in.u32()};
  if ((flags & 1) != 0) a.schedule = &input.schedule;
  input.options.mode = static_cast<scatterptx_mode>(in.i32());
  input.options.deterministic = in.i32();
  input.options.warps_per_cta = in.u32();
  input.device = read_device(in);
  input.workspace = in.u64();
  input.workspace_bytes = in.u64();
  // Last, so that inputs written before these fields existed read them as
  // their zero-filled values (which validation then judges).
  a.weights = reinterpret_cast<const void*>(static_cast<uintptr_t>(in.u64()));
  a.weights_dtype = static_cast<scatterptx_dtype>(in.i32());
  a.reduce = static_cast<scatterptx_reduce>(in.i32());
  a.include_self = static_cast<int>(1u - in.u32());
  return input;
}

// A status from an entry point: SUCCESS, or a clear failure with a message.
void require_clear_status(const char* where, scatterptx_status status) {
  if (status == SCATTERPTX_SUCCESS) return;
  require_clear_failure(where, status, scatterptx_last_error_message());
}

bool machine_has_driver() {
  try {
    (void)require_driver();
    return true;
  } catch (const Failure&) {
    return false;
  }
}

// The entry points that reach for the driver once the arguments pass: here,
// with no driver, they end in INVALID_ARGUMENT or NO_DRIVER. Never called on
// a machine with a driver: the pointers are made up.
void call_entry_points(const Input& input) {
  static const bool has_driver = machine_has_driver();
  if (has_driver) return;
  const scatterptx_scatter_add_args* args = input.null_args ? nullptr : &input.args;
  const scatterptx_group_options* options = input.null_options ? nullptr : &input.options;
  void* workspace = reinterpret_cast<void*>(static_cast<uintptr_t>(input.workspace));
  require_clear_status("scatterptx_scatter_add", scatterptx_scatter_add(args, nullptr));
  char text[256];
  require_clear_status("scatterptx_describe_plan", scatterptx_describe_plan(args, text, sizeof(text)));
  scatterptx_plan plan = nullptr;
  require_clear_status("scatterptx_plan_create",
                       scatterptx_plan_create(args, options, workspace, input.workspace_bytes, nullptr, &plan));
  if (plan != nullptr) std::abort();  // no plan without a driver
  require_clear_status("scatterptx_scatter_add_grouped",
                       scatterptx_scatter_add_grouped(args, options, workspace, input.workspace_bytes, nullptr));
  require_clear_status("scatterptx_plan_execute", scatterptx_plan_execute(nullptr, input.args.out,
                                                                            input.args.src, nullptr));
  require_clear_status("scatterptx_plan_describe", scatterptx_plan_describe(nullptr, text, sizeof(text)));
}

// scatterptx_plan_workspace_size reads the shapes only; its answer is the
// device-less grouped plan's workspace.
void check_workspace_size(const Input& input) {
  const scatterptx_scatter_add_args* args = input.null_args ? nullptr : &input.args;
  const scatterptx_group_options* options = input.null_options ? nullptr : &input.options;
  size_t bytes = 1;
  const scatterptx_status status = scatterptx_plan_workspace_size(args, options, &bytes);
  require_clear_status("scatterptx_plan_workspace_size", status);
  if (status != SCATTERPTX_SUCCESS) return;
  const Problem shape = validate_shape(args);
  const GroupPlan plan = make_group_plan(shape, validate_group_options(options, shape));
  check_workspace_layout(shape, plan);
  if (bytes != (plan.grouped() ? plan.workspace.bytes : 0)) {
    std::fprintf(stderr, "scatterptx_plan_workspace_size says %zu bytes, the plan %llu\n", bytes,
                 static_cast<unsigned long long>(plan.workspace.bytes));
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  const Input input = read_input(in);
  const scatterptx_scatter_add_args* args = input.null_args ? nullptr : &input.args;

  // Names of raw enum values: never NULL, whatever the value.
  if (scatterptx_dtype_name(input.args.dtype) == nullptr || scatterptx_status_name(
          static_cast<scatterptx_status>(input.args.index_check)) == nullptr) {
    std::abort();
  }
  (void)scatterptx_dtype_size(input.args.dtype);

  bool valid = false;
  try {
    const Problem problem = validate_arguments(args);
    valid = true;
    (void)validate_shape(args);  // what passes with pointers passes without
    plan_everything(problem, input.device, input.null_options ? nullptr : &input.options,
                    input.workspace / kWorkspaceAlignment * kWorkspaceAlignment);
  } catch (const Failure& failure) {
    if (valid) std::abort();
    require_clear_failure("validate_arguments", failure.status(), failure.what());
  }
  check_workspace_size(input);
  call_entry_points(input);
  return 0;
}

// libscatterptx C++ layer: the C ABI with exceptions instead of status codes.
#ifndef SCATTERPTX_SCATTERPTX_HPP
#define SCATTERPTX_SCATTERPTX_HPP

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "scatterptx/scatterptx.h"

namespace scatterptx {

// Thrown for every non-success status; carries the status and the message.
class Error : public std::runtime_error {
 public:
  Error(scatterptx_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  scatterptx_status status() const noexcept { return status_; }

 private:
  scatterptx_status status_;
};

inline void throw_on_error(scatterptx_status status) {
  if (status != SCATTERPTX_SUCCESS) {
    throw Error(status, std::string(scatterptx_status_name(status)) + ": " +
                            scatterptx_last_error_message());
  }
}

// A row-major matrix view on device memory; row_stride is in elements.
template <typename Pointer>
struct Matrix {
  Pointer data;
  int64_t rows;
  int64_t cols;
  int64_t row_stride;
};

// The C ABI's arguments for out[index[i], :] += src[i, :]; index holds
// src.rows entries. Throws INVALID_ARGUMENT when the column counts differ.
inline scatterptx_scatter_add_args make_args(Matrix<void*> out, Matrix<const void*> src,
                                             scatterptx_dtype dtype, const void* index,
                                             scatterptx_index_type index_type,
                                             scatterptx_index_check check = SCATTERPTX_INDEX_RECORD) {
  if (out.cols != src.cols) {
    throw Error(SCATTERPTX_ERROR_INVALID_ARGUMENT,
                std::string(scatterptx_status_name(SCATTERPTX_ERROR_INVALID_ARGUMENT)) + ": out has " +
                    std::to_string(out.cols) + " columns but src has " + std::to_string(src.cols));
  }
  scatterptx_scatter_add_args args;
  scatterptx_scatter_add_args_init(&args);
  args.out = out.data;
  args.out_rows = out.rows;
  args.out_row_stride = out.row_stride;
  args.src = src.data;
  args.src_rows = src.rows;
  args.src_row_stride = src.row_stride;
  args.cols = src.cols;
  args.dtype = dtype;
  args.index = index;
  args.index_type = index_type;
  args.index_check = check;
  return args;
}

// out[index[i], :] += src[i, :]; index holds src.rows entries.
inline void scatter_add(Matrix<void*> out, Matrix<const void*> src, scatterptx_dtype dtype,
                        const void* index, scatterptx_index_type index_type, CUstream stream,
                        scatterptx_index_check check = SCATTERPTX_INDEX_RECORD) {
  const scatterptx_scatter_add_args args = make_args(out, src, dtype, index, index_type, check);
  throw_on_error(scatterptx_scatter_add(&args, stream));
}

// args with reduce and include_self set: torch's
// out.scatter_reduce_(0, index expanded, src, reduce, include_self).
inline scatterptx_scatter_add_args with_reduce(scatterptx_scatter_add_args args, scatterptx_reduce reduce,
                                               bool include_self = true) {
  args.reduce = reduce;
  args.include_self = include_self ? 1 : 0;
  return args;
}

// args with per-source-row weights (src.rows entries of weights_dtype, f32
// or the rows' dtype): out[index[i], :] += weights[i] * src[i, :].
inline scatterptx_scatter_add_args with_weights(scatterptx_scatter_add_args args, const void* weights,
                                                scatterptx_dtype weights_dtype = SCATTERPTX_F32) {
  args.weights = weights;
  args.weights_dtype = weights_dtype;
  return args;
}

// args with grouping set: whether the default call may group its rows by
// target, and whether a workspace it cannot have is an error
// (scatterptx_grouping in scatterptx.h).
inline scatterptx_scatter_add_args with_grouping(scatterptx_scatter_add_args args,
                                                 scatterptx_grouping grouping) {
  args.grouping = grouping;
  return args;
}

// The default call on args as the builders above leave them: the sum, reduce,
// weights and grouping they carry.
inline void scatter_add(const scatterptx_scatter_add_args& args, CUstream stream) {
  throw_on_error(scatterptx_scatter_add(&args, stream));
}

// The plan scatter_add would run for args on the current device, without
// launching: "path=..." where it streams, "mode=..." where it groups.
inline std::string describe_plan(const scatterptx_scatter_add_args& args) {
  char buffer[1024] = {};
  throw_on_error(scatterptx_describe_plan(&args, buffer, sizeof buffer));
  return buffer;
}

// A scatterptx_allocator that calls source.allocate(bytes, stream) and
// source.release(pointer, bytes, stream) (scatterptx.h says what each must
// do). Both must be noexcept, since the library calls them through the C
// ABI; source must outlive every call that uses the allocator.
template <typename Source>
scatterptx_allocator allocator_for(Source& source) {
  static_assert(noexcept(source.allocate(size_t{}, CUstream{})), "allocate must be noexcept");
  static_assert(noexcept(source.release(static_cast<void*>(nullptr), size_t{}, CUstream{})),
                "release must be noexcept");
  scatterptx_allocator allocator;
  allocator.allocate = [](size_t bytes, CUstream stream, void* user_data) -> void* {
    return static_cast<Source*>(user_data)->allocate(bytes, stream);
  };
  allocator.release = [](void* pointer, size_t bytes, CUstream stream, void* user_data) {
    static_cast<Source*>(user_data)->release(pointer, bytes, stream);
  };
  allocator.user_data = &source;
  return allocator;
}

// Registers allocator (copied) for every call that brings none of its own;
// nullptr returns to the library's stream-ordered pool.
inline void set_allocator(const scatterptx_allocator* allocator) {
  throw_on_error(scatterptx_set_allocator(allocator));
}

// Hands the workspace pool's unused memory back to the device
// (scatterptx_trim_workspace_pool).
inline void trim_workspace_pool() { throw_on_error(scatterptx_trim_workspace_pool()); }

// scatter_add(args, stream) with its grouping workspace from allocator in
// place of the registered one.
inline void scatter_add_with_allocator(const scatterptx_scatter_add_args& args,
                                       const scatterptx_allocator& allocator, CUstream stream) {
  throw_on_error(scatterptx_scatter_add_with_allocator(&args, &allocator, stream));
}

// out.scatter_reduce_(0, index.unsqueeze(-1).expand(-1, cols), src, reduce,
// include_self); index holds src.rows entries.
inline void scatter_reduce(Matrix<void*> out, Matrix<const void*> src, scatterptx_dtype dtype, const void* index,
                           scatterptx_index_type index_type, scatterptx_reduce reduce, bool include_self,
                           CUstream stream, scatterptx_index_check check = SCATTERPTX_INDEX_RECORD) {
  const scatterptx_scatter_add_args args =
      with_reduce(make_args(out, src, dtype, index, index_type, check), reduce, include_self);
  throw_on_error(scatterptx_scatter_add(&args, stream));
}

// out[index[i], :] += weights[i] * src[i, :]; index and weights hold
// src.rows entries, weights of weights_dtype (f32 or dtype).
inline void scatter_add_weighted(Matrix<void*> out, Matrix<const void*> src, scatterptx_dtype dtype,
                                 const void* index, scatterptx_index_type index_type, const void* weights,
                                 scatterptx_dtype weights_dtype, CUstream stream,
                                 scatterptx_index_check check = SCATTERPTX_INDEX_RECORD) {
  const scatterptx_scatter_add_args args =
      with_weights(make_args(out, src, dtype, index, index_type, check), weights, weights_dtype);
  throw_on_error(scatterptx_scatter_add(&args, stream));
}

// Grouped-execution options: AUTO, not deterministic, the planner's warps.
inline scatterptx_group_options group_options(scatterptx_mode mode = SCATTERPTX_MODE_AUTO,
                                              bool deterministic = false,
                                              uint32_t warps_per_cta = 0) {
  scatterptx_group_options options;
  scatterptx_group_options_init(&options);
  options.mode = mode;
  options.deterministic = deterministic ? 1 : 0;
  options.warps_per_cta = warps_per_cta;
  return options;
}

// Bytes of device workspace a plan (or a grouped call) for args needs.
inline size_t plan_workspace_size(const scatterptx_scatter_add_args& args,
                                  const scatterptx_group_options& options = group_options()) {
  size_t bytes = 0;
  throw_on_error(scatterptx_plan_workspace_size(&args, &options, &bytes));
  return bytes;
}

// Groups, then adds, in one stream-ordered call; workspace holds
// plan_workspace_size(args, options) bytes (nullptr when that is 0).
inline void scatter_add_grouped(const scatterptx_scatter_add_args& args, void* workspace,
                                size_t workspace_bytes, CUstream stream,
                                const scatterptx_group_options& options = group_options()) {
  throw_on_error(scatterptx_scatter_add_grouped(&args, &options, workspace, workspace_bytes, stream));
}

// Owns a scatterptx_plan: the grouping of one index, executed many times on
// new out and src. Move-only; an empty Plan (default-constructed or moved
// from) holds no handle, and executing or describing it throws.
//
// The destructor cannot throw, so it ignores what scatterptx_plan_destroy
// returns (a failed cuMemFree of the plan's own workspace: the handle is
// freed regardless). Call destroy() to see that error.
class Plan {
 public:
  Plan() noexcept = default;

  // Validates args and, for a plan that groups, builds the grouping of
  // args.index on stream and synchronises it (a streaming plan does neither
  // here). workspace nullptr: the plan allocates its own; else a
  // 256-byte aligned device allocation of plan_workspace_size() bytes that
  // outlives the plan.
  explicit Plan(const scatterptx_scatter_add_args& args, CUstream stream,
                const scatterptx_group_options& options = group_options(),
                void* workspace = nullptr, size_t workspace_bytes = 0) {
    throw_on_error(
        scatterptx_plan_create(&args, &options, workspace, workspace_bytes, stream, &handle_));
  }

  ~Plan() { (void)scatterptx_plan_destroy(handle_); }

  Plan(Plan&& other) noexcept : handle_(other.release()) {}
  Plan& operator=(Plan&& other) noexcept {
    if (this != &other) {
      (void)scatterptx_plan_destroy(handle_);
      handle_ = other.release();
    }
    return *this;
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // out[index[i], :] += src[i, :] with the plan's index, for out and src of
  // the shapes, strides and alignment given at construction. Stream-ordered;
  // executes of one plan share its workspace, so order them (events).
  void execute(void* out, const void* src, CUstream stream) {
    throw_on_error(scatterptx_plan_execute(handle_, out, src, stream));
  }

  // "mode=segmented passes=3 ...".
  std::string describe() const {
    char buffer[1024] = {};
    throw_on_error(scatterptx_plan_describe(handle_, buffer, sizeof buffer));
    return buffer;
  }

  // Frees the plan now and throws if that failed; the Plan is empty after
  // either way. No execute of it may still be running.
  void destroy() {
    scatterptx_plan handle = release();
    throw_on_error(scatterptx_plan_destroy(handle));
  }

  // Gives up ownership: the caller destroys the handle.
  scatterptx_plan release() noexcept {
    scatterptx_plan handle = handle_;
    handle_ = nullptr;
    return handle;
  }

  scatterptx_plan get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  scatterptx_plan handle_ = nullptr;
};

inline void prepare() { throw_on_error(scatterptx_prepare()); }

// The smallest offending source position recorded since the last call, or -1.
inline int64_t take_index_error() {
  int64_t position = -1;
  throw_on_error(scatterptx_take_index_error(&position));
  return position;
}

}  // namespace scatterptx

#endif  // SCATTERPTX_SCATTERPTX_HPP

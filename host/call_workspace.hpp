// The default call's grouping workspace: from the call's own allocator, else
// the one the caller registered, else the context's stream-ordered pool.
// Released in stream order once the call's work is enqueued; the pool is
// trimmed on request.
#pragma once

#include <cuda.h>

#include <string>

#include "context_state.hpp"
#include "scatterptx/scatterptx.h"

namespace scatterptx::detail {

// Refuses an allocator without both functions; null_means says what a NULL
// allocator would have been.
void check_allocator(const scatterptx_allocator& allocator, const char* null_means);

// Registers (a copy of) allocator, or the pool again for NULL; refuses one
// without both functions.
void register_allocator(const scatterptx_allocator* allocator);

// Hands back to the device the memory the current context's pool keeps
// unused (cuMemPoolTrimTo to 0); nothing where no call in that context has
// made its state, so that a trim loads no kernels.
void trim_workspace_pool(const DriverApi& api);

// One call's workspace, held until release() or destruction (which releases
// without reporting errors: an exception is already on its way).
class CallWorkspace {
 public:
  // Asks for bytes on stream, from call_allocator unless it is NULL; empty()
  // when none could be had, with why().
  CallWorkspace(const DriverApi& api, const ContextState& state, uint64_t bytes, CUstream stream,
                const scatterptx_allocator* call_allocator = nullptr);
  ~CallWorkspace();
  CallWorkspace(const CallWorkspace&) = delete;
  CallWorkspace& operator=(const CallWorkspace&) = delete;

  bool empty() const { return address_ == 0; }
  CUdeviceptr address() const { return address_; }
  const std::string& why() const { return why_; }
  // Gives the memory back in stream order; throws a failed cuMemFreeAsync.
  void release();

 private:
  const DriverApi& api_;
  CUstream stream_;
  uint64_t bytes_;
  CUdeviceptr address_ = 0;
  bool from_allocator_ = false;
  scatterptx_allocator allocator_{};
  std::string why_;

  CUresult give_back();
};

}  // namespace scatterptx::detail

#include "call_workspace.hpp"

#include <mutex>

#include "errors.hpp"
#include "group_plan.hpp"

namespace scatterptx::detail {
namespace {

std::mutex allocator_mutex;
scatterptx_allocator registered{};  // allocate == nullptr: the pool

scatterptx_allocator current_allocator() {
  std::lock_guard<std::mutex> lock(allocator_mutex);
  return registered;
}

}  // namespace

void check_allocator(const scatterptx_allocator& allocator, const char* null_means) {
  if (allocator.allocate == nullptr || allocator.release == nullptr) {
    invalid_argument(std::string("allocator->allocate and allocator->release must both be set (NULL allocator: ") +
                     null_means + ")");
  }
}

void register_allocator(const scatterptx_allocator* allocator) {
  if (allocator != nullptr) check_allocator(*allocator, "the pool");
  std::lock_guard<std::mutex> lock(allocator_mutex);
  registered = allocator != nullptr ? *allocator : scatterptx_allocator{};
}

void trim_workspace_pool(const DriverApi& api) {
  const ContextState* state = existing_context_state(api);
  if (state == nullptr) return;
  check_driver(api, "cuMemPoolTrimTo", api.cuMemPoolTrimTo(state->workspace_pool, 0));
}

CallWorkspace::CallWorkspace(const DriverApi& api, const ContextState& state, uint64_t bytes, CUstream stream,
                             const scatterptx_allocator* call_allocator)
    : api_(api),
      stream_(stream),
      bytes_(bytes),
      allocator_(call_allocator != nullptr ? *call_allocator : current_allocator()) {
  if (allocator_.allocate != nullptr) {
    from_allocator_ = true;
    const std::string source = call_allocator != nullptr ? "the call's allocator" : "the registered allocator";
    void* pointer = allocator_.allocate(bytes, stream, allocator_.user_data);
    address_ = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer));
    if (address_ == 0) {
      why_ = source + " returned NULL for " + std::to_string(bytes) + " bytes";
    } else if (address_ % kWorkspaceAlignment != 0) {
      allocator_.release(pointer, bytes, stream, allocator_.user_data);
      address_ = 0;
      why_ = source + " returned memory not 256-byte aligned";
    }
    return;
  }
  const CUresult result = api.cuMemAllocFromPoolAsync(&address_, bytes, state.workspace_pool, stream);
  if (result != CUDA_SUCCESS) {
    address_ = 0;
    why_ = describe_driver_error(api, "cuMemAllocFromPoolAsync", result) + " for " + std::to_string(bytes) +
           " bytes";
  }
}

CUresult CallWorkspace::give_back() {
  const CUdeviceptr address = address_;
  address_ = 0;
  if (address == 0) return CUDA_SUCCESS;
  if (!from_allocator_) return api_.cuMemFreeAsync(address, stream_);
  allocator_.release(reinterpret_cast<void*>(static_cast<uintptr_t>(address)), bytes_, stream_, allocator_.user_data);
  return CUDA_SUCCESS;
}

CallWorkspace::~CallWorkspace() { (void)give_back(); }

void CallWorkspace::release() { check_driver(api_, "cuMemFreeAsync", give_back()); }

}  // namespace scatterptx::detail

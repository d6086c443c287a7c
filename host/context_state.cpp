#include "context_state.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "errors.hpp"
#include "launch_trace.hpp"

namespace scatterptx::detail {
namespace {

int device_attribute(const DriverApi& api, CUdevice device, CUdevice_attribute attribute) {
  int value = 0;
  check_driver(api, "cuDeviceGetAttribute", api.cuDeviceGetAttribute(&value, attribute, device));
  return value;
}

DeviceLimits read_device_limits(const DriverApi& api, CUdevice device) {
  DeviceLimits limits;
  limits.compute_capability = 10 * device_attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
                              device_attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  limits.sm_count = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  limits.max_shared_per_block = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  limits.max_shared_per_sm = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  limits.max_threads_per_sm = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  limits.max_ctas_per_sm = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  limits.max_grid_x = static_cast<uint64_t>(device_attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X));
  limits.max_grid_y = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  limits.l2_bytes = static_cast<uint64_t>(device_attribute(api, device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  return limits;
}

// What a state's creation has taken from the driver so far. Unless the
// state was stored, the destructor gives it all back, so that a failed first
// call leaks nothing into the context and the next call starts over.
class CreationResources {
 public:
  // Room for every module up front: recording one cannot then fail.
  explicit CreationResources(const DriverApi& api) : api_(api) { modules_.reserve(kKernelVariantCount); }
  CreationResources(const CreationResources&) = delete;
  CreationResources& operator=(const CreationResources&) = delete;
  ~CreationResources() {
    if (kept_) return;
    // Best effort: the error being reported is the one that stopped creation.
    for (CUmodule module : modules_) (void)api_.cuModuleUnload(module);
    if (records_ != 0) (void)api_.cuMemFree(records_);
    if (take_stream_ != nullptr) (void)api_.cuStreamDestroy(take_stream_);
    if (pool_ != nullptr) (void)api_.cuMemPoolDestroy(pool_);
  }

  void add_module(CUmodule module) { modules_.push_back(module); }
  void set_records(CUdeviceptr records) { records_ = records; }
  void set_take_stream(CUstream stream) { take_stream_ = stream; }
  void set_pool(CUmemoryPool pool) { pool_ = pool; }
  // The state is stored: it keeps everything for the context's life.
  void keep() { kept_ = true; }

 private:
  const DriverApi& api_;
  std::vector<CUmodule> modules_;
  CUdeviceptr records_ = 0;
  CUstream take_stream_ = nullptr;
  CUmemoryPool pool_ = nullptr;
  bool kept_ = false;
};

// The default call's workspaces come from a pool of the device's memory made
// here, not on the first call: creating it inside a stream capture could be
// refused. It keeps what it has handed out for reuse (release threshold
// unlimited), as PyTorch's caching allocator does, so that calls in a loop
// do not map memory anew after every synchronisation.
CUmemoryPool create_workspace_pool(const DriverApi& api, CUdevice device) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  CUmemoryPool pool = nullptr;
  check_driver(api, "cuMemPoolCreate", api.cuMemPoolCreate(&pool, &props));
  cuuint64_t keep_everything = UINT64_MAX;
  const CUresult kept = api.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_everything);
  if (kept != CUDA_SUCCESS) {
    (void)api.cuMemPoolDestroy(pool);
    check_driver(api, "cuMemPoolSetAttribute", kept);
  }
  return pool;
}

std::unique_ptr<ContextState> create_state(const DriverApi& api, CUcontext context, unsigned long long context_id,
                                           ModuleSource source, CreationResources& taken) {
  auto state = std::make_unique<ContextState>();
  state->context = context;
  state->context_id = context_id;
  CUdevice device = 0;
  check_driver(api, "cuCtxGetDevice", api.cuCtxGetDevice(&device));
  state->device = device;
  state->limits = read_device_limits(api, device);
  if (state->limits.compute_capability < 90) {
    fail(SCATTERPTX_ERROR_UNSUPPORTED_DEVICE,
         "the current device has compute capability " + std::to_string(state->limits.compute_capability / 10) +
             "." + std::to_string(state->limits.compute_capability % 10) + "; libscatterptx needs sm_90 or newer");
  }
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
    CUmodule module = load_variant_module(api, i, source, state->module_loads);
    taken.add_module(module);
    check_driver(api, "cuModuleGetFunction",
                 api.cuModuleGetFunction(&state->functions[i], module, kKernelVariants[i].entry));
    note_kernel_function(state->functions[i], kKernelVariants[i].entry);
    const KernelFamily family = kKernelVariants[i].family;
    if (family == KernelFamily::row_tma_reduce ||
        family == KernelFamily::row_private || family == KernelFamily::group_segment_sum) {
      // Above 48 KB a CTA's dynamic shared memory needs this opt-in.
      check_driver(api, "cuFuncSetAttribute",
                   api.cuFuncSetAttribute(state->functions[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          static_cast<int>(state->limits.max_shared_per_block -
                                                           kKernelVariants[i].static_smem)));
    }
    if (family == KernelFamily::group_segment_sum || family == KernelFamily::group_combine) {
      // A caller may ask for up to 32 summing warps; some variants' registers allow fewer.
      int threads = 0;
      check_driver(api, "cuFuncGetAttribute",
                   api.cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, state->functions[i]));
      state->limits.max_threads_per_cta[i] = static_cast<uint16_t>(std::clamp(threads, 0, 1024));
    }
    if (family == KernelFamily::row_red) {
      // The red grid is whole waves of what an SM holds (plan_red.cpp).
      int ctas = 0;
      check_driver(api, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                   api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, state->functions[i], kRedThreadsPerCta, 0));
      state->limits.resident_ctas_per_sm[i] = static_cast<uint8_t>(std::clamp(ctas, 0, 255));
    }
  }
  check_driver(api, "cuMemAlloc", api.cuMemAlloc(&state->index_error_records, 8 * kIndexErrorSlots));
  taken.set_records(state->index_error_records);
  // A stream of its own for the take: the legacy stream would also wait for,
  // and hold up, other threads' work on blocking streams.
  check_driver(api, "cuStreamCreate", api.cuStreamCreate(&state->take_stream, CU_STREAM_NON_BLOCKING));
  taken.set_take_stream(state->take_stream);
  // All ones = UINT64_MAX in every slot: no offending position seen. Waited
  // for here: the first call's launches go to streams that would not wait
  // for it, and a later clear would erase what they record.
  check_driver(api, "cuMemsetD8Async",
               api.cuMemsetD8Async(state->index_error_records, 0xFF, 8 * kIndexErrorSlots, state->take_stream));
  check_driver(api, "cuStreamSynchronize", api.cuStreamSynchronize(state->take_stream));
  state->workspace_pool = create_workspace_pool(api, device);
  taken.set_pool(state->workspace_pool);
  return state;
}

}  // namespace

CUcontext require_current_context(const DriverApi& api) {
  CUcontext context = nullptr;
  check_driver(api, "cuCtxGetCurrent", api.cuCtxGetCurrent(&context));
  if (context == nullptr) {
    fail(SCATTERPTX_ERROR_NO_CONTEXT,
         "no current CUDA context on this thread (make one current, e.g. cudaSetDevice or cuCtxSetCurrent)");
  }
  return context;
}

unsigned long long current_context_id(const DriverApi& api) {
  // Context ids are unique for the life of the process, unlike handles,
  // which a new context may reuse after the old one is destroyed.
  unsigned long long id = 0;
  check_driver(api, "cuCtxGetId", api.cuCtxGetId(require_current_context(api), &id));
  return id;
}

bool is_capturing(const DriverApi& api, CUstream stream) {
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  check_driver(api, "cuStreamIsCapturing", api.cuStreamIsCapturing(stream, &capture));
  return capture != CU_STREAM_CAPTURE_STATUS_NONE;
}

void refuse_in_capture(const DriverApi& api, CUstream stream, const std::string& why_not) {
  if (is_capturing(api, stream)) invalid_argument(why_not);
}

void require_stream_in_context(const DriverApi& api, const ContextState& state, CUstream stream) {
  CUcontext stream_context = nullptr;
  check_driver(api, "cuStreamGetCtx", api.cuStreamGetCtx(stream, &stream_context));
  if (stream_context != state.context) {
    invalid_argument("stream belongs to another CUDA context than the current one");
  }
}

namespace {

// One entry per context id, made under the registry's lock; the state itself
// is made under the entry's own, so that one context's module loading (a JIT
// can take seconds) holds up no other context's calls. Never destroyed: a
// thread may still call in while the process exits.
struct StateEntry {
  std::mutex creating;
  std::atomic<ContextState*> ready{nullptr};
  std::unique_ptr<ContextState> state;
};

struct StateRegistry {
  std::mutex mutex;
  std::map<unsigned long long, std::unique_ptr<StateEntry>> entries;
};

StateRegistry& state_registry() {
  static StateRegistry& registry = *new StateRegistry;
  return registry;
}

}  // namespace

ContextState* existing_context_state(const DriverApi& api) {
  const unsigned long long id = current_context_id(api);
  StateRegistry& registry = state_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  const auto found = registry.entries.find(id);
  return found == registry.entries.end() ? nullptr : found->second->ready.load(std::memory_order_acquire);
}

ContextState& current_context_state(const DriverApi& api, std::optional<ModuleSource> source) {
  const CUcontext context = require_current_context(api);
  const unsigned long long id = current_context_id(api);
  StateRegistry& registry = state_registry();
  StateEntry* entry = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry.mutex);
    std::unique_ptr<StateEntry>& slot = registry.entries[id];
    if (!slot) slot = std::make_unique<StateEntry>();
    entry = slot.get();
  }
  if (ContextState* ready = entry->ready.load(std::memory_order_acquire)) return *ready;
  std::lock_guard<std::mutex> creating(entry->creating);
  if (ContextState* ready = entry->ready.load(std::memory_order_acquire)) return *ready;
  // The environment is read once per context, when its kernels are loaded.
  const ModuleSource chosen = source ? *source : module_source_from_env(std::getenv(kForcePtxVariable));
  CreationResources taken(api);
  entry->state = create_state(api, context, id, chosen, taken);
  taken.keep();
  entry->ready.store(entry->state.get(), std::memory_order_release);
  return *entry->state;
}

}  // namespace scatterptx::detail

// Host-only: creating a context's state against a scripted driver. A
// creation that fails part way must give back every module, allocation and
// stream it took, and the next call must start over; one that succeeds is
// kept. Where the kernels come from (cubin, or PTX
// through the JIT) follows the source asked for, else SCATTERPTX_FORCE_PTX.
// Looking a state up, and trimming its workspace pool, make none.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "call_workspace.hpp"
#include "context_state.hpp"
#include "errors.hpp"

namespace {

using scatterptx::detail::ContextState;
using scatterptx::detail::current_context_state;
using scatterptx::detail::existing_context_state;
using scatterptx::detail::DriverApi;
using scatterptx::detail::Failure;
using scatterptx::detail::kKernelVariantCount;
using scatterptx::detail::kKernelVariants;
using scatterptx::detail::KernelFamily;
using scatterptx::detail::kForcePtxVariable;
using scatterptx::detail::ModuleSource;
using scatterptx::detail::trim_workspace_pool;

// The scripted driver's state: which call fails, and what is held.
struct ScriptedDriver {
  unsigned long long context_id = 0;
  int module_loads = 0;           // cuModuleLoadDataEx calls so far
  int ptx_loads = 0;              // of which with a PTX image rather than an ELF cubin
  int failing_module_load = -1;   // this call and every later one fail; -1: none
  bool fail_memset = false;
  uintptr_t cleared_on = 0;       // the stream of the records' clear
  bool clear_waited_for = false;  // a synchronisation of that stream after it
  bool fail_occupancy = false;
  bool fail_stream_create = false;
  bool fail_pool_attribute = false;
  std::set<uintptr_t> live_modules;
  std::set<CUdeviceptr> live_allocations;
  std::set<uintptr_t> live_streams;
  std::set<uintptr_t> live_pools;
  // How many were ever taken: what "everything given back" covers.
  int allocations_made = 0;
  int streams_created = 0;
  int pools_created = 0;
  cuuint64_t pool_release_threshold = 0;
  int occupancy_queries = 0;
  std::vector<std::pair<uintptr_t, cuuint64_t>> pool_trims;  // (pool, bytes to keep) of each cuMemPoolTrimTo
  int unknown_handles = 0;  // unloads, frees and destroys of what is not held: double releases
  uintptr_t next_handle = 0x1000;
  // Set: the next module load tells it has started and waits to be let go.
  std::promise<void>* load_started = nullptr;
  std::shared_future<void> loads_released;
};
ScriptedDriver script;
// Nonzero: the context of this thread, in place of the script's.
thread_local unsigned long long thread_context_id = 0;

CUresult ctx_get_current(CUcontext* context) {
  *context = reinterpret_cast<CUcontext>(uintptr_t{0xC0});
  return CUDA_SUCCESS;
}
CUresult ctx_get_id(CUcontext, unsigned long long* id) {
  *id = thread_context_id != 0 ? thread_context_id : script.context_id;
  return CUDA_SUCCESS;
}
CUresult ctx_get_device(CUdevice* device) {
  *device = 0;
  return CUDA_SUCCESS;
}
CUresult device_get_attribute(int* value, CUdevice_attribute attribute, CUdevice) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *value = 233472; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 60 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *value = 65535; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
// Gives back a held handle; one not held is a double release, counted.
template <typename Handle>
CUresult release(std::set<Handle>& live, Handle handle, CUresult not_held) {
  if (live.erase(handle) == 1) return CUDA_SUCCESS;
  ++script.unknown_handles;
  return not_held;
}

CUresult module_load(CUmodule* module, const void* image, unsigned, CUjit_option*, void**) {
  if (script.load_started != nullptr) {
    std::exchange(script.load_started, nullptr)->set_value();
    script.loads_released.wait();
  }
  const int call = script.module_loads++;
  if (std::memcmp(image, "\x7f" "ELF", 4) != 0) ++script.ptx_loads;
  if (script.failing_module_load >= 0 && call >= script.failing_module_load) return CUDA_ERROR_INVALID_IMAGE;
  const uintptr_t handle = script.next_handle++;
  script.live_modules.insert(handle);
  *module = reinterpret_cast<CUmodule>(handle);
  return CUDA_SUCCESS;
}
CUresult module_unload(CUmodule module) {
  return release(script.live_modules, reinterpret_cast<uintptr_t>(module), CUDA_ERROR_INVALID_HANDLE);
}
CUresult module_get_function(CUfunction* function, CUmodule module, const char*) {
  *function = reinterpret_cast<CUfunction>(module);
  return CUDA_SUCCESS;
}
CUresult func_set_attribute(CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; }
// Every summing variant: 28 warps, as 66 registers a thread allow.
CUresult func_get_attribute(int* value, CUfunction_attribute attribute, CUfunction) {
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) return CUDA_ERROR_INVALID_VALUE;
  *value = 896;
  return CUDA_SUCCESS;
}
// Every variant asked: 3 CTAs of 256 threads per SM, as 80 registers allow.
CUresult occupancy(int* ctas, CUfunction, int threads, size_t dynamic_smem) {
  ++script.occupancy_queries;
  if (script.fail_occupancy) return CUDA_ERROR_INVALID_VALUE;
  *ctas = threads == 256 && dynamic_smem == 0 ? 3 : 0;
  return CUDA_SUCCESS;
}
CUresult mem_alloc(CUdeviceptr* pointer, size_t) {
  *pointer = static_cast<CUdeviceptr>(script.next_handle++) << 16;
  script.live_allocations.insert(*pointer);
  ++script.allocations_made;
  return CUDA_SUCCESS;
}
CUresult mem_free(CUdeviceptr pointer) {
  return release(script.live_allocations, pointer, CUDA_ERROR_INVALID_VALUE);
}
CUresult memset_d8_async(CUdeviceptr, unsigned char value, size_t, CUstream stream) {
  if (script.fail_memset) return CUDA_ERROR_OUT_OF_MEMORY;
  if (value != 0xFF) return CUDA_ERROR_INVALID_VALUE;
  script.cleared_on = reinterpret_cast<uintptr_t>(stream);
  script.clear_waited_for = false;
  return CUDA_SUCCESS;
}
CUresult stream_synchronize(CUstream stream) {
  if (script.live_streams.count(reinterpret_cast<uintptr_t>(stream)) == 0) return CUDA_ERROR_INVALID_HANDLE;
  if (reinterpret_cast<uintptr_t>(stream) == script.cleared_on) script.clear_waited_for = true;
  return CUDA_SUCCESS;
}

CUresult stream_create(CUstream* stream, unsigned int flags) {
  if (script.fail_stream_create) return CUDA_ERROR_OUT_OF_MEMORY;
  if (flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
  const uintptr_t handle = script.next_handle++;
  script.live_streams.insert(handle);
  ++script.streams_created;
  *stream = reinterpret_cast<CUstream>(handle);
  return CUDA_SUCCESS;
}
CUresult stream_destroy(CUstream stream) {
  return release(script.live_streams, reinterpret_cast<uintptr_t>(stream), CUDA_ERROR_INVALID_HANDLE);
}

CUresult pool_create(CUmemoryPool* pool, const CUmemPoolProps* props) {
  if (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE || props->location.id != 0) return CUDA_ERROR_INVALID_VALUE;
  const uintptr_t handle = script.next_handle++;
  script.live_pools.insert(handle);
  ++script.pools_created;
  *pool = reinterpret_cast<CUmemoryPool>(handle);
  return CUDA_SUCCESS;
}

CUresult pool_destroy(CUmemoryPool pool) {
  return release(script.live_pools, reinterpret_cast<uintptr_t>(pool), CUDA_ERROR_INVALID_VALUE);
}

CUresult pool_set_attribute(CUmemoryPool, CUmemPool_attribute attribute, void* value) {
  if (script.fail_pool_attribute) return CUDA_ERROR_NOT_SUPPORTED;
  if (attribute == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) script.pool_release_threshold = *static_cast<cuuint64_t*>(value);
  return CUDA_SUCCESS;
}

CUresult pool_trim_to(CUmemoryPool pool, size_t keep) {
  const auto handle = reinterpret_cast<uintptr_t>(pool);
  if (script.live_pools.count(handle) == 0) return CUDA_ERROR_INVALID_VALUE;
  script.pool_trims.emplace_back(handle, keep);
  return CUDA_SUCCESS;
}

DriverApi scripted_api() {
  DriverApi api;  // entry points left null are never reached by state creation
  api.cuCtxGetCurrent = ctx_get_current;
  api.cuCtxGetId = ctx_get_id;
  api.cuCtxGetDevice = ctx_get_device;
  api.cuDeviceGetAttribute = device_get_attribute;
  api.cuModuleLoadDataEx = module_load;
  api.cuModuleUnload = module_unload;
  api.cuModuleGetFunction = module_get_function;
  api.cuFuncSetAttribute = func_set_attribute;
  api.cuFuncGetAttribute = func_get_attribute;
  api.cuOccupancyMaxActiveBlocksPerMultiprocessor = occupancy;
  api.cuMemAlloc = mem_alloc;
  api.cuMemFree = mem_free;
  api.cuMemsetD8Async = memset_d8_async;
  api.cuStreamSynchronize = stream_synchronize;
  api.cuStreamCreate = stream_create;
  api.cuStreamDestroy = stream_destroy;
  api.cuMemPoolCreate = pool_create;
  api.cuMemPoolDestroy = pool_destroy;
  api.cuMemPoolSetAttribute = pool_set_attribute;
  api.cuMemPoolTrimTo = pool_trim_to;
  return api;
}

// A fresh script on a context id no earlier test (or repetition) has used:
// states are kept per id for the life of the process. Real context ids are
// small sequential numbers.
void start_script() {
  static unsigned long long next_context_id = 0x5C0000;
  script = ScriptedDriver{};
  script.context_id = ++next_context_id;
}

// The status and message call fails with; SUCCESS and "" when it returns.
template <typename Call>
std::pair<scatterptx_status, std::string> failure_of(Call call) {
  try {
    call();
  } catch (const Failure& failure) {
    return {failure.status(), failure.what()};
  }
  return {SCATTERPTX_SUCCESS, ""};
}

// The cubins unless a test asks otherwise, whatever SCATTERPTX_FORCE_PTX
// the whole suite runs under; nullopt: as the environment says.
scatterptx_status creation_status(const DriverApi& api,
                                  std::optional<ModuleSource> source = ModuleSource::cubin_then_ptx) {
  return failure_of([&api, source] { current_context_state(api, source); }).first;
}

// Sets SCATTERPTX_FORCE_PTX for one test and puts back what it was.
class ForcePtxSetting {
 public:
  explicit ForcePtxSetting(const char* value) {
    if (const char* before = std::getenv(kForcePtxVariable)) before_ = before;
    setenv(kForcePtxVariable, value, 1);
  }
  ~ForcePtxSetting() {
    if (before_) {
      setenv(kForcePtxVariable, before_->c_str(), 1);
    } else {
      unsetenv(kForcePtxVariable);
    }
  }

 private:
  std::optional<std::string> before_;
};

// After a failed creation: nothing held, nothing released twice.
void expect_everything_given_back() {
  EXPECT_TRUE(script.live_modules.empty()) << script.live_modules.size() << " modules left loaded";
  EXPECT_TRUE(script.live_allocations.empty()) << "the index-error records were not freed";
  EXPECT_TRUE(script.live_streams.empty()) << "the take stream was not destroyed";
  EXPECT_TRUE(script.live_pools.empty()) << "the workspace pool was not destroyed";
  EXPECT_EQ(script.unknown_handles, 0) << "a module, allocation, stream or pool was released twice";
}

TEST(ContextState, AModuleThatFailsToLoadLeavesNoModuleLoaded) {
  const DriverApi api = scripted_api();
  start_script();
  // A variant tries its PTX only when its cubin fails: calls 0-9 load the
  // first ten variants, and the eleventh fails both ways (calls 10 and 11).
  script.failing_module_load = 10;
  ASSERT_GT(kKernelVariantCount, 11u);
  EXPECT_EQ(creation_status(api), SCATTERPTX_ERROR_DRIVER);
  EXPECT_EQ(script.module_loads, 12);
  expect_everything_given_back();
}

TEST(ContextState, AFailureAfterTheAllocationFreesItAndTheModules) {
  const DriverApi api = scripted_api();
  start_script();
  script.fail_memset = true;
  EXPECT_EQ(creation_status(api), SCATTERPTX_ERROR_DRIVER);
  EXPECT_EQ(script.module_loads, static_cast<int>(kKernelVariantCount));
  expect_everything_given_back();
}

TEST(ContextState, AFailedOccupancyQueryGivesBackTheModules) {
  const DriverApi api = scripted_api();
  start_script();
  script.fail_occupancy = true;
  EXPECT_EQ(creation_status(api), SCATTERPTX_ERROR_DRIVER);
  EXPECT_EQ(script.occupancy_queries, 1);
  EXPECT_GT(script.module_loads, 0);
  expect_everything_given_back();
}

TEST(ContextState, AFailureToCreateTheTakeStreamGivesBackEverything) {
  const DriverApi api = scripted_api();
  start_script();
  script.fail_stream_create = true;
  EXPECT_EQ(creation_status(api), SCATTERPTX_ERROR_DRIVER);
  // Taken before the stream: every module and the records' allocation.
  EXPECT_EQ(script.module_loads, static_cast<int>(kKernelVariantCount));
  EXPECT_EQ(script.allocations_made, 1);
  expect_everything_given_back();
}

TEST(ContextState, APoolThatCannotKeepItsMemoryIsDestroyedWithEverythingElse) {
  const DriverApi api = scripted_api();
  start_script();
  script.fail_pool_attribute = true;
  EXPECT_EQ(creation_status(api), SCATTERPTX_ERROR_DRIVER);
  // Taken by then: every module, the records' allocation, the take stream
  // and the pool itself.
  EXPECT_EQ(script.module_loads, static_cast<int>(kKernelVariantCount));
  EXPECT_EQ(script.allocations_made, 1);
  EXPECT_EQ(script.streams_created, 1);
  EXPECT_EQ(script.pools_created, 1);
  expect_everything_given_back();
}

TEST(ContextState, OneContextsCreationHoldsUpNoOtherContextsCalls) {
  // Another context's kernels loading (a JIT may take seconds) on another
  // thread: a call in a context whose state exists returns meanwhile.
  const DriverApi api = scripted_api();
  start_script();
  const ContextState& made = current_context_state(api, ModuleSource::cubin_then_ptx);
  std::promise<void> load_started;
  std::promise<void> release_loads;
  script.load_started = &load_started;
  script.loads_released = release_loads.get_future().share();
  std::thread other([&api, id = script.context_id + 1000000] {
    thread_context_id = id;
    (void)current_context_state(api, ModuleSource::cubin_then_ptx);
  });
  load_started.get_future().wait();
  auto lookup = std::async(std::launch::async, [&api] { return &current_context_state(api); });
  const bool returned = lookup.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  release_loads.set_value();
  other.join();
  ASSERT_TRUE(returned) << "a call in a made context waited for another context's creation";
  EXPECT_EQ(lookup.get(), &made);
}

TEST(ContextState, AFailedCreationIsRetriedAndASuccessfulOneKept) {
  const DriverApi api = scripted_api();
  start_script();
  script.fail_memset = true;
  ASSERT_EQ(creation_status(api), SCATTERPTX_ERROR_DRIVER);
  EXPECT_EQ(script.unknown_handles, 0);
  script.fail_memset = false;
  script.occupancy_queries = 0;
  const ContextState& state = current_context_state(api);
  EXPECT_EQ(script.live_modules.size(), kKernelVariantCount);
  EXPECT_EQ(script.live_allocations.size(), 1u);
  EXPECT_EQ(script.live_streams.size(), 1u);
  EXPECT_NE(state.take_stream, nullptr);
  EXPECT_EQ(state.context_id, script.context_id);
  // The records' clear ran on the state's own stream and was waited for:
  // the first call's launches go to streams that would not wait for it.
  EXPECT_EQ(script.cleared_on, reinterpret_cast<uintptr_t>(state.take_stream));
  EXPECT_TRUE(script.clear_waited_for);
  // The workspace pool keeps what it hands out for reuse.
  EXPECT_EQ(script.live_pools.size(), 1u);
  EXPECT_NE(state.workspace_pool, nullptr);
  EXPECT_EQ(script.pool_release_threshold, UINT64_MAX);
  EXPECT_EQ(state.limits.compute_capability, 90u);
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) EXPECT_NE(state.functions[i], nullptr) << i;
  // The red variants' CTAs per SM come from the driver; the others are not asked.
  int red_variants = 0;
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
    const bool red = kKernelVariants[i].family == KernelFamily::row_red;
    red_variants += red;
    EXPECT_EQ(state.limits.resident_ctas_per_sm[i], red ? 3 : 0) << kKernelVariants[i].name;
  }
  EXPECT_GT(red_variants, 0);
  // The summing variants' threads per CTA come from the driver too.
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
    const KernelFamily family = kKernelVariants[i].family;
    const bool summing = family == KernelFamily::group_segment_sum || family == KernelFamily::group_combine;
    EXPECT_EQ(state.limits.max_threads_per_cta[i], summing ? 896 : 0) << kKernelVariants[i].name;
  }
  EXPECT_EQ(script.occupancy_queries, red_variants);
  // Kept: the next call in the same context loads nothing more.
  const int loads = script.module_loads;
  EXPECT_EQ(&current_context_state(api), &state);
  EXPECT_EQ(script.module_loads, loads);
}

TEST(ContextState, ForcedPtxLoadsEveryVariantFromItsPtxOnce) {
  const DriverApi api = scripted_api();
  start_script();
  ASSERT_EQ(creation_status(api, ModuleSource::ptx_only), SCATTERPTX_SUCCESS);
  EXPECT_EQ(script.module_loads, static_cast<int>(kKernelVariantCount));
  EXPECT_EQ(script.ptx_loads, static_cast<int>(kKernelVariantCount));
  const ContextState& state = current_context_state(api);
  EXPECT_EQ(state.module_loads.ptx_count(), kKernelVariantCount);
}

TEST(ContextState, TheCubinsByDefault) {
  const DriverApi api = scripted_api();
  start_script();
  ASSERT_EQ(creation_status(api), SCATTERPTX_SUCCESS);
  EXPECT_EQ(script.module_loads, static_cast<int>(kKernelVariantCount));
  EXPECT_EQ(script.ptx_loads, 0);
  EXPECT_EQ(current_context_state(api).module_loads.ptx_count(), 0u);
}

TEST(ContextState, ForcePtxIsReadFromTheEnvironmentWhenTheStateIsCreated) {
  const DriverApi api = scripted_api();
  {
    start_script();
    const ForcePtxSetting forced("1");
    ASSERT_EQ(creation_status(api, std::nullopt), SCATTERPTX_SUCCESS);
    EXPECT_EQ(script.ptx_loads, static_cast<int>(kKernelVariantCount));
  }
  {
    start_script();
    const ForcePtxSetting off("0");
    ASSERT_EQ(creation_status(api, std::nullopt), SCATTERPTX_SUCCESS);
    EXPECT_EQ(script.ptx_loads, 0);
  }
}

TEST(ContextState, AMistypedForcePtxIsRefusedBeforeAnythingIsLoaded) {
  const DriverApi api = scripted_api();
  start_script();
  const ForcePtxSetting mistyped("yes");
  const auto [status, message] = failure_of([&api] { current_context_state(api); });
  EXPECT_EQ(status, SCATTERPTX_ERROR_INVALID_ARGUMENT) << "SCATTERPTX_FORCE_PTX=yes was accepted";
  EXPECT_NE(message.find("SCATTERPTX_FORCE_PTX=\"yes\""), std::string::npos) << message;
  EXPECT_EQ(script.module_loads, 0);
  expect_everything_given_back();
}

TEST(ContextState, LookingUpAStateMakesNoneAndFindsTheOneACallMade) {
  const DriverApi api = scripted_api();
  start_script();
  EXPECT_EQ(existing_context_state(api), nullptr);
  EXPECT_EQ(existing_context_state(api), nullptr) << "the first look-up made a state";
  EXPECT_EQ(script.module_loads, 0);
  EXPECT_EQ(script.pools_created, 0);
  const ContextState& made = current_context_state(api, ModuleSource::cubin_then_ptx);
  EXPECT_EQ(existing_context_state(api), &made);
  thread_context_id = script.context_id + 1000000;  // another context: no state there yet
  EXPECT_EQ(existing_context_state(api), nullptr);
  thread_context_id = 0;
}

TEST(WorkspacePoolTrim, BeforeAnyCallLoadsNothingAndTrimsNothing) {
  const DriverApi api = scripted_api();
  start_script();
  trim_workspace_pool(api);
  EXPECT_EQ(script.module_loads, 0);
  EXPECT_EQ(script.pools_created, 0);
  EXPECT_TRUE(script.pool_trims.empty());
  EXPECT_EQ(existing_context_state(api), nullptr) << "the trim made a state";
}

TEST(WorkspacePoolTrim, TrimsTheContextsOwnPoolToNothing) {
  const DriverApi api = scripted_api();
  start_script();
  const ContextState& made = current_context_state(api, ModuleSource::cubin_then_ptx);
  const int loads = script.module_loads;
  trim_workspace_pool(api);
  ASSERT_EQ(script.pool_trims.size(), 1u);
  EXPECT_EQ(script.pool_trims[0].first, reinterpret_cast<uintptr_t>(made.workspace_pool));
  EXPECT_EQ(script.pool_trims[0].second, 0u);
  EXPECT_EQ(script.module_loads, loads) << "the trim loaded kernels";
}

TEST(WorkspacePoolTrim, ADriverRefusalIsReported) {
  const DriverApi api = scripted_api();
  start_script();
  ContextState& made = current_context_state(api, ModuleSource::cubin_then_ptx);
  const CUmemoryPool pool = made.workspace_pool;
  made.workspace_pool = reinterpret_cast<CUmemoryPool>(uintptr_t{0xBAD});  // a pool the driver does not hold
  const auto [status, message] = failure_of([&api] { trim_workspace_pool(api); });
  EXPECT_EQ(status, SCATTERPTX_ERROR_DRIVER) << "a failed cuMemPoolTrimTo was not reported";
  EXPECT_NE(message.find("cuMemPoolTrimTo"), std::string::npos) << message;
  made.workspace_pool = pool;
}

}  // namespace

// Host-only: loading one variant's module against a scripted
// cuModuleLoadDataEx. The cubin comes first unless the PTX is forced; every
// load asks for the JIT's error and info logs and its wall time; a failed
// JIT's error log reaches the failure's message, and through the C ABI's
// guard, scatterptx_last_error_message(). Also SCATTERPTX_FORCE_PTX's values.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "errors.hpp"
#include "kernel_images.hpp"
#include "module_loading.hpp"

namespace {

using scatterptx::detail::describe_load_attempt;
using scatterptx::detail::DriverApi;
using scatterptx::detail::Failure;
using scatterptx::detail::guarded;
using scatterptx::detail::kKernelImages;
using scatterptx::detail::kKernelVariantCount;
using scatterptx::detail::kKernelVariants;
using scatterptx::detail::last_error_message_cstr;
using scatterptx::detail::load_variant_module;
using scatterptx::detail::module_source_from_env;
using scatterptx::detail::ModuleLoads;
using scatterptx::detail::ModuleSource;

// What one scripted load does, and what it was handed.
struct ScriptedLoad {
  CUresult result = CUDA_SUCCESS;
  std::string error_log;  // written into the error log buffer
  std::string info_log;
  float wall_ms = 0;      // written over CU_JIT_WALL_TIME's value, as the driver does
  bool fill_error_log = false;  // fill the whole error buffer, no NUL

  const void* image = nullptr;
  std::vector<CUjit_option> options;
};

struct ScriptedDriver {
  std::vector<ScriptedLoad> loads;  // one per expected call, in order
  std::size_t calls = 0;
};
ScriptedDriver script;

// Writes text into the buffer the options give for buffer_option, within its
// size, as the driver does.
void write_log(CUjit_option buffer_option, CUjit_option size_option, const std::string& text, bool fill,
               unsigned count, const CUjit_option* options, void** values) {
  char* buffer = nullptr;
  std::size_t size = 0;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == buffer_option) buffer = static_cast<char*>(values[i]);
    if (options[i] == size_option) size = reinterpret_cast<std::uintptr_t>(values[i]);
  }
  if (buffer == nullptr || size == 0) return;
  if (fill) {
    std::memset(buffer, 'x', size);
    return;
  }
  const std::size_t n = std::min(text.size(), size - 1);
  std::memcpy(buffer, text.data(), n);
  buffer[n] = '\0';
}

CUresult module_load(CUmodule* module, const void* image, unsigned count, CUjit_option* options, void** values) {
  if (script.calls >= script.loads.size()) return CUDA_ERROR_UNKNOWN;
  ScriptedLoad& load = script.loads[script.calls++];
  load.image = image;
  load.options.assign(options, options + count);
  write_log(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, load.error_log, load.fill_error_log, count,
            options, values);
  write_log(CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, load.info_log, false, count, options, values);
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == CU_JIT_WALL_TIME) std::memcpy(&values[i], &load.wall_ms, sizeof(float));
  }
  if (load.result == CUDA_SUCCESS) *module = reinterpret_cast<CUmodule>(std::uintptr_t{0x4D0});
  return load.result;
}

CUresult error_name(CUresult result, const char** name) {
  switch (result) {
    case CUDA_ERROR_INVALID_PTX: *name = "CUDA_ERROR_INVALID_PTX"; return CUDA_SUCCESS;
    case CUDA_ERROR_NO_BINARY_FOR_GPU: *name = "CUDA_ERROR_NO_BINARY_FOR_GPU"; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

DriverApi scripted_api() {
  DriverApi api;  // entry points left null are never reached by a load
  api.cuModuleLoadDataEx = module_load;
  api.cuGetErrorName = error_name;
  return api;
}

constexpr std::size_t kVariant = 0;
const std::string kPtxError = "ptxas application ptx input, line 42; error   : Unknown symbol 'stage_count'";

class ModuleLoadingTest : public ::testing::Test {
 protected:
  void SetUp() override { script = ScriptedDriver{}; }
  const DriverApi api = scripted_api();
  ModuleLoads loads;
};

bool asks_for(const ScriptedLoad& load, CUjit_option option) {
  for (CUjit_option asked : load.options) {
    if (asked == option) return true;
  }
  return false;
}

TEST_F(ModuleLoadingTest, TheCubinByDefaultWithLogsAndWallTimeAskedFor) {
  script.loads.resize(1);
  script.loads[0].wall_ms = 0.25f;
  EXPECT_NE(load_variant_module(api, kVariant, ModuleSource::cubin_then_ptx, loads), nullptr);
  ASSERT_EQ(script.calls, 1u);
  EXPECT_EQ(script.loads[0].image, kKernelImages[kVariant].cubin);
  for (CUjit_option option : {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                              CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_WALL_TIME}) {
    EXPECT_TRUE(asks_for(script.loads[0], option)) << "option " << option;
  }
  EXPECT_FALSE(loads.from_ptx[kVariant]);
  EXPECT_FLOAT_EQ(loads.wall_ms[kVariant], 0.25f);
}

TEST_F(ModuleLoadingTest, ForcedPtxNeverTriesTheCubinAndKeepsTheJitWallTime) {
  script.loads.resize(1);
  script.loads[0].wall_ms = 37.5f;
  EXPECT_NE(load_variant_module(api, kVariant, ModuleSource::ptx_only, loads), nullptr);
  ASSERT_EQ(script.calls, 1u);
  EXPECT_EQ(script.loads[0].image, static_cast<const void*>(kKernelImages[kVariant].ptx));
  EXPECT_TRUE(asks_for(script.loads[0], CU_JIT_WALL_TIME));
  EXPECT_TRUE(loads.from_ptx[kVariant]);
  EXPECT_FLOAT_EQ(loads.wall_ms[kVariant], 37.5f);
  EXPECT_EQ(loads.ptx_count(), 1u);
  EXPECT_DOUBLE_EQ(loads.total_wall_ms(), 37.5);
}

TEST_F(ModuleLoadingTest, ARefusedCubinFallsBackToThePtx) {
  script.loads.resize(2);
  script.loads[0].result = CUDA_ERROR_NO_BINARY_FOR_GPU;
  script.loads[1].wall_ms = 12.0f;
  EXPECT_NE(load_variant_module(api, kVariant, ModuleSource::cubin_then_ptx, loads), nullptr);
  ASSERT_EQ(script.calls, 2u);
  EXPECT_EQ(script.loads[0].image, kKernelImages[kVariant].cubin);
  EXPECT_EQ(script.loads[1].image, static_cast<const void*>(kKernelImages[kVariant].ptx));
  EXPECT_TRUE(loads.from_ptx[kVariant]);
  EXPECT_FLOAT_EQ(loads.wall_ms[kVariant], 12.0f);
}

TEST_F(ModuleLoadingTest, AForcedJitFailureCarriesItsErrorLogToTheUser) {
  script.loads.resize(1);
  script.loads[0].result = CUDA_ERROR_INVALID_PTX;
  script.loads[0].error_log = kPtxError + "\n";
  script.loads[0].info_log = "ptxas info    : 0 bytes gmem";
  const scatterptx_status status =
      guarded([&] { load_variant_module(api, kVariant, ModuleSource::ptx_only, loads); });
  EXPECT_EQ(status, SCATTERPTX_ERROR_DRIVER);
  const std::string message = last_error_message_cstr();
  EXPECT_EQ(message, std::string("cannot load kernel ") + kKernelVariants[kVariant].name +
                         " (SCATTERPTX_FORCE_PTX=1): PTX JIT: cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX; "
                         "JIT log: " + kPtxError + "\nptxas info    : 0 bytes gmem");
  EXPECT_EQ(script.calls, 1u);
}

TEST_F(ModuleLoadingTest, BothAttemptsAreNamedWhenTheFallbackFailsToo) {
  script.loads.resize(2);
  script.loads[0].result = CUDA_ERROR_NO_BINARY_FOR_GPU;
  script.loads[1].result = CUDA_ERROR_INVALID_PTX;
  script.loads[1].error_log = kPtxError;
  try {
    load_variant_module(api, kVariant, ModuleSource::cubin_then_ptx, loads);
    FAIL() << "the load succeeded";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_DRIVER);
    EXPECT_EQ(std::string(failure.what()),
              std::string("cannot load kernel ") + kKernelVariants[kVariant].name +
                  ": cubin: cuModuleLoadDataEx failed: CUDA_ERROR_NO_BINARY_FOR_GPU; "
                  "PTX JIT: cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX; JIT log: " + kPtxError);
  }
}

TEST_F(ModuleLoadingTest, ALogFillingItsWholeBufferIsReadWithinIt) {
  script.loads.resize(1);
  script.loads[0].result = CUDA_ERROR_INVALID_PTX;
  script.loads[0].fill_error_log = true;
  try {
    load_variant_module(api, kVariant, ModuleSource::ptx_only, loads);
    FAIL() << "the load succeeded";
  } catch (const Failure& failure) {
    const std::string message = failure.what();
    const std::size_t log = message.find("JIT log: ");
    ASSERT_NE(log, std::string::npos) << message;
    const std::string text = message.substr(log + 9);
    EXPECT_GT(text.size(), 1000u);
    EXPECT_LT(text.size(), 65536u);
    EXPECT_EQ(text.find_first_not_of('x'), std::string::npos);
  }
}

TEST(ModuleLoadAttempt, DescribedWithItsLogOnlyWhenThereIsOne) {
  EXPECT_EQ(describe_load_attempt("PTX JIT", "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX", ""),
            "PTX JIT: cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX");
  EXPECT_EQ(describe_load_attempt("cubin", "cuModuleLoadDataEx failed: X", "line 1: bad"),
            "cubin: cuModuleLoadDataEx failed: X; JIT log: line 1: bad");
}

TEST(ModuleLoads, DescribesTheSourcesAndTheWallTime) {
  ModuleLoads loads;
  for (std::size_t i = 0; i < kKernelVariantCount; ++i) {
    loads.from_ptx[i] = i != 0;
    loads.wall_ms[i] = 2.0f;
  }
  loads.wall_ms[kKernelVariantCount - 1] = 9.5f;
  const std::size_t count = kKernelVariantCount;
  const std::string expected = std::to_string(count) + " modules: " + std::to_string(count - 1) +
                               " from PTX through the JIT, 1 from sm_90 cubins; JIT wall time " +
                               std::to_string(static_cast<int>(2 * (count - 1) + 9)) + ".5 ms in all, longest 9.5 ms (" +
                               kKernelVariants[count - 1].name + ")";
  EXPECT_EQ(loads.describe(), expected);
}

TEST(ForcePtxSwitch, UnsetEmptyAndZeroKeepTheCubins) {
  EXPECT_EQ(module_source_from_env(nullptr), ModuleSource::cubin_then_ptx);
  EXPECT_EQ(module_source_from_env(""), ModuleSource::cubin_then_ptx);
  EXPECT_EQ(module_source_from_env("0"), ModuleSource::cubin_then_ptx);
}

TEST(ForcePtxSwitch, OneForcesThePtx) { EXPECT_EQ(module_source_from_env("1"), ModuleSource::ptx_only); }

TEST(ForcePtxSwitch, AnythingElseIsRefusedNamingTheVariable) {
  for (const char* value : {"yes", "true", "2", " 1", "1 ", "01", "on"}) {
    try {
      module_source_from_env(value);
      ADD_FAILURE() << "accepted \"" << value << "\"";
    } catch (const Failure& failure) {
      EXPECT_EQ(failure.status(), SCATTERPTX_ERROR_INVALID_ARGUMENT) << value;
      EXPECT_NE(std::string(failure.what()).find(std::string("SCATTERPTX_FORCE_PTX=\"") + value + "\""),
                std::string::npos)
          << failure.what();
    }
  }
}

}  // namespace

// The C++ layer's default call (scatterptx.hpp): with_grouping, scatter_add
// on prepared args, describe_plan, and the grouping workspace's allocator
// (allocator_for, set_allocator, scatter_add_with_allocator). The host tests
// need no GPU; the last ones run the default call on one.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu_harness.hpp"
#include "reference.hpp"
#include "scatter_case.hpp"
#include "scatterptx/scatterptx.hpp"

namespace scatterptx_test {
namespace {

void* fake_pointer(uintptr_t address) { return reinterpret_cast<void*>(address); }
constexpr uintptr_t kTiB = uintptr_t{1} << 40;

scatterptx_scatter_add_args fake_args() {
  return scatterptx::make_args({fake_pointer(1 * kTiB), 1000, 64, 64}, {fake_pointer(2 * kTiB), 4096, 64, 64},
                               SCATTERPTX_F32, fake_pointer(3 * kTiB), SCATTERPTX_INDEX_INT64);
}

// The status of the scatterptx::Error body throws, with its message.
template <typename Body>
std::pair<scatterptx_status, std::string> thrown_by(Body body) {
  try {
    body();
  } catch (const scatterptx::Error& error) {
    return {error.status(), error.what()};
  }
  return {SCATTERPTX_SUCCESS, "(nothing thrown)"};
}

// Records what the library asks of it; hands out `given` (no device memory).
struct RecordingSource {
  void* given = nullptr;
  size_t asked_bytes = 0;
  CUstream asked_stream = nullptr;
  void* released = nullptr;
  size_t released_bytes = 0;
  CUstream released_stream = nullptr;
  void* allocate(size_t bytes, CUstream stream) noexcept {
    asked_bytes = bytes;
    asked_stream = stream;
    return given;
  }
  void release(void* pointer, size_t bytes, CUstream stream) noexcept {
    released = pointer;
    released_bytes = bytes;
    released_stream = stream;
  }
};

TEST(CppDefaultCall, WithGroupingSetsOnlyThatField) {
  const scatterptx_scatter_add_args base = fake_args();
  const scatterptx_scatter_add_args off = scatterptx::with_grouping(base, SCATTERPTX_GROUPING_OFF);
  EXPECT_EQ(base.grouping, SCATTERPTX_GROUPING_AUTO);
  EXPECT_EQ(off.grouping, SCATTERPTX_GROUPING_OFF);
  EXPECT_EQ(scatterptx::with_grouping(base, SCATTERPTX_GROUPING_NO_FALLBACK).grouping,
            SCATTERPTX_GROUPING_NO_FALLBACK);
  EXPECT_TRUE(off.out == base.out && off.out_rows == base.out_rows && off.src == base.src &&
              off.src_rows == base.src_rows && off.cols == base.cols && off.dtype == base.dtype &&
              off.index == base.index && off.index_type == base.index_type && off.path == base.path &&
              off.weights == base.weights && off.reduce == base.reduce && off.include_self == base.include_self);
}

TEST(CppDefaultCall, AllocatorForPassesEachCallToItsSource) {
  RecordingSource source;
  source.given = fake_pointer(7 * kTiB);
  const scatterptx_allocator allocator = scatterptx::allocator_for(source);
  ASSERT_NE(allocator.allocate, nullptr);
  ASSERT_NE(allocator.release, nullptr);
  EXPECT_EQ(allocator.user_data, &source);
  const auto stream = reinterpret_cast<CUstream>(fake_pointer(9 * kTiB));
  EXPECT_EQ(allocator.allocate(4096, stream, allocator.user_data), source.given);
  EXPECT_EQ(source.asked_bytes, 4096u);
  EXPECT_EQ(source.asked_stream, stream);
  allocator.release(source.given, 4096, stream, allocator.user_data);
  EXPECT_EQ(source.released, source.given);
  EXPECT_EQ(source.released_bytes, 4096u);
  EXPECT_EQ(source.released_stream, stream);
}

TEST(CppDefaultCall, HalfSetAllocatorsThrowInvalidArgument) {
  RecordingSource source;
  scatterptx_allocator half = scatterptx::allocator_for(source);
  half.release = nullptr;
  auto [status, message] = thrown_by([&] { scatterptx::set_allocator(&half); });
  EXPECT_EQ(status, SCATTERPTX_ERROR_INVALID_ARGUMENT) << message;
  EXPECT_NE(message.find("allocator->release"), std::string::npos) << message;
  std::tie(status, message) = thrown_by([&] { scatterptx::scatter_add_with_allocator(fake_args(), half, nullptr); });
  EXPECT_EQ(status, SCATTERPTX_ERROR_INVALID_ARGUMENT) << message;
  EXPECT_NE(message.find("allocator->release"), std::string::npos) << message;
  scatterptx::set_allocator(nullptr);  // the pool again: no error
}

// Validation comes before the driver, so these hold with or without a GPU.
TEST(CppDefaultCall, InvalidArgumentsThrowBeforeTheDriver) {
  scatterptx_scatter_add_args null_out = fake_args();
  null_out.out = nullptr;
  RecordingSource source;
  const scatterptx_allocator allocator = scatterptx::allocator_for(source);
  for (const auto& [what, call] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"scatter_add", [&] { scatterptx::scatter_add(null_out, nullptr); }},
           {"scatter_add_with_allocator", [&] { scatterptx::scatter_add_with_allocator(null_out, allocator, nullptr); }},
           {"describe_plan", [&] { scatterptx::describe_plan(null_out); }}}) {
    const auto [status, message] = thrown_by(call);
    EXPECT_EQ(status, SCATTERPTX_ERROR_INVALID_ARGUMENT) << what << ": " << message;
    EXPECT_NE(message.find("out"), std::string::npos) << what << ": " << message;
  }
  EXPECT_EQ(source.asked_bytes, 0u) << "an invalid call asked for a workspace";
}

// ---- On a GPU: the default call through the C++ layer ----

// 512-byte f32 rows into a 20 MB out: where the default call groups.
ScatterShape grouped_f32_shape() { return contiguous_shape(SCATTERPTX_F32, 40000, 100000, 128); }

// Device memory from cuMemAlloc, 0xA5-filled (a workspace must not count on
// zeroes); freed when the test ends, after it has synchronised.
struct DeviceSource {
  int allocations = 0;
  int releases = 0;
  size_t last_bytes = 0;
  std::vector<std::unique_ptr<DeviceBuffer>> held;
  void* allocate(size_t bytes, CUstream) noexcept {
    ++allocations;
    last_bytes = bytes;
    try {
      held.push_back(std::make_unique<DeviceBuffer>(bytes));
      fill_device_bytes(held.back()->address(), 0xA5, bytes);
      return held.back()->pointer(0);
    } catch (const std::exception&) {
      return nullptr;
    }
  }
  void release(void*, size_t, CUstream) noexcept { ++releases; }
};

// Registers an allocator for one test and returns to the pool after it.
struct RegisteredForTheTest {
  explicit RegisteredForTheTest(const scatterptx_allocator& allocator) { scatterptx::set_allocator(&allocator); }
  ~RegisteredForTheTest() { EXPECT_EQ(scatterptx_set_allocator(nullptr), SCATTERPTX_SUCCESS); }
  RegisteredForTheTest(const RegisteredForTheTest&) = delete;
  RegisteredForTheTest& operator=(const RegisteredForTheTest&) = delete;
};

class CppDefaultCallOnGpu : public ::testing::Test {
 protected:
  void SetUp() override { SCATTERPTX_REQUIRE_GPU(); }
};

TEST_F(CppDefaultCallOnGpu, GroupsWithTheCallsOwnAllocator) {
  const uint64_t seed = fresh_seed();
  const ScatterShape s = grouped_f32_shape();
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  const HostScatter host = make_random_scatter(s, seed);
  DeviceScatter device(s, host);
  const scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  const std::string plan = scatterptx::describe_plan(args);
  EXPECT_EQ(plan.rfind("mode=segmented", 0), 0u) << plan;
  DeviceSource source;
  scatterptx::scatter_add_with_allocator(args, scatterptx::allocator_for(source), nullptr);
  expect_scatter_result(s, host, device, 1);
  EXPECT_EQ(source.allocations, 1);
  EXPECT_EQ(source.releases, 1);
  EXPECT_NE(plan.find("workspace_bytes=" + std::to_string(source.last_bytes)), std::string::npos) << plan;
  EXPECT_NO_THROW(scatterptx::trim_workspace_pool());
}

TEST_F(CppDefaultCallOnGpu, GroupsWithTheRegisteredAllocatorAndStreamsWithGroupingOff) {
  const uint64_t seed = fresh_seed();
  const ScatterShape s = grouped_f32_shape();
  SCOPED_TRACE(seed_trace(seed) + ", " + s.describe());
  const HostScatter host = make_random_scatter(s, seed);
  DeviceScatter device(s, host);
  DeviceSource source;
  const RegisteredForTheTest registered(scatterptx::allocator_for(source));
  const scatterptx_scatter_add_args args = device.args(SCATTERPTX_PATH_AUTO, SCATTERPTX_INDEX_RECORD);
  scatterptx::scatter_add(args, nullptr);
  expect_scatter_result(s, host, device, 1);
  EXPECT_EQ(source.allocations, 1);
  EXPECT_EQ(source.releases, 1);

  device.reset_out(host.out0);
  const scatterptx_scatter_add_args off = scatterptx::with_grouping(args, SCATTERPTX_GROUPING_OFF);
  const std::string plan = scatterptx::describe_plan(off);
  EXPECT_EQ(plan.rfind("path=", 0), 0u) << plan;
  scatterptx::scatter_add(off, nullptr);
  expect_scatter_result(s, host, device, 1);
  EXPECT_EQ(source.allocations, 1) << "grouping off asked for a workspace";
}

}  // namespace
}  // namespace scatterptx_test

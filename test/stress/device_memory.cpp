#include "device_memory.hpp"

#include <cstdio>
#include <string>
#include <utility>

#include "extra_driver.hpp"
#include "gpu_resources.hpp"

namespace scatterptx_stress {

using scatterptx_testing::check_driver;
using scatterptx_testing::driver;

DeviceMemory::DeviceMemory(size_t bytes) : bytes_(bytes) {
  const CUresult result = driver().cuMemAlloc(&address_, bytes == 0 ? 1 : bytes);
  if (result != CUDA_SUCCESS) {
    address_ = 0;
    throw scatterptx_testing::DriverError(
        scatterptx::detail::describe_driver_error(driver(), "cuMemAlloc", result) + " (" + std::to_string(bytes) +
        " bytes)");
  }
}

DeviceMemory::~DeviceMemory() {
  if (address_ == 0) return;
  const CUresult result = driver().cuMemFree(address_);
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr, "scatterptx_stress: warning: %s\n",
                 scatterptx::detail::describe_driver_error(driver(), "cuMemFree", result).c_str());
  }
}

DeviceMemory::DeviceMemory(DeviceMemory&& other) noexcept
    : address_(std::exchange(other.address_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    DeviceMemory old(std::move(*this));
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceMemory::release() {
  if (address_ == 0) return;
  const CUdeviceptr address = std::exchange(address_, 0);
  bytes_ = 0;
  check_driver(driver().cuMemFree(address), "cuMemFree");
}

void upload_async(CUdeviceptr destination, const void* source, size_t bytes, CUstream stream) {
  if (bytes == 0) return;
  check_driver(extra_driver().cuMemcpyHtoDAsync(destination, source, bytes, stream), "cuMemcpyHtoDAsync");
}

void synchronize_stream(CUstream stream) { check_driver(driver().cuStreamSynchronize(stream), "cuStreamSynchronize"); }

GuardedOut::GuardedOut(const scatterptx_test::HostMatrix& out0, CUstream stream)
    : out_bytes_(out0.bytes.size()), guard_bytes_(static_cast<size_t>(kGuardRows) * out0.row_bytes()) {
  shape_.dtype = out0.dtype;
  shape_.rows = out0.rows;
  shape_.cols = out0.cols;
  shape_.row_stride = out0.row_stride;
  memory_ = DeviceMemory(guard_bytes_ + out_bytes_ + guard_bytes_);
  if (memory_.size() > 0) {
    check_driver(driver().cuMemsetD8Async(memory_.address(), kGuardByte, memory_.size(), stream), "cuMemsetD8Async");
  }
  upload_async(memory_.address(guard_bytes_), out0.bytes.data(), out_bytes_, stream);
}

DownloadedOut GuardedOut::download(CUstream stream) const {
  DownloadedOut got;
  got.values = scatterptx_test::HostMatrix(shape_.dtype, shape_.rows, shape_.cols, shape_.row_stride, 0);
  got.guard_before.resize(guard_bytes_);
  got.guard_after.resize(guard_bytes_);
  const auto enqueue = [&](void* destination, CUdeviceptr source, size_t bytes) {
    if (bytes == 0) return;
    check_driver(driver().cuMemcpyDtoHAsync(destination, source, bytes, stream), "cuMemcpyDtoHAsync");
  };
  enqueue(got.guard_before.data(), memory_.address(), guard_bytes_);
  enqueue(got.values.bytes.data(), memory_.address(guard_bytes_), out_bytes_);
  enqueue(got.guard_after.data(), memory_.address(guard_bytes_ + out_bytes_), guard_bytes_);
  synchronize_stream(stream);
  return got;
}

}  // namespace scatterptx_stress

#include "device_buffer.hpp"

#include <cstdio>
#include <string>
#include <utility>

#include "driver.hpp"

namespace scatterptx_bench {

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const CUresult result = driver().cuMemAlloc(&address_, bytes);
  if (result != CUDA_SUCCESS) {
    throw BenchError(scatterptx::detail::describe_driver_error(driver(), "cuMemAlloc", result) +
                     " (" + std::to_string(bytes) + " bytes)");
  }
}

DeviceBuffer::~DeviceBuffer() { reset(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : address_(std::exchange(other.address_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (address_ != 0) {
    // Called from the destructor too, so a failure is reported, not thrown.
    const CUresult result = driver().cuMemFree(address_);
    if (result != CUDA_SUCCESS) {
      std::fprintf(stderr, "scatterptx-bench: warning: %s\n",
                   scatterptx::detail::describe_driver_error(driver(), "cuMemFree", result).c_str());
    }
  }
  address_ = 0;
  bytes_ = 0;
}

void copy_to_device(CUdeviceptr destination, const void* source, size_t bytes) {
  if (bytes == 0) return;
  check_cu(driver().cuMemcpyHtoD(destination, source, bytes), "cuMemcpyHtoD");
}

void copy_to_host(void* destination, CUdeviceptr source, size_t bytes) {
  if (bytes == 0) return;
  check_cu(driver().cuMemcpyDtoH(destination, source, bytes), "cuMemcpyDtoH");
}

}  // namespace scatterptx_bench

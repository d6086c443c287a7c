#include "gpu_resources.hpp"

#include <cstdio>
#include <string>
#include <utility>

namespace scatterptx_testing {
namespace {

// Destructors must not throw: a failed release is reported and the program
// carries on (a broken context fails the next checked call anyway).
void warn_on_failure(CUresult result, const char* call) {
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr, "warning: %s\n",
                 scatterptx::detail::describe_driver_error(driver(), call, result).c_str());
  }
}

}  // namespace

const DriverApi& driver() {
  std::string why_not;
  const DriverApi* api = scatterptx::detail::driver_api(&why_not);
  if (api == nullptr) throw DriverError(why_not);
  return *api;
}

void check_driver(CUresult result, const char* call) {
  if (result != CUDA_SUCCESS) {
    throw DriverError(scatterptx::detail::describe_driver_error(driver(), call, result));
  }
}

DeviceBuffer::DeviceBuffer(size_t bytes) : size_(bytes) {
  const CUresult result = driver().cuMemAlloc(&pointer_, bytes == 0 ? 1 : bytes);
  if (result != CUDA_SUCCESS) {
    throw DriverError(scatterptx::detail::describe_driver_error(driver(), "cuMemAlloc", result) +
                      " (" + std::to_string(bytes) + " bytes)");
  }
}

DeviceBuffer::~DeviceBuffer() { reset(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pointer_(std::exchange(other.pointer_, 0)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    pointer_ = std::exchange(other.pointer_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (pointer_ != 0) warn_on_failure(driver().cuMemFree(pointer_), "cuMemFree");
  pointer_ = 0;
  size_ = 0;
}

Stream::Stream(unsigned int flags) {
  check_driver(driver().cuStreamCreate(&stream_, flags), "cuStreamCreate");
}

Stream::~Stream() { warn_on_failure(driver().cuStreamDestroy(stream_), "cuStreamDestroy"); }

void Stream::synchronize() const {
  check_driver(driver().cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

void copy_to_device(CUdeviceptr destination, const void* source, size_t bytes) {
  if (bytes == 0) return;
  check_driver(driver().cuMemcpyHtoD(destination, source, bytes), "cuMemcpyHtoD");
}

void copy_to_host(void* destination, CUdeviceptr source, size_t bytes) {
  if (bytes == 0) return;
  check_driver(driver().cuMemcpyDtoH(destination, source, bytes), "cuMemcpyDtoH");
}

}  // namespace scatterptx_testing

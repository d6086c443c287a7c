// Device memory, streams and checked driver calls for tests and bench, all
// through the library's run-time loaded driver table
// (scatterptx::detail::driver_api), so neither links libcuda.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "driver_api.hpp"

namespace scatterptx_testing {

using scatterptx::detail::DriverApi;

// A driver call failed; the message is describe_driver_error's.
class DriverError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The loaded driver; throws DriverError saying why when there is none.
const DriverApi& driver();
// Throws DriverError naming `call` unless result is CUDA_SUCCESS.
void check_driver(CUresult result, const char* call);

// Device memory, freed on destruction. Move-only. A zero-byte buffer still
// gets a real address (cuMemAlloc rejects zero bytes), so a pointer to it is
// never null.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr address(size_t offset = 0) const { return pointer_ + offset; }
  void* pointer(size_t offset = 0) const {
    return reinterpret_cast<void*>(static_cast<uintptr_t>(pointer_ + offset));
  }
  size_t size() const { return size_; }
  void reset();

 private:
  CUdeviceptr pointer_ = 0;
  size_t size_ = 0;
};

// A stream destroyed with its scope. flags: CU_STREAM_NON_BLOCKING (the
// tests: no implicit wait on the legacy stream) or CU_STREAM_DEFAULT (the
// bench: its synchronous host copies then wait for the work on it).
class Stream {
 public:
  explicit Stream(unsigned int flags = CU_STREAM_NON_BLOCKING);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return stream_; }
  void synchronize() const;

 private:
  CUstream stream_ = nullptr;
};

// Synchronous copies (cuMemcpyHtoD / cuMemcpyDtoH); zero bytes is a no-op.
void copy_to_device(CUdeviceptr destination, const void* source, size_t bytes);
void copy_to_host(void* destination, CUdeviceptr source, size_t bytes);

}  // namespace scatterptx_testing

// Owning device allocations and host <-> device transfers, all checked.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace scatterptx_bench {

// One cuMemAlloc'd block, freed on destruction. Move-only. A zero-byte
// buffer allocates nothing (cuMemAlloc rejects size 0).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr address() const { return address_; }
  void* pointer() const { return reinterpret_cast<void*>(address_); }
  size_t bytes() const { return bytes_; }
  void reset();

 private:
  CUdeviceptr address_ = 0;
  size_t bytes_ = 0;
};

void copy_to_device(CUdeviceptr destination, const void* source, size_t bytes);
void copy_to_host(void* destination, CUdeviceptr source, size_t bytes);

}  // namespace scatterptx_bench

// Device memory and outs for one stress call, in the current context, with
// every transfer ordered on the call's stream (no context synchronisation,
// which would wait for the other threads' work and fail under a capture).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "reference.hpp"
#include "result_check.hpp"

namespace scatterptx_stress {

// cuMemAlloc'd memory: release() frees it and throws a failure; the
// destructor (an exception already on its way) only warns. A zero-byte
// request still gets a real address, so no pointer of a call is NULL.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(size_t bytes);
  ~DeviceMemory();
  DeviceMemory(DeviceMemory&& other) noexcept;
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  CUdeviceptr address(size_t offset = 0) const { return address_ + offset; }
  void* pointer(size_t offset = 0) const {
    return reinterpret_cast<void*>(static_cast<uintptr_t>(address_ + offset));
  }
  size_t size() const { return bytes_; }
  void release();

 private:
  CUdeviceptr address_ = 0;
  size_t bytes_ = 0;
};

// Host -> device on stream: returns once pageable source bytes are staged,
// and later work on stream sees them.
void upload_async(CUdeviceptr destination, const void* source, size_t bytes, CUstream stream);

// An out of out0's shape between kGuardRows rows of kGuardByte on each side.
class GuardedOut {
 public:
  // Allocates, then enqueues the guard fill and out0's upload on stream.
  GuardedOut(const scatterptx_test::HostMatrix& out0, CUstream stream);
  void* pointer() const { return memory_.pointer(guard_bytes_); }
  // Enqueues the downloads on stream and waits for it.
  DownloadedOut download(CUstream stream) const;
  void release() { memory_.release(); }

 private:
  scatterptx_test::HostMatrix shape_;  // dtype, rows, cols, stride; no bytes
  size_t out_bytes_ = 0;
  size_t guard_bytes_ = 0;
  DeviceMemory memory_;
};

void synchronize_stream(CUstream stream);

}  // namespace scatterptx_stress

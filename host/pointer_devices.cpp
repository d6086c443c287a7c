#include "pointer_devices.hpp"

#include <cstdint>
#include <string>

#include "errors.hpp"

namespace scatterptx::detail {
namespace {

// The device ordinal of plain device memory at address; -1 for anything else
// (host, managed, or an address no allocation covers: the driver then
// answers with zeros and success).
int device_memory_ordinal(const DriverApi& api, CUdeviceptr address) {
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  uint32_t memory_type = 0;
  uint32_t is_managed = 0;  // the driver writes a bool: zeroed first, any non-zero byte is true
  int ordinal = -1;
  void* data[] = {&memory_type, &is_managed, &ordinal};
  check_driver(api, "cuPointerGetAttributes", api.cuPointerGetAttributes(3, attributes, data, address));
  if (memory_type != CU_MEMORYTYPE_DEVICE || is_managed != 0) return -1;
  return ordinal;
}

void require_on_device(const DriverApi& api, const ContextState& state, const char* name, uint64_t address) {
  const int ordinal = device_memory_ordinal(api, address);
  if (ordinal < 0 || ordinal == static_cast<int>(state.device)) return;  // handles are the ordinals in practice
  CUdevice device = 0;
  check_driver(api, "cuDeviceGet", api.cuDeviceGet(&device, ordinal));
  if (device == state.device) return;
  invalid_argument(std::string(name) + " is memory of device " + std::to_string(ordinal) +
                   ", not of the current context's device: make that device's context current, or move it there");
}

}  // namespace

void require_pointers_on_device(const DriverApi& api, const ContextState& state, const Problem& p) {
  if (p.is_empty()) return;  // nothing is read or written: the pointers may be anything
  require_on_device(api, state, "out", p.out_address);
  require_on_device(api, state, "src", p.src_address);
  require_on_device(api, state, "index", p.index_address);
  if (p.weighted) require_on_device(api, state, "weights", p.weights_address);
}

}  // namespace scatterptx::detail

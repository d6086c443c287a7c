// The assembled kernels embedded in the library, one per manifest variant.
#pragma once

#include <cstddef>

#include "kernel_manifest.hpp"

namespace scatterptx::detail {

struct KernelImage {
  const unsigned char* cubin;  // sm_90 machine code from ptxas
  std::size_t cubin_size;
  const char* ptx;             // NUL-terminated PTX, for GPUs the cubin cannot run on
};

// Indexed like kKernelVariants; written by gen/embed_kernels.py.
extern const KernelImage kKernelImages[kKernelVariantCount];

}  // namespace scatterptx::detail

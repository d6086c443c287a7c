# The examples use the CUDA runtime (cudaMalloc, cudaStream_t) as a user's
# program would; only they link it, never the library. On by default where
# the toolkit has the runtime.
if(NOT DEFINED CUDAToolkit_ROOT)
  set(CUDAToolkit_ROOT ${ptxas_toolkit_root})  # the toolkit whose ptxas builds the kernels
endif()
find_package(CUDAToolkit QUIET)
if(TARGET CUDA::cudart)
  set(cudart_found ON)
else()
  set(cudart_found OFF)
endif()
option(SCATTERPTX_BUILD_EXAMPLES "Build the examples (they link the CUDA runtime)" ${cudart_found})
if(SCATTERPTX_BUILD_EXAMPLES AND NOT cudart_found)
  message(FATAL_ERROR "SCATTERPTX_BUILD_EXAMPLES is ON but the CUDA runtime (CUDA::cudart) was not "
                      "found: configure with -DCUDAToolkit_ROOT=/path/to/cuda, or "
                      "-DSCATTERPTX_BUILD_EXAMPLES=OFF.")
endif()
if(NOT SCATTERPTX_BUILD_EXAMPLES)
  message(STATUS "Examples off (they need the CUDA runtime, CUDA::cudart)")
endif()

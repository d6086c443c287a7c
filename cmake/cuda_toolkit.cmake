# The two things the library takes from the CUDA toolkit: ptxas, which
# assembles the kernels at build time, and cuda.h, for the driver API's
# types. Nothing links the CUDA runtime or the driver (it is loaded at run
# time), so the toolkit's libraries are not looked for here.
#
# Sets SCATTERPTX_PTXAS and SCATTERPTX_CUDA_INCLUDE_DIR, or stops with a
# message naming what is missing and how to point at it.

# A CUDAToolkit_ROOT the user gives is the only place looked in; otherwise
# CUDA_PATH, CUDA_HOME, PATH and the usual install places.
set(cuda_toolkit_root ${CUDAToolkit_ROOT} $ENV{CUDAToolkit_ROOT})
if(cuda_toolkit_root)
  set(cuda_toolkit_hints ${cuda_toolkit_root})
  set(cuda_toolkit_usual_places NO_DEFAULT_PATH)
else()
  set(cuda_toolkit_hints $ENV{CUDA_PATH} $ENV{CUDA_HOME})
  set(cuda_toolkit_usual_places PATHS /usr/local/cuda /opt/cuda)
endif()
set(cuda_toolkit_how_to_point
  "Install the CUDA toolkit (12.1 or newer), then either put its bin/ on PATH "
  "or configure with -DCUDAToolkit_ROOT=/path/to/cuda (with make: "
  "make CMAKE_ARGS=-DCUDAToolkit_ROOT=/path/to/cuda).")

find_program(SCATTERPTX_PTXAS ptxas
  HINTS ${cuda_toolkit_hints}
  ${cuda_toolkit_usual_places}
  PATH_SUFFIXES bin)
if(NOT SCATTERPTX_PTXAS)
  if(cuda_toolkit_root)
    set(looked_in " (looked in CUDAToolkit_ROOT: ${cuda_toolkit_root})")
  endif()
  message(FATAL_ERROR "ptxas not found${looked_in}: it assembles the library's PTX kernels at "
                      "build time. " ${cuda_toolkit_how_to_point})
endif()

# ptxas 12.1 is the first to take PTX ISA 8.1, which the red path's vector
# reds (and the index record's take) need; the other sm_90 kernels use 8.0.
execute_process(COMMAND ${SCATTERPTX_PTXAS} --version OUTPUT_VARIABLE ptxas_version_text)
if(NOT ptxas_version_text MATCHES "release ([0-9]+)\\.([0-9]+)")
  message(FATAL_ERROR "Could not read the version of ${SCATTERPTX_PTXAS}: '${ptxas_version_text}'")
endif()
set(SCATTERPTX_PTXAS_VERSION "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
if(SCATTERPTX_PTXAS_VERSION VERSION_LESS 12.1)
  message(FATAL_ERROR "${SCATTERPTX_PTXAS} is release ${SCATTERPTX_PTXAS_VERSION}; the kernels need "
                      "12.1 or newer. " ${cuda_toolkit_how_to_point})
endif()

# cuda.h next to the ptxas found, first: the two come from one toolkit.
get_filename_component(ptxas_toolkit_root "${SCATTERPTX_PTXAS}" DIRECTORY)
get_filename_component(ptxas_toolkit_root "${ptxas_toolkit_root}" DIRECTORY)
find_path(SCATTERPTX_CUDA_INCLUDE_DIR cuda.h
  HINTS ${ptxas_toolkit_root} ${cuda_toolkit_hints}
  ${cuda_toolkit_usual_places}
  PATH_SUFFIXES include targets/x86_64-linux/include targets/sbsa-linux/include)
if(NOT SCATTERPTX_CUDA_INCLUDE_DIR)
  message(FATAL_ERROR "cuda.h not found (looked next to ${SCATTERPTX_PTXAS} first): the library "
                      "needs the CUDA toolkit's headers. " ${cuda_toolkit_how_to_point})
endif()
message(STATUS "CUDA toolkit: ptxas ${SCATTERPTX_PTXAS_VERSION} at ${SCATTERPTX_PTXAS}, "
               "cuda.h in ${SCATTERPTX_CUDA_INCLUDE_DIR}")

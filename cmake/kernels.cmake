# Kernels: templates in ptx/ -> gen/generate_kernels.py -> one PTX file per
# variant (and the manifest, the argument structs and the shared constants
# as headers) -> ptxas -arch=sm_90 (a PTX error fails the build) -> cubins, all
# kept in ${SCATTERPTX_KERNEL_DIR} for cuobjdump, nvdisasm and Nsight ->
# gen/embed_kernels.py embeds cubin + PTX in the library.

set(SCATTERPTX_KERNEL_DIR ${CMAKE_BINARY_DIR}/kernels)
set(generator ${PROJECT_SOURCE_DIR}/gen/generate_kernels.py)
file(GLOB generator_modules CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/gen/*.py)
set(embedder ${PROJECT_SOURCE_DIR}/gen/embed_kernels.py)
file(GLOB templates CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/ptx/*.ptx.in)

# The variant list is known at configure time; reconfigure when it can change.
execute_process(
  COMMAND ${Python3_EXECUTABLE} ${generator} --list
  OUTPUT_VARIABLE variant_lines
  RESULT_VARIABLE list_result)
if(NOT list_result EQUAL 0)
  message(FATAL_ERROR "gen/generate_kernels.py --list failed")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${generator_modules})
string(REPLACE "\n" ";" variants "${variant_lines}")
list(FILTER variants EXCLUDE REGEX "^$")

set(ptx_files)
set(cubin_files)
foreach(variant IN LISTS variants)
  list(APPEND ptx_files ${SCATTERPTX_KERNEL_DIR}/ptx/${variant}.ptx)
  list(APPEND cubin_files ${SCATTERPTX_KERNEL_DIR}/cubin/${variant}.cubin)
endforeach()

add_custom_command(
  OUTPUT ${ptx_files} ${SCATTERPTX_KERNEL_DIR}/kernel_manifest.hpp ${SCATTERPTX_KERNEL_DIR}/kernel_params.hpp
         ${SCATTERPTX_KERNEL_DIR}/kernel_constants.hpp
  COMMAND ${Python3_EXECUTABLE} ${generator} --out ${SCATTERPTX_KERNEL_DIR}
  DEPENDS ${generator_modules} ${templates}
  COMMENT "Expanding PTX templates into ${SCATTERPTX_KERNEL_DIR}/ptx"
  VERBATIM)

foreach(variant IN LISTS variants)
  add_custom_command(
    OUTPUT ${SCATTERPTX_KERNEL_DIR}/cubin/${variant}.cubin
    COMMAND ${CMAKE_COMMAND} -E make_directory ${SCATTERPTX_KERNEL_DIR}/cubin
    COMMAND ${SCATTERPTX_PTXAS} -arch=sm_90 -lineinfo --warn-on-spills
            -o ${SCATTERPTX_KERNEL_DIR}/cubin/${variant}.cubin ${SCATTERPTX_KERNEL_DIR}/ptx/${variant}.ptx
    DEPENDS ${SCATTERPTX_KERNEL_DIR}/ptx/${variant}.ptx
    COMMENT "ptxas sm_90 ${variant}"
    VERBATIM)
endforeach()

set(SCATTERPTX_EMBEDDED_KERNELS ${SCATTERPTX_KERNEL_DIR}/embedded_kernels.cpp)
add_custom_command(
  OUTPUT ${SCATTERPTX_EMBEDDED_KERNELS}
  COMMAND ${Python3_EXECUTABLE} ${embedder} --cubin-dir ${SCATTERPTX_KERNEL_DIR}/cubin
          --ptx-dir ${SCATTERPTX_KERNEL_DIR}/ptx --out ${SCATTERPTX_EMBEDDED_KERNELS} ${variants}
  DEPENDS ${embedder} ${cubin_files} ${ptx_files}
  COMMENT "Embedding the cubins and PTX"
  VERBATIM)

add_custom_target(scatterptx_kernels DEPENDS ${cubin_files} ${SCATTERPTX_KERNEL_DIR}/kernel_manifest.hpp
                                              ${SCATTERPTX_KERNEL_DIR}/kernel_params.hpp
                                              ${SCATTERPTX_KERNEL_DIR}/kernel_constants.hpp
                                              ${SCATTERPTX_EMBEDDED_KERNELS})

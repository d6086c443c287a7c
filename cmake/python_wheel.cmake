# The library inside the Python package, for pip (scikit-build-core sets
# SKBUILD and installs only the "python" component). A wheel cannot hold
# symlinks, so the real file goes in alone, under the name that
# scatterptx/_binding.py loads; its SONAME does not matter to a load by path.
if(NOT BUILD_SHARED_LIBS)
  message(FATAL_ERROR "The Python package loads the shared library: build it with BUILD_SHARED_LIBS=ON.")
endif()
install(FILES $<TARGET_FILE:scatterptx> DESTINATION scatterptx RENAME libscatterptx.so COMPONENT python
  PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

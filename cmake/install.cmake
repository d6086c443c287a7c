# Install headers, library and a package config so that consumers can write
# find_package(scatterptx) and link scatterptx::scatterptx.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS scatterptx EXPORT scatterptxTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/scatterptx DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT scatterptxTargets NAMESPACE scatterptx:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/scatterptx)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/scatterptxConfig.cmake.in
  ${CMAKE_BINARY_DIR}/scatterptxConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/scatterptx)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/scatterptxConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/scatterptxConfig.cmake ${CMAKE_BINARY_DIR}/scatterptxConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/scatterptx)

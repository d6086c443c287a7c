# Whether the test suite is built, and if not, why: the reason goes to
# ${CMAKE_BINARY_DIR}/tests_off.txt, where `make test` reads it to say so
# instead of running nothing. Without GoogleTest the library, the bench and
# the examples still build.
set(SCATTERPTX_TESTS_ON OFF)
if(NOT SCATTERPTX_BUILD_TESTS)
  set(tests_off_reason "SCATTERPTX_BUILD_TESTS is OFF")
else()
  find_package(GTest QUIET)
  if(GTest_FOUND)
    set(SCATTERPTX_TESTS_ON ON)
  else()
    string(CONCAT tests_off_reason "GoogleTest not found (install libgtest-dev, or configure with "
                                   "-DGTest_ROOT=/path/to/googletest)")
    message(WARNING "Tests are off: ${tests_off_reason}. The library and the bench still build.")
  endif()
endif()

set(tests_off_file ${CMAKE_BINARY_DIR}/tests_off.txt)
if(SCATTERPTX_TESTS_ON)
  enable_testing()
  file(REMOVE ${tests_off_file})
else()
  file(WRITE ${tests_off_file} "${tests_off_reason}\n")
endif()

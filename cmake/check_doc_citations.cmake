# Fails when README.md or a page of docs/ cites a results file, a doc page or
# an example that the source tree does not have.
# Usage: cmake -DSOURCE_DIR=<repo> -P check_doc_citations.cmake
file(GLOB pages "${SOURCE_DIR}/docs/*.md")
list(APPEND pages "${SOURCE_DIR}/README.md")
set(missing "")
foreach(page IN LISTS pages)
  file(READ "${page}" text)
  # A path inside another (build/examples/...) is not a citation of the tree.
  string(REGEX MATCHALL "[^/A-Za-z0-9_.-](bench/results|docs|examples)/[A-Za-z0-9_./-]*[A-Za-z0-9]" cited " ${text}")
  foreach(match IN LISTS cited)
    string(SUBSTRING "${match}" 1 -1 path)
    if(NOT EXISTS "${SOURCE_DIR}/${path}")
      file(RELATIVE_PATH name "${SOURCE_DIR}" "${page}")
      list(APPEND missing "${name} cites ${path}")
    endif()
  endforeach()
endforeach()
if(missing)
  list(JOIN missing "\n  " lines)
  message(FATAL_ERROR "cited but missing:\n  ${lines}")
endif()
list(LENGTH pages count)
message(STATUS "every citation in ${count} pages exists")

# cmake -DNM=nm -DLIBRARY=libscatterptx.so -DHEADER=scatterptx.h -P check_exports.cmake
#
# Fails unless every function HEADER declares carries SCATTERPTX_API and the
# symbols LIBRARY defines for the dynamic linker are exactly those functions:
# none missing (a consumer could not link it) and nothing else (no
# scatterptx::detail code, no template instantiations, for other libraries to
# bind to by accident).

foreach(var NM LIBRARY HEADER)
  if(NOT ${var})
    message(FATAL_ERROR "check_exports.cmake needs -D${var}=... (NM: the nm of binutils, which CMake finds as CMAKE_NM)")
  endif()
endforeach()

file(READ "${HEADER}" header)
# The header's statements without comments, preprocessor lines and brackets
# (which would hold list items together): every one that declares a
# scatterptx_ function, however it is laid out, must carry SCATTERPTX_API.
string(REPLACE "/*" "@" header "${header}")
string(REPLACE "*/" "~" header "${header}")
string(REGEX REPLACE "@[^~]*~" " " header "${header}")
string(REGEX REPLACE "//[^\n]*" " " header "${header}")
string(REGEX REPLACE "(^|\n)[ \t]*#[^\n]*" "\n" header "${header}")
string(REGEX REPLACE "[][]" " " header "${header}")
set(declared)
set(unmarked)
foreach(statement IN LISTS header)  # the header's ";" split it
  if(statement MATCHES "^[ \t\n]*typedef[ \t\n]")
    continue()
  endif()
  if(statement MATCHES "(scatterptx_[a-z0-9_]+)[ \t\n]*\\(")
    set(name "${CMAKE_MATCH_1}")
    list(APPEND declared "${name}")
    if(NOT statement MATCHES "SCATTERPTX_API")
      list(APPEND unmarked "${name}")
    endif()
  endif()
endforeach()
list(LENGTH declared declared_count)
if(declared_count EQUAL 0)
  message(FATAL_ERROR "no function declarations found in ${HEADER}")
endif()
if(unmarked)
  list(JOIN unmarked "\n  " unmarked_text)
  message(FATAL_ERROR "${HEADER}: declared without SCATTERPTX_API:\n  ${unmarked_text}")
endif()

execute_process(COMMAND "${NM}" -D --defined-only "${LIBRARY}"
                OUTPUT_VARIABLE symbols RESULT_VARIABLE nm_result ERROR_VARIABLE nm_error)
if(NOT nm_result EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIBRARY} failed: ${nm_error}")
endif()
string(REPLACE "\n" ";" symbol_lines "${symbols}")
set(exported)
foreach(line IN LISTS symbol_lines)
  # "<address> <type> <name>"; the name may carry a version ("@@...").
  if(line MATCHES "^[0-9a-fA-F]+ [A-Za-z] ([^@ ]+)")
    list(APPEND exported "${CMAKE_MATCH_1}")
  endif()
endforeach()

set(missing ${declared})
list(REMOVE_ITEM missing ${exported})
set(extra ${exported})
list(REMOVE_ITEM extra ${declared})
if(missing OR extra)
  list(JOIN missing "\n  " missing_text)
  list(JOIN extra "\n  " extra_text)
  message(FATAL_ERROR "${LIBRARY}: declared but not exported:\n  ${missing_text}\n"
                      "exported but not declared in the header:\n  ${extra_text}")
endif()
message(STATUS "${LIBRARY} exports exactly the ${declared_count} functions of ${HEADER}")

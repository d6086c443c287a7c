# cmake -DNM=nm -DLIBRARY=libscatterptx.so -DHEADER=scatterptx.h -P check_exports.cmake
#
# Fails unless every function HEADER declares carries SCATTERPTX_API and the
# symbols LIBRARY defines for the dynamic linker are exactly those functions:
# none missing (a consumer could not link it) and nothing else (no
# scatterptx::detail code, no template instantiations, for other libraries to
# bind to by accident).

foreach(var NM LIBRARY HEADER)
  if(NOT ${var})
    message(FATAL_ERROR "check_exports.cmake needs -D${var}=...")
  endif()
endforeach()

file(READ "${HEADER}" header)
# Every function declaration starts a line ("<type> scatterptx_name("), the
# line after SCATTERPTX_API.
string(REGEX MATCHALL "\n[A-Za-z_][A-Za-z0-9_ *]*[ *]scatterptx_[a-z0-9_]+\\(" declarations "${header}")
string(REGEX MATCHALL "SCATTERPTX_API\n[A-Za-z_][A-Za-z0-9_ *]*[ *]scatterptx_[a-z0-9_]+\\(" marked "${header}")
set(declared)
foreach(declaration IN LISTS declarations)
  string(REGEX REPLACE ".*[ *](scatterptx_[a-z0-9_]+)\\($" "\\1" name "${declaration}")
  list(APPEND declared "${name}")
endforeach()
set(unmarked ${declared})
foreach(declaration IN LISTS marked)
  string(REGEX REPLACE ".*[ *](scatterptx_[a-z0-9_]+)\\($" "\\1" name "${declaration}")
  list(REMOVE_ITEM unmarked "${name}")
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

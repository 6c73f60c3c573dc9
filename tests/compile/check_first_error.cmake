# SPDX-License-Identifier: Apache-2.0
# cmake -DBUILD_DIR=... -DTARGET=... -DCONFIG=... -DEXPECT=<regex> -P check_first_error.cmake: builds a target that
# must not compile and prints "first error as expected" only when the build fails and the first line of the
# compiler's output that reports an error (GCC and Clang: "error:") matches EXPECT; otherwise prints that line.
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target "${TARGET}" --config "${CONFIG}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message("${TARGET} compiled, but it must not")
  return()
endif()
string(REPLACE "\n" ";" lines "${out}${err}")
foreach(line IN LISTS lines)
  if(line MATCHES "error:")
    if(line MATCHES "${EXPECT}")
      message("first error as expected: ${line}")
    else()
      message("the first error is not the expected one (${EXPECT}):\n${line}\n\nthe whole output:\n${out}${err}")
    endif()
    return()
  endif()
endforeach()
message("no error line in the output:\n${out}${err}")

# SPDX-License-Identifier: Apache-2.0
# Flags for the project's own executables (tests, benchmarks, examples, tools); never put on tprod::tprod,
# so consumers choose their own. -march=native because the benchmarks compare against Eigen built the same way.
option(TPROD_NATIVE_ARCH "Build the project's own executables with -march=native" ON)
add_library(tprod_project_options INTERFACE)
# GCC 12 at -O2/-O3 with AVX-512 reports -Wmaybe-uninitialized inside its own intrinsics as inlined into Eigen's
# GEMM kernels (a known false positive), pages of it per translation unit. Before GCC 13 the same goes for
# -Wuninitialized: the intrinsics start from `__m512 __Y = __Y` (_mm512_undefined_ps), reported where Eigen's
# ptranspose inlines them, about 500 warnings per build (GCC bug 105593, fixed in 13). tprod::instances uses the
# same list.
set(tprod_gcc_false_positives_off
  $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-uninitialized>)
target_compile_options(tprod_project_options INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic>
  ${tprod_gcc_false_positives_off}
  $<$<AND:$<BOOL:${TPROD_NATIVE_ARCH}>,$<CXX_COMPILER_ID:GNU,Clang>>:-march=native>)
target_link_libraries(tprod_project_options INTERFACE tprod::tprod)

# The optimization flag of the examples, the benchmarks, the tprod program and the Python module in a Release
# build; empty: -O2 for the examples, the build type's -O3 for the others. CI sets -O1 (scripts/test.sh): it
# compiles the examples 24% faster (language_model.cpp: 35 s against 46 s of CPU), and CI only runs their quick
# modes and the benchmarks' smoke cases, whose heavy kernels come from tprod::instances anyway.
set(TPROD_PROGRAMS_OPTIMIZATION "" CACHE STRING
    "Optimization flag of the examples, benchmarks and tprod program in a Release build (empty: -O2 / -O3)")
set(tprod_programs_optimization
    $<$<AND:$<CONFIG:Release>,$<CXX_COMPILER_ID:GNU,Clang>,$<BOOL:${TPROD_PROGRAMS_OPTIMIZATION}>>:${TPROD_PROGRAMS_OPTIMIZATION}>)
# The Python module's own flag, when set (CI: -O0): the module is binding glue around tprod::instances' kernels,
# and models.cpp compiles in 47 s of CPU at -O0 against 64 s at -O1; empty: as TPROD_PROGRAMS_OPTIMIZATION.
set(TPROD_PYTHON_OPTIMIZATION "" CACHE STRING
    "Optimization flag of the Python module in a Release build (empty: as TPROD_PROGRAMS_OPTIMIZATION)")
set(tprod_python_optimization
    $<$<AND:$<CONFIG:Release>,$<CXX_COMPILER_ID:GNU,Clang>>:$<IF:$<BOOL:${TPROD_PYTHON_OPTIMIZATION}>,${TPROD_PYTHON_OPTIMIZATION},${TPROD_PROGRAMS_OPTIMIZATION}>>)
set(tprod_examples_optimization
    $<$<AND:$<CONFIG:Release>,$<CXX_COMPILER_ID:GNU,Clang>>:$<IF:$<BOOL:${TPROD_PROGRAMS_OPTIMIZATION}>,${TPROD_PROGRAMS_OPTIMIZATION},-O2>>)

# tprod_add_area_executables(<dir> <prefix> <libs...>): one executable <prefix><area> per sub-folder of <dir>
# holding .cpp files (a sub-folder with its own CMakeLists.txt is added as a subdirectory instead).
function(tprod_area_sources dir area out)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS "${dir}/${area}/*.cpp")
  set(${out} ${srcs} PARENT_SCOPE)
endfunction()

# tprod_unity_build(<target>): with TPROD_UNITY_BUILD, the target's sources compile as a few combined translation
# units. A test program's files instantiate mostly the same templates, which one combined unit compiles once:
# the test programs took 27% less CPU time in CI (799 s against 586 s; test_nn, 12 files: 222 s against 142 s).
# Off by default because an edit then recompiles the whole batch; scripts/test.sh (and so CI) turns it on, which
# also keeps the sources free of clashes between files.
option(TPROD_UNITY_BUILD "Compile the test programs and the tprod program as a few combined sources each" OFF)
function(tprod_unity_build target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ${TPROD_UNITY_BUILD} UNITY_BUILD_BATCH_SIZE 6)
endfunction()

# tprod_test_costs(<test>:<seconds> ...): CTest's COST of the tests of this directory that exist, so that `ctest -j`
# starts the longest first (it orders by the timings of earlier runs, which a fresh clone does not have).
function(tprod_test_costs)
  foreach(entry IN LISTS ARGN)
    string(REPLACE ":" ";" entry "${entry}")
    list(GET entry 0 test)
    list(GET entry 1 seconds)
    if(TEST ${test})
      set_tests_properties(${test} PROPERTIES COST ${seconds})
    endif()
  endforeach()
endfunction()

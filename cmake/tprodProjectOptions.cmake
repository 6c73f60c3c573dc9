# Flags for the project's own executables (tests, benchmarks, examples, tools); never put on tprod::tprod,
# so consumers choose their own. -march=native because the benchmarks compare against Eigen built the same way.
option(TPROD_NATIVE_ARCH "Build the project's own executables with -march=native" ON)
add_library(tprod_project_options INTERFACE)
# GCC 12 at -O2/-O3 with AVX-512 reports -Wmaybe-uninitialized inside its own intrinsics as inlined into Eigen's
# GEMM kernels (a known false positive), pages of it per translation unit; -Wuninitialized stays on.
target_compile_options(tprod_project_options INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic>
  $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>
  $<$<AND:$<BOOL:${TPROD_NATIVE_ARCH}>,$<CXX_COMPILER_ID:GNU,Clang>>:-march=native>)
target_link_libraries(tprod_project_options INTERFACE tprod::tprod)

# tprod_add_area_executables(<dir> <prefix> <libs...>): one executable <prefix><area> per sub-folder of <dir>
# holding .cpp files (a sub-folder with its own CMakeLists.txt is added as a subdirectory instead).
function(tprod_area_sources dir area out)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS "${dir}/${area}/*.cpp")
  set(${out} ${srcs} PARENT_SCOPE)
endfunction()

# SPDX-License-Identifier: Apache-2.0
# cmake -P script behind the packaging tests: configures, builds and runs tests/packaging/consumer against
# tprod in one way (MODE = find_package, add_subdirectory or fetchcontent, header-only; or instances: the
# package installed from the build TPROD_BUILD_DIR, linking tprod::instances), in a fresh WORK_DIR.
# Inputs (-D): MODE, TPROD_SOURCE_DIR, CONSUMER_DIR, WORK_DIR, GENERATOR, CXX_COMPILER, USE_FFTW,
# and optionally MAKE_PROGRAM and TPROD_BUILD_DIR.
foreach(var MODE TPROD_SOURCE_DIR CONSUMER_DIR WORK_DIR GENERATOR CXX_COMPILER USE_FFTW)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "build_consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run what)
  message(STATUS "packaging[${MODE}]: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "packaging[${MODE}]: ${what} failed (${rc}): ${ARGN}")
  endif()
endfunction()

set(common -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
if(MAKE_PROGRAM)
  list(APPEND common "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
if(USE_FFTW)
  set(expect_fftw 1)
else()
  set(expect_fftw 0)
endif()
set(consume ${MODE})
set(install_fftw ${USE_FFTW})
if(MODE STREQUAL "instances" OR MODE STREQUAL "cuda")
  set(consume find_package)
elseif(MODE STREQUAL "find_package_without_fftw")  # installed from a build with FFTW, switched off by the consumer
  set(consume find_package)
  set(install_fftw ON)
elseif(MODE STREQUAL "missing_component")  # a header-only install (no MPI) asked for its mpi component
  set(consume find_package)
endif()
set(consumer_options -DTPROD_CONSUME=${consume} -DTPROD_EXPECT_FFTW=${expect_fftw})
if(consume STREQUAL "find_package" AND NOT MODE MATCHES "^(instances|cuda)$")
  # Install tprod alone (nothing of its own to build: it is header-only) into a private prefix.
  set(prefix "${WORK_DIR}/prefix")
  run("configure tprod" "${CMAKE_COMMAND}" -S "${TPROD_SOURCE_DIR}" -B "${WORK_DIR}/tprod-build" ${common}
      -DTPROD_BUILD_TESTS=OFF -DTPROD_BUILD_BENCHMARKS=OFF -DTPROD_BUILD_EXAMPLES=OFF -DTPROD_BUILD_TOOLS=OFF
      -DTPROD_BUILD_INSTANCES=OFF -DTPROD_USE_FFTW=${install_fftw} "-DCMAKE_INSTALL_PREFIX=${prefix}")
  run("install tprod" "${CMAKE_COMMAND}" --install "${WORK_DIR}/tprod-build")
  list(APPEND consumer_options "-DCMAKE_PREFIX_PATH=${prefix}" -DTPROD_USE_FFTW=${USE_FFTW})
elseif(MODE STREQUAL "instances" OR MODE STREQUAL "cuda")
  # Install this build as it is (its tprod::instances, and tprod::cuda, already built) and link the consumer
  # with the libraries.
  set(prefix "${WORK_DIR}/prefix")
  run("install tprod" "${CMAKE_COMMAND}" --install "${TPROD_BUILD_DIR}" --prefix "${prefix}")
  list(APPEND consumer_options "-DCMAKE_PREFIX_PATH=${prefix}" -DTPROD_LINK_INSTANCES=ON)
  if(MODE STREQUAL "cuda")
    list(APPEND consumer_options -DTPROD_LINK_CUDA=ON)
  endif()
else()
  list(APPEND consumer_options "-DTPROD_SOURCE_DIR=${TPROD_SOURCE_DIR}" -DTPROD_USE_FFTW=${USE_FFTW})
endif()

set(build "${WORK_DIR}/consumer-build")
if(MODE STREQUAL "missing_component")
  # The consumer's configure must fail with the package's sentence on how to build the component.
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${build}" ${common} ${consumer_options}
                          -DTPROD_COMPONENTS=mpi
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "installed without its mpi component.*-DTPROD_ENABLE_MPI=ON")
    message(FATAL_ERROR "packaging[${MODE}]: expected the configure to fail naming -DTPROD_ENABLE_MPI=ON, got ${rc}:\n${out}${err}")
  endif()
  message(STATUS "packaging[${MODE}]: refused as expected")
  return()
endif()
run("configure the consumer" "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${build}" ${common} ${consumer_options})
if(consume STREQUAL "find_package")
  # The consumer must have found the package just installed, not some other tprod on the machine.
  file(STRINGS "${build}/CMakeCache.txt" found REGEX "^tprod_DIR:")
  string(FIND "${found}" "${prefix}/" at)
  if(NOT at GREATER -1)
    message(FATAL_ERROR "packaging[${MODE}]: the consumer found ${found}, not the package in ${prefix}")
  endif()
endif()
run("build the consumer" "${CMAKE_COMMAND}" --build "${build}")
run("run the consumer" "${build}/consumer")
if(MODE STREQUAL "cuda")
  # Built and linked by the host compiler against the installed tprod::cuda; its run needs a GPU (77: none here).
  message(STATUS "packaging[cuda]: run the GPU consumer")
  execute_process(COMMAND "${build}/cuda_consumer" RESULT_VARIABLE rc)
  if(rc EQUAL 77)
    message(STATUS "packaging[cuda]: no GPU here: the consumer built and linked; its device run was skipped")
  elseif(NOT rc EQUAL 0)
    message(FATAL_ERROR "packaging[cuda]: the GPU consumer failed (${rc})")
  endif()
endif()

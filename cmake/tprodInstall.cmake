# SPDX-License-Identifier: Apache-2.0
# Installs the headers, the tprod::tprod target (and tprod::instances when built) with the config and version
# files, and exports the build tree so that a consumer can also point tprod_DIR at a build directory.
include(CMakePackageConfigHelpers)

set(TPROD_INSTALL_CMAKEDIR "${CMAKE_INSTALL_DATADIR}/cmake/tprod")

install(DIRECTORY include/tprod DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tprod tprod_native EXPORT tprodTargets)
if(TARGET tprod_io)
  install(TARGETS tprod_io EXPORT tprodTargets)
endif()
if(TARGET tprod_text)
  install(TARGETS tprod_text EXPORT tprodTargets)
endif()
if(TARGET tprod_instances)
  install(TARGETS tprod_instances EXPORT tprodTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(TPROD_INSTALLED_INSTANCES ON)
else()
  set(TPROD_INSTALLED_INSTANCES OFF)
endif()
if(TARGET tprod_cuda)
  install(TARGETS tprod_cuda EXPORT tprodTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(TPROD_INSTALLED_CUDA ON)
else()
  set(TPROD_INSTALLED_CUDA OFF)
endif()
if(TARGET tprod_mpi)
  install(TARGETS tprod_mpi EXPORT tprodTargets)
  set(TPROD_INSTALLED_MPI ON)
else()
  set(TPROD_INSTALLED_MPI OFF)
endif()
install(EXPORT tprodTargets NAMESPACE tprod:: DESTINATION ${TPROD_INSTALL_CMAKEDIR})

# Header-only, the package fits any architecture; with the compiled instances or the CUDA library it does not.
if(TARGET tprod_instances OR TARGET tprod_cuda)
  set(tprod_arch_independent "")
else()
  set(tprod_arch_independent ARCH_INDEPENDENT)
endif()
# Installed compiled instances built with FFTW need it wherever they are linked.
if(TARGET tprod_instances AND TPROD_USE_FFTW)
  set(TPROD_INSTANCES_NEED_FFTW ON)
else()
  set(TPROD_INSTANCES_NEED_FFTW OFF)
endif()
configure_package_config_file(cmake/tprodConfig.cmake.in
  "${PROJECT_BINARY_DIR}/tprodConfig.cmake"
  INSTALL_DESTINATION ${TPROD_INSTALL_CMAKEDIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/tprodConfigVersion.cmake"
  COMPATIBILITY SameMajorVersion ${tprod_arch_independent})
configure_file(cmake/tprodFindFFTW.cmake "${PROJECT_BINARY_DIR}/tprodFindFFTW.cmake" COPYONLY)
configure_file(cmake/tprodFindEigen.cmake "${PROJECT_BINARY_DIR}/tprodFindEigen.cmake" COPYONLY)
install(FILES
  "${PROJECT_BINARY_DIR}/tprodConfig.cmake"
  "${PROJECT_BINARY_DIR}/tprodConfigVersion.cmake"
  cmake/tprodFindFFTW.cmake
  cmake/tprodFindEigen.cmake
  DESTINATION ${TPROD_INSTALL_CMAKEDIR})

export(EXPORT tprodTargets NAMESPACE tprod:: FILE "${PROJECT_BINARY_DIR}/tprodTargets.cmake")

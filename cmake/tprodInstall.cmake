# Installs the headers, the tprod::tprod target with its config and version files, and exports the
# build tree so that a consumer can also point tprod_DIR at a build directory.
include(CMakePackageConfigHelpers)

set(TPROD_INSTALL_CMAKEDIR "${CMAKE_INSTALL_DATADIR}/cmake/tprod")

install(DIRECTORY include/tprod DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS tprod EXPORT tprodTargets)
if(TARGET tprod_io)
  install(TARGETS tprod_io EXPORT tprodTargets)
endif()
install(EXPORT tprodTargets NAMESPACE tprod:: DESTINATION ${TPROD_INSTALL_CMAKEDIR})

configure_package_config_file(cmake/tprodConfig.cmake.in
  "${PROJECT_BINARY_DIR}/tprodConfig.cmake"
  INSTALL_DESTINATION ${TPROD_INSTALL_CMAKEDIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/tprodConfigVersion.cmake"
  COMPATIBILITY SameMajorVersion ARCH_INDEPENDENT)
configure_file(cmake/tprodFindFFTW.cmake "${PROJECT_BINARY_DIR}/tprodFindFFTW.cmake" COPYONLY)
install(FILES
  "${PROJECT_BINARY_DIR}/tprodConfig.cmake"
  "${PROJECT_BINARY_DIR}/tprodConfigVersion.cmake"
  cmake/tprodFindFFTW.cmake
  DESTINATION ${TPROD_INSTALL_CMAKEDIR})

export(EXPORT tprodTargets NAMESPACE tprod:: FILE "${PROJECT_BINARY_DIR}/tprodTargets.cmake")

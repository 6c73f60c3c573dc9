# SPDX-License-Identifier: Apache-2.0
# Finds Eigen 3.4.x or 5.x (the target Eigen3::Eigen). Used by the build (tprodDependencies.cmake) and by the
# installed package (tprodConfig.cmake), so a consumer accepts the same versions the build did.
# Two lookups instead of one version range: Eigen 5's version file accepts only requests of major version 5, and
# Eigen 3.4.0's was written before CMake's version ranges and ignores their upper end. Eigen 5 first, so that where
# both are found (CMAKE_PREFIX_PATH, say) the newer is taken.
find_package(Eigen3 5 QUIET NO_MODULE)
if(NOT Eigen3_FOUND)
  find_package(Eigen3 3.4 QUIET NO_MODULE)
endif()
# Not found: TPROD_EIGEN_MESSAGE says what to do (the build stops with it, the package reports it as not found).
set(TPROD_EIGEN_MESSAGE "tprod needs Eigen 3.4 or 5.x (its CMake package Eigen3): install libeigen3-dev, or set Eigen3_DIR to the folder of Eigen3Config.cmake")

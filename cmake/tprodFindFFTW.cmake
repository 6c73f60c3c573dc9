# SPDX-License-Identifier: Apache-2.0
# Finds FFTW3 in double and single precision and defines the imported target tprod::fftw.
# Shared by the build (tprodDependencies.cmake) and the installed package (tprodConfig.cmake).
if(NOT TARGET tprod::fftw)
  find_path(TPROD_FFTW_INCLUDE_DIR fftw3.h)
  find_library(TPROD_FFTW_DOUBLE_LIBRARY fftw3)
  find_library(TPROD_FFTW_FLOAT_LIBRARY fftw3f)
  if(TPROD_FFTW_INCLUDE_DIR AND TPROD_FFTW_DOUBLE_LIBRARY AND TPROD_FFTW_FLOAT_LIBRARY)
    add_library(tprod::fftw INTERFACE IMPORTED)
    set_target_properties(tprod::fftw PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${TPROD_FFTW_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${TPROD_FFTW_DOUBLE_LIBRARY};${TPROD_FFTW_FLOAT_LIBRARY}")
  endif()
endif()
if(TARGET tprod::fftw)
  set(TPROD_FFTW_FOUND TRUE)
else()
  set(TPROD_FFTW_FOUND FALSE)
endif()

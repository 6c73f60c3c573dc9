#pragma once
/// @file version.hpp
/// @brief The library version; CMake reads it from here.
#define TPROD_VERSION_MAJOR 0
#define TPROD_VERSION_MINOR 1
#define TPROD_VERSION_PATCH 0
#define TPROD_VERSION_STRING "0.1.0"

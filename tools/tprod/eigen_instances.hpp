#pragma once
// Eigen's BDCSVD is the slowest code of the program to compile (about a minute per scalar at -O3), and three
// translation units use it. It is compiled once per scalar: double in factorizations_real.cpp, complex<double> in
// factorizations_complex.cpp; the other units see these declarations.
#include <Eigen/SVD>

extern template class Eigen::BDCSVD<Eigen::MatrixXd>;
extern template class Eigen::BDCSVD<Eigen::MatrixXcd>;

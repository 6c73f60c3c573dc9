// SPDX-License-Identifier: Apache-2.0
// The device-side scalar of each of tprod's scalars: std::complex<R> is stored as ::cuda::std::complex<R> (the same
// layout), so kernels get complex arithmetic; real types are themselves.
#pragma once
#include <cuda/std/complex>
#include <library_types.h>

#include <complex>
#include <type_traits>

namespace tprod::backend::cuda::detail {

template <class T> struct device_scalar { using type = T; };
template <class R> struct device_scalar<std::complex<R>> { using type = ::cuda::std::complex<R>; };
template <class T> using dev_t = typename device_scalar<T>::type;

template <class T> dev_t<T>* dev(T* p) { return reinterpret_cast<dev_t<T>*>(p); }
template <class T> const dev_t<T>* dev(const T* p) { return reinterpret_cast<const dev_t<T>*>(p); }
template <class T> dev_t<T> dev(const T& v) { return *reinterpret_cast<const dev_t<T>*>(&v); }

// The cudaDataType of each scalar, for cuBLAS's and cuSOLVER's generic (Ex, X) interfaces.
template <class T> constexpr cudaDataType data_type_of() {
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  else if constexpr (std::is_same_v<T, double>) return CUDA_R_64F;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return CUDA_C_32F;
  else return CUDA_C_64F;
}

template <class T> struct is_cplx : std::false_type {};
template <class R> struct is_cplx<::cuda::std::complex<R>> : std::true_type {};

template <class X> __host__ __device__ inline double abs2(X x) {
  if constexpr (is_cplx<X>::value) return double(x.real()) * double(x.real()) + double(x.imag()) * double(x.imag());
  else return double(x) * double(x);
}
template <class X> __host__ __device__ inline X conj_of(X x) {
  if constexpr (is_cplx<X>::value) return ::cuda::std::conj(x); else return x;
}
template <class X> __device__ inline bool finite(X x) {
  if constexpr (is_cplx<X>::value) return isfinite(x.real()) && isfinite(x.imag()); else return isfinite(x);
}

}  // namespace tprod::backend::cuda::detail

// The four scalars, for explicit instantiations.
#define TPROD_CUDA_FOR_EACH_SCALAR(X) X(float) X(double) X(std::complex<float>) X(std::complex<double>)

// Device-side element types: each DType's storage type on the GPU, its compute type (float for
// float16/bfloat16, like the CPU), and a dispatch from a runtime DType to them.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/complex>
#include <cuda/std/type_traits>

#include "core/dtype.h"
#include "kernels/acc_type.h"

namespace ts::cuda {

using cf32 = ::cuda::std::complex<float>;
using cf64 = ::cuda::std::complex<double>;

}  // namespace ts::cuda

namespace ts {
// The device's 16-bit floats compute in float, as their host twins (ts::acc_type, core/dtype.h,
// is the one definition; these are its specializations for the CUDA storage types).
template <>
struct acc_type<__half> {
  using type = float;
};
template <>
struct acc_type<__nv_bfloat16> {
  using type = float;
};
}  // namespace ts

namespace ts::cuda {

template <class T>
using dacc_t = ts::acc_t<T>;

template <class T>
inline constexpr bool is_dcomplex_v =
    ::cuda::std::is_same_v<T, cf32> || ::cuda::std::is_same_v<T, cf64>;

template <class T>
struct DTag {
  using type = T;
};

// Calls f(DTag<T>{}) with the device storage type of `d`; TypeError outside `Set`.
template <uint32_t Set, class F>
decltype(auto) cuda_visit(DType d, const char* op, F&& f) {
  if (!in_set(d, Set))
    throw TypeError(str(op, ": not supported for dtype ", dtype_name(d), " on CUDA"));
  switch (d) {
#define TS_DCASE(E, T)                                                                  \
  case DType::E:                                                                        \
    if constexpr (((Set >> static_cast<int>(DType::E)) & 1u) != 0) return f(DTag<T>{}); \
    break;
    TS_DCASE(Bool, bool)
    TS_DCASE(Int8, int8_t)
    TS_DCASE(Int16, int16_t)
    TS_DCASE(Int32, int32_t)
    TS_DCASE(Int64, int64_t)
    TS_DCASE(UInt8, uint8_t)
    TS_DCASE(UInt16, uint16_t)
    TS_DCASE(UInt32, uint32_t)
    TS_DCASE(UInt64, uint64_t)
    TS_DCASE(Float16, __half)
    TS_DCASE(BFloat16, __nv_bfloat16)
    TS_DCASE(Float32, float)
    TS_DCASE(Float64, double)
    TS_DCASE(Complex64, cf32)
    TS_DCASE(Complex128, cf64)
#undef TS_DCASE
  }
  throw TypeError(str(op, ": not supported for dtype ", dtype_name(d), " on CUDA"));
}

// Conversions between device element types (through float for the 16-bit floats; complex to
// real keeps the real part, like the CPU's casts).
template <class D, class S>
__device__ __forceinline__ D dconvert(S v) {
  if constexpr (::cuda::std::is_same_v<D, S>) {
    return v;
  } else if constexpr (is_dcomplex_v<S>) {
    if constexpr (is_dcomplex_v<D>)
      return D(static_cast<typename D::value_type>(v.real()),
               static_cast<typename D::value_type>(v.imag()));
    else if constexpr (::cuda::std::is_same_v<D, bool>)
      return v.real() != 0 || v.imag() != 0;
    else
      return dconvert<D>(v.real());
  } else if constexpr (::cuda::std::is_same_v<S, __half> ||
                       ::cuda::std::is_same_v<S, __nv_bfloat16>) {
    return dconvert<D>(static_cast<float>(v));
  } else if constexpr (is_dcomplex_v<D>) {
    return D(dconvert<typename D::value_type>(v), typename D::value_type(0));
  } else if constexpr (::cuda::std::is_same_v<D, __half>) {
    // double rounds once, directly, like NumPy and the CPU (cpu/convert.h): through float it
    // could round twice (65519.99999 -> 65520.0 -> inf).
    if constexpr (::cuda::std::is_same_v<S, double>)
      return __double2half(v);
    else
      return __float2half_rn(static_cast<float>(v));
  } else if constexpr (::cuda::std::is_same_v<D, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));  // via float, like ml_dtypes and the CPU
  } else if constexpr (::cuda::std::is_same_v<D, bool>) {
    return v != S(0);
  } else {
    return static_cast<D>(v);
  }
}

}  // namespace ts::cuda

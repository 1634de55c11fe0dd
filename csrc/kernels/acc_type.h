// The type a kernel computes in (one definition for the CPU and CUDA kernels): float for the
// 16-bit floats, the type itself otherwise. cuda/device_types.cuh adds the specializations for
// CUDA's own 16-bit storage types.
#pragma once
#include "core/half.h"

namespace ts {

template <class T>
struct acc_type {
  using type = T;
};
template <>
struct acc_type<Half> {
  using type = float;
};
template <>
struct acc_type<BFloat16> {
  using type = float;
};
template <class T>
using acc_t = typename acc_type<T>::type;

}  // namespace ts

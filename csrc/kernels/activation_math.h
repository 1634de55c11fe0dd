// The pointwise activations' scalar formulas (value and derivative), shared by the CPU kernels
// (cpu/activation_kernels.cpp) and the CUDA ones (cuda/activation_kernels.cu), so both devices
// compute the same thing. `M` supplies exp/tanh/log1p/expm1 (log1p only of exp's results, >= 0) for
// the accumulation type `A` (float for float32 and the 16-bit floats, double for float64).
//
// Each form follows the composite definition it replaces (ops/nn/activation_pointwise.cpp) and
// PyTorch's backward kernels at the kinks and at NaN (Note [Activation kinks]): comparisons
// are strict or not exactly where PyTorch's are, and a NaN input takes the branch a false
// comparison leads to.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/error.h"

#ifdef __CUDACC__
#define TS_ACT_HD __host__ __device__ __forceinline__
#else
#define TS_ACT_HD inline
#endif

namespace ts::act {

// Which activation; the three parameters' meanings per kind are in ActParams.
enum class Act : uint8_t {
  Sigmoid,
  Silu,
  Mish,
  Hardswish,
  Hardsigmoid,
  Elu,        // b * (x <= 0 ? a * expm1(x / c) : x): elu (a, 1, 1), celu (a, 1, a), selu
  LeakyRelu,  // x > 0 ? x : a * x
  Hardtanh,   // x <= a ? a : x >= b ? b : x
  Softplus,   // beta a, threshold b: a * x > b ? x : log1p(exp(a * x)) / a
  kCount
};

struct ActParams {
  Act kind;
  double a = 0, b = 0, c = 0;
};

// 1 / (1 + exp(-v)), PyTorch's form: exp(-v) = inf below about -88 (float) gives 0, and the
// one exp keeps the loops vectorized.
template <class M, class A>
TS_ACT_HD A sigmoid(A v) {
  return A(1) / (A(1) + M::exp(-v));
}

template <Act K, class M, class A>
TS_ACT_HD A value(A v, A a, A b, A c) {
  if constexpr (K == Act::Sigmoid) {
    return sigmoid<M>(v);
  } else if constexpr (K == Act::Silu) {
    return v * sigmoid<M>(v);
  } else if constexpr (K == Act::Mish) {
    const A sp = v > A(20) ? v : M::log1p(M::exp(v));  // softplus(v, 1, 20)
    return v * M::tanh(sp);
  } else if constexpr (K == Act::Hardswish) {
    // x * 0 below -3 keeps PyTorch's -0 (and NaN at -inf)
    return v <= A(-3) ? v * A(0) : v < A(3) ? v * (v + A(3)) / A(6) : v;
  } else if constexpr (K == Act::Hardsigmoid) {
    return v <= A(-3) ? A(0) : v >= A(3) ? A(1) : v / A(6) + A(0.5);
  } else if constexpr (K == Act::Elu) {
    return v <= A(0) ? b * (a * M::expm1(v / c)) : b * v;
  } else if constexpr (K == Act::LeakyRelu) {
    return v > A(0) ? v : v * a;
  } else if constexpr (K == Act::Hardtanh) {
    return v <= a ? a : v >= b ? b : v;
  } else {  // Softplus
    const A bx = v * a;
    return bx > b ? v : M::log1p(M::exp(bx)) / a;
  }
}

// g * f'(v); for Sigmoid v is the output y (saved instead of x, as PyTorch's): g y (1 - y).
template <Act K, class M, class A>
TS_ACT_HD A grad(A v, A g, A a, A b, A c) {
  if constexpr (K == Act::Sigmoid) {
    return g * (v * (A(1) - v));
  } else if constexpr (K == Act::Silu) {
    const A s = sigmoid<M>(v);
    return g * (s * (A(1) + v * (A(1) - s)));
  } else if constexpr (K == Act::Mish) {
    const A sp = v > A(20) ? v : M::log1p(M::exp(v));
    const A t = M::tanh(sp);
    const A dsp = v > A(20) ? A(1) : sigmoid<M>(v);
    return g * (t + v * (A(1) - t * t) * dsp);
  } else if constexpr (K == Act::Hardswish) {
    return v <= A(-3) ? A(0) : v < A(3) ? g * (v / A(3) + A(0.5)) : g;
  } else if constexpr (K == Act::Hardsigmoid) {
    return v > A(-3) && v < A(3) ? g / A(6) : A(0);
  } else if constexpr (K == Act::Elu) {
    return v <= A(0) ? g * (b * a * M::exp(v / c) / c) : g * b;
  } else if constexpr (K == Act::LeakyRelu) {
    return v > A(0) ? g : g * a;
  } else if constexpr (K == Act::Hardtanh) {
    return v <= a || v >= b ? A(0) : g;
  } else {  // Softplus: the soft branch's derivative is sigmoid(beta x)
    const A bx = v * a;
    return bx > b ? g : g * sigmoid<M>(bx);
  }
}

// f(std::integral_constant<Act, K>{}) for the run-time kind: the kernels' one switch (host).
template <class F>
void visit_kind(Act k, F&& f) {
  switch (k) {
    case Act::Sigmoid:
      return f(std::integral_constant<Act, Act::Sigmoid>{});
    case Act::Silu:
      return f(std::integral_constant<Act, Act::Silu>{});
    case Act::Mish:
      return f(std::integral_constant<Act, Act::Mish>{});
    case Act::Hardswish:
      return f(std::integral_constant<Act, Act::Hardswish>{});
    case Act::Hardsigmoid:
      return f(std::integral_constant<Act, Act::Hardsigmoid>{});
    case Act::Elu:
      return f(std::integral_constant<Act, Act::Elu>{});
    case Act::LeakyRelu:
      return f(std::integral_constant<Act, Act::LeakyRelu>{});
    case Act::Hardtanh:
      return f(std::integral_constant<Act, Act::Hardtanh>{});
    case Act::Softplus:
      return f(std::integral_constant<Act, Act::Softplus>{});
    default:
      break;
  }
  throw RuntimeError("activation: unknown activation kind");
}

}  // namespace ts::act

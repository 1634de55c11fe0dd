// CUDA kernels of GELU (exact and tanh forms), forward and backward, and ReLU's backward
// (ops/nn_fused.h), through the elementwise launcher (cuda/loops.cuh): contiguous operands
// take its vectorized path. The formulas are the CPU kernels' (cpu/nn_act_kernels.cpp), with
// the device's erfc/tanh/exp (float for 16-bit inputs, double for float64).
#include <cuda/std/cmath>
#include <type_traits>

#include "cuda/loops.cuh"
#include "ops/nn_fused.h"

namespace ts::cuda {
namespace {

namespace cs = ::cuda::std;

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kTanhCoef = 0.044715;

// 2 * Phi(v), the exact GELU's CDF factor. float: PyTorch's CUDA formula, 1 + erf(v / sqrt 2)
// (erff is about half of erfcf's instructions, and at GPT-2's 25M-element activations the
// erfc form made GELU compute-bound: 54 us against PyTorch's 37 for the bfloat16 forward);
// it differs from erfc(-v / sqrt 2) only in the far negative tail, below 1e-7 absolute.
// double keeps erfc, accurate in the tail (the CPU kernels' formula).
template <class A>
__device__ __forceinline__ A cdf_factor(A v) {
  if constexpr (std::is_same_v<A, float>)
    return A(1) + cs::erf(v * A(kSqrt1_2));
  else
    return cs::erfc(v * -A(kSqrt1_2));
}

struct Gelu {
  bool tanh_approx;
  template <class A>
  __device__ __forceinline__ A operator()(A v) const {
    if (tanh_approx)
      return A(0.5) * v * (A(1) + cs::tanh(A(kSqrt2OverPi) * (v + A(kTanhCoef) * v * v * v)));
    return A(0.5) * v * cdf_factor(v);
  }
};

// gy * GELU'(x).
struct GeluBackward {
  bool tanh_approx;
  template <class A>
  __device__ __forceinline__ A operator()(A v, A g) const {
    if (tanh_approx) {
      const A v2 = v * v;
      const A th = cs::tanh(A(kSqrt2OverPi) * (v + A(kTanhCoef) * v2 * v));
      return g * (A(0.5) * (A(1) + th) +
                  A(0.5) * v * (A(1) - th * th) * A(kSqrt2OverPi) * (A(1) + A(3 * kTanhCoef) * v2));
    }
    const A cdf = A(0.5) * cdf_factor(v);
    const A pdf = cs::exp(A(-0.5) * v * v) * A(kInvSqrt2Pi);
    return g * (cdf + v * pdf);
  }
};

// gy where y > 0 (or NaN, as PyTorch passes), else 0.
struct ReluBackward {
  template <class A>
  __device__ __forceinline__ A operator()(A y, A g) const {
    return y <= A(0) ? A(0) : g;
  }
};

template <class F>
void launch_unary(const Tensor& x, const Tensor& out, const char* op, F f) {
  DeviceGuard guard(x.device().index);
  const ElementwiseIter it = ElementwiseIter::make(out, {&x}, op);
  cuda_visit<kFloatSet>(x.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, 2>(it, f);
  });
}

template <class F>
void launch_binary(const Tensor& a, const Tensor& b, const Tensor& out, const char* op, F f) {
  DeviceGuard guard(a.device().index);
  const ElementwiseIter it = ElementwiseIter::make(out, {&a, &b}, op);
  cuda_visit<kFloatSet>(a.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, 3>(it, f);
  });
}

void gelu_cuda(const Tensor& x, const Tensor& out, bool tanh_approx) {
  launch_unary(x, out, "gelu", Gelu{tanh_approx});
}

void gelu_backward_cuda(const Tensor& x, const Tensor& gy, const Tensor& gx, bool tanh_approx) {
  launch_binary(x, gy, gx, "gelu_backward", GeluBackward{tanh_approx});
}

void relu_backward_cuda(const Tensor& y, const Tensor& gy, const Tensor& gx) {
  launch_binary(y, gy, gx, "relu_backward", ReluBackward{});
}

}  // namespace

TS_REGISTER_KERNEL(gelu_stub, CUDA, &gelu_cuda);
TS_REGISTER_KERNEL(gelu_backward_stub, CUDA, &gelu_backward_cuda);
TS_REGISTER_KERNEL(relu_backward_stub, CUDA, &relu_backward_cuda);

}  // namespace ts::cuda

// CUDA kernels of the fused pointwise activations (ops/nn/activation_fused.h), forward and
// backward, through the elementwise launcher (cuda/loops.cuh), from the scalar formulas the
// CPU kernels use (kernels/activation_math.h) with the device's exp/tanh/log1p/expm1 (float
// for 16-bit inputs, double for float64).
#include <cuda/std/cmath>
#include <type_traits>

#include "cuda/loops.cuh"
#include "ops/nn/activation_fused.h"

namespace ts::cuda {
namespace {

using act::Act;
using act::ActParams;
namespace cs = ::cuda::std;

struct DeviceMath {
  template <class A>
  __host__ __device__ static A exp(A v) {
    return cs::exp(v);
  }
  template <class A>
  __host__ __device__ static A tanh(A v) {
    return cs::tanh(v);
  }
  template <class A>
  __host__ __device__ static A log1p(A v) {
    return cs::log1p(v);
  }
  template <class A>
  __host__ __device__ static A expm1(A v) {
    return cs::expm1(v);
  }
};

template <Act K>
struct Forward {
  double a, b, c;
  template <class A>
  __device__ __forceinline__ A operator()(A v) const {
    return act::value<K, DeviceMath>(v, A(a), A(b), A(c));
  }
};

template <Act K>
struct Backward {
  double a, b, c;
  template <class A>
  __device__ __forceinline__ A operator()(A v, A g) const {
    return act::grad<K, DeviceMath>(v, g, A(a), A(b), A(c));
  }
};

void activation_cuda(const Tensor& x, const Tensor& out, const ActParams& p) {
  DeviceGuard guard(x.device().index);
  const ElementwiseIter it = ElementwiseIter::make(out, {&x}, "activation");
  act::visit_kind(p.kind, [&](auto k) {
    cuda_visit<kFloatSet>(x.dtype(), "activation", [&](auto tag) {
      using T = typename decltype(tag)::type;
      launch_elementwise<T, T, 2>(it, Forward<decltype(k)::value>{p.a, p.b, p.c});
    });
  });
}

void activation_backward_cuda(const Tensor& x, const Tensor& gy, const Tensor& gx,
                              const ActParams& p) {
  DeviceGuard guard(x.device().index);
  const ElementwiseIter it = ElementwiseIter::make(gx, {&x, &gy}, "activation_backward");
  act::visit_kind(p.kind, [&](auto k) {
    cuda_visit<kFloatSet>(x.dtype(), "activation_backward", [&](auto tag) {
      using T = typename decltype(tag)::type;
      launch_elementwise<T, T, 3>(it, Backward<decltype(k)::value>{p.a, p.b, p.c});
    });
  });
}

}  // namespace

TS_REGISTER_KERNEL(activation_stub, CUDA, &activation_cuda);
TS_REGISTER_KERNEL(activation_backward_stub, CUDA, &activation_backward_cuda);

}  // namespace ts::cuda

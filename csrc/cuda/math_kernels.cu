// CUDA kernels for the transcendental elementwise functions and the binary real-float ones
// (atan2, hypot, copysign, logaddexp, nextafter).
#include "cuda/functors.cuh"
#include "cuda/loops.cuh"
#include "ops/math.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

TS_CUDA_UNARY(exp, kInexactSet, Exp)
TS_CUDA_UNARY(log, kInexactSet, Log)
TS_CUDA_UNARY(sqrt, kInexactSet, Sqrt)
TS_CUDA_UNARY(sin, kInexactSet, Sin)
TS_CUDA_UNARY(cos, kInexactSet, Cos)
TS_CUDA_UNARY(tan, kInexactSet, Tan)
TS_CUDA_UNARY(asin, kInexactSet, Asin)
TS_CUDA_UNARY(acos, kInexactSet, Acos)
TS_CUDA_UNARY(atan, kInexactSet, Atan)
TS_CUDA_UNARY(sinh, kInexactSet, Sinh)
TS_CUDA_UNARY(cosh, kInexactSet, Cosh)
TS_CUDA_UNARY(tanh, kInexactSet, Tanh)
TS_CUDA_UNARY(asinh, kInexactSet, Asinh)
TS_CUDA_UNARY(acosh, kInexactSet, Acosh)
TS_CUDA_UNARY(atanh, kInexactSet, Atanh)
TS_CUDA_UNARY(log10, kInexactSet, Log10)
TS_CUDA_UNARY(expm1, kInexactSet, Expm1)
TS_CUDA_UNARY(log1p, kInexactSet, Log1p)
TS_CUDA_UNARY(log2, kInexactSet, Log2)
TS_CUDA_UNARY(reciprocal, kInexactSet, Reciprocal)
TS_CUDA_BINARY(atan2, kFloatSet, Atan2)
TS_CUDA_BINARY(hypot, kFloatSet, Hypot)
TS_CUDA_BINARY(copysign, kFloatSet, CopySign)
TS_CUDA_BINARY(logaddexp, kFloatSet, LogAddExp)

// nextafter steps in the storage type, like the CPU: float16/bfloat16 move by one 16-bit
// step, which float32's nextafter would not give.
template <class T>
struct NextAfter {
  __device__ __forceinline__ dacc_t<T> operator()(dacc_t<T> a, dacc_t<T> b) const {
    if constexpr (::cuda::std::is_same_v<T, dacc_t<T>>) {
      return ::cuda::std::nextafter(a, b);
    } else {
      if (a != a || b != b) return a + b;
      if (a == b) return b;
      uint16_t bits;
      if (a == 0.0f) {
        bits = ::cuda::std::signbit(b) ? 0x8001 : 0x0001;
      } else {
        const T h = dconvert<T>(a);
        memcpy(&bits, &h, 2);
        bits = (a < b) == (a > 0.0f) ? bits + 1 : bits - 1;  // away from zero when a < b > 0
      }
      T r;
      memcpy(&r, &bits, 2);
      return dconvert<float>(r);
    }
  }
};
void nextafter_cuda(const ElementwiseIter& it, DType dt) {
  cuda_visit<kFloatSet>(dt, "nextafter", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<T, T, 3>(it, NextAfter<T>{});
  });
}
TS_REGISTER_KERNEL(nextafter_stub, CUDA, &nextafter_cuda);

}  // namespace
}  // namespace ts::cuda

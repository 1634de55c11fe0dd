// CUDA kernels of the special functions (ops/special.h): the functors call the same
// kernels/special_math.h functions as the CPU kernels (Note [Special function algorithms]).
#include "kernels/special_math.h"
#include "cuda/functors.cuh"
#include "cuda/loops.cuh"
#include "ops/special.h"

namespace ts::cuda {
namespace fn {

namespace cs = ::cuda::std;
#define TS_SPECIAL_UNARY_FN(Name, f)                                 \
  struct Name {                                                      \
    template <class A>                                               \
    __host__ __device__ __forceinline__ auto operator()(A a) const { \
      return ::ts::scalar::f(a);                                     \
    }                                                                \
  };
#define TS_SPECIAL_BINARY_FN(Name, f)                                     \
  struct Name {                                                           \
    template <class A>                                                    \
    __host__ __device__ __forceinline__ auto operator()(A a, A b) const { \
      return ::ts::scalar::f(a, b);                                       \
    }                                                                     \
  };
TS_SPECIAL_UNARY_FN(Lgamma, lgamma)
TS_SPECIAL_UNARY_FN(Digamma, digamma)
TS_SPECIAL_UNARY_FN(Erf, erf)
TS_SPECIAL_UNARY_FN(Erfc, erfc)
TS_SPECIAL_UNARY_FN(Erfinv, erfinv)
TS_SPECIAL_UNARY_FN(Erfcx, erfcx)
TS_SPECIAL_UNARY_FN(Ndtr, ndtr)
TS_SPECIAL_UNARY_FN(Ndtri, ndtri)
TS_SPECIAL_UNARY_FN(LogNdtr, log_ndtr)
TS_SPECIAL_UNARY_FN(I0, i0)
TS_SPECIAL_UNARY_FN(I0e, i0e)
TS_SPECIAL_UNARY_FN(I1, i1)
TS_SPECIAL_UNARY_FN(I1e, i1e)
TS_SPECIAL_UNARY_FN(Entr, entr)
TS_SPECIAL_UNARY_FN(Logit, logit)
TS_SPECIAL_BINARY_FN(Xlogy, xlogy)
TS_SPECIAL_BINARY_FN(Xlog1py, xlog1py)
TS_SPECIAL_BINARY_FN(Polygamma, polygamma)
TS_SPECIAL_BINARY_FN(Gammainc, gammainc)
TS_SPECIAL_BINARY_FN(Gammaincc, gammaincc)
TS_SPECIAL_BINARY_FN(ChebyshevPolynomialT, chebyshev_polynomial_t)
TS_SPECIAL_BINARY_FN(ChebyshevPolynomialU, chebyshev_polynomial_u)
TS_SPECIAL_BINARY_FN(ChebyshevPolynomialV, chebyshev_polynomial_v)
TS_SPECIAL_BINARY_FN(ChebyshevPolynomialW, chebyshev_polynomial_w)
TS_SPECIAL_BINARY_FN(HermitePolynomialH, hermite_polynomial_h)
TS_SPECIAL_BINARY_FN(HermitePolynomialHe, hermite_polynomial_he)
TS_SPECIAL_BINARY_FN(LaguerrePolynomialL, laguerre_polynomial_l)
TS_SPECIAL_BINARY_FN(LegendrePolynomialP, legendre_polynomial_p)
#undef TS_SPECIAL_UNARY_FN
#undef TS_SPECIAL_BINARY_FN
struct Zeta {
  template <class A>
  __host__ __device__ __forceinline__ A operator()(A x, A q) const {
    return A(::ts::scalar::zeta(double(x), double(q)));
  }
};
struct Sinc {
  template <class A>
  __host__ __device__ __forceinline__ A operator()(A a) const {
    if constexpr (is_dcomplex_v<A>) {
      using V = typename A::value_type;
      if (a == A(0)) return A(1);
      const A px = a * V(::ts::scalar::kPi);
      return cs::sin(px) / px;
    } else {
      return ::ts::scalar::sinc(a);
    }
  }
};

}  // namespace fn

namespace {

TS_CUDA_UNARY(lgamma, kFloatSet, Lgamma)
TS_CUDA_UNARY(digamma, kFloatSet, Digamma)
TS_CUDA_UNARY(erf, kFloatSet, Erf)
TS_CUDA_UNARY(erfc, kFloatSet, Erfc)
TS_CUDA_UNARY(erfinv, kFloatSet, Erfinv)
TS_CUDA_UNARY(erfcx, kFloatSet, Erfcx)
TS_CUDA_UNARY(ndtr, kFloatSet, Ndtr)
TS_CUDA_UNARY(ndtri, kFloatSet, Ndtri)
TS_CUDA_UNARY(log_ndtr, kFloatSet, LogNdtr)
TS_CUDA_UNARY(i0, kFloatSet, I0)
TS_CUDA_UNARY(i0e, kFloatSet, I0e)
TS_CUDA_UNARY(i1, kFloatSet, I1)
TS_CUDA_UNARY(i1e, kFloatSet, I1e)
TS_CUDA_UNARY(modified_bessel_i0, kFloatSet, I0)
TS_CUDA_UNARY(modified_bessel_i1, kFloatSet, I1)
TS_CUDA_UNARY(entr, kFloatSet, Entr)
TS_CUDA_UNARY(logit, kFloatSet, Logit)
TS_CUDA_UNARY(sinc, kInexactSet, Sinc)
TS_CUDA_BINARY(xlogy, kFloatSet, Xlogy)
TS_CUDA_BINARY(xlog1py, kFloatSet, Xlog1py)
TS_CUDA_BINARY(polygamma, kFloatSet, Polygamma)
TS_CUDA_BINARY(zeta, kFloatSet, Zeta)
TS_CUDA_BINARY(gammainc, kFloatSet, Gammainc)
TS_CUDA_BINARY(gammaincc, kFloatSet, Gammaincc)
TS_CUDA_BINARY(chebyshev_polynomial_t, kFloatSet, ChebyshevPolynomialT)
TS_CUDA_BINARY(chebyshev_polynomial_u, kFloatSet, ChebyshevPolynomialU)
TS_CUDA_BINARY(chebyshev_polynomial_v, kFloatSet, ChebyshevPolynomialV)
TS_CUDA_BINARY(chebyshev_polynomial_w, kFloatSet, ChebyshevPolynomialW)
TS_CUDA_BINARY(hermite_polynomial_h, kFloatSet, HermitePolynomialH)
TS_CUDA_BINARY(hermite_polynomial_he, kFloatSet, HermitePolynomialHe)
TS_CUDA_BINARY(laguerre_polynomial_l, kFloatSet, LaguerrePolynomialL)
TS_CUDA_BINARY(legendre_polynomial_p, kFloatSet, LegendrePolynomialP)

}  // namespace
}  // namespace ts::cuda

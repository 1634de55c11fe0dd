// CPU kernels of the special functions (ops/special.h); the math is kernels/special_math.h.
#include "cpu/loops.h"
#include "kernels/special_math.h"
#include "ops/special.h"

namespace ts {
namespace {

#define TS_CPU_SPECIAL_UNARY(op)                                             \
  void op##_kernel(const ElementwiseIter& it, DType dt) {                    \
    run_unary<kFloatSet>(it, dt, #op, [](auto a) { return scalar::op(a); }); \
  }                                                                          \
  TS_REGISTER_KERNEL(op##_stub, CPU, &op##_kernel);
#define TS_CPU_SPECIAL_BINARY(op)                                                        \
  void op##_kernel(const ElementwiseIter& it, DType dt) {                                \
    run_binary<kFloatSet>(it, dt, #op, [](auto a, auto b) { return scalar::op(a, b); }); \
  }                                                                                      \
  TS_REGISTER_KERNEL(op##_stub, CPU, &op##_kernel);

TS_CPU_SPECIAL_UNARY(lgamma)
TS_CPU_SPECIAL_UNARY(digamma)
TS_CPU_SPECIAL_UNARY(erf)
TS_CPU_SPECIAL_UNARY(erfc)
TS_CPU_SPECIAL_UNARY(erfinv)
TS_CPU_SPECIAL_UNARY(erfcx)
TS_CPU_SPECIAL_UNARY(ndtr)
TS_CPU_SPECIAL_UNARY(ndtri)
TS_CPU_SPECIAL_UNARY(log_ndtr)
TS_CPU_SPECIAL_UNARY(i0)
TS_CPU_SPECIAL_UNARY(i0e)
TS_CPU_SPECIAL_UNARY(i1)
TS_CPU_SPECIAL_UNARY(i1e)
TS_CPU_SPECIAL_UNARY(entr)
TS_CPU_SPECIAL_UNARY(logit)
TS_CPU_SPECIAL_BINARY(xlogy)
TS_CPU_SPECIAL_BINARY(xlog1py)
TS_CPU_SPECIAL_BINARY(polygamma)
TS_CPU_SPECIAL_BINARY(gammainc)
TS_CPU_SPECIAL_BINARY(gammaincc)
TS_CPU_SPECIAL_BINARY(chebyshev_polynomial_t)
TS_CPU_SPECIAL_BINARY(chebyshev_polynomial_u)
TS_CPU_SPECIAL_BINARY(chebyshev_polynomial_v)
TS_CPU_SPECIAL_BINARY(chebyshev_polynomial_w)
TS_CPU_SPECIAL_BINARY(hermite_polynomial_h)
TS_CPU_SPECIAL_BINARY(hermite_polynomial_he)
TS_CPU_SPECIAL_BINARY(laguerre_polynomial_l)
TS_CPU_SPECIAL_BINARY(legendre_polynomial_p)
#undef TS_CPU_SPECIAL_UNARY
#undef TS_CPU_SPECIAL_BINARY

void zeta_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kFloatSet>(it, dt, "zeta", [](auto x, auto q) {
    using F = decltype(x);
    return static_cast<F>(scalar::zeta(static_cast<double>(x), static_cast<double>(q)));
  });
}
TS_REGISTER_KERNEL(zeta_stub, CPU, &zeta_kernel);
TS_REGISTER_KERNEL(modified_bessel_i0_stub, CPU, &i0_kernel);
TS_REGISTER_KERNEL(modified_bessel_i1_stub, CPU, &i1_kernel);

void sinc_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kInexactSet>(it, dt, "sinc", [](auto a) {
    using A = decltype(a);
    if constexpr (is_complex_v<A>) {
      if (a == A(0)) return A(1);
      const A px = a * typename A::value_type(scalar::kPi);
      return std::sin(px) / px;
    } else {
      return scalar::sinc(a);
    }
  });
}
TS_REGISTER_KERNEL(sinc_stub, CPU, &sinc_kernel);

}  // namespace
}  // namespace ts

// CPU kernels for the trigonometric and hyperbolic functions (tanh is in exp_log_kernels.cpp,
// beside the exp it is built on). std:: gives the C99 Annex G special cases for complex.
#include "cpu/loops.h"
#include "ops/math.h"

namespace ts {
namespace {

#define TS_STD_UNARY_KERNEL(op)                                             \
  void op##_kernel(const ElementwiseIter& it, DType dt) {                   \
    run_unary<kInexactSet>(it, dt, #op, [](auto a) { return std::op(a); }); \
  }
TS_STD_UNARY_KERNEL(sin)
TS_STD_UNARY_KERNEL(cos)
TS_STD_UNARY_KERNEL(tan)
TS_STD_UNARY_KERNEL(asin) TS_STD_UNARY_KERNEL(acos) TS_STD_UNARY_KERNEL(atan)
    TS_STD_UNARY_KERNEL(sinh) TS_STD_UNARY_KERNEL(cosh) TS_STD_UNARY_KERNEL(asinh)
        TS_STD_UNARY_KERNEL(acosh) TS_STD_UNARY_KERNEL(atanh)
#undef TS_STD_UNARY_KERNEL

}  // namespace

TS_REGISTER_KERNEL(sin_stub, CPU, &sin_kernel);
TS_REGISTER_KERNEL(cos_stub, CPU, &cos_kernel);
TS_REGISTER_KERNEL(tan_stub, CPU, &tan_kernel);
TS_REGISTER_KERNEL(asin_stub, CPU, &asin_kernel);
TS_REGISTER_KERNEL(acos_stub, CPU, &acos_kernel);
TS_REGISTER_KERNEL(atan_stub, CPU, &atan_kernel);
TS_REGISTER_KERNEL(sinh_stub, CPU, &sinh_kernel);
TS_REGISTER_KERNEL(cosh_stub, CPU, &cosh_kernel);
TS_REGISTER_KERNEL(asinh_stub, CPU, &asinh_kernel);
TS_REGISTER_KERNEL(acosh_stub, CPU, &acosh_kernel);
TS_REGISTER_KERNEL(atanh_stub, CPU, &atanh_kernel);

}  // namespace ts

// CPU kernels for ceil/floor/trunc/round and floored division (Python/NumPy semantics).
#include "cpu/loops.h"
#include "kernels/scalar_math.h"
#include "ops/rounding.h"

namespace ts {
namespace {

#define TS_ROUNDING_KERNEL(op)                            \
  void op##_kernel(const ElementwiseIter& it, DType dt) { \
    run_unary<kRealSet>(it, dt, #op, [](auto a) {         \
      if constexpr (std::is_integral_v<decltype(a)>)      \
        return a;                                         \
      else                                                \
        return std::op(a);                                \
    });                                                   \
  }
TS_ROUNDING_KERNEL(ceil)
TS_ROUNDING_KERNEL(floor)
TS_ROUNDING_KERNEL(trunc)
#undef TS_ROUNDING_KERNEL

// Half to even: nearbyint rounds in the default (to-nearest-even) mode; complex rounds both
// parts.
void round_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kNumericSet>(it, dt, "round", [](auto a) {
    using A = decltype(a);
    if constexpr (std::is_integral_v<A>)
      return a;
    else if constexpr (is_complex_v<A>)
      return A(std::nearbyint(a.real()), std::nearbyint(a.imag()));
    else
      return std::nearbyint(a);
  });
}
void floor_divide_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kRealSet>(it, dt, "floor_divide", [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return scalar::int_floor_divide(a, b);
    else
      return scalar::float_floor_divide(a, b);
  });
}
void remainder_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kRealSet>(it, dt, "remainder", [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return scalar::int_remainder(a, b);
    else
      return scalar::float_remainder(a, b);
  });
}

}  // namespace

TS_REGISTER_KERNEL(ceil_stub, CPU, &ceil_kernel);
TS_REGISTER_KERNEL(floor_stub, CPU, &floor_kernel);
TS_REGISTER_KERNEL(trunc_stub, CPU, &trunc_kernel);
TS_REGISTER_KERNEL(round_stub, CPU, &round_kernel);
TS_REGISTER_KERNEL(floor_divide_stub, CPU, &floor_divide_kernel);
TS_REGISTER_KERNEL(remainder_stub, CPU, &remainder_kernel);

}  // namespace ts

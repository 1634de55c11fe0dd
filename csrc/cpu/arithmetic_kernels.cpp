// CPU kernels for the arithmetic ops.
#include "cpu/loops.h"
#include "kernels/scalar_math.h"
#include "ops/arithmetic.h"

namespace ts {
namespace {

void add_kernel(const ElementwiseIter& it, DType dt) {
  // Integers wrap (scalar::wrap_*: no signed-overflow UB); bool + bool is logical or.
  run_binary<kAllSet>(it, dt, "add", [](auto a, auto b) {
    if constexpr (std::is_same_v<decltype(a), bool>)
      return static_cast<bool>(a || b);
    else
      return scalar::wrap_add(a, b);
  });
}
void subtract_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kNumericSet>(it, dt, "subtract",
                          [](auto a, auto b) { return scalar::wrap_sub(a, b); });
}
void multiply_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kAllSet>(it, dt, "multiply", [](auto a, auto b) {
    if constexpr (std::is_same_v<decltype(a), bool>)
      return static_cast<bool>(a && b);
    else
      return scalar::wrap_mul(a, b);
  });
}
void divide_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kInexactSet>(it, dt, "divide", [](auto a, auto b) { return a / b; });
}
void negative_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kNumericSet>(it, dt, "negative", [](auto a) { return scalar::wrap_neg(a); });
}

void conj_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kComplexSet>(it, dt, "conj", [](auto a) { return std::conj(a); });
}

}  // namespace

TS_REGISTER_KERNEL(conj_stub, CPU, &conj_kernel);
TS_REGISTER_KERNEL(add_stub, CPU, &add_kernel);
TS_REGISTER_KERNEL(subtract_stub, CPU, &subtract_kernel);
TS_REGISTER_KERNEL(multiply_stub, CPU, &multiply_kernel);
TS_REGISTER_KERNEL(divide_stub, CPU, &divide_kernel);
TS_REGISTER_KERNEL(negative_stub, CPU, &negative_kernel);

}  // namespace ts

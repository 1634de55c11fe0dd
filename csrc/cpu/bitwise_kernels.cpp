// CPU kernels for the bitwise and logical ops.
#include "cpu/loops.h"
#include "kernels/scalar_math.h"
#include "ops/bitwise.h"

namespace ts {
namespace {

constexpr uint32_t kIntBool = kIntSet | kBoolSet;

void bitwise_and_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kIntBool>(it, dt, "bitwise_and", [](auto a, auto b) { return decltype(a)(a & b); });
}
void bitwise_or_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kIntBool>(it, dt, "bitwise_or", [](auto a, auto b) { return decltype(a)(a | b); });
}
void bitwise_xor_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kIntBool>(it, dt, "bitwise_xor", [](auto a, auto b) { return decltype(a)(a ^ b); });
}
void bitwise_invert_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kIntBool>(it, dt, "bitwise_invert", [](auto a) {
    using A = decltype(a);
    if constexpr (std::is_same_v<A, bool>)
      return !a;
    else
      return A(~a);
  });
}
void bitwise_left_shift_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kIntSet>(it, dt, "bitwise_left_shift",
                      [](auto a, auto b) { return scalar::shift_left(a, b); });
}
void bitwise_right_shift_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kIntSet>(it, dt, "bitwise_right_shift",
                      [](auto a, auto b) { return scalar::shift_right(a, b); });
}
void gcd_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kIntSet>(it, dt, "gcd", [](auto a, auto b) { return scalar::gcd(a, b); });
}
void lcm_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kIntSet>(it, dt, "lcm", [](auto a, auto b) { return scalar::lcm(a, b); });
}

template <class A>
bool truthy(A a) {
  return a != A(0);
}
void logical_and_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kAllSet>(it, dt, "logical_and", [](auto a, auto b) { return truthy(a) && truthy(b); });
}
void logical_or_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kAllSet>(it, dt, "logical_or", [](auto a, auto b) { return truthy(a) || truthy(b); });
}
void logical_xor_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kAllSet>(it, dt, "logical_xor", [](auto a, auto b) { return truthy(a) != truthy(b); });
}
void logical_not_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kAllSet>(it, dt, "logical_not", [](auto a) { return !truthy(a); });
}

}  // namespace

TS_REGISTER_KERNEL(bitwise_and_stub, CPU, &bitwise_and_kernel);
TS_REGISTER_KERNEL(bitwise_or_stub, CPU, &bitwise_or_kernel);
TS_REGISTER_KERNEL(bitwise_xor_stub, CPU, &bitwise_xor_kernel);
TS_REGISTER_KERNEL(bitwise_invert_stub, CPU, &bitwise_invert_kernel);
TS_REGISTER_KERNEL(bitwise_left_shift_stub, CPU, &bitwise_left_shift_kernel);
TS_REGISTER_KERNEL(bitwise_right_shift_stub, CPU, &bitwise_right_shift_kernel);
TS_REGISTER_KERNEL(gcd_stub, CPU, &gcd_kernel);
TS_REGISTER_KERNEL(lcm_stub, CPU, &lcm_kernel);
TS_REGISTER_KERNEL(logical_and_stub, CPU, &logical_and_kernel);
TS_REGISTER_KERNEL(logical_or_stub, CPU, &logical_or_kernel);
TS_REGISTER_KERNEL(logical_xor_stub, CPU, &logical_xor_kernel);
TS_REGISTER_KERNEL(logical_not_stub, CPU, &logical_not_kernel);

}  // namespace ts

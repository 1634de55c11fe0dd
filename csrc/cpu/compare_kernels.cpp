// CPU kernels for the comparisons and maximum/minimum.
#include "cpu/loops.h"
#include "ops/compare.h"

namespace ts {
namespace {

void equal_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kAllSet>(it, dt, "equal", [](auto a, auto b) -> bool { return a == b; });
}
void not_equal_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kAllSet>(it, dt, "not_equal", [](auto a, auto b) -> bool { return a != b; });
}
void less_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kRealSet | kBoolSet>(it, dt, "less", [](auto a, auto b) -> bool { return a < b; });
}
void less_equal_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kRealSet | kBoolSet>(it, dt, "less_equal",
                                  [](auto a, auto b) -> bool { return a <= b; });
}
void greater_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kRealSet | kBoolSet>(it, dt, "greater", [](auto a, auto b) -> bool { return a > b; });
}
void greater_equal_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kRealSet | kBoolSet>(it, dt, "greater_equal",
                                  [](auto a, auto b) -> bool { return a >= b; });
}
// NaN propagates; on ties (including -0 vs +0) the second operand wins, as in NumPy.
void maximum_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kRealSet>(it, dt, "maximum", [](auto a, auto b) { return (a > b || a != a) ? a : b; });
}
void minimum_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kRealSet>(it, dt, "minimum", [](auto a, auto b) { return (a < b || a != a) ? a : b; });
}

}  // namespace

TS_REGISTER_KERNEL(equal_stub, CPU, &equal_kernel);
TS_REGISTER_KERNEL(not_equal_stub, CPU, &not_equal_kernel);
TS_REGISTER_KERNEL(less_stub, CPU, &less_kernel);
TS_REGISTER_KERNEL(less_equal_stub, CPU, &less_equal_kernel);
TS_REGISTER_KERNEL(greater_stub, CPU, &greater_kernel);
TS_REGISTER_KERNEL(greater_equal_stub, CPU, &greater_equal_kernel);
TS_REGISTER_KERNEL(maximum_stub, CPU, &maximum_kernel);
TS_REGISTER_KERNEL(minimum_stub, CPU, &minimum_kernel);

}  // namespace ts

// CPU kernels for all, any and count_nonzero: every dtype, an element counts when != 0.
#include "cpu/reduce_loops.h"
#include "ops/reduce.h"

namespace ts {
namespace {

using namespace reduce_detail;

struct AllOp {
  using A = bool;
  static A init() { return true; }
  template <class T>
  static A load(T v) {
    return convert<bool, T>(v);
  }
  static A combine(A a, A b) { return a & b; }
};

struct AnyOp {
  using A = bool;
  static A init() { return false; }
  template <class T>
  static A load(T v) {
    return convert<bool, T>(v);
  }
  static A combine(A a, A b) { return a | b; }
};

struct CountOp {
  using A = int64_t;
  static A init() { return 0; }
  template <class T>
  static A load(T v) {
    return convert<bool, T>(v) ? 1 : 0;
  }
  static A combine(A a, A b) { return a + b; }
};

template <class Op, class R>
void logical_kernel(const ReducePlan& p, DType in, const char* name) {
  visit_dtype<kAllSet>(in, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_reduce<Op, T, R>(p, 1.0);
  });
}

void all_kernel(const ReducePlan& p, DType in, DType, double) {
  logical_kernel<AllOp, bool>(p, in, "all");
}
void any_kernel(const ReducePlan& p, DType in, DType, double) {
  logical_kernel<AnyOp, bool>(p, in, "any");
}
void count_nonzero_kernel(const ReducePlan& p, DType in, DType, double) {
  logical_kernel<CountOp, int64_t>(p, in, "count_nonzero");
}

}  // namespace

TS_REGISTER_KERNEL(all_stub, CPU, &all_kernel);
TS_REGISTER_KERNEL(any_stub, CPU, &any_kernel);
TS_REGISTER_KERNEL(count_nonzero_stub, CPU, &count_nonzero_kernel);

}  // namespace ts

// CPU kernels for sum (and mean), prod, and the sqrt step of std.
#include "cpu/reduce_loops.h"
#include "cpu/loops.h"
#include "kernels/scalar_math.h"
#include "ops/reduce.h"
#include "kernels/acc_type.h"

namespace ts {
namespace {

using namespace reduce_detail;

template <class Acc>
struct SumOp {
  using A = Acc;
  static constexpr SimdKind kSimd = SimdKind::Sum;
  static A init() { return A(0); }
  template <class T>
  static A load(T v) {
    return convert<A, T>(v);
  }
  template <class X>  // X: A or a vector of A
  static X combine(X a, X b) {
    if constexpr (std::is_integral_v<X>)
      return scalar::wrap_add(a, b);  // integer sums wrap, no signed-overflow UB
    else
      return a + b;
  }
};

template <class Acc>
struct ProdOp {
  using A = Acc;
  static A init() { return A(1); }
  template <class T>
  static A load(T v) {
    return convert<A, T>(v);
  }
  template <class X>
  static X combine(X a, X b) {
    if constexpr (std::is_integral_v<X>)
      return scalar::wrap_mul(a, b);
    else
      return a * b;
  }
};

// Loads x * x; reduce_loops.h keeps it off the raw-vector lane path (kSquares).
template <class Acc>
struct SumSquaresOp {
  using A = Acc;
  static constexpr bool kSquares = true;
  static A init() { return A(0); }
  template <class T>
  static A load(T v) {
    const A a = convert<A, T>(v);
    return a * a;
  }
  static A combine(A a, A b) { return a + b; }
};

void sum_squares_kernel(const ReducePlan& p, DType in, DType, double) {
  visit_dtype<kFloatSet>(in, "var", [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_reduce<SumSquaresOp<acc_t<T>>, T, T>(p, 1.0);
  });
}

template <template <class> class Op>
void accumulate_kernel(const ReducePlan& p, DType in, DType, double div, const char* name) {
  visit_dtype<kAllSet>(in, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = sum_t<T>;
    run_reduce<Op<acc_t<R>>, T, R>(p, div);
  });
}

void sum_kernel(const ReducePlan& p, DType in, DType out, double div) {
  accumulate_kernel<SumOp>(p, in, out, div, "sum");
}
void prod_kernel(const ReducePlan& p, DType in, DType out, double div) {
  accumulate_kernel<ProdOp>(p, in, out, div, "prod");
}

void sqrt_kernel(const Tensor& t) {
  visit_dtype<kFloatSet>(t.dtype(), "std", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* v = t.data<T>();
    parallel_for(0, t.numel(), kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) v[i] = T(std::sqrt(static_cast<acc_t<T>>(v[i])));
    });
  });
}

}  // namespace

TS_REGISTER_KERNEL(sum_stub, CPU, &sum_kernel);
TS_REGISTER_KERNEL(prod_stub, CPU, &prod_kernel);
TS_REGISTER_KERNEL(sum_squares_stub, CPU, &sum_squares_kernel);
TS_REGISTER_KERNEL(std_sqrt_stub, CPU, &sqrt_kernel);

}  // namespace ts

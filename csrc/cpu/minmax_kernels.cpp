// CPU kernels for max, min, argmax and argmin. NaN propagates (NumPy): a NaN anywhere makes
// max/min NaN, and argmax/argmin return the first NaN's index.
#include "cpu/reduce_loops.h"
#include "ops/reduce.h"

namespace ts {
namespace {

using namespace reduce_detail;

template <class A>
inline bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>)
    return v != v;
  else
    return false;
}

// Written as selects (no branches) so the lane loops vectorize; `a != a` keeps a NaN.
template <class Acc>
struct MaxOp {
  using A = Acc;
  static A init() { return lowest<A>(); }
  template <class T>
  static A load(T v) {
    return convert<A, T>(v);
  }
  static A combine(A a, A b) { return ((a > b) | is_nan(a)) ? a : b; }
};

template <class Acc>
struct MinOp {
  using A = Acc;
  static A init() { return highest<A>(); }
  template <class T>
  static A load(T v) {
    return convert<A, T>(v);
  }
  static A combine(A a, A b) { return ((a < b) | is_nan(a)) ? a : b; }
};

template <template <class> class Op>
void extremum_kernel(const ReducePlan& p, DType in, const char* name) {
  visit_dtype<kRealSet | kBoolSet>(in, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_reduce<Op<acc_t<T>>, T, T>(p, 1.0);
  });
}

void max_kernel(const ReducePlan& p, DType in, DType, double) {
  extremum_kernel<MaxOp>(p, in, "max");
}
void min_kernel(const ReducePlan& p, DType in, DType, double) {
  extremum_kernel<MinOp>(p, in, "min");
}

// First index of the extremum along the (unflipped) reduced dim; the first NaN wins.
template <bool IsMax>
void arg_kernel(const ReducePlan& p, DType in, const char* name) {
  visit_dtype<kRealSet | kBoolSet>(in, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const int64_t n = p.red_sizes[0], s = p.red_strides[0];
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
    parallel_for(0, p.n_out, grain, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        int64_t io, oo;
        p.kept_offsets(k, 0, io, oo);
        const char* q = p.in + io;
        A best = static_cast<A>(load_at<T>(q, 0, s));
        int64_t bi = 0;
        for (int64_t i = 1; i < n && !is_nan(best); ++i) {
          const A v = static_cast<A>(load_at<T>(q, i, s));
          if ((IsMax ? v > best : v < best) || is_nan(v)) {
            best = v;
            bi = i;
          }
        }
        *reinterpret_cast<int64_t*>(p.out + oo) = bi;
      }
    });
  });
}

void argmax_kernel(const ReducePlan& p, DType in) { arg_kernel<true>(p, in, "argmax"); }
void argmin_kernel(const ReducePlan& p, DType in) { arg_kernel<false>(p, in, "argmin"); }

}  // namespace

TS_REGISTER_KERNEL(max_stub, CPU, &max_kernel);
TS_REGISTER_KERNEL(min_stub, CPU, &min_kernel);
TS_REGISTER_KERNEL(argmax_stub, CPU, &argmax_kernel);
TS_REGISTER_KERNEL(argmin_stub, CPU, &argmin_kernel);

}  // namespace ts

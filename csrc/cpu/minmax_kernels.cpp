// CPU kernels for max, min, argmax and argmin. NaN propagates (NumPy): a NaN anywhere makes
// max/min NaN, and argmax/argmin return the first NaN's index.
#include "cpu/reduce_loops.h"
#include "ops/reduce.h"
#include "kernels/acc_type.h"

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
  static constexpr SimdKind kSimd = SimdKind::Max;
  static A init() { return lowest<A>(); }
  template <class T>
  static A load(T v) {
    return convert<A, T>(v);
  }
  static A combine(A a, A b) { return ((a > b) | is_nan(a)) ? a : b; }
  template <class X>  // X: A or a vector of A (then ?: selects lanewise)
  static X fast(X acc, X v) {
    return v > acc ? v : acc;
  }
};

template <class Acc>
struct MinOp {
  using A = Acc;
  static constexpr SimdKind kSimd = SimdKind::Min;
  static A init() { return highest<A>(); }
  template <class T>
  static A load(T v) {
    return convert<A, T>(v);
  }
  static A combine(A a, A b) { return ((a < b) | is_nan(a)) ? a : b; }
  template <class X>
  static X fast(X acc, X v) {
    return v < acc ? v : acc;
  }
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

// First index of the extremum along one run: extrema of fixed blocks come from the
// vectorized leaf; only the winning block (the first to reach the extremum, or the first
// with a NaN) is scanned for the index.
template <bool IsMax, class T>
int64_t arg_run(const char* q, int64_t n, int64_t s) {
  using Op = std::conditional_t<IsMax, MaxOp<acc_t<T>>, MinOp<acc_t<T>>>;
  using A = typename Op::A;
  constexpr int64_t kBlock = kLeaf;
  A best = A();
  int64_t best_block = -1;
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const A m = leaf<Op, T>(q + b0 * s, std::min(kBlock, n - b0), s);
    if (is_nan(m)) {
      for (int64_t i = b0;; ++i)
        if (is_nan(static_cast<A>(load_at<T>(q, i, s)))) return i;
    }
    if (best_block < 0 || (IsMax ? m > best : m < best)) best = m, best_block = b0;
  }
  for (int64_t i = best_block;; ++i)
    if (static_cast<A>(load_at<T>(q, i, s)) == best) return i;
}

// Long runs: fixed chunks searched in parallel, then the first winning chunk (deterministic).
template <bool IsMax, class T>
int64_t arg_run_chunked(const char* q, int64_t n, int64_t s) {
  if (n <= kChunk) return arg_run<IsMax, T>(q, n, s);
  using A = acc_t<T>;
  const int64_t nc = (n + kChunk - 1) / kChunk;
  std::unique_ptr<int64_t[]> idx(new int64_t[nc]);
  parallel_for(0, nc, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      idx[c] =
          c * kChunk + arg_run<IsMax, T>(q + c * kChunk * s, std::min(kChunk, n - c * kChunk), s);
  });
  int64_t bi = idx[0];
  A best = static_cast<A>(load_at<T>(q, bi, s));
  for (int64_t c = 1; c < nc && !is_nan(best); ++c) {
    const A v = static_cast<A>(load_at<T>(q, idx[c], s));
    if ((IsMax ? v > best : v < best) || is_nan(v)) best = v, bi = idx[c];
  }
  return bi;
}

template <bool IsMax>
void arg_kernel(const ReducePlan& p, DType in, const char* name) {
  visit_dtype<kRealSet | kBoolSet>(in, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_inner_run(p, [&](char* in, int64_t n, int64_t s, char* out) {
      *reinterpret_cast<int64_t*>(out) = arg_run_chunked<IsMax, T>(in, n, s);
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

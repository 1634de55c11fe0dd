// CPU kernel of scatter_reduce (ops/indexing_scatter.h): one serial pass in position order, so
// repeated indices combine in the order PyTorch's CPU kernel combines them.
#include <cmath>
#include <complex>
#include <type_traits>
#include <vector>

#include "kernels/acc_type.h"
#include "ops/indexing_scatter.h"

namespace ts {
namespace {

template <class T>
constexpr bool kIsComplex = std::is_same_v<T, c64> || std::is_same_v<T, c128>;

template <class A>
A combine(A a, A b, ScatterReduceOp r) {
  if constexpr (std::is_integral_v<A>) {  // integers wrap (unsigned arithmetic, no UB)
    using U = std::make_unsigned_t<A>;
    if (r == ScatterReduceOp::Prod) return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
    if (r == ScatterReduceOp::Amax) return b > a ? b : a;
    if (r == ScatterReduceOp::Amin) return b < a ? b : a;
    return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
  } else if constexpr (kIsComplex<A>) {  // sum / mean / prod only (checked by the op)
    return r == ScatterReduceOp::Prod ? a * b : a + b;
  } else {  // NaN wins in amax / amin, as in PyTorch
    if (r == ScatterReduceOp::Prod) return a * b;
    if (r == ScatterReduceOp::Amax) return (std::isnan(b) || b > a) ? b : a;
    if (r == ScatterReduceOp::Amin) return (std::isnan(b) || b < a) ? b : a;
    return a + b;
  }
}

template <class A>
A mean_of(A total, int64_t count) {
  if constexpr (std::is_integral_v<A>) {  // floor division, as PyTorch's integer mean
    const A c = static_cast<A>(count);
    A q = total / c;
    if constexpr (std::is_signed_v<A>)
      if (total % c != 0 && total < 0) --q;
    return q;
  } else if constexpr (kIsComplex<A>) {
    return total / static_cast<typename A::value_type>(count);
  } else {
    return total / static_cast<A>(count);
  }
}

void scatter_reduce_kernel(const Tensor& out, const int64_t* off, const Tensor& src,
                           ScatterReduceOp reduce, bool include_self) {
  visit_dtype<kNumericSet>(out.dtype(), "scatter_reduce", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    T* o = out.data<T>();
    const T* s = src.data<T>();
    const int64_t n = src.numel();
    const bool counting = reduce == ScatterReduceOp::Mean || !include_self;
    std::vector<int64_t> count(counting ? out.numel() : 0, 0);
    for (int64_t p = 0; p < n; ++p) {
      T& dst = o[off[p]];
      const A v = static_cast<A>(s[p]);
      if (!include_self && count[off[p]] == 0)
        dst = static_cast<T>(v);
      else
        dst = static_cast<T>(combine<A>(static_cast<A>(dst), v, reduce));
      if (counting) ++count[off[p]];
    }
    if (reduce != ScatterReduceOp::Mean) return;
    for (int64_t i = 0; i < out.numel(); ++i) {
      const int64_t c = count[i] + (include_self ? 1 : 0);
      if (count[i] > 0 && c > 1) o[i] = static_cast<T>(mean_of<A>(static_cast<A>(o[i]), c));
    }
  });
}

}  // namespace

TS_REGISTER_KERNEL(scatter_reduce_stub, CPU, &scatter_reduce_kernel);

}  // namespace ts

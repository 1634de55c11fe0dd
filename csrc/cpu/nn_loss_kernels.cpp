// CPU kernels of the fused cross entropy (ops/nn_fused.h), forward and backward: one pass
// per row of logits computes the log-sum-exp, the target's term and the label-smoothing
// term together, so no (rows, C) log-probabilities are materialized. The op has checked the
// targets. Rows accumulate in acc_t<T>; float32 rows exponentiate through the vectorized
// fast::exp_f32_array (Note [fast float32 math]).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu/nn_rows.h"
#include "ops/nn_fused.h"
#include "kernels/acc_type.h"

namespace ts {
namespace {

using namespace nn_rows;

// The sum of the class weights (C when unweighted): the smoothing term's weight on lse.
template <class T>
acc_t<T> weight_total(const T* w, int64_t C) {
  using A = acc_t<T>;
  if (!w) return A(C);
  A s = 0;
  for (int64_t c = 0; c < C; ++c) s += A(w[c]);
  return s;
}

template <class T>
void cross_entropy_rows(const Tensor& x, const Tensor& target, const Tensor* w, const Tensor& loss,
                        const Tensor& lse, const Tensor& row_weight, int64_t rows, int64_t C,
                        const CrossEntropyOpts& o) {
  using A = acc_t<T>;
  const T* xp = x.data<T>();
  const int64_t* tp = target.data<int64_t>();
  const T* wp = w ? w->data<T>() : nullptr;
  T *lp = loss.data<T>(), *rwp = row_weight.data<T>();
  A* sp = lse.data<A>();
  const A eps = A(o.label_smoothing), wsum = weight_total(wp, C);
  parallel_for(0, rows, row_grain(C), [&](int64_t lo, int64_t hi) {
    std::vector<A> d(C), e(C);
    for (int64_t r = lo; r < hi; ++r) {
      const T* xr = xp + r * C;
      const A m = lane_reduce<A>(
          C, -std::numeric_limits<A>::infinity(), [&](int64_t c) { return A(xr[c]); }, &max2<A>);
      for (int64_t c = 0; c < C; ++c) d[c] = A(xr[c]) - m;
      exp_row(e.data(), d.data(), C);
      const A sum = lane_reduce<A>(
          C, A(0), [&](int64_t c) { return e[c]; }, &add2<A>);
      const A s = m + std::log(sum);
      sp[r] = s;
      const int64_t t = tp[r];
      if (t == o.ignore_index) {
        lp[r] = T(0);
        rwp[r] = T(0);
        continue;
      }
      const A wt = wp ? A(wp[t]) : A(1);
      A l = wt * (s - A(xr[t]));
      if (eps > 0) {
        // sum_c w_c (lse - x_c) = lse * sum(w) - sum_c w_c x_c
        const A wx = lane_reduce<A>(
            C, A(0), [&](int64_t c) { return wp ? A(wp[c]) * A(xr[c]) : A(xr[c]); }, &add2<A>);
        l = (A(1) - eps) * l + eps / A(C) * (s * wsum - wx);
      }
      lp[r] = T(l);
      rwp[r] = T(wt);
    }
  });
}

// d loss / d x_c = (1 - eps) w_t (p_c - [c == t]) + eps / C (sum(w) p_c - w_c), p = softmax(x).
template <class T>
void cross_entropy_backward_rows(const Tensor& g, const Tensor& x, const Tensor& target,
                                 const Tensor* w, const Tensor& lse, const Tensor& gx, int64_t rows,
                                 int64_t C, const CrossEntropyOpts& o) {
  using A = acc_t<T>;
  const T *gp = g.data<T>(), *xp = x.data<T>();
  const int64_t* tp = target.data<int64_t>();
  const T* wp = w ? w->data<T>() : nullptr;
  const A* sp = lse.data<A>();
  T* op = gx.data<T>();
  const A eps = A(o.label_smoothing), wsum = weight_total(wp, C);
  parallel_for(0, rows, row_grain(C), [&](int64_t lo, int64_t hi) {
    std::vector<A> d(C), e(C);
    for (int64_t r = lo; r < hi; ++r) {
      T* out = op + r * C;
      const int64_t t = tp[r];
      if (t == o.ignore_index) {
        std::fill(out, out + C, T(0));
        continue;
      }
      const T* xr = xp + r * C;
      const A gr = A(gp[r]), s = sp[r];
      const A wt = wp ? A(wp[t]) : A(1);
      const A nll = gr * (A(1) - eps) * wt;  // the target term's factor
      const A sm = gr * eps / A(C);          // the smoothing term's factor
      const A pcoef = nll + sm * wsum;
      for (int64_t c = 0; c < C; ++c) d[c] = A(xr[c]) - s;
      exp_row(e.data(), d.data(), C);
      if (eps > 0)
        for (int64_t c = 0; c < C; ++c) out[c] = T(pcoef * e[c] - sm * (wp ? A(wp[c]) : A(1)));
      else
        for (int64_t c = 0; c < C; ++c) out[c] = T(pcoef * e[c]);
      out[t] = T(pcoef * e[t] - sm * wt - nll);
    }
  });
}

void cpu_cross_entropy(const Tensor& x, const Tensor& target, const Tensor* w, const Tensor& loss,
                       const Tensor& lse, const Tensor& row_weight, int64_t rows, int64_t C,
                       const CrossEntropyOpts& o) {
  visit_dtype<kFloatSet>(x.dtype(), "cross_entropy", [&](auto tag) {
    cross_entropy_rows<typename decltype(tag)::type>(x, target, w, loss, lse, row_weight, rows, C,
                                                     o);
  });
}

void cpu_cross_entropy_backward(const Tensor& g, const Tensor& x, const Tensor& target,
                                const Tensor* w, const Tensor& lse, const Tensor& gx, int64_t rows,
                                int64_t C, const CrossEntropyOpts& o) {
  visit_dtype<kFloatSet>(x.dtype(), "cross_entropy_backward", [&](auto tag) {
    cross_entropy_backward_rows<typename decltype(tag)::type>(g, x, target, w, lse, gx, rows, C, o);
  });
}

}  // namespace

TS_REGISTER_KERNEL(cross_entropy_stub, CPU, &cpu_cross_entropy);
TS_REGISTER_KERNEL(cross_entropy_backward_stub, CPU, &cpu_cross_entropy_backward);

}  // namespace ts

// CPU kernels of the row-wise fused nn ops (ops/nn_fused.h): softmax/log_softmax, attention's
// scaled (causal) softmax and layer norm, forward and backward. One row per task; float32 rows
// exponentiate through the vectorized fast::exp_f32_array (Note [fast float32 math]). Statistics
// accumulate in acc_t<T>, as PyTorch's CPU kernels do.
#pragma GCC optimize("no-trapping-math")  // lets the max selects vectorize (flags unread)
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

// Which keys a row sees, which entries it writes and the factor on its scores: all n unscaled
// for plain softmax; attention rows as AttentionRows says (ops/nn_fused.h).
struct RowGeom {
  double scale = 1;
  int64_t L = 1;
  bool causal = false;
  int64_t block = 0;
  RowGeom() = default;
  explicit RowGeom(const AttentionRows& g)
      : scale(g.scale), L(g.L), causal(g.causal), block(g.block) {}
  int64_t valid(int64_t r, int64_t n) const { return causal ? std::min(n, r % L + 1) : n; }
  int64_t written(int64_t r, int64_t n) const {
    if (!causal || block <= 0) return n;
    return std::min(n, (r % L + block) / block * block);
  }
};

template <class T>
void softmax_rows(const T* x, T* out, int64_t rows, int64_t n, bool log, RowGeom geom) {
  using A = acc_t<T>;
  const A scale = A(geom.scale);
  parallel_for(0, rows, row_grain(n), [&](int64_t lo, int64_t hi) {
    std::vector<A> d(n), e(n);
    for (int64_t r = lo; r < hi; ++r) {
      const T* xr = x + r * n;
      T* yr = out + r * n;
      const int64_t k = geom.valid(r, n);  // the masked tail gets 0 (-inf for log)
      for (int64_t i = 0; i < k; ++i) d[i] = A(xr[i]) * scale;  // * 1 is exact
      const A m = lane_reduce<A>(
          k, -std::numeric_limits<A>::infinity(), [&](int64_t i) { return d[i]; }, &max2<A>);
      // No guard for infinite maxima: inf - inf = NaN makes a row of -inf, or one holding
      // +inf, all NaN, as in PyTorch.
      for (int64_t i = 0; i < k; ++i) d[i] -= m;
      exp_row(e.data(), d.data(), k);
      const A sum = lane_reduce<A>(
          k, A(0), [&](int64_t i) { return e[i]; }, &add2<A>);
      if (log) {
        const A lse = std::log(sum);
        for (int64_t i = 0; i < k; ++i) yr[i] = T(d[i] - lse);
      } else {
        const A inv = A(1) / sum;
        for (int64_t i = 0; i < k; ++i) yr[i] = T(e[i] * inv);
      }
      const T fill = log ? T(-std::numeric_limits<A>::infinity()) : T(0);
      for (int64_t i = k, w = geom.written(r, n); i < w; ++i) yr[i] = fill;
    }
  });
}

template <class T>
void softmax_backward_rows(const T* y, const T* gy, T* gx, int64_t rows, int64_t n, bool log,
                           RowGeom geom = {}) {
  using A = acc_t<T>;
  const A scale = A(geom.scale);
  parallel_for(0, rows, row_grain(n), [&](int64_t lo, int64_t hi) {
    std::vector<A> d(n), e(n);
    for (int64_t r = lo; r < hi; ++r) {
      const T *yr = y + r * n, *gr = gy + r * n;
      T* out = gx + r * n;
      A s = 0;
      if (log) {  // gx = gy - exp(y) * sum(gy)
        s = lane_reduce<A>(
            n, A(0), [&](int64_t i) { return A(gr[i]); }, &add2<A>);
        for (int64_t i = 0; i < n; ++i) d[i] = A(yr[i]);
        exp_row(e.data(), d.data(), n);
        for (int64_t i = 0; i < n; ++i) out[i] = T(A(gr[i]) - e[i] * s);
      } else {  // gx = scale * y * (gy - sum(gy * y)) over the visible keys, 0 past them
        const int64_t k = geom.valid(r, n);
        s = lane_reduce<A>(
            k, A(0), [&](int64_t i) { return A(gr[i]) * A(yr[i]); }, &add2<A>);
        for (int64_t i = 0; i < k; ++i) out[i] = T(scale * A(yr[i]) * (A(gr[i]) - s));
        for (int64_t i = k, w = geom.written(r, n); i < w; ++i) out[i] = T(0);
      }
    }
  });
}

void cpu_softmax(const Tensor& x, const Tensor& out, int64_t rows, int64_t n, bool log) {
  visit_dtype<kFloatSet>(x.dtype(), "softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmax_rows<T>(x.data<T>(), out.data<T>(), rows, n, log, RowGeom());
  });
}

void cpu_attention_softmax(const Tensor& x, const Tensor& out, int64_t rows, int64_t n,
                           const AttentionRows& geom) {
  visit_dtype<kFloatSet>(x.dtype(), "attention_softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmax_rows<T>(x.data<T>(), out.data<T>(), rows, n, false, RowGeom(geom));
  });
}

void cpu_attention_softmax_backward(const Tensor& y, const Tensor& gy, const Tensor& gx,
                                    int64_t rows, int64_t n, const AttentionRows& geom) {
  visit_dtype<kFloatSet>(y.dtype(), "attention_softmax_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmax_backward_rows<T>(y.data<T>(), gy.data<T>(), gx.data<T>(), rows, n, false,
                             RowGeom(geom));
  });
}

void cpu_softmax_backward(const Tensor& y, const Tensor& gy, const Tensor& gx, int64_t rows,
                          int64_t n, bool log) {
  visit_dtype<kFloatSet>(y.dtype(), "softmax_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmax_backward_rows<T>(y.data<T>(), gy.data<T>(), gx.data<T>(), rows, n, log);
  });
}

// ---------------------------------------------------------------- layer norm
template <class T>
void layer_norm_rows(const Tensor& x, const Tensor* w, const Tensor* b, double eps, const Tensor& y,
                     const Tensor& mean, const Tensor& rstd, int64_t rows, int64_t n) {
  using A = acc_t<T>;
  const T* xp = x.data<T>();
  const T* wp = w ? w->data<T>() : nullptr;
  const T* bp = b ? b->data<T>() : nullptr;
  T* yp = y.data<T>();
  A* mp = mean.data<A>();
  A* rp = rstd.data<A>();
  parallel_for(0, rows, row_grain(n), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const T* xr = xp + r * n;
      // Two passes: the centred sum of squares does not cancel catastrophically.
      const A mu = lane_reduce<A>(
                       n, A(0), [&](int64_t i) { return A(xr[i]); }, &add2<A>) /
                   A(n);
      const A ss = lane_reduce<A>(
          n, A(0),
          [&](int64_t i) {
            const A d = A(xr[i]) - mu;
            return d * d;
          },
          &add2<A>);
      const A rs = A(1) / std::sqrt(ss / A(n) + A(eps));
      mp[r] = mu;
      rp[r] = rs;
      T* yr = yp + r * n;
      if (wp && bp)
        for (int64_t i = 0; i < n; ++i) yr[i] = T((A(xr[i]) - mu) * rs * A(wp[i]) + A(bp[i]));
      else
        for (int64_t i = 0; i < n; ++i) {
          A v = (A(xr[i]) - mu) * rs;
          if (wp) v = v * A(wp[i]);
          if (bp) v = v + A(bp[i]);
          yr[i] = T(v);
        }
    }
  });
}

template <class T>
void layer_norm_backward_rows(const Tensor& gy, const Tensor& x, const Tensor& mean,
                              const Tensor& rstd, const Tensor* w, const Tensor& gx,
                              const Tensor* gw, const Tensor* gb, int64_t rows, int64_t n) {
  using A = acc_t<T>;
  const T *gp = gy.data<T>(), *xp = x.data<T>();
  const T* wp = w ? w->data<T>() : nullptr;
  const A *mp = mean.data<A>(), *rp = rstd.data<A>();
  T* gxp = gx.data<T>();
  // gx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = gy * w.
  parallel_for(0, rows, row_grain(n), [&](int64_t lo, int64_t hi) {
    std::vector<A> g(n), xh(n);
    for (int64_t r = lo; r < hi; ++r) {
      const T *gr = gp + r * n, *xr = xp + r * n;
      const A mu = mp[r], rs = rp[r];
      for (int64_t i = 0; i < n; ++i) {
        xh[i] = (A(xr[i]) - mu) * rs;
        g[i] = wp ? A(gr[i]) * A(wp[i]) : A(gr[i]);
      }
      const A sg = lane_reduce<A>(
          n, A(0), [&](int64_t i) { return g[i]; }, &add2<A>);
      const A sgx = lane_reduce<A>(
          n, A(0), [&](int64_t i) { return g[i] * xh[i]; }, &add2<A>);
      const A mg = sg / A(n), mgx = sgx / A(n);
      T* out = gxp + r * n;
      for (int64_t i = 0; i < n; ++i) out[i] = T(rs * (g[i] - mg - xh[i] * mgx));
    }
  });
  if (!gw && !gb) return;
  // Column sums over rows, a block of columns per task (fixed order: deterministic).
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  parallel_for(0, blocks, 1, [&](int64_t blo, int64_t bhi) {
    std::vector<A> sw(kBlock), sb(kBlock);
    for (int64_t bk = blo; bk < bhi; ++bk) {
      const int64_t c0 = bk * kBlock, c1 = std::min(n, c0 + kBlock);
      std::fill(sw.begin(), sw.end(), A(0));
      std::fill(sb.begin(), sb.end(), A(0));
      for (int64_t r = 0; r < rows; ++r) {
        const T *gr = gp + r * n, *xr = xp + r * n;
        const A mu = mp[r], rs = rp[r];
        for (int64_t c = c0; c < c1; ++c) {
          sw[c - c0] += A(gr[c]) * ((A(xr[c]) - mu) * rs);
          sb[c - c0] += A(gr[c]);
        }
      }
      for (int64_t c = c0; c < c1; ++c) {
        if (gw) gw->data<T>()[c] = T(sw[c - c0]);
        if (gb) gb->data<T>()[c] = T(sb[c - c0]);
      }
    }
  });
}

void cpu_layer_norm(const Tensor& x, const Tensor* w, const Tensor* b, double eps, const Tensor& y,
                    const Tensor& mean, const Tensor& rstd, int64_t rows, int64_t n) {
  visit_dtype<kFloatSet>(x.dtype(), "layer_norm", [&](auto tag) {
    layer_norm_rows<typename decltype(tag)::type>(x, w, b, eps, y, mean, rstd, rows, n);
  });
}

void cpu_layer_norm_backward(const Tensor& gy, const Tensor& x, const Tensor& mean,
                             const Tensor& rstd, const Tensor* w, const Tensor& gx,
                             const Tensor* gw, const Tensor* gb, int64_t rows, int64_t n) {
  visit_dtype<kFloatSet>(x.dtype(), "layer_norm_backward", [&](auto tag) {
    layer_norm_backward_rows<typename decltype(tag)::type>(gy, x, mean, rstd, w, gx, gw, gb, rows,
                                                           n);
  });
}

}  // namespace

TS_REGISTER_KERNEL(softmax_stub, CPU, &cpu_softmax);
TS_REGISTER_KERNEL(softmax_backward_stub, CPU, &cpu_softmax_backward);
TS_REGISTER_KERNEL(attention_softmax_stub, CPU, &cpu_attention_softmax);
TS_REGISTER_KERNEL(attention_softmax_backward_stub, CPU, &cpu_attention_softmax_backward);
TS_REGISTER_KERNEL(layer_norm_stub, CPU, &cpu_layer_norm);
TS_REGISTER_KERNEL(layer_norm_backward_stub, CPU, &cpu_layer_norm_backward);

}  // namespace ts

// CPU kernels of N-d max/average pooling (ops/pool.h), one (n, c) plane per task (planes
// never share output). Every geometry runs as 3-D (1-D/2-D specs have size-1 leading dims).
#pragma GCC optimize("no-trapping-math")
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "ops/nn/fractional_pool.h"
#include "ops/pool.h"
#include "kernels/window_math.h"
#include "kernels/acc_type.h"

namespace ts {
namespace {

// The window of output position o along one dim: taps [lo, hi) step d in input coordinates
// (clipped to the input), and the padded-input extent for the average's divisor.
struct Span {
  int64_t lo, hi, pad_len;
};
inline Span span_of(int64_t o, int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) {
  const int64_t start = o * s - p, reach = (k - 1) * d + 1;
  // before clipping, for count_include_pad
  const int64_t pad_len = window_end(start, reach, n + p) - start;
  return {window_first_tap(start, d), window_end(start, reach, n), pad_len};
}
// Dim i's window for output position o: PyTorch's adaptive window, or the strided one.
inline Span window(const PoolSpec& s, int i, int64_t o, int64_t d) {
  if (s.adaptive) {
    const int64_t n = s.in[i], m = s.out[i];
    const int64_t lo = (o * n) / m, hi = ((o + 1) * n + m - 1) / m;
    return {lo, hi, hi - lo};
  }
  return span_of(o, s.in[i], s.k[i], s.s[i], s.p[i], d);
}
inline int64_t taps(const Span& sp, int64_t d) {
  return sp.hi > sp.lo ? (sp.hi - sp.lo + d - 1) / d : 0;
}

inline int64_t plane_grain(int64_t work) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work, 1));
}

template <class T>
void max_any(const Tensor& x, const Tensor& y, const Tensor& idx, const PoolSpec& s) {
  using A = acc_t<T>;
  const int64_t I = s.in_numel(), L = s.out_numel(), P = L ? y.numel() / L : 0;
  const int64_t H = s.in[1], W = s.in[2];
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  int64_t* ip = idx.data<int64_t>();
  parallel_for(0, P, plane_grain(I + L), [&](int64_t lo, int64_t hi) {
    for (int64_t pl = lo; pl < hi; ++pl) {
      const T* xs = xp + pl * I;
      T* ys = yp + pl * L;
      int64_t* is = ip + pl * L;
      int64_t o = 0;
      for (int64_t od = 0; od < s.out[0]; ++od) {
        const Span a = window(s, 0, od, s.d[0]);
        for (int64_t oh = 0; oh < s.out[1]; ++oh) {
          const Span b = window(s, 1, oh, s.d[1]);
          for (int64_t ow = 0; ow < s.out[2]; ++ow, ++o) {
            const Span c = window(s, 2, ow, s.d[2]);
            A best = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                          : std::numeric_limits<A>::lowest();
            int64_t at = (a.lo * H + b.lo) * W + c.lo;
            for (int64_t id = a.lo; id < a.hi; id += s.d[0])
              for (int64_t ih = b.lo; ih < b.hi; ih += s.d[1]) {
                const int64_t row = (id * H + ih) * W;
                for (int64_t iw = c.lo; iw < c.hi; iw += s.d[2]) {
                  const A v = A(xs[row + iw]);
                  if (v > best || v != v) {  // PyTorch's rule: the last NaN wins
                    best = v;
                    at = row + iw;
                  }
                }
              }
            ys[o] = T(best);
            is[o] = at;
          }
        }
      }
    }
  });
}

template <class T>
void max_backward_any(const Tensor& gy, const Tensor& idx, const Tensor& gx, const PoolSpec& s) {
  const int64_t I = s.in_numel(), L = s.out_numel(), P = L ? gy.numel() / L : 0;
  const T* gp = gy.data<T>();
  const int64_t* ip = idx.data<int64_t>();
  T* xp = gx.data<T>();
  parallel_for(0, P, plane_grain(I + L), [&](int64_t lo, int64_t hi) {
    for (int64_t pl = lo; pl < hi; ++pl) {
      T* xs = xp + pl * I;
      std::fill(xs, xs + I, T(0));
      for (int64_t i = 0; i < L; ++i) {
        T& d = xs[ip[pl * L + i]];
        d = T(acc_t<T>(d) + acc_t<T>(gp[pl * L + i]));
      }
    }
  });
}

// The divisor of one window.
// In floating point: the product of three window extents of a hostile kernel size can pass
// int64 (and the division is in floating point anyway).
template <class A>
inline A divisor_of(const PoolSpec& s, const Span& a, const Span& b, const Span& c) {
  if (s.divisor) return A(s.divisor);
  if (s.count_include_pad) return A(a.pad_len) * A(b.pad_len) * A(c.pad_len);
  return A(taps(a, 1)) * A(taps(b, 1)) * A(taps(c, 1));
}

// Calls f(o, a, b, c) for each output o of a plane with its windows.
template <class F>
inline void for_each_window(const PoolSpec& s, const F& f) {
  int64_t o = 0;
  for (int64_t od = 0; od < s.out[0]; ++od) {
    const Span a = window(s, 0, od, 1);
    for (int64_t oh = 0; oh < s.out[1]; ++oh) {
      const Span b = window(s, 1, oh, 1);
      for (int64_t ow = 0; ow < s.out[2]; ++ow, ++o) f(o, a, b, window(s, 2, ow, 1));
    }
  }
}

// The sum of f(x) over a window (dilation 1) of the plane xs.
template <class A, class T, class F>
inline A window_sum(const T* xs, const PoolSpec& s, const Span& a, const Span& b, const Span& c,
                    const F& f) {
  const int64_t H = s.in[1], W = s.in[2];
  A sum = 0;
  for (int64_t id = a.lo; id < a.hi; ++id)
    for (int64_t ih = b.lo; ih < b.hi; ++ih) {
      const T* r = xs + (id * H + ih) * W;
      for (int64_t iw = c.lo; iw < c.hi; ++iw) sum += f(A(r[iw]));
    }
  return sum;
}

// acc[i] += v over a window (dilation 1) of the plane.
template <class A>
inline void spread(A* acc, const PoolSpec& s, const Span& a, const Span& b, const Span& c, A v) {
  const int64_t H = s.in[1], W = s.in[2];
  for (int64_t id = a.lo; id < a.hi; ++id)
    for (int64_t ih = b.lo; ih < b.hi; ++ih) {
      A* r = acc + (id * H + ih) * W;
      for (int64_t iw = c.lo; iw < c.hi; ++iw) r[iw] += v;
    }
}

template <class T>
void avg_any(const Tensor& x, const Tensor& y, const PoolSpec& s) {
  using A = acc_t<T>;
  const int64_t I = s.in_numel(), L = s.out_numel(), P = L ? y.numel() / L : 0;
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  parallel_for(0, P, plane_grain(I + L), [&](int64_t lo, int64_t hi) {
    for (int64_t pl = lo; pl < hi; ++pl) {
      const T* xs = xp + pl * I;
      T* ys = yp + pl * L;
      for_each_window(s, [&](int64_t o, const Span& a, const Span& b, const Span& c) {
        const A sum = window_sum<A>(xs, s, a, b, c, [](A v) { return v; });
        const A div = divisor_of<A>(s, a, b, c);
        ys[o] = T(div != A(0) ? sum / div : A(0) / A(0));
      });
    }
  });
}

template <class T>
void avg_backward_any(const Tensor& gy, const Tensor& gx, const PoolSpec& s) {
  using A = acc_t<T>;
  const int64_t I = s.in_numel(), L = s.out_numel(), P = L ? gy.numel() / L : 0;
  const T* gp = gy.data<T>();
  T* xp = gx.data<T>();
  parallel_for(0, P, plane_grain(I + L), [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(I);
    for (int64_t pl = lo; pl < hi; ++pl) {
      std::fill(acc.begin(), acc.end(), A(0));
      const T* gs = gp + pl * L;
      for_each_window(s, [&](int64_t o, const Span& a, const Span& b, const Span& c) {
        const A div = divisor_of<A>(s, a, b, c);
        spread(acc.data(), s, a, b, c, div != A(0) ? A(gs[o]) / div : A(0));
      });
      T* xs = xp + pl * I;
      for (int64_t i = 0; i < I; ++i) xs[i] = T(acc[i]);
    }
  });
}

// ---- max_unpool: values copied by size (any dtype)
template <int kBytes>
struct Bytes {
  unsigned char b[kBytes];
};

template <class V>
bool unpool_any(const Tensor& x, const Tensor& idx, const Tensor& y, int64_t* first_bad) {
  const int64_t P = x.dim(0) * x.dim(1);
  const int64_t L = P ? x.numel() / P : 0, M = P ? y.numel() / P : 0;
  const V* xp = x.data<const V>();
  const int64_t* ip = idx.data<int64_t>();
  V* yp = y.data<V>();
  std::atomic<bool> found{false};
  std::atomic<int64_t> bad{0};
  parallel_for(0, P, plane_grain(L + M), [&](int64_t lo, int64_t hi) {
    for (int64_t pl = lo; pl < hi; ++pl) {
      V* ys = yp + pl * M;
      std::memset(static_cast<void*>(ys), 0, M * sizeof(V));
      const V* xs = xp + pl * L;
      const int64_t* is = ip + pl * L;
      for (int64_t l = 0; l < L; ++l) {
        const int64_t at = is[l];
        if (at < 0 || at >= M) {  // never written through; reported after the loop
          if (!found.exchange(true)) bad.store(at);
          continue;
        }
        ys[at] = xs[l];
      }
    }
  });
  if (!found.load()) return true;
  *first_bad = bad.load();
  return false;
}

bool cpu_unpool(const Tensor& x, const Tensor& idx, const Tensor& y, int64_t* first_bad) {
  switch (x.itemsize()) {
    case 1: return unpool_any<Bytes<1>>(x, idx, y, first_bad);
    case 2: return unpool_any<Bytes<2>>(x, idx, y, first_bad);
    case 4: return unpool_any<Bytes<4>>(x, idx, y, first_bad);
    case 8: return unpool_any<Bytes<8>>(x, idx, y, first_bad);
    default: return unpool_any<Bytes<16>>(x, idx, y, first_bad);
  }
}

template <class V>
void unpool_gather_any(const Tensor& gy, const Tensor& idx, const Tensor& gx) {
  const int64_t P = gx.dim(0) * gx.dim(1);
  const int64_t L = P ? gx.numel() / P : 0, M = P ? gy.numel() / P : 0;
  const V* gp = gy.data<const V>();
  const int64_t* ip = idx.data<int64_t>();
  V* xp = gx.data<V>();
  parallel_for(0, P, plane_grain(2 * L), [&](int64_t lo, int64_t hi) {
    for (int64_t pl = lo; pl < hi; ++pl)
      for (int64_t l = 0; l < L; ++l) {
        const int64_t at = ip[pl * L + l];
        // checked when the unpooling ran; a zero rather than a read out of bounds regardless
        xp[pl * L + l] = at >= 0 && at < M ? gp[pl * M + at] : V{};
      }
  });
}

void cpu_unpool_gather(const Tensor& gy, const Tensor& idx, const Tensor& gx) {
  switch (gy.itemsize()) {
    case 1: return unpool_gather_any<Bytes<1>>(gy, idx, gx);
    case 2: return unpool_gather_any<Bytes<2>>(gy, idx, gx);
    case 4: return unpool_gather_any<Bytes<4>>(gy, idx, gx);
    case 8: return unpool_gather_any<Bytes<8>>(gy, idx, gx);
    default: return unpool_gather_any<Bytes<16>>(gy, idx, gx);
  }
}

// ---- LP pooling (no padding or dilation: PoolSpec p = 0, d = 1)
template <class A>
inline A pow_p(A v, A p) {
  if (p == A(2)) return v * v;
  if (p == A(1)) return v;
  return std::pow(v, p);
}

// The window's value before the root: K / n * sum x^p (PyTorch's avg_pool(x^p) * K; +0 for
// a zero, as its sign(out) * relu(|out|)).
template <class T, class A>
inline A lp_window(const T* xs, const PoolSpec& s, const Span& a, const Span& b, const Span& c,
                   A p, A K) {
  const A sum = window_sum<A>(xs, s, a, b, c, [p](A v) { return pow_p(v, p); });
  const A out = sum / divisor_of<A>(s, a, b, c) * K;
  return out == A(0) ? A(0) : out;
}

template <class T>
void lp_any(const Tensor& x, const Tensor& y, const PoolSpec& s, double pd) {
  using A = acc_t<T>;
  const int64_t I = s.in_numel(), L = s.out_numel(), P = L ? y.numel() / L : 0;
  const A p = A(pd), r = A(1.0 / pd), K = A(s.k[0] * s.k[1] * s.k[2]);
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  parallel_for(0, P, plane_grain(I + L), [&](int64_t lo, int64_t hi) {
    for (int64_t pl = lo; pl < hi; ++pl) {
      const T* xs = xp + pl * I;
      T* ys = yp + pl * L;
      for_each_window(s, [&](int64_t o, const Span& a, const Span& b, const Span& c) {
        ys[o] = T(std::pow(lp_window<T, A>(xs, s, a, b, c, p, K), r));
      });
    }
  });
}

// gx_i = p x_i^(p-1) sum over windows w holding i of gy_w (1/p) out_w^(1/p - 1) K / n_w,
// the window's term 0 where out_w == 0 (PyTorch's chain through pow, relu, avg_pool, pow).
template <class T>
void lp_backward_any(const Tensor& gy, const Tensor& x, const Tensor& gx, const PoolSpec& s,
                     double pd) {
  using A = acc_t<T>;
  const int64_t I = s.in_numel(), L = s.out_numel(), P = L ? gy.numel() / L : 0;
  const A p = A(pd), r = A(1.0 / pd), K = A(s.k[0] * s.k[1] * s.k[2]);
  const T* gp = gy.data<T>();
  const T* xp = x.data<T>();
  T* op = gx.data<T>();
  parallel_for(0, P, plane_grain(2 * I + L), [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(I);
    for (int64_t pl = lo; pl < hi; ++pl) {
      std::fill(acc.begin(), acc.end(), A(0));
      const T* xs = xp + pl * I;
      const T* gs = gp + pl * L;
      for_each_window(s, [&](int64_t o, const Span& a, const Span& b, const Span& c) {
        const A out = lp_window<T, A>(xs, s, a, b, c, p, K);
        if (out == A(0)) return;
        spread(acc.data(), s, a, b, c,
               A(gs[o]) * r * std::pow(out, r - A(1)) * K / divisor_of<A>(s, a, b, c));
      });
      T* os = op + pl * I;
      for (int64_t i = 0; i < I; ++i) {
        const A xv = A(xs[i]);
        const A d = p == A(1) ? A(1) : p == A(2) ? xv : std::pow(xv, p - A(1));
        os[i] = T(acc[i] * p * d);
      }
    }
  });
}

void cpu_lp(const Tensor& x, const Tensor& y, const PoolSpec& s, double p) {
  visit_dtype<kFloatSet>(x.dtype(), "lp_pool", [&](auto tag) {
    lp_any<typename decltype(tag)::type>(x, y, s, p);
  });
}
void cpu_lp_backward(const Tensor& gy, const Tensor& x, const Tensor& gx, const PoolSpec& s,
                     double p) {
  visit_dtype<kFloatSet>(x.dtype(), "lp_pool_backward", [&](auto tag) {
    lp_backward_any<typename decltype(tag)::type>(gy, x, gx, s, p);
  });
}

void cpu_max(const Tensor& x, const Tensor& y, const Tensor& idx, const PoolSpec& s) {
  visit_dtype<kRealSet>(x.dtype(), "max_pool", [&](auto tag) {  // integers too, as PyTorch
    max_any<typename decltype(tag)::type>(x, y, idx, s);
  });
}
void cpu_max_backward(const Tensor& gy, const Tensor& idx, const Tensor& gx, const PoolSpec& s) {
  visit_dtype<kFloatSet>(gy.dtype(), "max_pool_backward", [&](auto tag) {
    max_backward_any<typename decltype(tag)::type>(gy, idx, gx, s);
  });
}
void cpu_avg(const Tensor& x, const Tensor& y, const PoolSpec& s) {
  visit_dtype<kFloatSet>(x.dtype(), "avg_pool", [&](auto tag) {
    avg_any<typename decltype(tag)::type>(x, y, s);
  });
}
void cpu_avg_backward(const Tensor& gy, const Tensor& gx, const PoolSpec& s) {
  visit_dtype<kFloatSet>(gy.dtype(), "avg_pool_backward", [&](auto tag) {
    avg_backward_any<typename decltype(tag)::type>(gy, gx, s);
  });
}

// fractional max pooling's window maxima (ops/nn/fractional_pool.h), plane by plane.
template <class T>
void fractional_max_index(const Tensor& x, const Tensor& ind, const nn::FractionalWindows& w) {
  using A = acc_t<T>;
  const T* xp = x.data<T>();
  int64_t* ip = ind.data<int64_t>();
  const int64_t plane = w.in[0] * w.in[1] * w.in[2], per_plane = w.out[0] + w.out[1] + w.out[2];
  const int64_t npos = w.out[0] * w.out[1] * w.out[2];
  const int64_t work = std::max<int64_t>(1, npos * w.k[0] * w.k[1] * w.k[2]);
  parallel_for(0, w.planes, std::max<int64_t>(1, kGrainSize / work), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const T* base = xp + p * plane;
      const int64_t* s0 = w.starts.data() + p * per_plane;
      const int64_t *s1 = s0 + w.out[0], *s2 = s1 + w.out[1];
      int64_t* dst = ip + p * npos;
      for (int64_t a = 0; a < w.out[0]; ++a)
        for (int64_t b = 0; b < w.out[1]; ++b)
          for (int64_t e = 0; e < w.out[2]; ++e) {
            // PyTorch's loop: the first maximum wins, a NaN replaces whatever came before
            int64_t best = (s0[a] * w.in[1] + s1[b]) * w.in[2] + s2[e];
            A m = -std::numeric_limits<A>::infinity();
            for (int64_t i = 0; i < w.k[0]; ++i)
              for (int64_t j = 0; j < w.k[1]; ++j) {
                const int64_t row = ((s0[a] + i) * w.in[1] + s1[b] + j) * w.in[2] + s2[e];
                for (int64_t l = 0; l < w.k[2]; ++l) {
                  const A v = A(base[row + l]);
                  if (v > m || v != v) {
                    m = v;
                    best = row + l;
                  }
                }
              }
            *dst++ = best;
          }
    }
  });
}

void cpu_fractional_max_index(const Tensor& x, const Tensor& ind,
                              const nn::FractionalWindows& w) {
  visit_dtype<kFloatSet>(x.dtype(), "fractional_max_pool", [&](auto tag) {
    fractional_max_index<typename decltype(tag)::type>(x, ind, w);
  });
}

}  // namespace

TS_REGISTER_KERNEL(max_pool_nd_stub, CPU, &cpu_max);
TS_REGISTER_KERNEL(max_pool_nd_backward_stub, CPU, &cpu_max_backward);
TS_REGISTER_KERNEL(avg_pool_nd_stub, CPU, &cpu_avg);
TS_REGISTER_KERNEL(avg_pool_nd_backward_stub, CPU, &cpu_avg_backward);
TS_REGISTER_KERNEL(max_unpool_stub, CPU, &cpu_unpool);
TS_REGISTER_KERNEL(max_unpool_gather_stub, CPU, &cpu_unpool_gather);
TS_REGISTER_KERNEL(lp_pool_stub, CPU, &cpu_lp);
TS_REGISTER_KERNEL(lp_pool_backward_stub, CPU, &cpu_lp_backward);

namespace nn {
TS_REGISTER_KERNEL(fractional_max_index_stub, CPU, &cpu_fractional_max_index);
}  // namespace nn

}  // namespace ts

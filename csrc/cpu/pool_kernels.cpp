// CPU kernels of N-d max/average pooling (ops/pool.h), one (n, c) plane per task (planes
// never share output). Every geometry runs as 3-D (1-D/2-D specs have size-1 leading dims).
#pragma GCC optimize("no-trapping-math")
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "ops/pool.h"
#include "ops/window_math.h"

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
            A best = -std::numeric_limits<A>::infinity();
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

template <class T>
void avg_any(const Tensor& x, const Tensor& y, const PoolSpec& s) {
  using A = acc_t<T>;
  const int64_t I = s.in_numel(), L = s.out_numel(), P = L ? y.numel() / L : 0;
  const int64_t H = s.in[1], W = s.in[2];
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  parallel_for(0, P, plane_grain(I + L), [&](int64_t lo, int64_t hi) {
    for (int64_t pl = lo; pl < hi; ++pl) {
      const T* xs = xp + pl * I;
      T* ys = yp + pl * L;
      int64_t o = 0;
      for (int64_t od = 0; od < s.out[0]; ++od) {
        const Span a = window(s, 0, od, 1);
        for (int64_t oh = 0; oh < s.out[1]; ++oh) {
          const Span b = window(s, 1, oh, 1);
          for (int64_t ow = 0; ow < s.out[2]; ++ow, ++o) {
            const Span c = window(s, 2, ow, 1);
            A sum = 0;
            for (int64_t id = a.lo; id < a.hi; ++id)
              for (int64_t ih = b.lo; ih < b.hi; ++ih) {
                const T* r = xs + (id * H + ih) * W;
                for (int64_t iw = c.lo; iw < c.hi; ++iw) sum += A(r[iw]);
              }
            const A div = divisor_of<A>(s, a, b, c);
            ys[o] = T(div != A(0) ? sum / div : A(0) / A(0));
          }
        }
      }
    }
  });
}

template <class T>
void avg_backward_any(const Tensor& gy, const Tensor& gx, const PoolSpec& s) {
  using A = acc_t<T>;
  const int64_t I = s.in_numel(), L = s.out_numel(), P = L ? gy.numel() / L : 0;
  const int64_t H = s.in[1], W = s.in[2];
  const T* gp = gy.data<T>();
  T* xp = gx.data<T>();
  parallel_for(0, P, plane_grain(I + L), [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(I);
    for (int64_t pl = lo; pl < hi; ++pl) {
      std::fill(acc.begin(), acc.end(), A(0));
      const T* gs = gp + pl * L;
      int64_t o = 0;
      for (int64_t od = 0; od < s.out[0]; ++od) {
        const Span a = window(s, 0, od, 1);
        for (int64_t oh = 0; oh < s.out[1]; ++oh) {
          const Span b = window(s, 1, oh, 1);
          for (int64_t ow = 0; ow < s.out[2]; ++ow, ++o) {
            const Span c = window(s, 2, ow, 1);
            const A div = divisor_of<A>(s, a, b, c);
            const A v = div != A(0) ? A(gs[o]) / div : A(0);
            for (int64_t id = a.lo; id < a.hi; ++id)
              for (int64_t ih = b.lo; ih < b.hi; ++ih) {
                A* r = acc.data() + (id * H + ih) * W;
                for (int64_t iw = c.lo; iw < c.hi; ++iw) r[iw] += v;
              }
          }
        }
      }
      T* xs = xp + pl * I;
      for (int64_t i = 0; i < I; ++i) xs[i] = T(acc[i]);
    }
  });
}

void cpu_max(const Tensor& x, const Tensor& y, const Tensor& idx, const PoolSpec& s) {
  visit_dtype<kFloatSet>(x.dtype(), "max_pool", [&](auto tag) {
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

}  // namespace

TS_REGISTER_KERNEL(max_pool_nd_stub, CPU, &cpu_max);
TS_REGISTER_KERNEL(max_pool_nd_backward_stub, CPU, &cpu_max_backward);
TS_REGISTER_KERNEL(avg_pool_nd_stub, CPU, &cpu_avg);
TS_REGISTER_KERNEL(avg_pool_nd_backward_stub, CPU, &cpu_avg_backward);

}  // namespace ts

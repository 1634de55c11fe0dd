// CPU kernels of the sliding-window ops (ops/nn_fused.h): im2col/col2im for convolution
// (zero padding done on the fly, no padded copy) and max pooling with PyTorch's flat
// per-plane indices. One (n, c) plane per task: planes never share output, so no atomics.
// no-trapping-math lets GCC turn max pooling's float selects into blends (we never read the
// floating-point exception flags, so no result changes).
#pragma GCC optimize("no-trapping-math")
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu/blas.h"
#include "core/parallel.h"
#include "ops/nn_fused.h"
#include "kernels/window_math.h"
#include "kernels/acc_type.h"

namespace ts {
namespace {

// The output columns [lo, hi) whose input column o * s - p + k * d lies in [0, n).
inline void valid_range(int64_t n_out, int64_t n_in, int64_t s, int64_t p, int64_t off, int64_t* lo,
                        int64_t* hi) {
  // o * s + (off - p) in [0, n_in)  <=>  o in [ceil((p - off) / s), ceil((n_in + p - off) / s))
  auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  *lo = std::clamp<int64_t>(ceil_div(p - off, s), 0, n_out);
  *hi = std::clamp<int64_t>(ceil_div(n_in + p - off, s), *lo, n_out);
}

template <class T>
void im2col_plane(const T* x, T* cols, int64_t H, int64_t W, int64_t Ho, int64_t Wo,
                  const Window2d& w, int64_t L) {
  for (int64_t ki = 0; ki < w.kh; ++ki)
    for (int64_t kj = 0; kj < w.kw; ++kj) {
      T* dst = cols + (ki * w.kw + kj) * L;
      int64_t olo, ohi, wlo, whi;
      valid_range(Ho, H, w.sh, w.ph, ki * w.dh, &olo, &ohi);
      valid_range(Wo, W, w.sw, w.pw, kj * w.dw, &wlo, &whi);
      for (int64_t oh = 0; oh < Ho; ++oh) {
        T* d = dst + oh * Wo;
        if (oh < olo || oh >= ohi) {
          std::fill(d, d + Wo, T(0));
          continue;
        }
        const T* src = x + (oh * w.sh - w.ph + ki * w.dh) * W + (kj * w.dw - w.pw);
        std::fill(d, d + wlo, T(0));
        if (w.sw == 1)
          std::memcpy(d + wlo, src + wlo, (whi - wlo) * sizeof(T));
        else
          for (int64_t ow = wlo; ow < whi; ++ow) d[ow] = src[ow * w.sw];
        std::fill(d + whi, d + Wo, T(0));
      }
    }
}

template <class T>
void col2im_plane(const T* cols, T* x, int64_t H, int64_t W, int64_t Ho, int64_t Wo,
                  const Window2d& w, int64_t L, acc_t<T>* acc) {
  using A = acc_t<T>;
  std::fill(acc, acc + H * W, A(0));
  for (int64_t ki = 0; ki < w.kh; ++ki)
    for (int64_t kj = 0; kj < w.kw; ++kj) {
      const T* src = cols + (ki * w.kw + kj) * L;
      int64_t olo, ohi, wlo, whi;
      valid_range(Ho, H, w.sh, w.ph, ki * w.dh, &olo, &ohi);
      valid_range(Wo, W, w.sw, w.pw, kj * w.dw, &wlo, &whi);
      for (int64_t oh = olo; oh < ohi; ++oh) {
        A* d = acc + (oh * w.sh - w.ph + ki * w.dh) * W + (kj * w.dw - w.pw);
        const T* s = src + oh * Wo;
        for (int64_t ow = wlo; ow < whi; ++ow) d[ow * w.sw] += A(s[ow]);
      }
    }
  for (int64_t i = 0; i < H * W; ++i) x[i] = T(acc[i]);
}

template <class T>
void im2col_any(const Tensor& x, const Tensor& cols, const Window2d& w) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t Ho = w.out_h(H), Wo = w.out_w(W), L = Ho * Wo, K = w.kh * w.kw;
  const T* xp = x.data<T>();
  T* cp = cols.data<T>();
  parallel_for(0, N * C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(K * L, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p)
                   im2col_plane(xp + p * H * W, cp + p * K * L, H, W, Ho, Wo, w, L);
               });
}

template <class T>
void col2im_any(const Tensor& cols, const Tensor& x, const Window2d& w) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t Ho = w.out_h(H), Wo = w.out_w(W), L = Ho * Wo, K = w.kh * w.kw;
  const T* cp = cols.data<T>();
  T* xp = x.data<T>();
  parallel_for(0, N * C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(K * L, 1)),
               [&](int64_t lo, int64_t hi) {
                 std::vector<acc_t<T>> acc(H * W);
                 for (int64_t p = lo; p < hi; ++p)
                   col2im_plane(cp + p * K * L, xp + p * H * W, H, W, Ho, Wo, w, L, acc.data());
               });
}

// ---- convolution by a GEMM per chunk of images (float32/float64, groups == 1)
// A chunk of B images has its im2col columns laid out (C*K, B*L): row c*K + k holds that
// tap's values for image after image. One GEMM per chunk then covers B images: OpenBLAS ran
// one (O, C*K) x (C*K, B*L) product faster than B thin (O, L) ones, and the weight
// gradient's reduction runs over B*L instead of L. Chunks are sized to stay in cache (a whole
// batch's columns do not fit, and writing then re-reading them from memory cost as much as
// the GEMMs). The backward rebuilds the columns instead of saving them.

// Images per chunk: enough columns for an efficient GEMM, few enough to stay in cache.
inline int64_t conv_chunk(int64_t N, int64_t L) {
  constexpr int64_t kChunkColumns = 1024;
  return std::clamp<int64_t>((kChunkColumns + L - 1) / std::max<int64_t>(L, 1), 1,
                             std::max<int64_t>(N, 1));
}

struct ConvGeom {
  int64_t N, C, H, W, O, Ho, Wo, L, K, CK;
  ConvGeom(const Tensor& x, const Tensor& w, const Window2d& win)
      : N(x.dim(0)),
        C(x.dim(1)),
        H(x.dim(2)),
        W(x.dim(3)),
        O(w.dim(0)),
        Ho(win.out_h(H)),
        Wo(win.out_w(W)),
        L(Ho * Wo),
        K(win.kh * win.kw),
        CK(C * K) {}
};

// Columns of images [n0, n0 + B) into (C*K, B*L), one (image, channel) plane per task.
template <class T>
void chunk_cols(const T* xp, T* cols, const ConvGeom& g, int64_t n0, int64_t B,
                const Window2d& win) {
  const int64_t BL = B * g.L;
  parallel_for(0, B * g.C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.K * g.L, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p) {
                   const int64_t j = p / g.C, c = p % g.C;
                   im2col_plane(xp + ((n0 + j) * g.C + c) * g.H * g.W,
                                cols + c * g.K * BL + j * g.L, g.H, g.W, g.Ho, g.Wo, win, BL);
                 }
               });
}

// Chunks run one after another and the GEMMs are called from one thread, as matmul does:
// OpenBLAS threads each GEMM itself, and GEMMs called from inside parallel_for would
// oversubscribe the cores. The memory-bound passes around them are parallel_for loops.
template <class T>
void conv2d_any(const Tensor& x, const Tensor& w, const Tensor* b, const Tensor& y,
                const Window2d& win) {
  const ConvGeom g(x, w, win);
  const int64_t B = conv_chunk(g.N, g.L);
  const T* xp = x.data<T>();
  const T* wp = w.data<T>();
  const T* bp = b ? b->data<T>() : nullptr;
  T* yp = y.data<T>();
  std::vector<T> cols(g.CK * B * g.L), prod(g.O * B * g.L);
  for (int64_t n0 = 0; n0 < g.N; n0 += B) {
    const int64_t nb = std::min(B, g.N - n0), BL = nb * g.L;
    if (g.CK > 0) {
      chunk_cols(xp, cols.data(), g, n0, nb, win);
      gemm<T>(false, false, g.O, BL, g.CK, wp, g.CK, cols.data(), BL, prod.data(), BL);
    } else {  // no input channels: only the bias
      std::fill(prod.begin(), prod.end(), T(0));
    }
    parallel_for(0, nb * g.O, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.L, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t p = lo; p < hi; ++p) {
                     const int64_t j = p / g.O, o = p % g.O;
                     const T* src = prod.data() + o * BL + j * g.L;
                     T* dst = yp + ((n0 + j) * g.O + o) * g.L;
                     const T bias = bp ? bp[o] : T(0);
                     for (int64_t l = 0; l < g.L; ++l) dst[l] = src[l] + bias;
                   }
                 });
  }
}

// A vectorizable sum: 16 independent partial sums (one accumulator is a chain of dependent
// adds, which GCC may not reorder into vector lanes).
template <class T>
double row_sum(const T* r, int64_t n) {
  T part[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) part[j] += r[i + j];
  double s = 0;
  for (int j = 0; j < 16; ++j) s += part[j];
  for (; i < n; ++i) s += r[i];
  return s;
}

template <class T>
void conv2d_backward_any(const Tensor& gy, const Tensor& x, const Tensor& w, const Tensor* gx,
                         const Tensor* gw, const Tensor* gb, const Window2d& win) {
  const ConvGeom g(x, w, win);
  const int64_t B = conv_chunk(g.N, g.L);
  const T* gp = gy.data<T>();
  const T* xp = x.data<T>();
  const T* wp = w.data<T>();
  if (gb) {
    T* bp = gb->data<T>();
    for (int64_t o = 0; o < g.O; ++o) {
      double s = 0;
      for (int64_t n = 0; n < g.N; ++n) s += row_sum(gp + (n * g.O + o) * g.L, g.L);
      bp[o] = T(s);
    }
  }
  if (g.CK == 0 || !(gx || gw)) return;
  std::vector<T> cols(g.CK * B * g.L), gchunk(g.O * B * g.L), prod(gw ? g.O * g.CK : 0);
  std::vector<double> gw_total(gw ? g.O * g.CK : 0, 0.0);
  for (int64_t n0 = 0; n0 < g.N; n0 += B) {
    const int64_t nb = std::min(B, g.N - n0), BL = nb * g.L;
    // The chunk's output gradient as (O, B*L), the columns' image order.
    parallel_for(0, g.O, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(BL, 1)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t o = lo; o < hi; ++o)
                     for (int64_t j = 0; j < nb; ++j)
                       std::memcpy(gchunk.data() + o * BL + j * g.L,
                                   gp + ((n0 + j) * g.O + o) * g.L, g.L * sizeof(T));
                 });
    if (gw) {
      chunk_cols(xp, cols.data(), g, n0, nb, win);
      gemm<T>(false, true, g.O, g.CK, BL, gchunk.data(), BL, cols.data(), BL, prod.data(), g.CK);
      for (int64_t i = 0; i < g.O * g.CK; ++i) gw_total[i] += prod[i];
    }
    if (gx) {
      gemm<T>(true, false, g.CK, BL, g.O, wp, g.CK, gchunk.data(), BL, cols.data(), BL);
      T* gxp = gx->data<T>();
      parallel_for(0, nb * g.C, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(g.K * g.L, 1)),
                   [&](int64_t lo, int64_t hi) {
                     std::vector<acc_t<T>> acc(g.H * g.W);
                     for (int64_t p = lo; p < hi; ++p) {
                       const int64_t j = p / g.C, c = p % g.C;
                       col2im_plane(cols.data() + c * g.K * BL + j * g.L,
                                    gxp + ((n0 + j) * g.C + c) * g.H * g.W, g.H, g.W, g.Ho, g.Wo,
                                    win, BL, acc.data());
                     }
                   });
    }
  }
  if (gw) {
    T* wgp = gw->data<T>();
    for (int64_t i = 0; i < g.O * g.CK; ++i) wgp[i] = T(gw_total[i]);
  }
}

void cpu_conv2d(const Tensor& x, const Tensor& w, const Tensor* b, const Tensor& y,
                const Window2d& win) {
  if (x.dtype() == DType::Float32)
    conv2d_any<float>(x, w, b, y, win);
  else
    conv2d_any<double>(x, w, b, y, win);
}

void cpu_conv2d_backward(const Tensor& g, const Tensor& x, const Tensor& w, const Tensor* gx,
                         const Tensor* gw, const Tensor* gb, const Window2d& win) {
  if (g.dtype() == DType::Float32)
    conv2d_backward_any<float>(g, x, w, gx, gw, gb, win);
  else
    conv2d_backward_any<double>(g, x, w, gx, gw, gb, win);
}

// best, at = v, i when v > best or v is NaN. Bit masks, not selects: GCC turned the selects
// into branches, and on random data half of them mispredicted (max pooling ran 7x slower
// than on constant data).
template <class A>
inline void take_max(A v, int64_t i, A* best, int64_t* at) {
  using U = std::conditional_t<sizeof(A) == 4, uint32_t, uint64_t>;
  const bool take = (v > *best) | (v != v);
  const U m = U(0) - U(take);
  U b, x;
  std::memcpy(&b, best, sizeof(A));
  std::memcpy(&x, &v, sizeof(A));
  b = (b & ~m) | (x & m);
  std::memcpy(best, &b, sizeof(A));
  *at += (i - *at) & -int64_t(take);
}

// One window's max and flat index over taps [h0, h1) x [w0, w1) (steps dh, dw). NaN wins
// (the last NaN's index).
template <class T>
inline void window_max(const T* xs, int64_t W, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
                       int64_t dh, int64_t dw, T* y, int64_t* at_out) {
  using A = acc_t<T>;
  A best = -std::numeric_limits<A>::infinity();
  int64_t at = h0 * W + w0;
  for (int64_t ih = h0; ih < h1; ih += dh)
    for (int64_t iw = w0; iw < w1; iw += dw) {
      take_max(A(xs[ih * W + iw]), ih * W + iw, &best, &at);
    }
  *y = T(best);
  *at_out = at;
}

// PyTorch's max pooling: -inf padding, the first maximum wins, windows clipped to the input.
template <class T>
void max_pool_plane(const T* xs, T* ys, int64_t* is, int64_t H, int64_t W, int64_t Ho, int64_t Wo,
                    const Window2d w) {
  const bool plain = w.ph == 0 && w.pw == 0 && w.dh == 1 && w.dw == 1 &&
                     (Ho - 1) * w.sh + w.kh <= H && (Wo - 1) * w.sw + w.kw <= W;
  if (plain && w.kh == 2 && w.kw == 2) {  // the common 2x2 pool, unrolled
    using A = acc_t<T>;
    for (int64_t oh = 0; oh < Ho; ++oh) {
      const T* r0 = xs + oh * w.sh * W;
      const T* r1 = r0 + W;
      for (int64_t ow = 0; ow < Wo; ++ow) {
        const int64_t c = ow * w.sw, base = oh * w.sh * W + c;
        A best = A(r0[c]);
        int64_t at = base;
        take_max(A(r0[c + 1]), base + 1, &best, &at);
        take_max(A(r1[c]), base + W, &best, &at);
        take_max(A(r1[c + 1]), base + W + 1, &best, &at);
        ys[oh * Wo + ow] = T(best);
        is[oh * Wo + ow] = at;
      }
    }
    return;
  }
  for (int64_t oh = 0; oh < Ho; ++oh) {
    const int64_t hs = oh * w.sh - w.ph;
    const int64_t h0 = window_first_tap(hs, w.dh), h1 = window_end(hs, (w.kh - 1) * w.dh + 1, H);
    for (int64_t ow = 0; ow < Wo; ++ow) {
      const int64_t ws = ow * w.sw - w.pw;
      const int64_t w0 = window_first_tap(ws, w.dw),
                    w1 = window_end(ws, (w.kw - 1) * w.dw + 1, W);
      window_max(xs, W, h0, h1, w0, w1, w.dh, w.dw, ys + oh * Wo + ow, is + oh * Wo + ow);
    }
  }
}

template <class T>
void max_pool_any(const Tensor& x, const Tensor& y, const Tensor& idx, const Window2d& w) {
  const int64_t P = x.dim(0) * x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t Ho = y.dim(2), Wo = y.dim(3);
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  int64_t* ip = idx.data<int64_t>();
  const Window2d win = w;
  parallel_for(0, P, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(H * W, 1)),
               [=](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p)
                   max_pool_plane(xp + p * H * W, yp + p * Ho * Wo, ip + p * Ho * Wo, H, W, Ho, Wo,
                                  win);
               });
}

template <class T>
void max_pool_backward_any(const Tensor& gy, const Tensor& idx, const Tensor& gx) {
  const int64_t P = gx.dim(0) * gx.dim(1), HW = gx.dim(2) * gx.dim(3);
  const int64_t L = gy.dim(2) * gy.dim(3);
  const T* gp = gy.data<T>();
  const int64_t* ip = idx.data<int64_t>();
  T* xp = gx.data<T>();
  parallel_for(0, P, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(L, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p)
                   for (int64_t i = 0; i < L; ++i) {
                     T& d = xp[p * HW + ip[p * L + i]];
                     d = T(acc_t<T>(d) + acc_t<T>(gp[p * L + i]));
                   }
               });
}

void cpu_im2col(const Tensor& x, const Tensor& cols, const Window2d& w) {
  visit_dtype<kFloatSet>(x.dtype(), "im2col",
                         [&](auto tag) { im2col_any<typename decltype(tag)::type>(x, cols, w); });
}

void cpu_col2im(const Tensor& cols, const Tensor& x, const Window2d& w) {
  visit_dtype<kFloatSet>(x.dtype(), "col2im",
                         [&](auto tag) { col2im_any<typename decltype(tag)::type>(cols, x, w); });
}

void cpu_max_pool(const Tensor& x, const Tensor& y, const Tensor& idx, const Window2d& w) {
  visit_dtype<kFloatSet>(x.dtype(), "max_pool2d", [&](auto tag) {
    max_pool_any<typename decltype(tag)::type>(x, y, idx, w);
  });
}

void cpu_max_pool_backward(const Tensor& gy, const Tensor& idx, const Tensor& gx) {
  visit_dtype<kFloatSet>(gy.dtype(), "max_pool2d_backward", [&](auto tag) {
    max_pool_backward_any<typename decltype(tag)::type>(gy, idx, gx);
  });
}

}  // namespace

TS_REGISTER_KERNEL(im2col_stub, CPU, &cpu_im2col);
TS_REGISTER_KERNEL(col2im_stub, CPU, &cpu_col2im);
TS_REGISTER_KERNEL(conv2d_stub, CPU, &cpu_conv2d);
TS_REGISTER_KERNEL(conv2d_backward_stub, CPU, &cpu_conv2d_backward);
TS_REGISTER_KERNEL(max_pool_stub, CPU, &cpu_max_pool);
TS_REGISTER_KERNEL(max_pool_backward_stub, CPU, &cpu_max_pool_backward);

}  // namespace ts

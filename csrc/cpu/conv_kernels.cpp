// CPU kernels of the three convolution ops (ops/conv.h, Note [Convolution as three ops]).
// Every geometry is handled as 3-D (1-D and 2-D specs have size-1 leading dims).
// GEMM path: a chunk of B images has its im2col columns laid out (C*K, B*L) (row c*K + tap
// holds that tap's values for image after image), so one GEMM per group covers B images;
// chunks are sized to stay in cache (Note in nn_window_kernels.cpp). One image per chunk
// (the common case for CNN feature maps) GEMMs straight from/into the tensors, and a 1x1
// unstrided unpadded convolution skips im2col altogether. With several threads and images the
// chunks are split across threads, each with its own buffers and single-threaded GEMMs (Note
// [Convolutions split by images across threads], cpu/conv_tasks.h); otherwise the GEMMs are
// called from one thread (OpenBLAS threads each itself) and the memory-bound column passes
// are parallel_for loops over (image, channel) planes, which never share output.
// Depthwise (groups == C, one input channel per group): a direct kernel, one plane per task.
// 3x3 stride-1 2-D convolutions with enough channels: Winograd F(2x2, 3x3) for all three
// ops (cpu/conv_winograd.cpp, Note [Winograd convolutions on the CPU]).
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "cpu/blas.h"
#include "cpu/conv_tasks.h"
#include "cpu/conv_winograd.h"
#include "ops/conv.h"

namespace ts {
namespace {

// The outputs [lo, hi) whose input position o * s - p + off lies in [0, n).
inline void valid_range(int64_t n_out, int64_t n_in, int64_t s, int64_t p, int64_t off, int64_t* lo,
                        int64_t* hi) {
  // (a + b - 1) / b would overflow for a stride near 2^63
  auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b + (a % b != 0) : -((-a) / b); };
  *lo = std::clamp<int64_t>(ceil_div(p - off, s), 0, n_out);
  *hi = std::clamp<int64_t>(ceil_div(n_in + p - off, s), *lo, n_out);
}

struct Geo {
  int64_t N, C, O, G, Cg, Og, K, L, I;
  int64_t D, H, W, Do, Ho, Wo;
  int64_t k0, k1, k2, s0, s1, s2, p0, p1, p2, d0, d1, d2;
  bool pointwise;
  Geo(int64_t n, int64_t c, int64_t o, const ConvSpec& s)
      : N(n),
        C(c),
        O(o),
        G(s.groups),
        Cg(c / s.groups),
        Og(o / s.groups),
        K(s.k_numel()),
        L(s.out_numel()),
        I(s.in_numel()),
        D(s.in[0]),
        H(s.in[1]),
        W(s.in[2]),
        Do(s.out(0)),
        Ho(s.out(1)),
        Wo(s.out(2)),
        k0(s.k[0]),
        k1(s.k[1]),
        k2(s.k[2]),
        s0(s.s[0]),
        s1(s.s[1]),
        s2(s.s[2]),
        p0(s.p[0]),
        p1(s.p[1]),
        p2(s.p[2]),
        d0(s.d[0]),
        d1(s.d[1]),
        d2(s.d[2]) {
    pointwise = K == 1 && s0 == 1 && s1 == 1 && s2 == 1 && p0 == 0 && p1 == 0 && p2 == 0;
  }
};

// One kernel tap's view of the input: the output ranges [lo, hi) per dim whose input
// positions are inside the input, and the input position of output 0 per dim (far outside
// for a hostile padding or dilation, so no pointer is ever formed from it).
struct Tap {
  int64_t dlo, dhi, hlo, hhi, wlo, whi;
  int64_t d0, h0, w0;
  bool empty() const { return dlo >= dhi || hlo >= hhi || wlo >= whi; }
  // The input index read by output (od, oh, wlo), for od, oh inside their ranges and a
  // non-empty w range: each dim's position lies inside the input, so nothing overflows.
  int64_t first(const Geo& g, int64_t od, int64_t oh) const {
    return ((od * g.s0 + d0) * g.H + oh * g.s1 + h0) * g.W + wlo * g.s2 + w0;
  }
};

// Calls f(tap, Tap) for each kernel tap.
template <class F>
inline void for_each_tap(const Geo& g, const F& f) {
  int64_t tap = 0;
  for (int64_t a = 0; a < g.k0; ++a)
    for (int64_t b = 0; b < g.k1; ++b)
      for (int64_t c = 0; c < g.k2; ++c, ++tap) {
        Tap t;
        valid_range(g.Do, g.D, g.s0, g.p0, a * g.d0, &t.dlo, &t.dhi);
        valid_range(g.Ho, g.H, g.s1, g.p1, b * g.d1, &t.hlo, &t.hhi);
        valid_range(g.Wo, g.W, g.s2, g.p2, c * g.d2, &t.wlo, &t.whi);
        t.d0 = a * g.d0 - g.p0;
        t.h0 = b * g.d1 - g.p1;
        t.w0 = c * g.d2 - g.p2;
        f(tap, t);
      }
}

// One channel plane's columns: K rows (row stride ld) of L values each.
template <class T>
void vol2col_plane(const T* x, T* cols, const Geo& g, int64_t ld) {
  const int64_t HoWo = g.Ho * g.Wo;
  for_each_tap(g, [&](int64_t tap, const Tap& t) {
    const int64_t dlo = t.dlo, dhi = t.dhi, hlo = t.hlo, hhi = t.hhi, wlo = t.wlo, whi = t.whi;
    T* dst = cols + tap * ld;
    for (int64_t od = 0; od < g.Do; ++od) {
      T* dd = dst + od * HoWo;
      if (od < dlo || od >= dhi) {
        std::fill(dd, dd + HoWo, T(0));
        continue;
      }
      for (int64_t oh = 0; oh < g.Ho; ++oh) {
        T* d = dd + oh * g.Wo;
        if (oh < hlo || oh >= hhi) {
          std::fill(d, d + g.Wo, T(0));
          continue;
        }
        std::fill(d, d + wlo, T(0));
        if (wlo < whi) {
          const T* src = x + t.first(g, od, oh);  // what output wlo reads
          if (g.s2 == 1)
            std::memcpy(d + wlo, src, (whi - wlo) * sizeof(T));
          else
            for (int64_t ow = wlo; ow < whi; ++ow) d[ow] = src[(ow - wlo) * g.s2];
        }
        std::fill(d + whi, d + g.Wo, T(0));
      }
    }
  });
}

// The adjoint: sums the columns into a zeroed input plane.
template <class T>
void col2vol_plane(const T* cols, T* x, const Geo& g, int64_t ld) {
  std::fill(x, x + g.I, T(0));
  const int64_t HoWo = g.Ho * g.Wo;
  for_each_tap(g, [&](int64_t tap, const Tap& t) {
    const int64_t dlo = t.dlo, dhi = t.dhi, hlo = t.hlo, hhi = t.hhi, wlo = t.wlo, whi = t.whi;
    if (t.empty()) return;  // t.first() is meaningful only for a non-empty tap
    const T* src = cols + tap * ld;
    for (int64_t od = dlo; od < dhi; ++od)
      for (int64_t oh = hlo; oh < hhi; ++oh) {
        T* d = x + t.first(g, od, oh);  // what output wlo reads
        const T* s = src + od * HoWo + oh * g.Wo;
        if (g.s2 == 1)
          for (int64_t ow = wlo; ow < whi; ++ow) d[ow - wlo] += s[ow];
        else
          for (int64_t ow = wlo; ow < whi; ++ow) d[(ow - wlo) * g.s2] += s[ow];
      }
  });
}

// The memory-bound passes split across threads only above ~2M values per pass: a chunk's
// columns are one image's worth for typical CNN layers, and a fork/join per image per pass
// cost more than it saved (badly so on a loaded machine, where a descheduled worker stalls
// every join); the GEMMs between them are threaded by the BLAS.
constexpr int64_t kConvGrain = 64 * kGrainSize;
inline int64_t grain_for(int64_t work) {
  return std::max<int64_t>(1, kConvGrain / std::max<int64_t>(work, 1));
}

// Images per chunk: enough columns for an efficient GEMM (and, for few channels, enough
// column values that the chunk's parallel passes are worth their fork/join), few enough to
// stay in cache.
inline int64_t chunk_images(const Geo& g) {
  constexpr int64_t kChunkColumns = 1024, kChunkValues = 1 << 18;
  const int64_t L = std::max<int64_t>(g.L, 1);
  const int64_t by_cols = (kChunkColumns + L - 1) / L;
  const int64_t by_values = kChunkValues / std::max<int64_t>(g.C * g.K * L, 1);
  return std::clamp<int64_t>(std::max(by_cols, by_values), 1, std::max<int64_t>(g.N, 1));
}

// Columns (C*K, nb*L) of images [n0, n0 + nb).
template <class T>
void chunk_cols(const T* xp, T* cols, const Geo& g, int64_t n0, int64_t nb) {
  const int64_t BL = nb * g.L;
  parallel_for(0, nb * g.C, grain_for(g.K * g.L), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const int64_t j = p / g.C, c = p % g.C;
      vol2col_plane(xp + ((n0 + j) * g.C + c) * g.I, cols + c * g.K * BL + j * g.L, g, BL);
    }
  });
}

// (O, nb*L) in column order from (nb, O, L) and back.
template <class T>
void gather_chunk(const T* src, T* dst, int64_t rows, int64_t L, int64_t n0, int64_t nb) {
  const int64_t BL = nb * L;
  parallel_for(0, rows * nb, grain_for(L), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const int64_t o = p / nb, j = p % nb;
      std::memcpy(dst + o * BL + j * L, src + ((n0 + j) * rows + o) * L, L * sizeof(T));
    }
  });
}

// The batch's image chunks and the tasks they are split into (Note [Convolutions split by
// images across threads]).
struct Chunking {
  int tasks;
  int64_t B, chunks;
  explicit Chunking(const Geo& g)
      : tasks(conv_tasks(g.N)),
        B(conv_chunk(chunk_images(g), g.N, tasks)),
        chunks((g.N + B - 1) / B) {}
};

// Calls body(task, n0, nb, cols, chunk) for each chunk of nb images from n0, a task's chunks
// on one thread with that task's buffers: the chunk's columns (none for pointwise
// one-image chunks) and an (O, nb*L) buffer for chunks of several images.
template <class T, class F>
void for_chunks(const Geo& g, const Chunking& ch, const F& body) {
  const int64_t B = ch.B;
  run_conv_tasks(ch.tasks, ch.chunks, [&](int64_t t, int64_t c0, int64_t c1) {
    std::vector<T> cols(g.pointwise && B == 1 ? 0 : g.C * g.K * B * g.L);
    std::vector<T> chunk(B > 1 ? g.O * B * g.L : 0);
    for (int64_t n0 = c0 * B; n0 < std::min(g.N, c1 * B); n0 += B)
      body(t, n0, std::min(B, g.N - n0), cols.data(), chunk.data());
  });
}

// ---- depthwise: groups == C, one input channel per group, Og = O / C outputs per channel
template <class T>
bool depthwise(const Geo& g) {
  return g.G > 1 && g.Cg == 1 && g.G == g.C;
}

template <class T>
void dw_forward(const T* xp, const T* wp, const T* bp, T* yp, const Geo& g) {
  const int64_t HoWo = g.Ho * g.Wo;
  parallel_for(0, g.N * g.O, grain_for(g.L * g.K), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const int64_t n = p / g.O, o = p % g.O, c = o / g.Og;
      T* y = yp + p * g.L;
      std::fill(y, y + g.L, bp ? bp[o] : T(0));
      const T* x = xp + (n * g.C + c) * g.I;
      const T* w = wp + o * g.K;
      for_each_tap(g, [&](int64_t tap, const Tap& t) {
        const int64_t dlo = t.dlo, dhi = t.dhi, hlo = t.hlo, hhi = t.hhi, wlo = t.wlo, whi = t.whi;
        if (t.empty()) return;  // t.first() is meaningful only for a non-empty tap
        const T wv = w[tap];
        for (int64_t od = dlo; od < dhi; ++od)
          for (int64_t oh = hlo; oh < hhi; ++oh) {
            const T* s = x + t.first(g, od, oh);  // what output wlo reads
            T* d = y + od * HoWo + oh * g.Wo;
            if (g.s2 == 1)
              for (int64_t ow = wlo; ow < whi; ++ow) d[ow] += wv * s[ow - wlo];
            else
              for (int64_t ow = wlo; ow < whi; ++ow) d[ow] += wv * s[(ow - wlo) * g.s2];
          }
      });
    }
  });
}

template <class T>
void dw_transpose(const T* gyp, const T* wp, T* gxp, const Geo& g) {
  const int64_t HoWo = g.Ho * g.Wo;
  parallel_for(0, g.N * g.C, grain_for(g.L * g.K * g.Og), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const int64_t n = p / g.C, c = p % g.C;
      T* x = gxp + p * g.I;
      std::fill(x, x + g.I, T(0));
      for (int64_t m = 0; m < g.Og; ++m) {
        const int64_t o = c * g.Og + m;
        const T* y = gyp + (n * g.O + o) * g.L;
        const T* w = wp + o * g.K;
        for_each_tap(g, [&](int64_t tap, const Tap& t) {
          const int64_t dlo = t.dlo, dhi = t.dhi, hlo = t.hlo, hhi = t.hhi, wlo = t.wlo,
                        whi = t.whi;
          if (t.empty()) return;  // t.first() is meaningful only for a non-empty tap
          const T wv = w[tap];
          for (int64_t od = dlo; od < dhi; ++od)
            for (int64_t oh = hlo; oh < hhi; ++oh) {
              T* d = x + t.first(g, od, oh);  // what output wlo reads
              const T* s = y + od * HoWo + oh * g.Wo;
              if (g.s2 == 1)
                for (int64_t ow = wlo; ow < whi; ++ow) d[ow - wlo] += wv * s[ow];
              else
                for (int64_t ow = wlo; ow < whi; ++ow) d[(ow - wlo) * g.s2] += wv * s[ow];
            }
        });
      }
    }
  });
}

template <class T>
void dw_weight(const T* gyp, const T* xp, T* gwp, const Geo& g) {
  const int64_t HoWo = g.Ho * g.Wo;
  parallel_for(0, g.O, grain_for(g.N * g.L * g.K), [&](int64_t lo, int64_t hi) {
    std::vector<double> acc(g.K);
    for (int64_t o = lo; o < hi; ++o) {
      const int64_t c = o / g.Og;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t n = 0; n < g.N; ++n) {
        const T* y = gyp + (n * g.O + o) * g.L;
        const T* x = xp + (n * g.C + c) * g.I;
        for_each_tap(g, [&](int64_t tap, const Tap& t) {
          const int64_t dlo = t.dlo, dhi = t.dhi, hlo = t.hlo, hhi = t.hhi, wlo = t.wlo,
                        whi = t.whi;
          if (t.empty()) return;  // t.first() is meaningful only for a non-empty tap
          T part = 0;
          for (int64_t od = dlo; od < dhi; ++od)
            for (int64_t oh = hlo; oh < hhi; ++oh) {
              const T* s = x + t.first(g, od, oh);  // what output wlo reads
              const T* d = y + od * HoWo + oh * g.Wo;
              if (g.s2 == 1)
                for (int64_t ow = wlo; ow < whi; ++ow) part += d[ow] * s[ow - wlo];
              else
                for (int64_t ow = wlo; ow < whi; ++ow) part += d[ow] * s[(ow - wlo) * g.s2];
            }
          acc[tap] += part;
        });
      }
      for (int64_t t = 0; t < g.K; ++t) gwp[o * g.K + t] = T(acc[t]);
    }
  });
}

// ---- Winograd F(2x2, 3x3) (cpu/conv_winograd.cpp): 2-D 3x3, stride 1, no dilation, one
// group, padding at most 2, where measured to pay.
inline bool winograd_geometry(const Geo& g, winograd::Geometry* w) {
  if (!(g.G == 1 && g.k0 == 1 && g.D == 1 && g.p0 == 0 && g.k1 == 3 && g.k2 == 3 && g.s1 == 1 &&
        g.s2 == 1 && g.d1 == 1 && g.d2 == 1 && g.p1 <= 2 && g.p2 <= 2 &&
        g.Ho == g.H + 2 * g.p1 - 2 && g.Wo == g.W + 2 * g.p2 - 2 && g.N > 0))
    return false;
  *w = winograd::Geometry{g.N, g.C, g.O, g.H, g.W, g.p1, g.p2};
  return winograd::pays(*w);
}

// ---- GEMM paths
template <class T>
void add_bias(T* yp, const T* bp, const Geo& g) {
  if (!bp) return;
  parallel_for(0, g.N * g.O, grain_for(g.L), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const T b = bp[p % g.O];
      T* y = yp + p * g.L;
      for (int64_t l = 0; l < g.L; ++l) y[l] += b;
    }
  });
}

template <class T>
void forward_any(const Tensor& x, const Tensor& w, const Tensor* b, const Tensor& y,
                 const ConvSpec& s) {
  const Geo g(x.dim(0), x.dim(1), w.dim(0), s);
  const T* xp = x.data<T>();
  const T* wp = w.data<T>();
  const T* bp = b ? b->data<T>() : nullptr;
  T* yp = y.data<T>();
  if (depthwise<T>(g)) return dw_forward(xp, wp, bp, yp, g);
  winograd::Geometry wg;
  if (winograd_geometry(g, &wg)) {
    winograd::forward(xp, wp, yp, wg);
    return add_bias(yp, bp, g);
  }
  const int64_t CgK = g.Cg * g.K;
  if (CgK == 0) {
    std::fill(yp, yp + y.numel(), T(0));
    return add_bias(yp, bp, g);
  }
  for_chunks<T>(g, Chunking(g), [&](int64_t, int64_t n0, int64_t nb, T* cols, T* prod) {
    {
      const int64_t BL = nb * g.L;
      const T* src = xp + n0 * g.C * g.I;  // pointwise, one image: x is its own columns
      if (!(g.pointwise && nb == 1)) {
        chunk_cols(xp, cols, g, n0, nb);
        src = cols;
      }
      T* dst = nb == 1 ? yp + n0 * g.O * g.L : prod;
      for (int64_t gi = 0; gi < g.G; ++gi)
        gemm<T>(false, false, g.Og, BL, CgK, wp + gi * g.Og * CgK, CgK, src + gi * CgK * BL, BL,
                dst + gi * g.Og * BL, BL);
      if (nb > 1)
        parallel_for(0, nb * g.O, grain_for(g.L), [&](int64_t lo, int64_t hi) {
          for (int64_t p = lo; p < hi; ++p) {
            const int64_t j = p / g.O, o = p % g.O;
            std::memcpy(yp + ((n0 + j) * g.O + o) * g.L, prod + o * BL + j * g.L, g.L * sizeof(T));
          }
        });
    }
  });
  add_bias(yp, bp, g);
}

template <class T>
void transpose_any(const Tensor& gy, const Tensor& w, const Tensor& gx, const ConvSpec& s) {
  const Geo g(gx.dim(0), gx.dim(1), w.dim(0), s);
  const T* gyp = gy.data<T>();
  const T* wp = w.data<T>();
  T* gxp = gx.data<T>();
  if (depthwise<T>(g)) return dw_transpose(gyp, wp, gxp, g);
  winograd::Geometry wg;
  if (winograd_geometry(g, &wg)) return winograd::input_grad(gyp, wp, gxp, wg);
  const int64_t CgK = g.Cg * g.K;
  if (CgK == 0) return;
  if (g.O == 0) {
    std::fill(gxp, gxp + gx.numel(), T(0));
    return;
  }
  for_chunks<T>(g, Chunking(g), [&](int64_t, int64_t n0, int64_t nb, T* cols, T* gchunk) {
    {
      const int64_t BL = nb * g.L;
      const T* src = gyp + n0 * g.O * g.L;
      if (nb > 1) {
        gather_chunk(gyp, gchunk, g.O, g.L, n0, nb);
        src = gchunk;
      }
      const bool direct = g.pointwise && nb == 1;
      T* dst = direct ? gxp + n0 * g.C * g.I : cols;
      for (int64_t gi = 0; gi < g.G; ++gi)
        gemm<T>(true, false, CgK, BL, g.Og, wp + gi * g.Og * CgK, CgK, src + gi * g.Og * BL, BL,
                dst + gi * CgK * BL, BL);
      if (direct) return;
      parallel_for(0, nb * g.C, grain_for(g.K * g.L), [&](int64_t lo, int64_t hi) {
        for (int64_t p = lo; p < hi; ++p) {
          const int64_t j = p / g.C, c = p % g.C;
          col2vol_plane(cols + c * g.K * BL + j * g.L, gxp + ((n0 + j) * g.C + c) * g.I, g, BL);
        }
      });
    }
  });
}

template <class T>
void weight_any(const Tensor& gy, const Tensor& x, const Tensor& gw, const ConvSpec& s) {
  const Geo g(x.dim(0), x.dim(1), gw.dim(0), s);
  const T* gyp = gy.data<T>();
  const T* xp = x.data<T>();
  T* gwp = gw.data<T>();
  if (depthwise<T>(g)) return dw_weight(gyp, xp, gwp, g);
  winograd::Geometry wg;
  if (winograd_geometry(g, &wg)) return winograd::weight_grad(gyp, xp, gwp, wg);
  const int64_t CgK = g.Cg * g.K, total = g.O * CgK;
  if (total == 0) return;
  if (g.N == 0 || g.L == 0) {
    std::fill(gwp, gwp + total, T(0));
    return;
  }
  const Chunking ch(g);
  const int tasks = ch.tasks;
  const bool one_chunk = ch.chunks == 1;
  // each task's sum over its chunks, in double across chunks (the one chunk's straight in gw)
  std::vector<double> acc(one_chunk ? 0 : tasks * total, 0.0);
  std::vector<T> prods(one_chunk ? 0 : tasks * total);
  for_chunks<T>(g, ch, [&](int64_t t, int64_t n0, int64_t nb, T* cols, T* gchunk) {
    double* a = acc.data() + t * total;
    T* prod = prods.data() + t * total;
    {
      const int64_t BL = nb * g.L;
      const T* ysrc = gyp + n0 * g.O * g.L;
      if (nb > 1) {
        gather_chunk(gyp, gchunk, g.O, g.L, n0, nb);
        ysrc = gchunk;
      }
      const T* xsrc = xp + n0 * g.C * g.I;
      if (!(g.pointwise && nb == 1)) {
        chunk_cols(xp, cols, g, n0, nb);
        xsrc = cols;
      }
      T* dst = one_chunk ? gwp : prod;
      for (int64_t gi = 0; gi < g.G; ++gi)
        gemm<T>(false, true, g.Og, CgK, BL, ysrc + gi * g.Og * BL, BL, xsrc + gi * CgK * BL, BL,
                dst + gi * g.Og * CgK, CgK);
      if (!one_chunk)
        parallel_for(0, total, kGrainSize, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) a[i] += prod[i];
        });
    }
  });
  if (!one_chunk)
    parallel_for(0, total, kGrainSize, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        double v = acc[i];
        for (int t = 1; t < tasks; ++t) v += acc[t * total + i];
        gwp[i] = T(v);
      }
    });
}

void cpu_conv_forward(const Tensor& x, const Tensor& w, const Tensor* b, const Tensor& y,
                      const ConvSpec& s) {
  if (x.dtype() == DType::Float64) return forward_any<double>(x, w, b, y, s);
  forward_any<float>(x, w, b, y, s);
}
void cpu_conv_transpose(const Tensor& gy, const Tensor& w, const Tensor& gx, const ConvSpec& s) {
  if (gy.dtype() == DType::Float64) return transpose_any<double>(gy, w, gx, s);
  transpose_any<float>(gy, w, gx, s);
}
void cpu_conv_weight(const Tensor& gy, const Tensor& x, const Tensor& gw, const ConvSpec& s) {
  if (gy.dtype() == DType::Float64) return weight_any<double>(gy, x, gw, s);
  weight_any<float>(gy, x, gw, s);
}

}  // namespace

TS_REGISTER_KERNEL(conv_forward_stub, CPU, &cpu_conv_forward);
TS_REGISTER_KERNEL(conv_transpose_stub, CPU, &cpu_conv_transpose);
TS_REGISTER_KERNEL(conv_weight_stub, CPU, &cpu_conv_weight);

}  // namespace ts

// grid_sample's per-point math, shared by the CPU kernels (cpu/grid_sample_kernels.cpp) and the
// CUDA ones (cuda/grid_sample_kernels.cu), so both devices compute the same thing: PyTorch's
// GridSampler.h (unnormalize, clip/reflect coordinates and the gradient multipliers of those
// maps, cubic coefficients), then one output point's forward or backward over all channels
// (Note [Native grid sampling] in ops/nn/grid_sample.cpp).
//
// T is the storage type, A the type computed in (float for float32 and the 16-bit floats,
// double for float64). Tensors are contiguous: input (N, C, *in), grid (N, *out, K), output
// (N, C, *out). Spatial axes are in input order ((d,) h, w); the grid's components run the
// other way (x = w first).
#pragma once
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define TS_GS_HD __host__ __device__ __forceinline__
#else
#define TS_GS_HD inline
#endif

namespace ts::gs {

enum class Interp : uint8_t { Bilinear, Nearest, Bicubic };  // torch's codes 0, 1, 2
enum class Pad : uint8_t { Zeros, Border, Reflection };      // torch's codes 0, 1, 2

struct Params {
  Interp mode;
  Pad pad;
  bool align_corners;
};

// One image's geometry: C channels, input sizes size[0..K) (input order) whose product is
// in_plane, out_plane output points.
struct Geom {
  int64_t C;
  int64_t size[3];
  int64_t in_plane;
  int64_t out_plane;
};

// floor; on the host without SSE4.1's roundsd std::floor is a libm call per coordinate, so
// values of magnitude below 2^62 go through an exact integer round trip instead.
template <class A>
TS_GS_HD A floor_(A v) {
#if defined(__CUDA_ARCH__)
  return std::floor(v);
#else
  if (!(v > A(-4.6e18) && v < A(4.6e18))) return std::floor(v);
  const A t = static_cast<A>(static_cast<int64_t>(v));
  return t > v ? t - A(1) : t;
#endif
}
template <class A>
TS_GS_HD A fmod_(A a, A b) {
  return std::fmod(a, b);
}
// Half to even, as torch's nearbyint in the default rounding mode (on the host, below 2^62
// from floor_ and the exact fraction v - floor(v), without a libm call; the sign of a zero
// result may differ, which an index does not see).
template <class A>
TS_GS_HD A nearbyint_(A v) {
#if defined(__CUDA_ARCH__)
  return std::nearbyint(v);
#else
  if (!(v > A(-4.6e18) && v < A(4.6e18))) return std::nearbyint(v);
  const A r = floor_(v), d = v - r;
  if (d > A(0.5) || (d == A(0.5) && (static_cast<int64_t>(r) & 1) != 0)) return r + A(1);
  return r;
#endif
}

// [-1, 1] -> [0, size - 1] (align_corners) or [-0.5, size - 0.5]; *g the derivative.
template <class A>
TS_GS_HD A unnormalize(A coord, int64_t size, bool ac, A* g) {
  if (ac) {
    *g = A(size - 1) / A(2);
    return ((coord + A(1)) / A(2)) * A(size - 1);
  }
  *g = A(size) / A(2);
  return ((coord + A(1)) * A(size) - A(1)) / A(2);
}

// Clamps into [0, size - 1] (NaN to 0, as torch's CPU and CUDA kernels); *g is 1 strictly
// inside and 0 on and beyond the bounds (torch's clip_coordinates_set_grad: "it is important
// for the gradient calculation that borders are considered out of bounds").
template <class A>
TS_GS_HD A clip(A in, int64_t size, A* g) {
  const A hi = A(size - 1);
  if (!(in > A(0))) {
    *g = A(0);
    return A(0);
  }
  if (in >= hi) {
    *g = A(0);
    return hi;
  }
  *g = A(1);
  return in;
}

// Reflects into [twice_low / 2, twice_high / 2] (torch's reflect_coordinates_set_grad); *g is
// +-1. The parity of the flip count is taken in floating point (torch's int cast overflows for
// far coordinates; where it does not, the two agree).
template <class A>
TS_GS_HD A reflect(A in, int64_t twice_low, int64_t twice_high, A* g) {
  if (twice_low == twice_high) {
    *g = A(0);
    return A(0);
  }
  const A lo = A(twice_low) / A(2), span = A(twice_high - twice_low) / A(2);
  in = in - lo;
  A sign = A(1);
  if (in < A(0)) {
    sign = A(-1);
    in = -in;
  }
  const A extra = fmod_(in, span);
  const A flips = floor_(in / span);
  if (fmod_(flips, A(2)) == A(0)) {
    *g = sign;
    return extra + lo;
  }
  *g = -sign;
  return span - extra + lo;
}

// The padded source position of a pixel coordinate (torch's compute_coordinates); *g the
// derivative of the map.
template <class A>
TS_GS_HD A pad_coord(A x, int64_t size, Pad pad, bool ac, A* g) {
  if (pad == Pad::Zeros) {
    *g = A(1);
    return x;
  }
  A gr = A(1), gc;
  if (pad == Pad::Reflection)
    x = ac ? reflect(x, 0, 2 * (size - 1), &gr) : reflect(x, -1, 2 * size - 1, &gr);
  x = clip(x, size, &gc);
  *g = gr * gc;
  return x;
}

// The source position of grid coordinate `coord` (torch's
// grid_sampler_compute_source_index_set_grad); *g = d position / d coord.
template <class A>
TS_GS_HD A source_index(A coord, int64_t size, const Params& p, A* g) {
  A gu, gp;
  const A x =
      pad_coord(unnormalize(coord, size, p.align_corners, &gu), size, p.pad, p.align_corners, &gp);
  *g = gu * gp;
  return x;
}

// An integral-valued position as an index; anything outside (-2, size + 1), NaN included,
// becomes -2, so it and the next index are both out of bounds (no overflowing cast).
template <class A>
TS_GS_HD int64_t to_index(A v, int64_t size) {
  return (v > A(-2) && v < A(size + 1)) ? static_cast<int64_t>(v) : int64_t(-2);
}

TS_GS_HD bool inside(int64_t i, int64_t size) { return i >= 0 && i < size; }

// PyTorch's cubic convolution coefficients (A = -0.75) of fraction t
// (get_cubic_upsample_coefficients) and their derivatives in each tap's distance offset - t
// (get_cubic_coefficients_grad: d/dt is minus these, so the backward subtracts them).
template <class A>
TS_GS_HD void cubic_coeffs(A t, A c[4]) {
  const A a = A(-0.75);
  const A x1 = t, x2 = A(1) - t;
  auto near = [a](A x) { return ((a + A(2)) * x - (a + A(3))) * x * x + A(1); };
  auto far = [a](A x) { return ((a * x - A(5) * a) * x + A(8) * a) * x - A(4) * a; };
  c[0] = far(x1 + A(1));
  c[1] = near(x1);
  c[2] = near(x2);
  c[3] = far(x2 + A(1));
}
template <class A>
TS_GS_HD void cubic_coeffs_grad(A t, A c[4]) {
  const A a = A(-0.75);
  A x = A(-1) - t;
  c[0] = (A(-3) * a * x - A(10) * a) * x - A(8) * a;
  x = -t;
  c[1] = (A(-3) * (a + A(2)) * x - A(2) * (a + A(3))) * x;
  x = A(1) - t;
  c[2] = (A(3) * (a + A(2)) * x - A(2) * (a + A(3))) * x;
  x = A(2) - t;
  c[3] = (A(3) * a * x - A(10) * a) * x + A(8) * a;
}

// The bilinear (trilinear) corners of one point: 2^K flat offsets, whether each is inside,
// their weights and, per axis, the product of the other axes' weights (the grid gradient's
// factor), in torch's order (corner bits (d,) h, w with w fastest; weight products x * y * z).
template <int K, class A>
struct Corners {
  static constexpr int kN = 1 << K;
  int64_t off[kN];
  bool ok[kN];
  A w[kN];
  A other[kN][K];  // axis i: the product of the other axes' weights
  A mult[K];       // d position / d grid coordinate per axis
};

template <int K, class T, class A, bool kGrad = true>
TS_GS_HD void bilinear_corners(const T* g, const Geom& geo, const Params& p, Corners<K, A>& cr) {
  int64_t i0[K];
  A wt[K][2];
  bool okd[K][2];
  for (int i = 0; i < K; ++i) {
    const A pos = source_index(static_cast<A>(g[K - 1 - i]), geo.size[i], p, &cr.mult[i]);
    const A f = floor_(pos);
    wt[i][0] = (f + A(1)) - pos;
    wt[i][1] = pos - f;
    i0[i] = to_index(f, geo.size[i]);
    okd[i][0] = inside(i0[i], geo.size[i]);
    okd[i][1] = inside(i0[i] + 1, geo.size[i]);
  }
  for (int c = 0; c < Corners<K, A>::kN; ++c) {
    int64_t off = 0;
    bool ok = true;
    for (int i = 0; i < K; ++i) {
      const int b = (c >> (K - 1 - i)) & 1;
      off = off * geo.size[i] + (i0[i] + b);
      ok = ok && okd[i][b];
    }
    cr.off[c] = ok ? off : 0;
    cr.ok[c] = ok;
    // weights multiply x first (torch's (ix_se - ix) * (iy_se - iy) [* (iz_se - iz)])
    A w = wt[K - 1][c & 1];
    for (int i = K - 2; i >= 0; --i) w = w * wt[i][(c >> (K - 1 - i)) & 1];
    cr.w[c] = w;
    if constexpr (kGrad) {
      for (int i = 0; i < K; ++i) {
        A o = A(1);
        bool first = true;
        for (int j = K - 1; j >= 0; --j) {
          if (j == i) continue;
          const A v = wt[j][(c >> (K - 1 - j)) & 1];
          o = first ? v : o * v;
          first = false;
        }
        // d w / d pos_i: +other for the upper corner (weight pos - f), -other for the lower
        cr.other[c][i] = ((c >> (K - 1 - i)) & 1) ? o : -o;
      }
    }
  }
}

// The nearest pixel's flat offset, or -1 when outside (torch rounds half to even).
template <int K, class T, class A>
TS_GS_HD int64_t nearest_offset(const T* g, const Geom& geo, const Params& p) {
  int64_t off = 0;
  for (int i = 0; i < K; ++i) {
    A unused;
    const A pos = source_index(static_cast<A>(g[K - 1 - i]), geo.size[i], p, &unused);
    const int64_t ix = to_index(nearbyint_(pos), geo.size[i]);
    if (!inside(ix, geo.size[i])) return -1;
    off = off * geo.size[i] + ix;
  }
  return off;
}

// Bicubic (2-D): the 16 taps' offsets (-1 outside) in row y-major order, after padding each
// tap coordinate (torch's get_value_bounded), and the coefficients.
template <class T, class A>
struct Taps {
  int64_t off[4][4];  // [y][x]
  A cx[4], cy[4];
  A gx[4], gy[4];  // coefficient derivatives (backward only)
  A multx, multy;
};

template <class A>
TS_GS_HD int64_t tap_index(A v, int64_t size, const Params& p) {
  A unused;
  const int64_t i = to_index(pad_coord(v, size, p.pad, p.align_corners, &unused), size);
  return inside(i, size) ? i : -1;
}

template <class T, class A>
TS_GS_HD void bicubic_taps(const T* g, const Geom& geo, const Params& p, bool grads,
                           Taps<T, A>& tp) {
  const int64_t H = geo.size[0], W = geo.size[1];
  const A ix = unnormalize(static_cast<A>(g[0]), W, p.align_corners, &tp.multx);
  const A iy = unnormalize(static_cast<A>(g[1]), H, p.align_corners, &tp.multy);
  const A fx = floor_(ix), fy = floor_(iy);
  cubic_coeffs(ix - fx, tp.cx);
  cubic_coeffs(iy - fy, tp.cy);
  if (grads) {
    cubic_coeffs_grad(ix - fx, tp.gx);
    cubic_coeffs_grad(iy - fy, tp.gy);
  }
  int64_t xi[4], yi[4];
  for (int k = 0; k < 4; ++k) {
    xi[k] = tap_index(fx - A(1) + A(k), W, p);
    yi[k] = tap_index(fy - A(1) + A(k), H, p);
  }
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) tp.off[j][i] = (xi[i] < 0 || yi[j] < 0) ? -1 : yi[j] * W + xi[i];
}

// One output point, all channels: in is the image's input (C, *in), g the point's K grid
// components, out the image's output at this point (channel stride geo.out_plane).
template <int K, class T, class A>
TS_GS_HD void forward_point(const T* in, const T* g, T* out, const Geom& geo, const Params& p) {
  const int64_t C = geo.C, ip = geo.in_plane, op = geo.out_plane;
  if (p.mode == Interp::Nearest) {
    const int64_t off = nearest_offset<K, T, A>(g, geo, p);
    for (int64_t c = 0; c < C; ++c) out[c * op] = off < 0 ? T(A(0)) : in[c * ip + off];
    return;
  }
  if constexpr (K == 2) {
    if (p.mode == Interp::Bicubic) {
      Taps<T, A> tp;
      bicubic_taps<T, A>(g, geo, p, false, tp);
      for (int64_t c = 0; c < C; ++c) {
        const T* x = in + c * ip;
        A rows[4];
        for (int j = 0; j < 4; ++j) {
          A v[4];
          for (int i = 0; i < 4; ++i)
            v[i] = tp.off[j][i] < 0 ? A(0) : static_cast<A>(x[tp.off[j][i]]);
          rows[j] = v[0] * tp.cx[0] + v[1] * tp.cx[1] + v[2] * tp.cx[2] + v[3] * tp.cx[3];
        }
        out[c * op] =
            T(rows[0] * tp.cy[0] + rows[1] * tp.cy[1] + rows[2] * tp.cy[2] + rows[3] * tp.cy[3]);
      }
      return;
    }
  }
  Corners<K, A> cr;
  bilinear_corners<K, T, A, false>(g, geo, p, cr);
  for (int64_t c = 0; c < C; ++c) {
    const T* x = in + c * ip;
    A v = A(0);
    // an outside corner adds 0 * its weight on 2-D grids: a NaN weight (a NaN or infinite grid
    // value) makes the output NaN, as torch's CPU kernel (its 3-D kernel skips the corner)
    for (int k = 0; k < Corners<K, A>::kN; ++k)
      v += cr.ok[k] ? static_cast<A>(x[cr.off[k]]) * cr.w[k] : (K == 2 ? A(0) * cr.w[k] : A(0));
    out[c * op] = T(v);
  }
}

// The backward of one output point: gout the image's output gradient at this point (channel
// stride out_plane); gin (the image's input gradient, or null) receives add(gin + i, v); gg (this
// point's K grid-gradient components, or null) is written.
template <int K, class T, class A, class Add>
TS_GS_HD void backward_point(const T* gout, const T* in, T* gin, const T* g, T* gg, const Geom& geo,
                             const Params& p, Add add) {
  const int64_t C = geo.C, ip = geo.in_plane, op = geo.out_plane;
  if (p.mode == Interp::Nearest) {  // the grid gets zeros, as torch's
    if (gin) {
      const int64_t off = nearest_offset<K, T, A>(g, geo, p);
      if (off >= 0)
        for (int64_t c = 0; c < C; ++c) add(gin + c * ip + off, static_cast<A>(gout[c * op]));
    }
    if (gg)
      for (int i = 0; i < K; ++i) gg[i] = T(A(0));
    return;
  }
  if constexpr (K == 2) {
    if (p.mode == Interp::Bicubic) {
      Taps<T, A> tp;
      bicubic_taps<T, A>(g, geo, p, gg != nullptr, tp);
      A gix = A(0), giy = A(0);
      for (int64_t c = 0; c < C; ++c) {
        const A go = static_cast<A>(gout[c * op]);
        const T* x = in + c * ip;
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) {
            const int64_t o = tp.off[j][i];
            if (o < 0) continue;
            if (gin) add(gin + c * ip + o, go * tp.cx[i] * tp.cy[j]);
            if (gg) {
              const A v = static_cast<A>(x[o]);
              gix -= v * tp.gx[i] * tp.cy[j] * go;
              giy -= v * tp.gy[j] * tp.cx[i] * go;
            }
          }
      }
      if (gg) {
        gg[0] = T(tp.multx * gix);
        gg[1] = T(tp.multy * giy);
      }
      return;
    }
  }
  Corners<K, A> cr;
  bilinear_corners<K, T, A>(g, geo, p, cr);
  A gpos[K];
  for (int i = 0; i < K; ++i) gpos[i] = A(0);
  for (int64_t c = 0; c < C; ++c) {
    const A go = static_cast<A>(gout[c * op]);
    for (int k = 0; k < Corners<K, A>::kN; ++k) {
      if (!cr.ok[k]) continue;
      if (gin) add(gin + c * ip + cr.off[k], cr.w[k] * go);
      if (gg) {
        const A v = static_cast<A>(in[c * ip + cr.off[k]]) * go;
        for (int i = 0; i < K; ++i) gpos[i] += v * cr.other[k][i];
      }
    }
  }
  if (gg)  // grid components in x, y[, z] order
    for (int i = 0; i < K; ++i) gg[K - 1 - i] = T(cr.mult[i] * gpos[i]);
}

}  // namespace ts::gs

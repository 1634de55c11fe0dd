// Note [Winograd convolutions on the CPU]
// A 3x3 stride-1 convolution computes each 2x2 output tile from a 4x4 input tile d with
// Y = A^T [(G g G^T) . (B^T d B)] A (Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2016): 16 multiplications per tile and channel pair instead of 36. Over a batch
// the elementwise products become 16 GEMMs, one per position xi of the 4x4 transformed tile:
//   M[xi] (O, T) = U[xi] (O, C) @ V[xi] (C, T)
// with U the transformed weights, V the transformed input tiles (T tiles), after which the
// output transform A^T M A writes the 2x2 outputs. The input gradient of such a convolution
// is again one (the kernel flipped, its channel axes swapped, padding 2 - p), and the weight
// gradient is the adjoint in g of the same trilinear form:
//   gw = G^T [ sum over tiles (A u A^T) . (B^T d B) ] G    (u: the 2x2 tile of gy)
// i.e. 16 GEMMs (O, T) @ (T, C) accumulated over tiles, then one 4x4 -> 3x3 transform per
// (o, c). Tiles are taken a block of whole images at a time, sized so the transformed tiles
// of a block stay in the L2 cache; the transforms are parallel_for loops over planes and the
// GEMMs are the BLAS's (threaded by it). Accuracy: the transforms' coefficients are 0, +-1
// and +-1/2, so the result differs from im2col + GEMM by a few units of rounding of the sums
// (checked against PyTorch in tests/test_nn_conv_winograd.py).
#include "cpu/conv_winograd.h"

#include <algorithm>
#include <memory>

#include "core/parallel.h"
#include "cpu/blas.h"
#include "cpu/conv_tasks.h"
#include "cpu/simd_clones.h"

namespace ts {
namespace winograd {
namespace {

template <class T>
std::unique_ptr<T[]> uninit(int64_t n) {
  return std::unique_ptr<T[]>(new T[static_cast<size_t>(std::max<int64_t>(n, 1))]);
}

// The calling thread's scratch buffers (transformed weights, tiles, products), kept between
// calls up to kKeep bytes each: allocating them afresh costs a page fault per 4 KB on every
// call (the buffers are megabytes), which measured more than the transforms themselves.
// Slot 0 (the transformed weights) and 3 (the weight gradient's accumulators) belong to the
// thread that runs the convolution; slots 1 and 2 (a block's tiles) to each task's thread.
class Scratch {
 public:
  template <class T>
  T* get(int slot, int64_t n) {
    const size_t bytes = static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(T);
    Buf& b = bufs_[slot];
    if (bytes > b.size || !b.keep) {
      b.p.reset(new unsigned char[bytes]);
      b.size = bytes;
      b.keep = bytes <= kKeep;
    }
    return reinterpret_cast<T*>(b.p.get());
  }
  // Buffers over kKeep (of slots [first, end)) are freed when the call ends.
  void release_large(int first = 0, int end = 4) {
    for (int i = first; i < end; ++i)
      if (!bufs_[i].keep) bufs_[i] = Buf();
  }

 private:
  static constexpr size_t kKeep = size_t(64) << 20;
  struct Buf {
    std::unique_ptr<unsigned char[]> p;
    size_t size = 0;
    bool keep = true;
  };
  Buf bufs_[4];
};

// The distance between the 16 matrices of a transformed buffer: n values rounded up to a
// cache line plus one more line. The transforms read or write all 16 at once, and at a
// power-of-two distance (a power-of-two channel count) the 16 streams would fall into one set
// of the 12-way L1 cache and evict each other on every access.
inline int64_t xi_stride(int64_t n) { return (n + 15) / 16 * 16 + 16; }

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}
struct ScratchScope {
  ~ScratchScope() { scratch().release_large(); }
};

// U[xi * xi_stride(no * ni) + o * ni + c] = (G g G^T)[xi] of the 3x3 kernel g = w[o][c] (or,
// `flipped`, of w[c][o] turned by 180 degrees: the kernel of the input gradient). Out channels
// `no`, in `ni`.
template <class T>
void transform_weights(const T* w, T* U, int64_t no, int64_t ni, bool flipped) {
  const int64_t us = xi_stride(no * ni);
  parallel_for(0, no * ni, kGrainSize / 16, [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const int64_t o = p / ni, c = p % ni;
      T g[3][3];
      const T* src = flipped ? w + (c * no + o) * 9 : w + (o * ni + c) * 9;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) g[a][b] = flipped ? src[(2 - a) * 3 + (2 - b)] : src[a * 3 + b];
      // G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
      T t[4][3];
      for (int b = 0; b < 3; ++b) {
        t[0][b] = g[0][b];
        t[1][b] = T(0.5) * (g[0][b] + g[1][b] + g[2][b]);
        t[2][b] = T(0.5) * (g[0][b] - g[1][b] + g[2][b]);
        t[3][b] = g[2][b];
      }
      for (int a = 0; a < 4; ++a) {
        const T u[4] = {t[a][0], T(0.5) * (t[a][0] + t[a][1] + t[a][2]),
                        T(0.5) * (t[a][0] - t[a][1] + t[a][2]), t[a][2]};
        for (int b = 0; b < 4; ++b) U[(a * 4 + b) * us + o * ni + c] = u[b];
      }
    }
  });
}

// The 16 transformed tiles B^T d B of one (H, W) plane, tile (i, j) covering input rows
// 2i - ph .. 2i - ph + 3 and columns 2j - pw .. 2j - pw + 3 (zero outside the plane), into
// V[xi * ld + i * tw + j]. Each of the 4 input rows of a tile row is split into its even and
// odd padded columns, so the transforms are contiguous (vectorizable) loops. `rows` is scratch
// of 8 * (tw + 1) values.
template <class T>
TS_SIMD_CLONES void input_tiles(const T* x, int64_t H, int64_t W, int64_t ph, int64_t pw,
                                int64_t th, int64_t tw, T* V, int64_t ld, T* rows) {
  const int64_t Wh = tw + 1;  // padded columns 0 .. 2 tw + 1, even and odd halves
  T* e[4];
  T* o[4];
  for (int k = 0; k < 4; ++k) {
    e[k] = rows + 2 * k * Wh;
    o[k] = e[k] + Wh;
  }
  for (int64_t i = 0; i < th; ++i) {
    for (int k = 0; k < 4; ++k) {
      const int64_t h = 2 * i - ph + k;
      if (h < 0 || h >= H) {
        std::fill(e[k], e[k] + Wh, T(0));
        std::fill(o[k], o[k] + Wh, T(0));
        continue;
      }
      const T* src = x + h * W;
      T* ek = e[k];
      T* ok = o[k];
      // padded column q holds x[q - pw] when 0 <= q - pw < W
      for (int64_t q = 0; q < Wh; ++q) {
        const int64_t c0 = 2 * q - pw, c1 = c0 + 1;
        ek[q] = c0 >= 0 && c0 < W ? src[c0] : T(0);
        ok[q] = c1 >= 0 && c1 < W ? src[c1] : T(0);
      }
    }
    // B^T down the rows: [d0 - d2, d1 + d2, d2 - d1, d1 - d3], on both halves
    for (T** h : {e, o})
      for (int64_t q = 0; q < Wh; ++q) {
        const T d0 = h[0][q], d1 = h[1][q], d2 = h[2][q], d3 = h[3][q];
        h[0][q] = d0 - d2;
        h[3][q] = d1 - d3;
        h[1][q] = d1 + d2;
        h[2][q] = d2 - d1;
      }
    // and B along the columns: tile j reads padded columns 2j .. 2j + 3 = e[j], o[j],
    // e[j + 1], o[j + 1]
    T* out = V + i * tw;
    for (int k = 0; k < 4; ++k) {
      const T* ek = e[k];
      const T* ok = o[k];
      T* o0 = out + (4 * k) * ld;
      T* o1 = o0 + ld;
      T* o2 = o1 + ld;
      T* o3 = o2 + ld;
      for (int64_t j = 0; j < tw; ++j) o0[j] = ek[j] - ek[j + 1];
      for (int64_t j = 0; j < tw; ++j) o1[j] = ok[j] + ek[j + 1];
      for (int64_t j = 0; j < tw; ++j) o2[j] = ek[j + 1] - ok[j];
      for (int64_t j = 0; j < tw; ++j) o3[j] = ok[j] - ok[j + 1];
    }
  }
}

// The 2x2 output tiles A^T m A of one (Ho, Wo) plane from M[xi * ld + i * tw + j].
// A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]. `rows` is scratch of 4 * tw values.
template <class T>
TS_SIMD_CLONES void output_tiles(const T* M, int64_t ld, int64_t th, int64_t tw, T* y, int64_t Ho,
                                 int64_t Wo, T* rows) {
  for (int64_t i = 0; i < th; ++i) {
    const T* m = M + i * tw;
    T* y00 = rows;
    T* y01 = rows + tw;
    T* y10 = rows + 2 * tw;
    T* y11 = rows + 3 * tw;
    for (int64_t j = 0; j < tw; ++j) {
      T s[4], e[4];  // per row k of m: m0 + m1 + m2 and m1 - m2 - m3
      for (int k = 0; k < 4; ++k) {
        const T m0 = m[(4 * k) * ld + j], m1 = m[(4 * k + 1) * ld + j],
                m2 = m[(4 * k + 2) * ld + j], m3 = m[(4 * k + 3) * ld + j];
        s[k] = m0 + m1 + m2;
        e[k] = m1 - m2 - m3;
      }
      y00[j] = s[0] + s[1] + s[2];
      y10[j] = s[1] - s[2] - s[3];
      y01[j] = e[0] + e[1] + e[2];
      y11[j] = e[1] - e[2] - e[3];
    }
    for (int r = 0; r < 2; ++r) {
      const int64_t h = 2 * i + r;
      if (h >= Ho) break;
      const T* v0 = r == 0 ? y00 : y10;
      const T* v1 = r == 0 ? y01 : y11;
      T* dst = y + h * Wo;
      const int64_t full = Wo / 2;
      for (int64_t j = 0; j < full; ++j) {
        dst[2 * j] = v0[j];
        dst[2 * j + 1] = v1[j];
      }
      if (Wo % 2) dst[Wo - 1] = v0[full];
    }
  }
}

// The transformed gradient tiles A u A^T (u: the 2x2 tile of gy at (2i, 2j), zero past the
// plane) into G[xi * ld + i * tw + j]. A = [[1, 0], [1, 1], [1, -1], [0, -1]]. `rows` is
// scratch of 2 * (2 tw) values.
template <class T>
TS_SIMD_CLONES void grad_tiles(const T* gy, int64_t Ho, int64_t Wo, int64_t th, int64_t tw, T* G,
                               int64_t ld, T* rows) {
  const int64_t Wp = 2 * tw;
  T* r0 = rows;
  T* r1 = rows + Wp;
  for (int64_t i = 0; i < th; ++i) {
    for (int k = 0; k < 2; ++k) {
      T* dst = k == 0 ? r0 : r1;
      const int64_t h = 2 * i + k;
      if (h >= Ho) {
        std::fill(dst, dst + Wp, T(0));
        continue;
      }
      std::copy(gy + h * Wo, gy + h * Wo + Wo, dst);
      std::fill(dst + Wo, dst + Wp, T(0));
    }
    T* out = G + i * tw;
    for (int64_t j = 0; j < tw; ++j) {
      const T u00 = r0[2 * j], u01 = r0[2 * j + 1], u10 = r1[2 * j], u11 = r1[2 * j + 1];
      // rows of A u: [u0], [u0 + u1], [u0 - u1], [-u1]; then each row [p, q] -> [p, p + q,
      // p - q, -q]
      const T p[4] = {u00, u00 + u10, u00 - u10, -u10};
      const T q[4] = {u01, u01 + u11, u01 - u11, -u11};
      for (int k = 0; k < 4; ++k) {
        out[(4 * k) * ld + j] = p[k];
        out[(4 * k + 1) * ld + j] = p[k] + q[k];
        out[(4 * k + 2) * ld + j] = p[k] - q[k];
        out[(4 * k + 3) * ld + j] = -q[k];
      }
    }
  }
}

// Tiles of a block: whole images, as many as keep the block's transformed tiles of both
// sides (16 (ci + co) values per tile) within ~2 MB (the L2 cache), at least one image.
// Measured (1 thread, ResNet-18 CIFAR shapes at batch 32): larger blocks (at least 256 or
// 1024 tiles) were no faster for the forward and up to 2x slower for the weight gradient.
// With several threads (Note [Convolutions split by images across threads]) a block holds at
// most a thread's share of the images, so every thread gets blocks.
int64_t images_per_block(int64_t tiles, int64_t ci, int64_t co, int64_t N, int tasks) {
  constexpr int64_t kBlockValues = int64_t(1) << 19;
  const int64_t per_image = 16 * (ci + co) * std::max<int64_t>(tiles, 1);
  return conv_chunk(kBlockValues / per_image, N, tasks);
}

inline int64_t plane_grain(int64_t plane_values) {
  return std::max<int64_t>(1, 16 * kGrainSize / std::max<int64_t>(plane_values, 1));
}

// y (N, co, Ho, Wo) = the convolution of x (N, ci, H, W) by U (16, co, ci), padding (ph, pw).
template <class T>
void run_forward(const T* x, const T* U, T* y, int64_t N, int64_t ci, int64_t co, int64_t H,
                 int64_t W, int64_t ph, int64_t pw) {
  const int64_t Ho = H + 2 * ph - 2, Wo = W + 2 * pw - 2;
  const int64_t th = (Ho + 1) / 2, tw = (Wo + 1) / 2, P = th * tw;
  const int tasks = conv_tasks(N);
  const int64_t B = images_per_block(P, ci, co, N, tasks), blocks = (N + B - 1) / B;
  const int64_t vs = xi_stride(ci * B * P), ms = xi_stride(co * B * P), us = xi_stride(co * ci);
  run_conv_tasks(tasks, blocks, [&](int64_t, int64_t b0, int64_t b1) {
    T* V = scratch().get<T>(1, 16 * vs);  // this thread's
    T* M = scratch().get<T>(2, 16 * ms);
    for (int64_t n0 = b0 * B; n0 < std::min(N, b1 * B); n0 += B) {
      const int64_t nb = std::min(B, N - n0), Tn = nb * P;
      parallel_for(0, nb * ci, plane_grain(16 * P), [&](int64_t lo, int64_t hi) {
        auto rows = uninit<T>(8 * (tw + 1));
        for (int64_t p = lo; p < hi; ++p) {
          const int64_t j = p / ci, c = p % ci;
          input_tiles(x + ((n0 + j) * ci + c) * H * W, H, W, ph, pw, th, tw, V + c * Tn + j * P, vs,
                      rows.get());
        }
      });
      for (int64_t xi = 0; xi < 16; ++xi)
        gemm<T>(false, false, co, Tn, ci, U + xi * us, ci, V + xi * vs, Tn, M + xi * ms, Tn);
      parallel_for(0, nb * co, plane_grain(16 * P), [&](int64_t lo, int64_t hi) {
        auto rows = uninit<T>(4 * tw);
        for (int64_t p = lo; p < hi; ++p) {
          const int64_t j = p / co, o = p % co;
          output_tiles(M + o * Tn + j * P, ms, th, tw, y + ((n0 + j) * co + o) * Ho * Wo, Ho, Wo,
                       rows.get());
        }
      });
    }
    scratch().release_large(1, 3);  // a task's tiles
  });
}

}  // namespace

bool pays(const Geometry& g) {
  // Measured on the 2-core AVX-512 Xeon (docs/benchmarks.md, CNNs on the CPU): with few
  // channels the 16 GEMMs have too short a reduction and the transforms dominate.
  return g.C >= 16 && g.O >= 16 && g.Ho() >= 4 && g.Wo() >= 4;
}

template <class T>
void forward(const T* x, const T* w, T* y, const Geometry& g) {
  ScratchScope scope;
  T* U = scratch().get<T>(0, 16 * xi_stride(g.O * g.C));
  transform_weights(w, U, g.O, g.C, false);
  run_forward(x, U, y, g.N, g.C, g.O, g.H, g.W, g.ph, g.pw);
}

template <class T>
void input_grad(const T* gy, const T* w, T* gx, const Geometry& g) {
  ScratchScope scope;
  T* U = scratch().get<T>(0, 16 * xi_stride(g.O * g.C));
  transform_weights(w, U, g.C, g.O, true);
  run_forward(gy, U, gx, g.N, g.O, g.C, g.Ho(), g.Wo(), 2 - g.ph, 2 - g.pw);
}

template <class T>
void weight_grad(const T* gy, const T* x, T* gw, const Geometry& g) {
  const int64_t Ho = g.Ho(), Wo = g.Wo(), th = (Ho + 1) / 2, tw = (Wo + 1) / 2, P = th * tw;
  const int64_t C = g.C, O = g.O;
  ScratchScope scope;
  const int tasks = conv_tasks(g.N);
  const int64_t B = images_per_block(P, C, O, g.N, tasks), blocks = (g.N + B - 1) / B;
  const int64_t vs = xi_stride(C * B * P), gs = xi_stride(O * B * P), as = xi_stride(O * C);
  T* acc = scratch().get<T>(3, int64_t(tasks) * 16 * as);  // one accumulator per task
  run_conv_tasks(tasks, blocks, [&](int64_t t, int64_t b0, int64_t b1) {
    T* V = scratch().get<T>(1, 16 * vs);
    T* Gt = scratch().get<T>(2, 16 * gs);
    T* a = acc + t * 16 * as;
    for (int64_t n0 = b0 * B; n0 < std::min(g.N, b1 * B); n0 += B) {
      const int64_t nb = std::min(B, g.N - n0), Tn = nb * P;
      parallel_for(0, nb * (C + O), plane_grain(16 * P), [&](int64_t lo, int64_t hi) {
        auto rows = uninit<T>(8 * (tw + 1));
        for (int64_t p = lo; p < hi; ++p) {
          const int64_t j = p / (C + O), c = p % (C + O);
          if (c < C)
            input_tiles(x + ((n0 + j) * C + c) * g.H * g.W, g.H, g.W, g.ph, g.pw, th, tw,
                        V + c * Tn + j * P, vs, rows.get());
          else
            grad_tiles(gy + ((n0 + j) * O + (c - C)) * Ho * Wo, Ho, Wo, th, tw,
                       Gt + (c - C) * Tn + j * P, gs, rows.get());
        }
      });
      for (int64_t xi = 0; xi < 16; ++xi)
        gemm<T>(false, true, O, C, Tn, Gt + xi * gs, Tn, V + xi * vs, Tn, a + xi * as, C,
                n0 == b0 * B ? T(0) : T(1));
    }
    if (b0 == b1) std::fill(a, a + 16 * as, T(0));
    scratch().release_large(1, 3);
  });
  // the tasks' accumulators summed in task order into the first
  if (tasks > 1)
    parallel_for(0, 16 * as, kGrainSize, [&](int64_t lo, int64_t hi) {
      for (int t = 1; t < tasks; ++t) {
        const T* src = acc + t * 16 * as;
        for (int64_t i = lo; i < hi; ++i) acc[i] += src[i];
      }
    });
  // gw[o][c] = G^T acc[.][o][c] G, G^T = [[1, 1/2, 1/2, 0], [0, 1/2, -1/2, 0], [0, 1/2, 1/2, 1]]
  const T* a = acc;
  parallel_for(0, O * C, kGrainSize / 16, [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      T m[4][4];
      for (int xi = 0; xi < 16; ++xi) m[xi / 4][xi % 4] = a[xi * as + p];
      T t[3][4];
      for (int b = 0; b < 4; ++b) {
        t[0][b] = m[0][b] + T(0.5) * (m[1][b] + m[2][b]);
        t[1][b] = T(0.5) * (m[1][b] - m[2][b]);
        t[2][b] = T(0.5) * (m[1][b] + m[2][b]) + m[3][b];
      }
      T* out = gw + p * 9;
      for (int r = 0; r < 3; ++r) {
        out[r * 3 + 0] = t[r][0] + T(0.5) * (t[r][1] + t[r][2]);
        out[r * 3 + 1] = T(0.5) * (t[r][1] - t[r][2]);
        out[r * 3 + 2] = T(0.5) * (t[r][1] + t[r][2]) + t[r][3];
      }
    }
  });
}

template void forward<float>(const float*, const float*, float*, const Geometry&);
template void forward<double>(const double*, const double*, double*, const Geometry&);
template void input_grad<float>(const float*, const float*, float*, const Geometry&);
template void input_grad<double>(const double*, const double*, double*, const Geometry&);
template void weight_grad<float>(const float*, const float*, float*, const Geometry&);
template void weight_grad<double>(const double*, const double*, double*, const Geometry&);

}  // namespace winograd
}  // namespace ts

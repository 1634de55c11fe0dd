// CPU kernels of grid_sample (ops/nn/grid_sample.h), forward and backward, 4-D and 5-D input:
// the per-point math of kernels/grid_sample_math.h (Note [Native grid sampling] in
// ops/nn/grid_sample.cpp). The forward splits the output points across threads; the backward
// splits the images when the input's gradient is wanted (each image's scatter runs in one
// order, so results do not depend on the thread count), the points otherwise.
#include <algorithm>

#include "core/parallel.h"
#include "ops/nn/grid_sample.h"

namespace ts {
namespace {

constexpr uint32_t kGridDTypes =
    (1u << static_cast<int>(DType::Float32)) | (1u << static_cast<int>(DType::Float64));

// Points per task: a point costs about C * 2^K multiply-adds.
int64_t point_grain(const gs::Geom& geo, int k) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, geo.C * (int64_t(1) << k)));
}

// Note [Grid sampling in blocks of points]: the forward takes up to kBlock points of one
// image at a time: their corners (or nearest offsets) first, then channel by channel a loop
// over the block that writes the output contiguously and selects, not branches on, whether a
// corner is inside (a corner outside contributes exactly 0, as torch's skipped corner, even
// when the pixel read in its place is inf or NaN). Bicubic runs point by point.
constexpr int64_t kBlock = 64;

template <int K, class T>
void forward_block(const T* x, const T* g, T* out, int64_t m, const gs::Geom& geo,
                   const gs::Params& p) {
  constexpr int NC = 1 << K;
  const int64_t C = geo.C, ip = geo.in_plane, P = geo.out_plane;
  if (p.mode == gs::Interp::Bicubic) {
    for (int64_t j = 0; j < m; ++j) gs::forward_point<K, T, T>(x, g + j * K, out + j, geo, p);
    return;
  }
  if (p.mode == gs::Interp::Nearest) {
    int64_t off[kBlock];
    bool ok[kBlock];
    for (int64_t j = 0; j < m; ++j) {
      const int64_t o = gs::nearest_offset<K, T, T>(g + j * K, geo, p);
      ok[j] = o >= 0;
      off[j] = ok[j] ? o : 0;
    }
    for (int64_t c = 0; c < C; ++c) {
      const T* xc = x + c * ip;
      T* oc = out + c * P;
      for (int64_t j = 0; j < m; ++j) {
        const T v = xc[off[j]];
        oc[j] = ok[j] ? v : T(0);
      }
    }
    return;
  }
  int64_t off[NC][kBlock];
  bool ok[NC][kBlock];
  T w[NC][kBlock];
  for (int64_t j = 0; j < m; ++j) {
    gs::Corners<K, T> cr;
    gs::bilinear_corners<K, T, T, false>(g + j * K, geo, p, cr);
    for (int k = 0; k < NC; ++k) {
      off[k][j] = cr.off[k];
      ok[k][j] = cr.ok[k];
      w[k][j] = cr.w[k];
    }
  }
  for (int64_t c = 0; c < C; ++c) {
    const T* xc = x + c * ip;
    T* oc = out + c * P;
    for (int64_t j = 0; j < m; ++j) {
      T v = T(0);
      for (int k = 0; k < NC; ++k) {
        const T t = xc[off[k][j]] * w[k][j];
        // (2-D: 0 * w, so a NaN weight from a NaN or infinite grid value gives NaN, as torch)
        v += ok[k][j] ? t : (K == 2 ? T(0) * w[k][j] : T(0));
      }
      oc[j] = v;
    }
  }
}

template <int K, class T>
void forward(const Tensor& x, const Tensor& grid, const Tensor& out, const gs::Params& p) {
  const gs::Geom geo = nn::grid_sample_geom(x, grid);
  const int64_t P = geo.out_plane, img = geo.C * geo.in_plane, oimg = geo.C * P;
  const T* xp = x.data<T>();
  const T* gp = grid.data<T>();
  T* op = out.data<T>();
  parallel_for(0, x.dim(0) * P, point_grain(geo, K), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e;) {
      const int64_t n = i / P, q = i - n * P;
      const int64_t m = std::min({kBlock, e - i, P - q});  // within one image
      forward_block<K, T>(xp + n * img, gp + i * K, op + n * oimg + q, m, geo, p);
      i += m;
    }
  });
}

struct AddTo {
  template <class T>
  void operator()(T* at, T v) const {
    *at += v;
  }
};

template <int K, class T>
void backward(const Tensor& gy, const Tensor& x, const Tensor& grid, const Tensor& gx,
              const Tensor& gg, const gs::Params& p) {
  const gs::Geom geo = nn::grid_sample_geom(x, grid);
  const int64_t N = x.dim(0), P = geo.out_plane, img = geo.C * geo.in_plane, oimg = geo.C * P;
  const T* gyp = gy.data<T>();
  const T* xp = x.data<T>();
  const T* gp = grid.data<T>();
  T* gxp = gx.defined() ? gx.data<T>() : nullptr;
  T* ggp = gg.defined() ? gg.data<T>() : nullptr;
  auto point = [&](int64_t i) {
    const int64_t n = i / P;
    gs::backward_point<K, T, T>(gyp + n * oimg + (i - n * P), xp + n * img,
                                gxp ? gxp + n * img : nullptr, gp + i * K,
                                ggp ? ggp + i * K : nullptr, geo, p, AddTo{});
  };
  if (gxp) {
    const int64_t grain = std::max<int64_t>(1, point_grain(geo, K) / std::max<int64_t>(1, P));
    parallel_for(0, N, grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b * P; i < e * P; ++i) point(i);
    });
  } else {
    parallel_for(0, N * P, point_grain(geo, K), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) point(i);
    });
  }
}

void cpu_grid_sample(const Tensor& x, const Tensor& grid, const Tensor& out, const gs::Params& p) {
  visit_dtype<kGridDTypes>(x.dtype(), "grid_sample", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (x.ndim() == 4)
      forward<2, T>(x, grid, out, p);
    else
      forward<3, T>(x, grid, out, p);
  });
}

void cpu_grid_sample_backward(const Tensor& gy, const Tensor& x, const Tensor& grid,
                              const Tensor& gx, const Tensor& gg, const gs::Params& p) {
  visit_dtype<kGridDTypes>(x.dtype(), "grid_sample_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (x.ndim() == 4)
      backward<2, T>(gy, x, grid, gx, gg, p);
    else
      backward<3, T>(gy, x, grid, gx, gg, p);
  });
}

}  // namespace

TS_REGISTER_KERNEL(grid_sample_stub, CPU, &cpu_grid_sample);
TS_REGISTER_KERNEL(grid_sample_backward_stub, CPU, &cpu_grid_sample_backward);

}  // namespace ts

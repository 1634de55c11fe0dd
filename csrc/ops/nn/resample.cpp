// F.interpolate (resample.h).
//
// Note [Separable resampling by gathered taps]
// Every mode but area is separable: along one spatial axis, output position i reads a few
// input positions (taps) idx_k[i] with weights w_k[i] (1 tap for nearest, 2 for linear, 4 for
// bicubic, a window for antialias). The taps and weights are computed on the host with
// PyTorch's index arithmetic (float32 for float32/half inputs, float64 for float64, as
// PyTorch's opmath; s * (i + 0.5) - 0.5 rounded once, as its compiled kernels' fused
// multiply-add), then the axis is resampled with differentiable ops:
// - short axes (n <= kDenseMax) of the weighted modes on finite input: one (m, n) matmul with
//   the taps' weights (the rest exact zeros, so the same sums; BLAS beats a gather there);
// - else one gather of all taps (index_select; a broadcast for nearest integer upscaling)
//   and sum_k gathered_k * w_k. The gather's backward scatter-adds, so overlapping taps
//   accumulate as in PyTorch's backward. Infinities and NaNs take this path, since
//   0 * inf would spread NaN along a matmul row.
// Axes are resampled one after another, the last first while the tensor is smallest; the
// result differs from PyTorch's fused kernels only by rounding order. Area mode is adaptive
// average pooling (ops/pool.h). Gradients of every order and device support come from the
// ops used.
#include "ops/nn/resample.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/linalg.h"
#include "ops/math.h"
#include "ops/pool.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts::nn {
namespace {

constexpr const char* kOp = "interpolate";
constexpr int64_t kDenseMax = 256;

enum class Mode { Nearest, NearestExact, Linear, Cubic, Area };

struct ModeInfo {
  const char* name;
  Mode mode;
  int nsp;  // the spatial dims the mode needs; 0: any of 1, 2, 3
};
constexpr ModeInfo kModes[] = {
    {"nearest", Mode::Nearest, 0}, {"nearest-exact", Mode::NearestExact, 0},
    {"linear", Mode::Linear, 1},   {"bilinear", Mode::Linear, 2},
    {"bicubic", Mode::Cubic, 2},   {"trilinear", Mode::Linear, 3},
    {"area", Mode::Area, 0},
};

// One axis's taps: k rows of m input positions, and (weighted modes) k rows of weights.
struct Taps {
  int64_t k = 0, m = 0;
  std::vector<int64_t> idx;  // k * m
  std::vector<double> w;     // k * m (values of the opmath type), empty for nearest
};

// s * (i + 0.5) - 0.5 rounded once to F (the product is exact in the wider type).
template <class F>
F half_pixel_source(F s, int64_t i) {
  using W = std::conditional_t<std::is_same_v<F, float>, double, long double>;
  return static_cast<F>(static_cast<W>(s) * (static_cast<W>(i) + W(0.5)) - W(0.5));
}

// PyTorch's area_pixel_compute_scale.
template <class F>
F area_scale(int64_t n, int64_t m, bool align_corners, std::optional<double> scale) {
  if (align_corners) return m > 1 ? F(n - 1) / F(m - 1) : F(0);
  if (scale && *scale > 0) return static_cast<F>(1.0 / *scale);
  return F(n) / F(m);
}

// PyTorch's nearest_idx / nearest_neighbor_exact_compute_source_index (float32 math).
// `shortcuts`: same-size and doubled axes copy / halve the index whatever the scale, as
// PyTorch's 2-D nearest kernel (its 1-D and 3-D kernels always use the scale).
Taps nearest_taps(int64_t n, int64_t m, std::optional<double> scale, bool exact, bool shortcuts) {
  Taps t{1, m, std::vector<int64_t>(m), {}};
  const float s = scale && *scale > 0 ? static_cast<float>(1.0 / *scale) : float(n) / float(m);
  for (int64_t i = 0; i < m; ++i) {
    if (!exact && shortcuts && m == n) {
      t.idx[i] = i;
    } else if (!exact && shortcuts && m == 2 * n) {
      t.idx[i] = i >> 1;
    } else {
      const float pos = exact ? (static_cast<float>(i) + 0.5f) * s : static_cast<float>(i) * s;
      t.idx[i] = std::min(static_cast<int64_t>(std::floor(pos)), n - 1);
    }
  }
  return t;
}

template <class F>
Taps linear_taps(int64_t n, int64_t m, bool ac, std::optional<double> scale) {
  Taps t{2, m, std::vector<int64_t>(2 * m), std::vector<double>(2 * m)};
  const F s = area_scale<F>(n, m, ac, scale);
  for (int64_t i = 0; i < m; ++i) {
    const F src = ac ? s * static_cast<F>(i) : std::max(half_pixel_source(s, i), F(0));
    const int64_t i0 = std::min(static_cast<int64_t>(src), n - 1);
    const F lam = std::clamp(src - static_cast<F>(i0), F(0), F(1));
    t.idx[i] = i0;
    t.idx[m + i] = std::min(i0 + 1, n - 1);
    t.w[i] = F(1) - lam;
    t.w[m + i] = lam;
  }
  return t;
}

template <class F>
Taps cubic_taps(int64_t n, int64_t m, bool ac, std::optional<double> scale) {
  Taps t{4, m, std::vector<int64_t>(4 * m), std::vector<double>(4 * m)};
  const F s = area_scale<F>(n, m, ac, scale);
  const F a = F(-0.75);
  auto conv1 = [a](F v) { return ((a + 2) * v - (a + 3)) * v * v + 1; };        // |v| <= 1
  auto conv2 = [a](F v) { return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a; };  // 1 < |v| < 2
  for (int64_t i = 0; i < m; ++i) {
    const F src = ac ? s * static_cast<F>(i) : half_pixel_source(s, i);
    const F base = std::floor(src);
    const F f = src - base;
    const F w[4] = {conv2(f + 1), conv1(f), conv1(1 - f), conv2(2 - f)};
    for (int64_t k = 0; k < 4; ++k) {
      t.idx[k * m + i] = std::clamp(static_cast<int64_t>(base) + k - 1, int64_t(0), n - 1);
      t.w[k * m + i] = w[k];
    }
  }
  return t;
}

// PyTorch's antialiasing filters: triangle for bilinear, Keys cubic (a = -0.5) for bicubic.
double aa_filter(double x, bool cubic) {
  x = std::abs(x);
  if (!cubic) return std::max(1 - x, 0.0);
  const double a = -0.5;
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// PyTorch's antialiased (PIL-style) weights: the filter widened by the downscaling factor,
// evaluated at the input pixel centres of a window around each output centre, normalized to
// sum 1.
template <class F>
Taps aa_taps(int64_t n, int64_t m, bool ac, std::optional<double> scale, bool cubic) {
  const F s = area_scale<F>(n, m, ac, scale);
  const int interp = cubic ? 4 : 2;
  const F support = s >= 1 ? F(interp * 0.5) * s : F(interp * 0.5);
  const F invscale = s >= 1 ? F(1) / s : F(1);
  const int64_t width = static_cast<int64_t>(std::ceil(static_cast<double>(support))) * 2 + 1;
  Taps t{width, m, std::vector<int64_t>(width * m), std::vector<double>(width * m)};
  std::vector<F> w(width);
  for (int64_t i = 0; i < m; ++i) {
    const F center = s * (static_cast<F>(i) + F(0.5));
    const int64_t xmin =
        std::max(static_cast<int64_t>(std::trunc(center - support + F(0.5))), int64_t(0));
    const int64_t xmax = std::min(static_cast<int64_t>(std::trunc(center + support + F(0.5))), n);
    const int64_t xsize = std::clamp(xmax - xmin, int64_t(0), width);
    F total = 0;
    for (int64_t j = 0; j < width; ++j) {
      const double arg = (static_cast<double>(j + xmin) - static_cast<double>(center) + 0.5) *
                         static_cast<double>(invscale);
      w[j] = j < xsize ? static_cast<F>(aa_filter(arg, cubic)) : F(0);
      total += w[j];
    }
    for (int64_t j = 0; j < width; ++j) {
      t.idx[j * m + i] = std::clamp(xmin + j, int64_t(0), n - 1);
      t.w[j * m + i] = total != 0 ? w[j] / total : w[j];
    }
  }
  return t;
}

// A host vector as a tensor of `dtype` on `device`.
template <class T>
Tensor host_tensor(const std::vector<T>& v, const Shape& shape, DType dtype, Device device) {
  Tensor t = Tensor::empty(shape, std::is_same_v<T, double> ? DType::Float64 : DType::Int64);
  std::copy(v.begin(), v.end(), t.data<T>());
  return to_device(astype(t, dtype, false), device);
}

// Contracts x's `axis` (length n) with mat (m, n): the result has length m there.
Tensor apply_matrix(const Tensor& x, const Tensor& mat, int64_t axis) {
  if (axis == x.ndim() - 1) return matmul(x, matrix_transpose(mat));
  if (axis == x.ndim() - 2) return matmul(mat, x);
  return moveaxis(matmul(moveaxis(x, {axis}, {-1}), matrix_transpose(mat)), {-1}, {axis});
}

// x[..., idx, ...] along `axis`: a broadcast when idx repeats each position r times in order
// (nearest integer upscaling), else index_select.
Tensor gather_axis(const Tensor& x, const std::vector<int64_t>& idx, int64_t axis) {
  const Shape shape = x.shape();
  const int64_t n = shape[axis], m = static_cast<int64_t>(idx.size());
  bool repeat = m % n == 0;
  for (int64_t i = 0; repeat && i < m; ++i) repeat = idx[i] == i / (m / n);
  if (repeat && m == n) return x;  // identity
  if (repeat) {
    Shape wide;
    for (int64_t d = 0; d <= axis; ++d) wide.push_back(shape[d]);
    wide.push_back(m / n);
    for (int64_t d = axis + 1; d < x.ndim(); ++d) wide.push_back(shape[d]);
    Shape out = shape;
    out[axis] = m;
    return reshape(broadcast_to(expand_dims(x, axis + 1), wide), out);
  }
  return index_select(x, axis, host_tensor(idx, Shape{m}, DType::Int64, x.device()));
}

Tensor resample_axis(const Tensor& x, int64_t axis, const Taps& t, bool dense) {
  const int64_t n = x.dim(axis), m = t.m;
  if (t.w.empty()) return gather_axis(x, t.idx, axis);
  if (dense && n <= kDenseMax) {
    std::vector<double> mat(m * n, 0.0);
    for (int64_t k = 0; k < t.k; ++k)
      for (int64_t i = 0; i < m; ++i) mat[i * n + t.idx[k * m + i]] += t.w[k * m + i];
    return apply_matrix(x, host_tensor(mat, Shape{m, n}, x.dtype(), x.device()), axis);
  }
  Tensor g = gather_axis(x, t.idx, axis);
  Shape gs, ws{t.k, m};
  for (int64_t d = 0; d < axis; ++d) gs.push_back(x.dim(d));
  gs.push_back(t.k);
  gs.push_back(m);
  for (int64_t d = axis + 1; d < x.ndim(); ++d) {
    gs.push_back(x.dim(d));
    ws.push_back(1);
  }
  const Tensor w = host_tensor(t.w, ws, x.dtype(), x.device());
  return sum(multiply(reshape(g, gs), w), Shape{axis}, false, std::nullopt);
}

template <class T>
std::vector<T> per_dim(const PerDim<T>& a, size_t nsp, const char* name) {
  if (!a.seq) return std::vector<T>(nsp, a.v.at(0));
  TS_CHECK(a.v.size() == nsp, ValueError, kOp, ": ", name, " of length ", a.v.size(),
           " does not match the ", nsp, " spatial dimensions of the input");
  return a.v;
}

}  // namespace

void check_output_size(const char* op, const Shape& shape, DType dtype, Device device) {
  int64_t bytes = itemsize(dtype);
  for (int64_t d : shape)
    if (d == 0) return;
  for (int64_t d : shape) {
    TS_CHECK(bytes <= std::numeric_limits<int64_t>::max() / d, RuntimeError, op,
             ": the output of shape ", shape_str(shape),
             " is too large; its storage size calculation overflowed");
    bytes *= d;
  }
  if (bytes > (int64_t(1) << 30)) Tensor::empty(shape, dtype, device);  // probe
}

Tensor interpolate(const Tensor& x, const std::optional<PerDim<int64_t>>& size,
                   const std::optional<PerDim<double>>& scale_factor, const std::string& mode,
                   std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor,
                   bool antialias) {
  const ModeInfo* info = nullptr;
  for (const ModeInfo& mi : kModes)
    if (mode == mi.name) info = &mi;
  TS_CHECK(info, NotImplementedError, kOp, ": unknown mode '", mode,
           "' (one of nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area)");
  TS_CHECK(x.ndim() >= 3 && x.ndim() <= 5, NotImplementedError, kOp,
           ": expected a 3-D, 4-D or 5-D input (N, C, *spatial), got shape ", shape_str(x.shape()));
  const int nsp = static_cast<int>(x.ndim()) - 2;
  TS_CHECK(info->nsp == 0 || info->nsp == nsp, NotImplementedError, kOp, ": mode '", mode,
           "' needs a ", info->nsp + 2, "-D input, got shape ", shape_str(x.shape()));
  const bool interpolating = info->mode == Mode::Linear || info->mode == Mode::Cubic;
  TS_CHECK(interpolating || !align_corners, ValueError, kOp,
           ": align_corners can only be set with the interpolating modes linear, bilinear, "
           "bicubic and trilinear, got mode '",
           mode, "'");
  const bool ac = align_corners.value_or(false);
  TS_CHECK(!antialias || mode == "bilinear" || mode == "bicubic", ValueError, kOp,
           ": antialias=True is only supported for the bilinear and bicubic modes, got mode '",
           mode, "'");
  TS_CHECK(size.has_value() != scale_factor.has_value(), ValueError, kOp,
           ": exactly one of size or scale_factor must be defined, got ",
           size ? "both" : "neither");
  // Output sizes and the scales the kernels use (nullopt: recomputed from in/out), as
  // PyTorch's _interp_output_size and recompute_scale_factor rules.
  Shape out;
  std::vector<std::optional<double>> scales(nsp);
  if (size) {
    TS_CHECK(!recompute_scale_factor.value_or(false), ValueError, kOp,
             ": recompute_scale_factor is not meaningful with an explicit size");
    for (int64_t o : per_dim(*size, nsp, "size")) out.push_back(o);
  } else {
    const std::vector<double> sf = per_dim(*scale_factor, nsp, "scale_factor");
    for (int i = 0; i < nsp; ++i) {
      TS_CHECK(std::isfinite(sf[i]) && sf[i] > 0, ValueError, kOp,
               ": scale_factor must be positive and finite, got ", sf[i]);
      const double o = std::floor(static_cast<double>(x.dim(2 + i)) * sf[i]);
      TS_CHECK(o < 9.2e18, RuntimeError, kOp, ": scale_factor ", sf[i], " gives an output size ", o,
               " that overflows int64");
      out.push_back(static_cast<int64_t>(o));
      if (!recompute_scale_factor.value_or(false)) scales[i] = sf[i];
    }
  }
  Shape in_sp;
  for (int i = 0; i < nsp; ++i) in_sp.push_back(x.dim(2 + i));
  bool ok = true;
  for (int i = 0; i < nsp; ++i)
    ok = ok && in_sp[i] > 0 && (out[i] > 0 || (out[i] == 0 && info->mode == Mode::Area));
  // (area mode is adaptive average pooling, which PyTorch lets produce empty outputs)
  TS_CHECK(ok, ValueError, kOp, ": input spatial size ", shape_str(in_sp), " and output size ",
           shape_str(out), " must be greater than 0");
  Shape full{x.dim(0), x.dim(1)};
  for (int64_t o : out) full.push_back(o);
  check_output_size(kOp, full, x.dtype(), x.device());
  if (info->mode == Mode::Area) return std::get<0>(adaptive_pool(x, nsp, out, false, kOp));
  const bool nearest = info->mode == Mode::Nearest || info->mode == Mode::NearestExact;
  TS_CHECK(nearest || is_floating(x.dtype()), TypeError, kOp, ": mode '", mode,
           "' needs a floating-point input, got ", dtype_name(x.dtype()));
  bool dense = false;
  if (!nearest && x.numel() > 0) {
    const Tensor fin = to_device(all(unary_op(isfinite_def, x), std::nullopt, false), Device{});
    dense = *fin.data<bool>();
  }
  const bool f64 = x.dtype() == DType::Float64;
  Tensor y = x;
  for (int i = nsp - 1; i >= 0; --i) {  // the last axis first, while the tensor is smallest
    const int64_t n = in_sp[i], m = out[i];
    const auto sc = scales[i];
    Taps t;
    if (antialias)
      t = f64 ? aa_taps<double>(n, m, ac, sc, info->mode == Mode::Cubic)
              : aa_taps<float>(n, m, ac, sc, info->mode == Mode::Cubic);
    else if (nearest)
      t = nearest_taps(n, m, sc, info->mode == Mode::NearestExact, nsp == 2);
    else if (info->mode == Mode::Cubic)
      t = f64 ? cubic_taps<double>(n, m, ac, sc) : cubic_taps<float>(n, m, ac, sc);
    else
      t = f64 ? linear_taps<double>(n, m, ac, sc) : linear_taps<float>(n, m, ac, sc);
    y = resample_axis(y, 2 + i, t, dense);
  }
  return y;
}

}  // namespace ts::nn

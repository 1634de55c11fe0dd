// F.affine_grid and F.grid_sample (grid_sample.h).
//
// Note [Native grid sampling]
// grid_sample runs one kernel forward and one backward (cpu/grid_sample_kernels.cpp,
// cuda/grid_sample_kernels.cu), over PyTorch's per-point math shared in
// kernels/grid_sample_math.h: the coordinate maps and their derivatives are torch's GridSampler
// ones (clip's gradient is 0 on the bounds, reflection's +-1, nearest rounds half to even, the
// grid gets zeros from nearest), so values and first gradients are torch's to rounding. The
// composite of Note [Sampling by gathered corners] was about 20x torch's CPU time. The node
// (GridSampler2DBackward / GridSampler3DBackward, as torch's) saves the input and the grid; its
// formula runs the backward kernel for the gradients wanted. When a graph of the backward is
// being recorded (create_graph), the kernel's gradient would be a dead end, so the formula
// instead rebuilds the output with the composite ops on the saved input and grid and takes
// their vector-Jacobian product with a nested, graph-recording backward pass: gradients of
// every order then come from the ops. (Its first gradient differs from the kernel's only where
// a coordinate sits exactly on a clip bound, where clip's own gradient passes.) The CPU kernels
// take float32 and float64; float16/bfloat16 on the CPU are sampled in float32 and rounded
// back. Inputs with an empty spatial size keep the composite.
//
// Note [Sampling by gathered corners]
// Grid coordinates in [-1, 1] are unnormalized to pixel positions (align_corners picks
// whether -1/1 name the corner pixels' centres or their outer edges), then padded (border
// clamps, reflection mirrors) and split into integer corners and fractional weights. The
// corner values are gathered from the flattened (N, C, H*W) input with take_along_axis, out-
// of-range corners are masked to zero, and the weighted sum is the output. The weights are
// differentiable functions of the grid (floor only picks the corners), so both the input
// and the grid receive PyTorch's gradients, of every order, on any device the ops run on.
#include "ops/nn/grid_sample.h"

#include "autograd/engine.h"
#include "autograd/function.h"
#include <limits>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/linalg.h"
#include "ops/math.h"
#include "ops/nn/resample.h"
#include "ops/rounding.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

TS_DEFINE_STUB(GridSampleKernel, grid_sample_stub, "grid_sample");
TS_DEFINE_STUB(GridSampleBackwardKernel, grid_sample_backward_stub, "grid_sample_backward");

}  // namespace ts

namespace ts::nn {
namespace {

constexpr double kCubicA = -0.75;

Tensor S(double v) { return wrap_scalar(Scalar::from_double(v)); }
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return subtract(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return multiply(a, b); }

Tensor unnormalize(const Tensor& coord, int64_t n, bool ac) {
  if (ac) return (coord + S(1)) * S((n - 1) / 2.0);
  return ((coord + S(1)) * S(double(n)) - S(1)) * S(0.5);
}

// Reflects x into [lo, hi] (PyTorch's reflect_coordinates).
Tensor reflect(const Tensor& x, double lo, double hi) {
  if (hi <= lo)
    return broadcast_to(to_device(astype(S(lo), x.dtype(), true), x.device()), x.shape());
  const double span = hi - lo;
  const Tensor y = unary_op(abs_def, x - S(lo));
  Tensor flips, even;
  {
    autograd::GradModeGuard no_grad(false);
    flips = unary_op(floor_def, divide(y, S(span)));
    even = binary_op(equal_def, binary_op(remainder_def, flips, S(2)), S(0));
  }
  const Tensor extra = y - flips * S(span);
  return where(even, extra + S(lo), S(span) - extra + S(lo));
}

Tensor pad_coord(const Tensor& x, int64_t n, const std::string& padding_mode, bool ac) {
  if (padding_mode == "border") return clip(x, S(0), S(double(n - 1)));
  if (padding_mode == "reflection")
    return clip(ac ? reflect(x, 0, double(n - 1)) : reflect(x, -0.5, n - 0.5), S(0),
                S(double(n - 1)));
  return x;
}

// weight * input at the integer corner `coords` (per spatial axis, (N, Q) float), zero where
// a coordinate is outside the input. flat: (N, C, P). A NaN coordinate (a NaN or infinite
// grid value) gathers a clamped in-range corner and is outside; with nan_out its term is NaN
// (PyTorch's bilinear and bicubic), else zero (nearest).
Tensor corner(const Tensor& flat, const std::vector<Tensor>& coords, const Shape& dims,
              const Tensor& weight, bool nan_out = true) {
  Tensor inside, lin, nan_any;
  {
    autograd::GradModeGuard no_grad(false);
    for (size_t i = 0; i < coords.size(); ++i) {
      const double hi = double(dims[i] - 1);
      const Tensor ok = binary_op(logical_and_def, binary_op(greater_equal_def, coords[i], S(0)),
                                  binary_op(less_equal_def, coords[i], S(hi)));
      inside = i ? binary_op(logical_and_def, inside, ok) : ok;
      const Tensor nan = binary_op(not_equal_def, coords[i], coords[i]);
      nan_any = i ? binary_op(logical_or_def, nan_any, nan) : nan;
      // NaN would cast to INT64_MIN: clamp an in-range index, the term is masked below
      const Tensor ci = astype(clip(where(nan, S(0), coords[i]), S(0), S(hi)), DType::Int64, false);
      lin = i ? add(multiply(lin, wrap_scalar(Scalar::from_int(dims[i]))), ci) : ci;
    }
  }
  const Shape gs{flat.dim(0), flat.dim(1), lin.dim(1)};
  const Tensor vals = take_along_axis(flat, broadcast_to(expand_dims(lin, 1), gs), 2);
  Tensor w = where(inside, weight, S(0));
  if (nan_out) w = where(nan_any, S(std::numeric_limits<double>::quiet_NaN()), w);
  return vals * expand_dims(w, 1);
}

std::vector<Tensor> cubic_weights(const Tensor& t) {
  const double a = kCubicA;
  auto near = [a](const Tensor& x) { return (S(a + 2) * x - S(a + 3)) * x * x + S(1); };
  auto far = [a](const Tensor& x) { return ((S(a) * x - S(5 * a)) * x + S(8 * a)) * x - S(4 * a); };
  return {far(t + S(1)), near(t), near(S(1) - t), far(S(2) - t)};
}

Tensor floor_of(const Tensor& x) {
  autograd::GradModeGuard no_grad(false);
  return unary_op(floor_def, x);
}

}  // namespace

Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size, bool align_corners) {
  const char* op = "affine_grid";
  Shape sz;
  for (int64_t s : size) sz.push_back(s);
  TS_CHECK(sz.size() == 4 || sz.size() == 5, ValueError, op,
           ": size must have 4 or 5 elements (N, C, *spatial), got ", shape_str(sz));
  const int64_t k = static_cast<int64_t>(sz.size()) - 2;
  TS_CHECK(is_floating(theta.dtype()), TypeError, op, ": theta must be floating point, got ",
           dtype_name(theta.dtype()));
  TS_CHECK(theta.shape() == (Shape{sz[0], k, k + 1}), ValueError, op, ": expected theta of shape ",
           shape_str(Shape{sz[0], k, k + 1}), " for size ", shape_str(sz), ", got ",
           shape_str(theta.shape()));
  int64_t p = 1;
  Shape out{sz[0]};
  for (int64_t s : sz)  // the batch and channels too, as PyTorch's
    TS_CHECK(s > 0, ValueError, op, ": sizes must be positive, got ", shape_str(sz));
  for (int64_t i = 2; i < k + 2; ++i) out.push_back(sz[i]);
  out.push_back(k);
  check_output_size(op, out, theta.dtype(), theta.device());
  for (int64_t i = 2; i < k + 2; ++i) p *= sz[i];
  // homogeneous base coordinates (P, k + 1) in (x, y[, z], 1) order: x is the last axis
  Tensor base = Tensor::empty(Shape{p, k + 1}, DType::Float64);
  double* b = base.data<double>();
  auto coord = [align_corners](int64_t i, int64_t n) {
    if (n <= 1) return 0.0;
    if (align_corners) return i == n - 1 ? 1.0 : -1.0 + i * (2.0 / double(n - 1));
    return (i * 2.0 + 1.0) / double(n) - 1.0;
  };
  for (int64_t j = 0; j < p; ++j) {
    int64_t rest = j;
    for (int64_t a = k - 1; a >= 0; --a) {  // spatial axis a (input order), x = axis k - 1
      const int64_t n = sz[2 + a];
      b[j * (k + 1) + (k - 1 - a)] = coord(rest % n, n);
      rest /= n;
    }
    b[j * (k + 1) + k] = 1.0;
  }
  base = to_device(astype(base, theta.dtype(), false), theta.device());
  return reshape(matmul(base, permute_dims(theta, {0, 2, 1})), out);
}

namespace {

// The composite (Note [Sampling by gathered corners]) of validated arguments.
Tensor grid_sample_composite(const Tensor& x, const Tensor& grid, const std::string& mode,
                             const std::string& padding_mode, bool ac) {
  const int64_t k = x.ndim() - 2, n = x.dim(0), c = x.dim(1);
  Shape dims, out_shape{n, c};
  int64_t q = 1;
  for (int64_t i = 0; i < k; ++i) {
    dims.push_back(x.dim(2 + i));
    out_shape.push_back(grid.dim(1 + i));
    q *= grid.dim(1 + i);
  }
  const Tensor g = astype(reshape(grid, {n, q, k}), x.dtype(), false);
  // per spatial axis in input order (d, h, w): grid components are (x, y[, z]) reversed
  std::vector<Tensor> pos;
  for (int64_t i = 0; i < k; ++i) pos.push_back(unnormalize(select(g, 2, k - 1 - i), dims[i], ac));
  int64_t in_numel = 1;
  for (int64_t d : dims) in_numel *= d;
  const Tensor flat = reshape(x, {n, c, in_numel});
  Tensor out;
  auto acc = [&out](const Tensor& term) { out = out.defined() ? out + term : term; };
  if (mode == "bicubic") {  // bicubic pads each tap coordinate, not the sample position
    const Tensor fy = floor_of(pos[0]), fx = floor_of(pos[1]);
    const auto wy = cubic_weights(pos[0] - fy), wx = cubic_weights(pos[1] - fx);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        Tensor cy, cx;
        {
          autograd::GradModeGuard no_grad(false);
          cy = pad_coord(fy + S(i - 1), dims[0], padding_mode, ac);
          cx = pad_coord(fx + S(j - 1), dims[1], padding_mode, ac);
        }
        acc(corner(flat, {cy, cx}, dims, wy[i] * wx[j]));
      }
    return reshape(out, out_shape);
  }
  for (int64_t i = 0; i < k; ++i) pos[i] = pad_coord(pos[i], dims[i], padding_mode, ac);
  if (mode == "nearest") {
    std::vector<Tensor> idx;
    {
      autograd::GradModeGuard no_grad(false);
      for (const Tensor& p : pos) idx.push_back(unary_op(round_def, p));  // half to even
    }
    const Tensor one = to_device(astype(S(1), x.dtype(), true), x.device());  // (not a CPU scalar)
    return reshape(corner(flat, idx, dims, broadcast_to(one, idx[0].shape()), false), out_shape);
  }
  std::vector<Tensor> fl, fr;
  for (const Tensor& p : pos) {
    fl.push_back(floor_of(p));
    fr.push_back(p - fl.back());
  }
  for (int64_t cnr = 0; cnr < (int64_t(1) << k); ++cnr) {
    Tensor w;
    std::vector<Tensor> coords;
    for (int64_t i = 0; i < k; ++i) {
      const bool bit = (cnr >> (k - 1 - i)) & 1;
      const Tensor wi = bit ? fr[i] : S(1) - fr[i];
      w = w.defined() ? w * wi : wi;
      autograd::GradModeGuard no_grad(false);
      coords.push_back(fl[i] + S(double(bit)));
    }
    acc(corner(flat, coords, dims, w));
  }
  return reshape(out, out_shape);
}

gs::Params params_of(const std::string& mode, const std::string& padding_mode, bool ac) {
  const gs::Interp m = mode == "bilinear"  ? gs::Interp::Bilinear
                       : mode == "nearest" ? gs::Interp::Nearest
                                           : gs::Interp::Bicubic;
  const gs::Pad pd = padding_mode == "zeros"    ? gs::Pad::Zeros
                     : padding_mode == "border" ? gs::Pad::Border
                                                : gs::Pad::Reflection;
  return {m, pd, ac};
}

constexpr const char* kModes[] = {"bilinear", "nearest", "bicubic"};
constexpr const char* kPads[] = {"zeros", "border", "reflection"};

// (gx, gg) from the backward kernel; each undefined unless wanted.
std::pair<Tensor, Tensor> backward_kernel(const Tensor& gy, const Tensor& x, const Tensor& grid,
                                          const gs::Params& p, bool want_x, bool want_grid) {
  Tensor gx, gg;
  if (want_x) {
    gx = Tensor::empty(x.shape(), x.dtype(), x.device());
    fill_(gx, Scalar::from_int(0));
  }
  if (want_grid) gg = Tensor::empty(grid.shape(), grid.dtype(), grid.device());
  if ((want_x || want_grid) && gy.numel() > 0)
    grid_sample_backward_stub.get(x.device())(contiguous(astype(gy, x.dtype(), false)),
                                              contiguous(x), contiguous(grid), gx, gg, p);
  else if (want_grid)
    fill_(gg, Scalar::from_int(0));
  return {gx, gg};
}

// Under create_graph (Note [Native grid sampling]): the vector-Jacobian product of the
// composite, by a nested backward pass that records its graph.
autograd::variable_list composite_vjp(const Tensor& x, const Tensor& grid, const Tensor& gy,
                                      const gs::Params& p, bool want_x, bool want_grid) {
  const Tensor y = grid_sample_composite(x, grid, kModes[static_cast<int>(p.mode)],
                                         kPads[static_cast<int>(p.pad)], p.align_corners);
  autograd::variable_list inputs;
  if (want_x) inputs.push_back(x);
  if (want_grid) inputs.push_back(grid);
  autograd::BackwardOptions o;
  o.keep_graph = true;
  o.create_graph = true;
  o.accumulate = false;
  o.allow_unused = true;
  const autograd::variable_list r = autograd::run_backward({y}, {gy}, inputs, o);
  autograd::variable_list out(2);
  size_t i = 0;
  if (want_x) out[0] = r[i++];
  if (want_grid) out[1] = r[i++];
  for (int j = 0; j < 2; ++j)  // nearest's grid: zeros, as the kernel's and torch's
    if ((j == 0 ? want_x : want_grid) && !out[j].defined()) {
      const Tensor& like = j == 0 ? x : grid;
      out[j] = Tensor::empty(like.shape(), like.dtype(), like.device());
      fill_(out[j], Scalar::from_int(0));
    }
  return out;
}

autograd::variable_list grid_sample_bw(const autograd::BackwardCtx& c,
                                       const autograd::variable_list& g) {
  const Tensor x = c.saved(0), grid = c.saved(1);
  const gs::Params p{static_cast<gs::Interp>(c.attr(0)), static_cast<gs::Pad>(c.attr(1)),
                     c.attr(2) != 0};
  if (autograd::grad_enabled()) return composite_vjp(x, grid, g[0], p, c.needs(0), c.needs(1));
  auto [gx, gg] = backward_kernel(g[0], x, grid, p, c.needs(0), c.needs(1));
  return {gx, gg};
}

const autograd::Formula kGridSampler2d{"GridSampler2DBackward", grid_sample_bw};
const autograd::Formula kGridSampler3d{"GridSampler3DBackward", grid_sample_bw};

// The kernel path: x and grid of one dtype the device's kernels take.
Tensor grid_sample_native(const Tensor& x, const Tensor& grid, const gs::Params& p) {
  Shape out_shape{x.dim(0), x.dim(1)};
  for (int64_t i = 1; i < grid.ndim() - 1; ++i) out_shape.push_back(grid.dim(i));
  Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
  if (out.numel() > 0) grid_sample_stub.get(x.device())(contiguous(x), contiguous(grid), out, p);
  if (autograd::needs_grad({&x, &grid})) {
    auto node = autograd::record(x.ndim() == 4 ? kGridSampler2d : kGridSampler3d, {x, grid}, {out});
    node->attrs = Shape{static_cast<int64_t>(p.mode), static_cast<int64_t>(p.pad),
                        static_cast<int64_t>(p.align_corners)};
    node->save(x);
    node->save(grid);
  }
  return out;
}

}  // namespace

gs::Geom grid_sample_geom(const Tensor& x, const Tensor& grid) {
  gs::Geom geo{x.dim(1), {1, 1, 1}, 1, 1};
  for (int64_t i = 0; i < x.ndim() - 2; ++i) {
    geo.size[i] = x.dim(2 + i);
    geo.in_plane *= x.dim(2 + i);
    geo.out_plane *= grid.dim(1 + i);
  }
  return geo;
}

Tensor grid_sample(const Tensor& x, const Tensor& grid, const std::string& mode,
                   const std::string& padding_mode, bool ac) {
  const char* op = "grid_sample";
  TS_CHECK(mode == "bilinear" || mode == "nearest" || mode == "bicubic", ValueError, op,
           ": mode must be 'bilinear', 'nearest' or 'bicubic', got '", mode, "'");
  TS_CHECK(padding_mode == "zeros" || padding_mode == "border" || padding_mode == "reflection",
           ValueError, op, ": padding_mode must be 'zeros', 'border' or 'reflection', got '",
           padding_mode, "'");
  TS_CHECK((x.ndim() == 4 || x.ndim() == 5) && grid.ndim() == x.ndim() && grid.dim(0) == x.dim(0) &&
               grid.dim(grid.ndim() - 1) == x.ndim() - 2,
           ValueError, op,
           ": expected input (N, C, H, W) with grid (N, Ho, Wo, 2) or input (N, C, D, H, W) "
           "with grid (N, Do, Ho, Wo, 3), got ",
           shape_str(x.shape()), " and ", shape_str(grid.shape()));
  TS_CHECK(mode != "bicubic" || x.ndim() == 4, ValueError, op,
           ": mode 'bicubic' supports only 4-D input, got shape ", shape_str(x.shape()));
  TS_CHECK(is_floating(x.dtype()) && is_floating(grid.dtype()), TypeError, op,
           ": input and grid must be floating point, got ", dtype_name(x.dtype()), " and ",
           dtype_name(grid.dtype()));
  // (recorded casts: a grid of another dtype gets its gradient in its own dtype)
  const Tensor g = astype_op(grid, x.dtype(), false);
  for (int64_t i = 2; i < x.ndim(); ++i)
    if (x.dim(i) == 0) return grid_sample_composite(x, g, mode, padding_mode, ac);
  const gs::Params p = params_of(mode, padding_mode, ac);
  if (x.device().is_cpu() && (x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16))
    return astype_op(grid_sample_native(astype_op(x, DType::Float32, false),
                                        astype_op(g, DType::Float32, false), p),
                     x.dtype(), false);
  return grid_sample_native(x, g, p);
}

}  // namespace ts::nn

#include "ops/pool.h"

#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "core/checked_math.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/math.h"
#include "ops/memory_format.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

TS_DEFINE_STUB(MaxPoolNdKernel, max_pool_nd_stub, "max_pool");
TS_DEFINE_STUB(MaxPoolNdBackwardKernel, max_pool_nd_backward_stub, "max_pool_backward");
TS_DEFINE_STUB(AvgPoolNdKernel, avg_pool_nd_stub, "avg_pool");
TS_DEFINE_STUB(AvgPoolNdBackwardKernel, avg_pool_nd_backward_stub, "avg_pool_backward");
TS_DEFINE_STUB(MaxUnpoolKernel, max_unpool_stub, "max_unpool");
TS_DEFINE_STUB(MaxUnpoolGatherKernel, max_unpool_gather_stub, "max_unpool_backward");
TS_DEFINE_STUB(LpPoolKernel, lp_pool_stub, "lp_pool");
TS_DEFINE_STUB(LpPoolBackwardKernel, lp_pool_backward_stub, "lp_pool_backward");

Shape PoolSpec::encode() const {
  Shape a{nsp, count_include_pad ? 1 : 0, divisor, adaptive ? 1 : 0, channels_last ? 1 : 0};
  for (const auto* v : {&in, &out, &k, &s, &p, &d})
    for (int64_t e : *v) a.push_back(e);
  return a;
}
PoolSpec PoolSpec::decode(const Shape& a) {
  PoolSpec s;
  s.nsp = static_cast<int>(a[0]);
  s.count_include_pad = a[1] != 0;
  s.divisor = a[2];
  s.adaptive = a[3] != 0;
  s.channels_last = a[4] != 0;
  int64_t i = 5;
  for (auto* v : {&s.in, &s.out, &s.k, &s.s, &s.p, &s.d})
    for (int j = 0; j < 3; ++j) (*v)[j] = a[i++];
  return s;
}

namespace {

std::array<int64_t, 3> per_dim(const Shape& v, int nsp, int64_t dflt, const char* what,
                               const char* op) {
  std::array<int64_t, 3> out{dflt, dflt, dflt};
  if (v.size() == 0) return out;
  TS_CHECK(v.size() == 1 || static_cast<int>(v.size()) == nsp, ValueError, op, ": expected ",
           what, " to be a single int or ", nsp, " ints, got ", shape_str(v));
  for (int i = 0; i < nsp; ++i) out[3 - nsp + i] = v.size() == 1 ? v[0] : v[i];
  return out;
}

Shape tail(const std::array<int64_t, 3>& a, int nsp) {
  Shape o;
  for (int i = 3 - nsp; i < 3; ++i) o.push_back(a[i]);
  return o;
}

// Checks the arguments, fills the spec and returns x batched ((N, C, *in)). int_ok: integer
// input is taken on the CPU too (max pooling, as PyTorch's CPU kernels).
Tensor setup(const Tensor& x, int nsp, const Shape& kernel, const Shape& stride,
             const Shape& padding, const Shape& dilation, bool ceil_mode, PoolSpec* s,
             bool* unbatched, const char* op, bool int_ok = false) {
  TS_CHECK(x.ndim() == nsp + 1 || x.ndim() == nsp + 2, ValueError, op, ": expected a ", nsp + 1,
           "-D or ", nsp + 2, "-D input, got shape ", shape_str(x.shape()));
  TS_CHECK(is_floating(x.dtype()) || (int_ok && is_integral(x.dtype()) && x.device().is_cpu()),
           TypeError, op, ": expected a floating-point input (float16, bfloat16, float32, float64)",
           int_ok ? ", or an integer one on the CPU" : "", ", got ", dtype_name(x.dtype()), " on ",
           x.device().str());
  *unbatched = x.ndim() == nsp + 1;
  Tensor xb = *unbatched ? expand_dims(x, 0) : x;
  s->nsp = nsp;
  s->k = per_dim(kernel, nsp, 1, "kernel_size", op);
  TS_CHECK(!kernel.empty(), ValueError, op, ": kernel_size must be given");
  s->s = stride.empty() ? s->k : per_dim(stride, nsp, 1, "stride", op);
  s->p = per_dim(padding, nsp, 0, "padding", op);
  s->d = per_dim(dilation, nsp, 1, "dilation", op);
  for (int i = 3 - nsp; i < 3; ++i) {
    TS_CHECK(s->k[i] > 0 && s->s[i] > 0 && s->d[i] > 0, ValueError, op, ": kernel_size ",
             shape_str(tail(s->k, nsp)), ", stride ", shape_str(tail(s->s, nsp)),
             " and dilation ", shape_str(tail(s->d, nsp)), " must be positive");
    TS_CHECK(s->p[i] >= 0 && s->p[i] <= s->k[i] / 2, ValueError, op, ": padding ",
             shape_str(tail(s->p, nsp)), " should be at most half of kernel size ",
             shape_str(tail(s->k, nsp)));
    const int64_t n = xb.dim(2 + i - (3 - nsp));
    s->in[i] = n;
    // n + 2 p - (d (k - 1) + 1), checked (Note [Checked size arithmetic]): the sizes are the
    // user's; the difference of two non-negative int64 cannot overflow.
    const int64_t padded = checked_add(n, checked_mul(2, s->p[i], op), op);
    const int64_t reach = checked_add(checked_mul(s->d[i], s->k[i] - 1, op), 1, op);
    const int64_t span = padded - reach;
    auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
    int64_t o = floor_div(ceil_mode ? checked_add(span, s->s[i] - 1, op) : span, s->s[i]) + 1;
    // PyTorch: the last window must start inside the input or its left padding ((o - 1) s is
    // at most span + s - 1, computed above).
    if (ceil_mode && o > 0 && (o - 1) * s->s[i] >= n + s->p[i]) --o;
    s->out[i] = o;
  }
  bool ok = true;
  for (int i = 3 - nsp; i < 3; ++i) ok = ok && s->out[i] > 0;
  TS_CHECK(ok, ValueError, op, ": given input size ", shape_str(xb.shape()),
           ", the calculated output size ", shape_str(tail(s->out, nsp)),
           " is too small (kernel_size ", shape_str(tail(s->k, nsp)), ", stride ",
           shape_str(tail(s->s, nsp)), ", padding ", shape_str(tail(s->p, nsp)), ", dilation ",
           shape_str(tail(s->d, nsp)), ")");
  return xb;
}

// Note [CUDA channels-last pools]: a channels-last input keeps its layout through the pool
// and its gradient, as PyTorch's (PoolSpec::channels_last records it for the backward). On
// CUDA every tensor the kernels see is channels-last, so no layout copy happens on either
// pass; the CPU kernels take contiguous planes and the op copies around them.
// The spec the device's kernels see: channels_last only where they take that layout.
PoolSpec kernel_spec(const PoolSpec& s, Device dev) {
  PoolSpec k = s;
  k.channels_last = s.channels_last && !dev.is_cpu();
  return k;
}

// The kernels' view of t: contiguous, or channels-last where k says so (t itself when it is).
Tensor kernel_layout(const Tensor& t, const PoolSpec& k) {
  return k.channels_last ? to_channels_last(t) : contiguous(t);
}

Tensor kernel_empty(const Shape& shape, DType dt, Device dev, const PoolSpec& k) {
  return k.channels_last ? empty_channels_last(shape, dt, dev) : Tensor::empty(shape, dt, dev);
}

// A kernel's result in the layout s asks for (a copy only where the kernels took another).
Tensor user_layout(const Tensor& t, const PoolSpec& s) {
  return s.channels_last ? to_channels_last(t) : t;
}

Shape out_shape(const Tensor& xb, const PoolSpec& s) {
  Shape o{xb.dim(0), xb.dim(1)};
  for (int i = 3 - s.nsp; i < 3; ++i) o.push_back(s.out[i]);
  return o;
}

Tensor finish(Tensor y, const Tensor& xb, bool unbatched) {
  if (is_channels_last(xb)) y = to_channels_last(y);
  return unbatched ? squeeze(y, Shape{0}) : y;
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool(const Tensor& x, int nsp, const Shape& kernel,
                                    const Shape& stride, const Shape& padding,
                                    const Shape& dilation, bool ceil_mode, const char* op) {
  PoolSpec s;
  bool unbatched = false;
  const Tensor xb =
      setup(x, nsp, kernel, stride, padding, dilation, ceil_mode, &s, &unbatched, op, true);
  s.channels_last = is_channels_last(xb);
  const PoolSpec ks = kernel_spec(s, x.device());
  const Shape os = out_shape(xb, s);
  Tensor y = kernel_empty(os, x.dtype(), x.device(), ks);
  Tensor idx = kernel_empty(os, DType::Int64, x.device(), ks);
  if (y.numel() > 0) max_pool_nd_stub.get(x.device())(kernel_layout(xb, ks), y, idx, ks);
  autograd::record_pool(autograd::PoolKind::Max, xb, y, idx, s.encode());
  Tensor yi = idx;
  if (is_channels_last(xb)) yi = to_channels_last(idx);
  return {finish(y, xb, unbatched), unbatched ? squeeze(yi, Shape{0}) : yi};
}

Tensor avg_pool(const Tensor& x, int nsp, const Shape& kernel, const Shape& stride,
                const Shape& padding, bool ceil_mode, bool count_include_pad,
                int64_t divisor_override, const char* op) {
  PoolSpec s;
  bool unbatched = false;
  const Tensor xb = setup(x, nsp, kernel, stride, padding, Shape{1}, ceil_mode, &s, &unbatched, op);
  TS_CHECK(divisor_override >= 0, ValueError, op, ": divisor_override must be positive, got ",
           divisor_override, "; hint: divide the output by a negative number instead");
  s.count_include_pad = count_include_pad;
  s.divisor = divisor_override;
  s.channels_last = is_channels_last(xb);
  return finish(avg_pool_forward_op(xb, s), xb, unbatched);
}

std::tuple<Tensor, Tensor> adaptive_pool(const Tensor& x, int nsp, const Shape& out, bool max,
                                         const char* op) {
  TS_CHECK(x.ndim() == nsp + 1 || x.ndim() == nsp + 2, ValueError, op, ": expected a ", nsp + 1,
           "-D or ", nsp + 2, "-D input, got shape ", shape_str(x.shape()));
  TS_CHECK(is_floating(x.dtype()), TypeError, op,
           ": expected a floating-point input (float16, bfloat16, float32, float64), got ",
           dtype_name(x.dtype()));
  TS_CHECK(static_cast<int>(out.size()) == nsp, ValueError, op, ": output_size ", shape_str(out),
           " must have ", nsp, " elements");
  const bool unbatched = x.ndim() == nsp + 1;
  const Tensor xb = unbatched ? expand_dims(x, 0) : x;
  PoolSpec s;
  s.nsp = nsp;
  s.adaptive = true;
  s.channels_last = is_channels_last(xb);
  for (int i = 0; i < nsp; ++i) {
    const int j = 3 - nsp + i;
    TS_CHECK(out[i] >= 0, ValueError, op,
             ": elements of output_size must be greater than or equal to 0, got ", shape_str(out));
    s.in[j] = xb.dim(2 + i);
    TS_CHECK(s.in[j] > 0 || out[i] == 0, ValueError, op, ": input of shape ",
             shape_str(xb.shape()), " has an empty spatial dim to pool to ", shape_str(out));
    s.out[j] = out[i];
  }
  const Shape os = out_shape(xb, s);
  int64_t total = 1;
  for (int64_t v : os) {
    TS_CHECK(v == 0 || total <= std::numeric_limits<int64_t>::max() / v, ValueError, op,
             ": output of shape ", shape_str(os), " is too large");
    total *= v;
  }
  if (!max) return {finish(avg_pool_forward_op(xb, s), xb, unbatched), Tensor()};
  const PoolSpec ks = kernel_spec(s, x.device());
  Tensor y = kernel_empty(os, x.dtype(), x.device(), ks);
  Tensor idx = kernel_empty(os, DType::Int64, x.device(), ks);
  if (y.numel() > 0 && s.in_numel() > 0)
    max_pool_nd_stub.get(x.device())(kernel_layout(xb, ks), y, idx, ks);
  autograd::record_pool(autograd::PoolKind::Max, xb, y, idx, s.encode());
  Tensor yi = is_channels_last(xb) ? to_channels_last(idx) : idx;
  return {finish(y, xb, unbatched), unbatched ? squeeze(yi, Shape{0}) : yi};
}

Tensor avg_pool_forward_op(const Tensor& x, const PoolSpec& s) {
  const PoolSpec ks = kernel_spec(s, x.device());
  Tensor y = kernel_empty(out_shape(x, s), x.dtype(), x.device(), ks);
  if (y.numel() > 0) avg_pool_nd_stub.get(x.device())(kernel_layout(x, ks), y, ks);
  autograd::record_pool(autograd::PoolKind::Avg, x, y, Tensor(), s.encode());
  return user_layout(y, s);
}

Tensor avg_pool_backward_op(const Tensor& gy, const Shape& in_shape, const PoolSpec& s) {
  const PoolSpec ks = kernel_spec(s, gy.device());
  Tensor gx = kernel_empty(in_shape, gy.dtype(), gy.device(), ks);
  if (gx.numel() > 0) avg_pool_nd_backward_stub.get(gy.device())(kernel_layout(gy, ks), gx, ks);
  autograd::record_pool(autograd::PoolKind::AvgBackward, gy, gx, Tensor(), s.encode());
  return user_layout(gx, s);
}

Tensor max_pool_backward_op(const Tensor& gy, const Tensor& idx, const Shape& in_shape,
                            const PoolSpec& s) {
  const PoolSpec ks = kernel_spec(s, gy.device());
  Tensor gx = kernel_empty(in_shape, gy.dtype(), gy.device(), ks);
  if (gx.numel() > 0)
    max_pool_nd_backward_stub.get(gy.device())(kernel_layout(gy, ks), kernel_layout(idx, ks), gx,
                                               ks);
  return user_layout(gx, s);
}

// ---- max_unpool
namespace {

// Whether `dev` has a kernel for the stub (devices without one take a composition of ops).
template <class Fn>
bool has_kernel(const KernelStub<Fn>& stub, Device dev) {
  return stub.table[static_cast<int>(dev.type)] != nullptr;
}

// (N, C, L) views of batched (N, C, *sp) tensors.
Tensor planes(const Tensor& t, int64_t L) { return reshape(contiguous(t), Shape{t.dim(0), t.dim(1), L}); }

Tensor zeros_of(const Shape& shape, DType dt, Device dev) {
  Tensor z = Tensor::empty(shape, dt, dev);
  fill_(z, Scalar::from_int(0));
  return z;
}

int64_t prod(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

}  // namespace

Tensor max_unpool_op(const Tensor& x, const Tensor& idx, const Shape& out_sp, const char* op) {
  const int64_t N = x.dim(0), C = x.dim(1), L = x.numel() / std::max<int64_t>(N * C, 1);
  const int64_t M = prod(out_sp);
  Shape os{N, C};
  for (int64_t v : out_sp) os.push_back(v);
  Tensor y;
  if (has_kernel(max_unpool_stub, x.device())) {
    y = Tensor::empty(os, x.dtype(), x.device());
    if (y.numel() > 0) {
      int64_t bad = 0;
      const bool ok = max_unpool_stub.get(x.device())(contiguous(x), contiguous(idx), y, &bad);
      TS_CHECK(ok, IndexError, op, ": found an invalid max index ", bad,
               " (output planes of shape ", shape_str(out_sp), ", ", M, " values)");
    }
  } else {
    // Devices without a kernel: zeros scattered (the indices were checked by max_unpool).
    autograd::GradModeGuard no_grad(false);
    y = reshape(scatter(zeros_of(Shape{N, C, M}, x.dtype(), x.device()), 2, planes(idx, L),
                        planes(x, L)),
                os);
  }
  autograd::record_unpool(autograd::UnpoolKind::Unpool, x, y, idx, out_sp);
  return y;
}

Tensor max_unpool_gather_op(const Tensor& gy, const Tensor& idx) {
  const int64_t N = gy.dim(0), C = gy.dim(1);
  const int64_t M = gy.numel() / std::max<int64_t>(N * C, 1);
  const int64_t L = idx.numel() / std::max<int64_t>(N * C, 1);
  Tensor gx;
  if (has_kernel(max_unpool_gather_stub, gy.device())) {
    gx = Tensor::empty(idx.shape(), gy.dtype(), gy.device());
    if (gx.numel() > 0) max_unpool_gather_stub.get(gy.device())(contiguous(gy), contiguous(idx), gx);
  } else {
    autograd::GradModeGuard no_grad(false);
    gx = reshape(gather(reshape(contiguous(gy), Shape{N, C, M}), 2, planes(idx, L)), idx.shape());
  }
  Shape out_sp;
  for (int64_t i = 2; i < gy.ndim(); ++i) out_sp.push_back(gy.dim(i));
  autograd::record_unpool(autograd::UnpoolKind::Gather, gy, gx, idx, out_sp);
  return gx;
}

Tensor max_unpool(const Tensor& x, const Tensor& indices, int nsp, const Shape& kernel,
                  const Shape& stride, const Shape& padding, const Shape& output_size,
                  const char* op) {
  TS_CHECK(x.ndim() == nsp + 1 || x.ndim() == nsp + 2, ValueError, op, ": expected a ", nsp + 1,
           "-D or ", nsp + 2, "-D input, got shape ", shape_str(x.shape()));
  TS_CHECK(indices.shape() == x.shape(), ValueError, op,
           ": expected indices of the same shape as the input, got input ",
           shape_str(x.shape()), " and indices ", shape_str(indices.shape()));
  TS_CHECK(is_integral(indices.dtype()), TypeError, op,
           ": expected integer indices (int64, as max_pool returns them), got ",
           dtype_name(indices.dtype()));
  TS_CHECK(indices.device() == x.device(), ValueError, op, ": input on ", x.device().str(),
           " and indices on ", indices.device().str());
  TS_CHECK(!kernel.empty(), ValueError, op, ": kernel_size must be given");
  const auto k = per_dim(kernel, nsp, 1, "kernel_size", op);
  const auto s = stride.empty() ? k : per_dim(stride, nsp, 1, "stride", op);
  const auto p = per_dim(padding, nsp, 0, "padding", op);
  for (int i = 3 - nsp; i < 3; ++i)
    TS_CHECK(k[i] > 0 && s[i] > 0 && p[i] >= 0, ValueError, op, ": kernel_size ",
             shape_str(tail(k, nsp)), " and stride ", shape_str(tail(s, nsp)),
             " must be positive and padding ", shape_str(tail(p, nsp)), " non-negative");
  const bool unbatched = x.ndim() == nsp + 1;
  const Tensor xb = unbatched ? expand_dims(x, 0) : x;
  const Tensor ib = unbatched ? expand_dims(indices, 0) : indices;
  Shape dflt;
  for (int i = 0; i < nsp; ++i) {
    const int j = 3 - nsp + i;
    const int64_t n = xb.dim(2 + i);
    // (n - 1) s - 2 p + k, checked: the sizes are the user's
    const int64_t v = checked_add(checked_mul(std::max<int64_t>(n - 1, 0), s[j], op), k[j], op) -
                      checked_mul(2, p[j], op);
    dflt.push_back(n == 0 ? 0 : v);
  }
  Shape out = dflt;
  if (!output_size.empty()) {
    Shape sz = output_size;
    if (static_cast<int>(sz.size()) == nsp + 2 ||
        (static_cast<int>(sz.size()) == nsp + 1 && unbatched))
      sz = Shape(sz.end() - nsp, sz.end());
    TS_CHECK(static_cast<int>(sz.size()) == nsp, ValueError, op, ": output_size should have ",
             nsp, " or ", nsp + 2, " elements, got ", shape_str(output_size));
    for (int i = 0; i < nsp; ++i) {
      const int64_t st = s[3 - nsp + i];
      TS_CHECK(sz[i] > dflt[i] - st && sz[i] < dflt[i] + st, ValueError, op,
               ": invalid output_size ", shape_str(output_size), " (dim ", i,
               " must be between ", dflt[i] - st, " and ", dflt[i] + st, " exclusive)");
    }
    out = sz;
  }
  for (int64_t v : out)
    TS_CHECK(v >= 0, ValueError, op, ": the output size ", shape_str(out),
             " is negative (input of shape ", shape_str(x.shape()), ", kernel_size ",
             shape_str(tail(k, nsp)), ", stride ", shape_str(tail(s, nsp)), ", padding ",
             shape_str(tail(p, nsp)), ")");
  Shape full{xb.dim(0), xb.dim(1)};
  for (int64_t v : out) full.push_back(v);
  int64_t total = x.itemsize();  // the output's bytes must fit
  for (int64_t v : full) {
    TS_CHECK(v == 0 || total <= std::numeric_limits<int64_t>::max() / v, ValueError, op,
             ": output of shape ", shape_str(full), " is too large");
    total *= v;
  }
  const Tensor idx64 = astype(ib, DType::Int64, false);
  if (!has_kernel(max_unpool_stub, x.device()) && idx64.numel() > 0) {
    // The device's fallback scatters without a bounds check of its own: check first.
    autograd::GradModeGuard no_grad(false);
    const int64_t M = prod(out);
    const int64_t lo = item(min(idx64, Axes{}, false)).to<int64_t>();
    const int64_t hi = item(max(idx64, Axes{}, false)).to<int64_t>();
    TS_CHECK(lo >= 0 && hi < M, IndexError, op, ": found an invalid max index ",
             lo < 0 ? lo : hi, " (output planes of shape ", shape_str(out), ", ", M,
             " values)");
  }
  const Tensor y = max_unpool_op(xb, idx64, out, op);
  return unbatched ? squeeze(y, Shape{0}) : y;
}

// ---- LP pooling
Tensor lp_pool_forward_op(const Tensor& x, const PoolSpec& s, double p) {
  Tensor y;
  if (has_kernel(lp_pool_stub, x.device())) {
    y = Tensor::empty(out_shape(x, s), x.dtype(), x.device());
    if (y.numel() > 0) lp_pool_stub.get(x.device())(contiguous(x), y, s, p);
    autograd::record_lp_pool(x, y, s.encode(), p);
    return y;
  }
  // Devices without a kernel: PyTorch's composition, differentiable as it stands. The where()
  // is torch's sign(out) * relu(|out|): out itself, with the gradient masked where out == 0.
  Tensor P = Tensor::empty(Shape{}, x.dtype(), x.device());
  fill_(P, Scalar::from_double(p));
  Tensor R = Tensor::empty(Shape{}, x.dtype(), x.device());
  fill_(R, Scalar::from_double(1.0 / p));
  const Tensor out = avg_pool_forward_op(pow(x, P), s);
  const Tensor z = zeros_of(out.shape(), out.dtype(), out.device());
  Tensor K = Tensor::empty(Shape{}, x.dtype(), x.device());
  fill_(K, Scalar::from_double(static_cast<double>(s.k[0] * s.k[1] * s.k[2])));
  return pow(multiply(where(binary_op(not_equal_def, out, z), out, z), K), R);
}

Tensor lp_pool_backward_op(const Tensor& gy, const Tensor& x, const PoolSpec& s, double p) {
  Tensor gx = Tensor::empty(x.shape(), x.dtype(), x.device());
  if (gx.numel() > 0) {
    if (gy.numel() == 0)
      fill_(gx, Scalar::from_int(0));
    else
      lp_pool_backward_stub.get(x.device())(contiguous(gy), contiguous(x), gx, s, p);
  }
  return gx;
}

Tensor lp_pool(const Tensor& x, int nsp, double norm_type, const Shape& kernel,
               const Shape& stride, bool ceil_mode, const char* op) {
  if (std::isinf(norm_type)) {
    TS_CHECK(x.ndim() == nsp + 1 || x.ndim() == nsp + 2, ValueError, op, ": expected a ",
             nsp + 1, "-D or ", nsp + 2, "-D input, got shape ", shape_str(x.shape()));
    TS_CHECK(is_floating(x.dtype()), TypeError, op,
             ": expected a floating-point input (float16, bfloat16, float32, float64), got ",
             dtype_name(x.dtype()));
    const Tensor a = unary_op(abs_def, x);
    if (norm_type > 0)
      return std::get<0>(max_pool(a, nsp, kernel, stride, Shape{0}, Shape{1}, ceil_mode, op));
    return negative(
        std::get<0>(max_pool(negative(a), nsp, kernel, stride, Shape{0}, Shape{1}, ceil_mode, op)));
  }
  PoolSpec s;
  bool unbatched = false;
  const Tensor xb = setup(x, nsp, kernel, stride, Shape{0}, Shape{1}, ceil_mode, &s, &unbatched, op);
  TS_CHECK(norm_type == norm_type, ValueError, op, ": norm_type must be a number, got nan");
  // (sum x^0)^(1/0): inf for every window (torch: ZeroDivisionError from 1.0 / norm_type)
  TS_CHECK(norm_type != 0, ZeroDivisionError, op,
           ": norm_type must be non-zero (the result is (sum x^p)^(1/p))");
  return finish(lp_pool_forward_op(xb, s, norm_type), xb, unbatched);
}

}  // namespace ts

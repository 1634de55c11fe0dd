#include "ops/pool.h"

#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "core/checked_math.h"
#include "core/error.h"
#include "ops/copy.h"
#include "ops/memory_format.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(MaxPoolNdKernel, max_pool_nd_stub, "max_pool");
TS_DEFINE_STUB(MaxPoolNdBackwardKernel, max_pool_nd_backward_stub, "max_pool_backward");
TS_DEFINE_STUB(AvgPoolNdKernel, avg_pool_nd_stub, "avg_pool");
TS_DEFINE_STUB(AvgPoolNdBackwardKernel, avg_pool_nd_backward_stub, "avg_pool_backward");

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

// Checks the arguments, fills the spec and returns x batched ((N, C, *in)).
Tensor setup(const Tensor& x, int nsp, const Shape& kernel, const Shape& stride,
             const Shape& padding, const Shape& dilation, bool ceil_mode, PoolSpec* s,
             bool* unbatched, const char* op) {
  TS_CHECK(x.ndim() == nsp + 1 || x.ndim() == nsp + 2, ValueError, op, ": expected a ", nsp + 1,
           "-D or ", nsp + 2, "-D input, got shape ", shape_str(x.shape()));
  TS_CHECK(is_floating(x.dtype()), TypeError, op,
           ": expected a floating-point input (float16, bfloat16, float32, float64), got ",
           dtype_name(x.dtype()));
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
  const Tensor xb = setup(x, nsp, kernel, stride, padding, dilation, ceil_mode, &s, &unbatched, op);
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
  TS_CHECK(divisor_override >= 0, ValueError, op, ": divisor must be not zero, got ",
           divisor_override);
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

}  // namespace ts

#include "ops/conv.h"

#include <algorithm>
#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "core/checked_math.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/copy.h"
#include "ops/memory_format.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(ConvForwardKernel, conv_forward_stub, "convolution");
TS_DEFINE_STUB(ConvTransposeKernel, conv_transpose_stub, "conv_transpose");
TS_DEFINE_STUB(ConvWeightKernel, conv_weight_stub, "convolution_backward_weight");

CudnnFlags& cudnn_flags() {
  static CudnnFlags f;
  return f;
}
const char*& conv_path_used() {
  thread_local const char* path = "none";
  return path;
}
CudnnLoader& cudnn_loader() {
  static CudnnLoader l;
  return l;
}

namespace {
Shape tail(const std::array<int64_t, 3>& a, int nsp) {
  Shape out;
  for (int i = 3 - nsp; i < 3; ++i) out.push_back(a[i]);
  return out;
}
}  // namespace

Shape ConvSpec::in_shape() const { return tail(in, nsp); }
Shape ConvSpec::k_shape() const { return tail(k, nsp); }
Shape ConvSpec::out_shape() const {
  Shape o;
  for (int i = 3 - nsp; i < 3; ++i) o.push_back(out(i));
  return o;
}
Shape ConvSpec::encode() const {
  Shape a{nsp, groups};
  for (const auto* v : {&in, &k, &s, &p, &d, &o})
    for (int64_t e : *v) a.push_back(e);
  return a;
}
ConvSpec ConvSpec::decode(const Shape& a) {
  ConvSpec s;
  s.nsp = static_cast<int>(a[0]);
  s.groups = a[1];
  int64_t i = 2;
  for (auto* v : {&s.in, &s.k, &s.s, &s.p, &s.d, &s.o})
    for (int j = 0; j < 3; ++j) (*v)[j] = a[i++];
  return s;
}

namespace {

// The dtype the kernels compute in: on the CPU float16/bfloat16 go through float32; the CUDA
// kernels take every floating dtype as it is.
DType kernel_dtype(DType d, Device dev) {
  if (!dev.is_cpu()) return d;
  return d == DType::Float64 ? DType::Float64 : DType::Float32;
}

// Note [Channels-last convolutions on CUDA]: as PyTorch's cuDNN convolutions, when either
// operand is channels-last the kernels get both operands and the result channels-last
// (cuDNN runs NHWC natively; the GEMM path makes its own NCHW copies); otherwise contiguous.
// The CPU kernels always get contiguous tensors.
Tensor as_kernel(const Tensor& t, bool channels_last = false) {
  const Tensor c = astype(t, kernel_dtype(t.dtype(), t.device()), false);
  return channels_last ? to_channels_last(c) : contiguous(c);
}

bool cuda_channels_last(const Tensor& a, const Tensor& b) {
  return !a.device().is_cpu() && (a.ndim() == 4 || a.ndim() == 5) &&
         (is_channels_last(a) || is_channels_last(b));
}

// An uninitialized tensor of `shape` ((N, C, *sp)), with channels-last strides when asked.
Tensor empty_batch(const Shape& shape, DType dt, Device dev, bool channels_last) {
  return channels_last ? empty_channels_last(shape, dt, dev) : Tensor::empty(shape, dt, dev);
}

// Kernels for `dev`; records the CPU path (the CUDA kernels record theirs).
template <class Fn>
Fn conv_kernel(const KernelStub<Fn>& stub, Device dev) {
  if (dev.is_cpu()) conv_path_used() = "cpu";
  return stub.get(dev);
}

// The kernel's result in the op's dtype.
Tensor from_kernel(const Tensor& t, DType d) { return t.dtype() == d ? t : astype(t, d, false); }

void check_float_operands(const char* op, const Tensor& x, const Tensor& w, const Tensor& b) {
  for (const Tensor* t : {&x, &w, &b}) {
    if (!t->defined()) continue;
    TS_CHECK(is_floating(t->dtype()), TypeError, op,
             ": expected floating-point input, weight and bias (float16, bfloat16, float32, "
             "float64), got ",
             dtype_name(t->dtype()));
    TS_CHECK(t->dtype() == x.dtype(), TypeError, op, ": input (", dtype_name(x.dtype()),
             ") and weight/bias (", dtype_name(t->dtype()),
             ") must have the same dtype (cast one, or use autocast)");
    TS_CHECK(t->device() == x.device(), ValueError, op, ": input on ", x.device().str(),
             " and weight/bias on ", t->device().str(), " (move them to one device)");
  }
}

Shape batch_shape(int64_t n, int64_t c, const Shape& sp) {
  Shape s{n, c};
  for (int64_t e : sp) s.push_back(e);
  return s;
}

}  // namespace

Tensor conv_forward(const Tensor& x, const Tensor& w, const Tensor& b, const ConvSpec& s) {
  const DType dt = x.dtype();
  const bool cl = cuda_channels_last(x, w);
  Tensor y = empty_batch(batch_shape(x.dim(0), w.dim(0), s.out_shape()),
                         kernel_dtype(dt, x.device()), x.device(), cl);
  if (y.numel() > 0) {
    autograd::GradModeGuard no_grad(false);
    const Tensor bk = b.defined() ? as_kernel(b) : Tensor();
    conv_kernel(conv_forward_stub, x.device())(as_kernel(x, cl), as_kernel(w, cl),
                                               b.defined() ? &bk : nullptr, y, s);
  }
  y = from_kernel(y, dt);
  autograd::record_conv(autograd::ConvKind::Forward, {x, w, b}, y, s.encode());
  return y;
}

Tensor conv_transpose_op(const Tensor& gy, const Tensor& w, const Tensor& b, const ConvSpec& s) {
  const DType dt = gy.dtype();
  const int64_t c = w.dim(1) * s.groups;
  const bool cl = cuda_channels_last(gy, w);
  Tensor gx = empty_batch(batch_shape(gy.dim(0), c, s.in_shape()), kernel_dtype(dt, gy.device()),
                          gy.device(), cl);
  if (gx.numel() > 0) {
    autograd::GradModeGuard no_grad(false);
    conv_kernel(conv_transpose_stub, gy.device())(as_kernel(gy, cl), as_kernel(w, cl), gx, s);
    if (b.defined()) {
      Shape bs;
      for (int64_t i = 0; i < gx.ndim(); ++i) bs.push_back(i == 1 ? c : 1);
      gx = add(gx, reshape(as_kernel(b), bs));
    }
  }
  gx = from_kernel(gx, dt);
  autograd::record_conv(autograd::ConvKind::Transpose, {gy, w, b}, gx, s.encode());
  return gx;
}

Tensor conv_weight(const Tensor& gy, const Tensor& x, const Shape& w_shape, const ConvSpec& s) {
  const DType dt = gy.dtype();
  const bool cl = cuda_channels_last(gy, x);
  Tensor gw = empty_batch(w_shape, kernel_dtype(dt, gy.device()), gy.device(), cl);
  if (gw.numel() > 0) {
    autograd::GradModeGuard no_grad(false);
    conv_kernel(conv_weight_stub, gy.device())(as_kernel(gy, cl), as_kernel(x, cl), gw, s);
  }
  gw = from_kernel(gw, dt);
  autograd::record_conv(autograd::ConvKind::Weight, {gy, x}, gw, s.encode());
  return gw;
}

namespace {

// Per-dim arguments: one value broadcast to every dim, or exactly nsp values.
std::array<int64_t, 3> per_dim(const Shape& v, int nsp, int64_t dflt, const char* what,
                               const char* op) {
  std::array<int64_t, 3> out{dflt, dflt, dflt};
  TS_CHECK(v.size() == 1 || static_cast<int>(v.size()) == nsp, ValueError, op, ": expected ",
           what, " to be a single int or ", nsp, " ints, got ", shape_str(v));
  for (int i = 0; i < nsp; ++i) out[3 - nsp + i] = v.size() == 1 ? v[0] : v[i];
  return out;
}

// x batched (a batch axis added to an unbatched input); sets `unbatched`.
Tensor batched(const Tensor& x, const Tensor& w, int nsp, bool* unbatched, const char* op) {
  TS_CHECK(w.ndim() == nsp + 2, ValueError, op, ": expected a ", nsp + 2,
           "-D weight (out_channels, in_channels/groups, kernel...), got shape ",
           shape_str(w.shape()));
  *unbatched = x.ndim() == nsp + 1;
  TS_CHECK(x.ndim() == nsp + 1 || x.ndim() == nsp + 2, ValueError, op, ": expected a ", nsp + 1,
           "-D or ", nsp + 2, "-D input, got shape ", shape_str(x.shape()));
  return *unbatched ? expand_dims(x, 0) : x;
}

int64_t checked_numel(const Shape& s, const char* op) {
  int64_t n = 1;
  for (int64_t v : s) {
    TS_CHECK(v >= 0 && (v == 0 || n <= std::numeric_limits<int64_t>::max() / v), ValueError, op,
             ": output of shape ", shape_str(s), " is too large");
    n *= v;
  }
  return n;
}

// The output keeps the input's (or, as PyTorch's CPU convolutions, the weight's)
// channels-last memory format.
Tensor like_input_format(const Tensor& y, const Tensor& x, const Tensor& w) {
  return is_channels_last(x) || is_channels_last(w) ? to_channels_last(y) : y;
}

// The convolutions' common entry after autocast: the batch axis, dtype checks. Returns x
// batched.
Tensor prepare(const Tensor& x, Tensor* w, Tensor* b, int nsp, bool* unbatched, const char* op) {
  Tensor xb = batched(x, *w, nsp, unbatched, op);
  check_float_operands(op, xb, *w, *b);
  return xb;
}

}  // namespace

Tensor convolution(const Tensor& x_in, const Tensor& w_in, const Tensor& b_in, const Shape& stride,
                   const Shape& padding, const std::string& pad_str, const Shape& dilation,
                   int64_t groups, int nsp, const char* op) {
  Tensor x = x_in, w = w_in, b = b_in;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("conv"), x, w, b);
  bool unbatched = false;
  const Tensor xb = prepare(x, &w, &b, nsp, &unbatched, op);
  const int64_t C = xb.dim(1), O = w.dim(0);
  TS_CHECK(groups > 0, ValueError, op, ": groups must be a positive integer, got ", groups);
  TS_CHECK(C % groups == 0 && w.dim(1) * groups == C, ValueError, op, ": input with ", C,
           " channels, weight ", shape_str(w.shape()), " and groups=", groups,
           " do not match (input of shape ", shape_str(xb.shape()), "; expected ",
           w.dim(1) * groups, " input channels: in_channels must equal weight.shape[1] * groups)");
  TS_CHECK(O % groups == 0, ValueError, op, ": out_channels ", O,
           " (weight of shape ", shape_str(w.shape()), ") must be divisible by groups=", groups);
  if (b.defined())
    TS_CHECK(b.ndim() == 1 && b.dim(0) == O, ValueError, op, ": bias of shape ",
             shape_str(b.shape()), " does not match ", O, " output channels (expected (", O,
             ",))");
  ConvSpec s;
  s.nsp = nsp;
  s.groups = groups;
  s.s = per_dim(stride, nsp, 1, "stride", op);
  s.d = per_dim(dilation, nsp, 1, "dilation", op);
  for (int i = 0; i < nsp; ++i) {
    s.in[3 - nsp + i] = xb.dim(2 + i);
    s.k[3 - nsp + i] = w.dim(2 + i);
  }
  for (int i = 0; i < 3; ++i) {
    TS_CHECK(s.s[i] > 0, ValueError, op, ": stride must be positive, got ", shape_str(stride));
    TS_CHECK(s.d[i] > 0, ValueError, op, ": dilation must be positive, got ",
             shape_str(dilation));
  }
  // 'same' with an odd total padding pads one more on the right: pad both sides by the
  // larger half and drop the first output along that dim.
  std::array<int64_t, 3> drop{0, 0, 0};
  if (pad_str == "valid") {
    s.p = {0, 0, 0};
  } else if (pad_str == "same") {
    for (int i = 0; i < 3; ++i)
      TS_CHECK(s.s[i] == 1, ValueError, op,
               ": padding='same' is not supported for strided convolutions (stride ",
               shape_str(stride), ")");
    for (int i = 0; i < 3; ++i) {
      const int64_t total = checked_mul(s.d[i], s.k[i] - 1, op);
      s.p[i] = total - total / 2;
      drop[i] = total % 2;
    }
  } else {
    TS_CHECK(pad_str.empty(), ValueError, op, ": invalid padding string '", pad_str,
             "' (expected 'valid' or 'same')");
    s.p = per_dim(padding, nsp, 0, "padding", op);
    for (int i = 0; i < 3; ++i)
      TS_CHECK(s.p[i] >= 0, ValueError, op, ": padding must be non-negative, got ",
               shape_str(padding));
  }
  for (int i = 3 - nsp; i < 3; ++i) {
    // a zero-size kernel summed nothing: an output of zeros (or the bias) as if valid
    TS_CHECK(s.k[i] > 0, ValueError, op, ": kernel size should be greater than zero, but got "
             "weight of shape ", shape_str(w.shape()), " (kernel size ", shape_str(s.k_shape()),
             ")");
    // Checked (Note [Checked size arithmetic]): padding and dilation are the user's.
    const int64_t span = checked_add(s.in[i], checked_mul(2, s.p[i], op), op) - drop[i],
                  need = checked_add(checked_mul(s.d[i], s.k[i] - 1, op), 1, op);
    TS_CHECK(span >= need, ValueError, op, ": kernel size ", shape_str(s.k_shape()),
             " (dilation ", shape_str(tail(s.d, nsp)),
             ") is larger than the padded input: input of shape ", shape_str(xb.shape()),
             " with padding ", shape_str(tail(s.p, nsp)), " has spatial size ", span,
             " in dim ", i - (3 - nsp) + 2, " but the kernel spans ", need);
  }
  s.set_out();
  checked_numel(batch_shape(xb.dim(0), O, s.out_shape()), op);
  Tensor y = conv_forward(xb, w, b, s);
  for (int i = 3 - nsp; i < 3; ++i)
    if (drop[i]) y = slice(y, 2 + i - (3 - nsp), 1, y.dim(2 + i - (3 - nsp)), 1);
  y = like_input_format(y, xb, w);
  return unbatched ? squeeze(y, Shape{0}) : y;
}

Tensor convolution_transpose(const Tensor& x_in, const Tensor& w_in, const Tensor& b_in,
                             const Shape& stride, const Shape& padding,
                             const Shape& output_padding, int64_t groups, const Shape& dilation,
                             int nsp, const char* op) {
  Tensor x = x_in, w = w_in, b = b_in;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("conv"), x, w, b);
  bool unbatched = false;
  const Tensor xb = prepare(x, &w, &b, nsp, &unbatched, op);
  const int64_t Cin = xb.dim(1);
  TS_CHECK(groups > 0, ValueError, op, ": groups must be a positive integer, got ", groups);
  TS_CHECK(w.dim(0) == Cin && Cin % groups == 0, ValueError, op, ": input with ", Cin,
           " channels does not match weight ", shape_str(w.shape()), " (input of shape ",
           shape_str(xb.shape()), "; expected weight.shape[0] == ", Cin, ") with groups=", groups,
           " (which must divide it)");
  const int64_t Cout = w.dim(1) * groups;
  if (b.defined())
    TS_CHECK(b.ndim() == 1 && b.dim(0) == Cout, ValueError, op, ": bias of shape ",
             shape_str(b.shape()), " does not match ", Cout, " output channels");
  ConvSpec s;
  s.nsp = nsp;
  s.groups = groups;
  s.s = per_dim(stride, nsp, 1, "stride", op);
  s.d = per_dim(dilation, nsp, 1, "dilation", op);
  s.p = per_dim(padding, nsp, 0, "padding", op);
  const auto op_pad = per_dim(output_padding, nsp, 0, "output_padding", op);
  for (int i = 0; i < 3; ++i) {
    TS_CHECK(s.s[i] > 0 && s.d[i] > 0, ValueError, op, ": stride ", shape_str(stride),
             " and dilation ", shape_str(dilation), " must be positive");
    TS_CHECK(s.p[i] >= 0 && op_pad[i] >= 0, ValueError, op, ": padding ", shape_str(padding),
             " and output_padding ", shape_str(output_padding), " must be non-negative");
    TS_CHECK(op_pad[i] < s.s[i] || op_pad[i] < s.d[i], ValueError, op, ": output_padding ",
             shape_str(output_padding), " must be smaller than stride ", shape_str(stride),
             " or dilation ", shape_str(dilation));
  }
  for (int i = 0; i < nsp; ++i) {
    const int j = 3 - nsp + i;
    s.k[j] = w.dim(2 + i);
    TS_CHECK(s.k[j] > 0, ValueError, op, ": kernel size should be greater than zero, but got "
             "weight of shape ", shape_str(w.shape()));
    const int64_t n = xb.dim(2 + i);
    // (n - 1) s - 2 p + d (k - 1) + output_padding + 1, checked: the sum of the non-negative
    // terms, then the (checked) 2 p taken off, which cannot overflow.
    s.in[j] = checked_add(checked_add(checked_mul(n - 1, s.s[j], op),
                                      checked_mul(s.d[j], s.k[j] - 1, op), op),
                          checked_add(op_pad[j], 1, op), op) -
              checked_mul(2, s.p[j], op);
    TS_CHECK(s.in[j] > 0, ValueError, op, ": input of shape ", shape_str(xb.shape()),
             " with kernel ", shape_str(s.k_shape()), ", stride ", shape_str(stride),
             ", padding ", shape_str(padding), " and dilation ", shape_str(dilation),
             " gives a non-positive output size ", s.in[j], " in dim ", i + 2);
    // The conv this transposes maps the output back to n positions, or more when
    // output_padding reaches past the stride (the extra outputs see no input).
    s.o[j] = n;
    TS_CHECK(s.out_formula(j) >= n, ValueError, op, ": inconsistent geometry in dim ", i + 2);
  }
  checked_numel(batch_shape(xb.dim(0), Cout, s.in_shape()), op);
  Tensor y = conv_transpose_op(xb, w, b, s);
  y = like_input_format(y, xb, w);
  return unbatched ? squeeze(y, Shape{0}) : y;
}

}  // namespace ts

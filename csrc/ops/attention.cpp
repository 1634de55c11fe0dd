#include "ops/attention.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/checked_math.h"
#include "ops/copy.h"
#include "kernels/random_math.h"
#include "ops/random.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(FlashAttentionKernel, flash_attention_stub, "flash_attention");
TS_DEFINE_STUB(FlashAttentionBackwardKernel, flash_attention_backward_stub,
               "flash_attention_backward");

CudnnAttention& cudnn_attention() {
  static CudnnAttention c;
  return c;
}
const char*& attention_path_used() {
  thread_local const char* path = "none";
  return path;
}

namespace {

DType stat_dtype(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }

void check_rank(const Tensor& x, int64_t nd, const char* name, const char* dims, const char* op) {
  TS_CHECK(x.ndim() == nd && (nd == 3 || nd == 4), ValueError, op, ": expected ", name,
           " of shape ", dims, ", got ", shape_str(x.shape()));
}

void check_like(const Tensor& a, const Tensor& x, const char* name, const char* op) {
  TS_CHECK(x.dtype() == a.dtype(), TypeError, op, ": ", name, " dtype ", dtype_name(x.dtype()),
           " differs from query dtype ", dtype_name(a.dtype()));
  TS_CHECK(x.device() == a.device(), ValueError, op, ": query on ", a.device().str(), " and ", name,
           " on ", x.device().str());
}

// Shared checks of q (B, H, L, E), k (B, H, S, E), v (B, H, S, Ev), or the 3-D (N, ...) forms.
void check_qkv(const Tensor& q, const Tensor& k, const Tensor& v, double scale, const char* op) {
  TS_CHECK(is_floating(q.dtype()), TypeError, op,
           ": expected floating-point query/key/value (float16, bfloat16, float32, float64), "
           "got ",
           dtype_name(q.dtype()));
  const int64_t nd = q.ndim() == 4 ? 4 : 3;
  const char* qd = nd == 4 ? "(B, H, L, E)" : "(N, L, E)";
  check_rank(q, nd, "query", qd, op);
  check_rank(k, nd, "key", nd == 4 ? "(B, H, S, E)" : "(N, S, E)", op);
  check_rank(v, nd, "value", nd == 4 ? "(B, H, S, Ev)" : "(N, S, Ev)", op);
  check_like(q, k, "key", op);
  check_like(q, v, "value", op);
  bool same_batch = true;
  for (int64_t d = 0; d + 2 < nd; ++d)
    same_batch = same_batch && k.dim(d) == q.dim(d) && v.dim(d) == q.dim(d);
  TS_CHECK(same_batch && k.dim(nd - 1) == q.dim(nd - 1) && v.dim(nd - 2) == k.dim(nd - 2),
           ValueError, op, ": query ", shape_str(q.shape()), ", key ", shape_str(k.shape()),
           " and value ", shape_str(v.shape()), " do not match (expected ", qd,
           nd == 4 ? ", (B, H, S, E), (B, H, S, Ev))" : ", (N, S, E), (N, S, Ev))");
  TS_CHECK(std::isfinite(scale), ValueError, op, ": scale must be finite, got ", scale);
}

void check_shape(const Tensor& x, const Shape& want, const char* name, const char* op) {
  TS_CHECK(x.shape() == want, ValueError, op, ": ", name, " of shape ", shape_str(x.shape()),
           ", expected ", shape_str(want));
}

// (N, R, C) as (1, N, R, C); (B, H, R, C) as it is.
Tensor as4(const Tensor& x) {
  return x.ndim() == 4 ? x : reshape(x, Shape{1, x.dim(0), x.dim(1), x.dim(2)});
}

// What the kernels read (see attention.h): contiguous on the CPU; on other devices anything
// with unit stride along the rows.
Tensor kernel_input(const Tensor& x) {
  if (x.device().is_cpu()) return contiguous(x);
  return x.dim(3) <= 1 || x.strides()[3] == 1 ? x : contiguous(x);
}

// A (B, H, R, C) result: contiguous on the CPU, else laid out (B, R, H, C) as PyTorch's fused
// attention gives it, so that the usual transpose(1, 2).reshape(B, R, H * C) of its heads is a
// view, and the gradients flow back into a (B, R, 3 * H * C) projection without copies.
Tensor kernel_output(int64_t B, int64_t H, int64_t R, int64_t C, const Tensor& like) {
  if (like.device().is_cpu()) return Tensor::empty(Shape{B, H, R, C}, like.dtype(), like.device());
  return permute_dims(Tensor::empty(Shape{B, R, H, C}, like.dtype(), like.device()),
                      Shape{0, 2, 1, 3});
}

// The 4-D result back in the caller's rank.
Tensor like_input(const Tensor& x4, int64_t nd) {
  return nd == 4 ? x4 : reshape(x4, Shape{x4.dim(1), x4.dim(2), x4.dim(3)});
}

void check_dropout(double p, const char* op) {
  TS_CHECK(p >= 0 && p <= 1, ValueError, op,
           ": dropout probability has to be between 0 and 1, but got ", p);
}

}  // namespace

AttentionDropout attention_dropout(double p, uint64_t seed, uint64_t offset) {
  AttentionDropout d;
  d.threshold = static_cast<uint64_t>(std::llround(std::ldexp(p, 32)));
  d.scale = dropout_scale(p);
  d.seed = seed;
  d.offset = offset;
  return d;
}

Tensor attention_dropout_mask(int64_t N, int64_t L, int64_t S, double p, uint64_t seed,
                              uint64_t offset, DType dtype, Device device) {
  const char* op = "attention_dropout_mask";
  check_dropout(p, op);
  TS_CHECK(N >= 0 && L >= 0 && S >= 0, ValueError, op, ": sizes must be non-negative, got (", N,
           ", ", L, ", ", S, ")");
  TS_CHECK(is_floating(dtype), TypeError, op, ": expected a floating dtype, got ",
           dtype_name(dtype));
  checked_mul(checked_mul(N, L, op), S, op);
  // Built on the host from the kernels' own rule (it serves the create_graph backward and the
  // tests, not the training hot path).
  const AttentionDropout d = attention_dropout(p, seed, offset);
  Tensor m = Tensor::empty(Shape{N, L, S}, DType::Float64, Device{});
  double* mp = m.data<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < S; ++j)
        *mp++ = !d.on() ? 1.0
                : rng::attention_keep_at(n, i, j, L, S, d.threshold, d.seed, d.offset)
                    ? d.scale
                    : 0.0;
  return to_device(astype(m, dtype, false), device);
}

std::tuple<Tensor, Tensor> flash_attention(const Tensor& q_, const Tensor& k_, const Tensor& v_,
                                           double scale, bool causal, double dropout_p,
                                           uint64_t seed, uint64_t offset) {
  const char* op = "flash_attention";
  check_qkv(q_, k_, v_, scale, op);
  check_dropout(dropout_p, op);
  const int64_t nd = q_.ndim();
  const Tensor q = as4(q_), k = as4(k_), v = as4(v_);
  const int64_t B = q.dim(0), H = q.dim(1), L = q.dim(2), S = k.dim(2), Ev = v.dim(3);
  Tensor out = kernel_output(B, H, L, Ev, q);
  Tensor lse = Tensor::empty(Shape{B, H, L}, stat_dtype(q.dtype()), q.device());
  if (B * H * L != 0 && S == 0) {  // no keys: the softmax of nothing times nothing
    fill_(out, Scalar::from_double(0.0));
    fill_(lse, Scalar::from_double(-std::numeric_limits<double>::infinity()));
  } else if (B * H * L != 0) {
    if (q.device().is_cpu()) attention_path_used() = "cpu";
    flash_attention_stub.get(q.device())(kernel_input(q), kernel_input(k), kernel_input(v), out,
                                         lse, scale, causal,
                                         attention_dropout(dropout_p, seed, offset));
  }
  if (nd == 3) lse = reshape(lse, Shape{H, L});
  return {like_input(out, nd), lse};
}

std::tuple<Tensor, Tensor, Tensor> flash_attention_backward(const Tensor& q_, const Tensor& k_,
                                                            const Tensor& v_, const Tensor& out_,
                                                            const Tensor& lse_,
                                                            const Tensor& gout_, double scale,
                                                            bool causal, double dropout_p,
                                                            uint64_t seed, uint64_t offset) {
  const char* op = "flash_attention_backward";
  check_qkv(q_, k_, v_, scale, op);
  check_dropout(dropout_p, op);
  const int64_t nd = q_.ndim();
  Shape out_shape = q_.shape(), lse_shape;
  out_shape[nd - 1] = v_.dim(nd - 1);
  for (int64_t d = 0; d + 1 < nd; ++d) lse_shape.push_back(q_.dim(d));
  check_shape(out_, out_shape, "out", op);
  check_shape(gout_, out_shape, "grad_out", op);
  check_shape(lse_, lse_shape, "lse", op);
  check_like(q_, out_, "out", op);
  check_like(q_, gout_, "grad_out", op);
  TS_CHECK(lse_.dtype() == stat_dtype(q_.dtype()), TypeError, op, ": lse dtype ",
           dtype_name(lse_.dtype()), ", expected ", dtype_name(stat_dtype(q_.dtype())));
  TS_CHECK(lse_.device() == q_.device(), ValueError, op, ": query on ", q_.device().str(),
           " and lse on ", lse_.device().str());
  const Tensor q = as4(q_), k = as4(k_), v = as4(v_), out = as4(out_), gout = as4(gout_);
  const int64_t B = q.dim(0), H = q.dim(1), L = q.dim(2), S = k.dim(2);
  Tensor dq = kernel_output(B, H, L, q.dim(3), q);
  Tensor dk = kernel_output(B, H, S, k.dim(3), q);
  Tensor dv = kernel_output(B, H, S, v.dim(3), q);
  if (B * H * L == 0 || S == 0) {  // nothing attends: every gradient is 0
    fill_(dq, Scalar::from_double(0.0));
    fill_(dk, Scalar::from_double(0.0));
    fill_(dv, Scalar::from_double(0.0));
  } else {
    if (q.device().is_cpu()) attention_path_used() = "cpu";
    flash_attention_backward_stub.get(q.device())(
        kernel_input(q), kernel_input(k), kernel_input(v), kernel_input(out), contiguous(lse_),
        kernel_input(gout), dq, dk, dv, scale, causal, attention_dropout(dropout_p, seed, offset));
  }
  return {like_input(dq, nd), like_input(dk, nd), like_input(dv, nd)};
}

}  // namespace ts

#include "ops/attention.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "ops/copy.h"

namespace ts {

TS_DEFINE_STUB(FlashAttentionKernel, flash_attention_stub, "flash_attention");
TS_DEFINE_STUB(FlashAttentionBackwardKernel, flash_attention_backward_stub,
               "flash_attention_backward");

namespace {

DType stat_dtype(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }

void check_3d(const Tensor& x, const char* name, const char* dims, const char* op) {
  TS_CHECK(x.ndim() == 3, ValueError, op, ": expected ", name, " of shape ", dims, ", got ",
           shape_str(x.shape()));
}

void check_like(const Tensor& a, const Tensor& x, const char* name, const char* op) {
  TS_CHECK(x.dtype() == a.dtype(), TypeError, op, ": ", name, " dtype ", dtype_name(x.dtype()),
           " differs from query dtype ", dtype_name(a.dtype()));
  TS_CHECK(x.device() == a.device(), ValueError, op, ": query on ", a.device().str(), " and ", name,
           " on ", x.device().str());
}

// Shared checks of q (N, L, E), k (N, S, E), v (N, S, Ev).
void check_qkv(const Tensor& q, const Tensor& k, const Tensor& v, double scale, const char* op) {
  TS_CHECK(is_floating(q.dtype()), TypeError, op,
           ": expected floating-point query/key/value (float16, bfloat16, float32, float64), "
           "got ",
           dtype_name(q.dtype()));
  check_3d(q, "query", "(N, L, E)", op);
  check_3d(k, "key", "(N, S, E)", op);
  check_3d(v, "value", "(N, S, Ev)", op);
  check_like(q, k, "key", op);
  check_like(q, v, "value", op);
  TS_CHECK(
      k.dim(0) == q.dim(0) && v.dim(0) == q.dim(0) && k.dim(2) == q.dim(2) && v.dim(1) == k.dim(1),
      ValueError, op, ": query ", shape_str(q.shape()), ", key ", shape_str(k.shape()),
      " and value ", shape_str(v.shape()),
      " do not match (expected (N, L, E), (N, S, E), (N, S, Ev))");
  TS_CHECK(std::isfinite(scale), ValueError, op, ": scale must be finite, got ", scale);
}

void check_shape(const Tensor& x, const Shape& want, const char* name, const char* op) {
  TS_CHECK(x.shape() == want, ValueError, op, ": ", name, " of shape ", shape_str(x.shape()),
           ", expected ", shape_str(want));
}

}  // namespace

std::tuple<Tensor, Tensor> flash_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                           double scale, bool causal) {
  const char* op = "flash_attention";
  check_qkv(q, k, v, scale, op);
  const int64_t N = q.dim(0), L = q.dim(1), S = k.dim(1), Ev = v.dim(2);
  Tensor out = Tensor::empty(Shape{N, L, Ev}, q.dtype(), q.device());
  Tensor lse = Tensor::empty(Shape{N, L}, stat_dtype(q.dtype()), q.device());
  if (N * L == 0) return {out, lse};
  if (S == 0) {  // no keys: the softmax of nothing times nothing
    fill_(out, Scalar::from_double(0.0));
    fill_(lse, Scalar::from_double(-std::numeric_limits<double>::infinity()));
    return {out, lse};
  }
  flash_attention_stub.get(q.device())(contiguous(q), contiguous(k), contiguous(v), out, lse, scale,
                                       causal);
  return {out, lse};
}

std::tuple<Tensor, Tensor, Tensor> flash_attention_backward(const Tensor& q, const Tensor& k,
                                                            const Tensor& v, const Tensor& out,
                                                            const Tensor& lse, const Tensor& gout,
                                                            double scale, bool causal) {
  const char* op = "flash_attention_backward";
  check_qkv(q, k, v, scale, op);
  const int64_t N = q.dim(0), L = q.dim(1), S = k.dim(1), Ev = v.dim(2);
  check_shape(out, Shape{N, L, Ev}, "out", op);
  check_shape(gout, Shape{N, L, Ev}, "grad_out", op);
  check_shape(lse, Shape{N, L}, "lse", op);
  check_like(q, out, "out", op);
  check_like(q, gout, "grad_out", op);
  TS_CHECK(lse.dtype() == stat_dtype(q.dtype()), TypeError, op, ": lse dtype ",
           dtype_name(lse.dtype()), ", expected ", dtype_name(stat_dtype(q.dtype())));
  TS_CHECK(lse.device() == q.device(), ValueError, op, ": query on ", q.device().str(),
           " and lse on ", lse.device().str());
  Tensor dq = Tensor::empty(q.shape(), q.dtype(), q.device());
  Tensor dk = Tensor::empty(k.shape(), k.dtype(), k.device());
  Tensor dv = Tensor::empty(v.shape(), v.dtype(), v.device());
  if (N * L == 0 || S == 0) {  // nothing attends: every gradient is 0
    fill_(dq, Scalar::from_double(0.0));
    fill_(dk, Scalar::from_double(0.0));
    fill_(dv, Scalar::from_double(0.0));
    return {dq, dk, dv};
  }
  flash_attention_backward_stub.get(q.device())(contiguous(q), contiguous(k), contiguous(v),
                                                contiguous(out), contiguous(lse), contiguous(gout),
                                                dq, dk, dv, scale, causal);
  return {dq, dk, dv};
}

}  // namespace ts

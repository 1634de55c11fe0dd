// Note [Causal block attention]
// With PyTorch's top-left causal mask, query rows [r0, r1) see only keys [0, min(r1, S)). The
// matmul path of attention (scores = q k^T, the fused causal softmax, out = p v, and four
// GEMMs back) spends half its GEMM FLOPs on masked scores. Here the rows are cut into blocks
// and every GEMM runs on what a block needs: scores, dP and out/dq on the block's visible key
// prefix, dk/dv of key block [c0, c1) on the queries [c0, L) that see it. With 64-row blocks
// at L = S = 256 that is 10/16 of the FLOPs, in 4 GEMM calls per product instead of 1.
// Score entries right of a block's prefix are never computed, read or written: the causal
// softmax kernels read only each row's visible keys and write only its block's prefix (zeros
// past the diagonal), and no GEMM reads past a prefix. That also cuts the softmax traffic. The
// GEMMs write blocks of the wider score matrices in place, so the matmul kernels accept output rows
// strided past their width.
#include "ops/attention_causal.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "ops/copy.h"
#include "ops/linalg.h"
#include "ops/nn_fused.h"
#include "ops/views.h"

namespace ts {
namespace {

// x[..., r0:r1, :] and x[..., c0:c1] as plain views (no autograd record: values only).
Tensor rows(const Tensor& x, int64_t r0, int64_t r1) {
  const int64_t ax = x.ndim() - 2;
  Shape s = x.shape();
  s[ax] = r1 - r0;
  return x.as_strided(s, x.strides(), x.offset() + r0 * x.strides()[ax]);
}
Tensor cols(const Tensor& x, int64_t c0, int64_t c1) {
  const int64_t ax = x.ndim() - 1;
  Shape s = x.shape();
  s[ax] = c1 - c0;
  return x.as_strided(s, x.strides(), x.offset() + c0 * x.strides()[ax]);
}
Tensor mT(const Tensor& x) {
  const int64_t nd = x.ndim();
  Shape s = x.shape();
  Strides st = x.strides();
  std::swap(s[nd - 2], s[nd - 1]);
  std::swap(st[nd - 2], st[nd - 1]);
  return x.as_strided(s, st, x.offset());
}

// out = a @ b into out's (possibly strided-row) storage.
void gemm_into(const Tensor& out, const Tensor& a, const Tensor& b) {
  if (out.numel() > 0) matmul_stub.get(out.device())(out, a, b);
}

Shape with_last2(const Tensor& like, int64_t r, int64_t c) {
  Shape s(like.shape().begin(), like.shape().end() - 2);
  s.push_back(r);
  s.push_back(c);
  return s;
}

void check_operand(const Tensor& q, const Tensor& x, const char* name, const char* op) {
  TS_CHECK(x.dtype() == q.dtype(), TypeError, op, ": ", name, " dtype ", dtype_name(x.dtype()),
           " differs from query dtype ", dtype_name(q.dtype()));
  TS_CHECK(x.device() == q.device(), ValueError, op, ": query on ", q.device().str(), " and ", name,
           " on ", x.device().str());
  TS_CHECK(
      x.ndim() == q.ndim() && std::equal(q.shape().begin(), q.shape().end() - 2, x.shape().begin()),
      ValueError, op, ": query ", shape_str(q.shape()), " and ", name, " ", shape_str(x.shape()),
      " need equal batch dims");
}

// q (..., L, E), k (..., S, E), v (..., S, Ev); returns the block size to use.
int64_t check_qkv(const Tensor& q, const Tensor& k, const Tensor& v, double scale, int64_t block,
                  const char* op) {
  TS_CHECK(is_floating(q.dtype()), TypeError, op, ": expected floating-point query/key/value, got ",
           dtype_name(q.dtype()));
  TS_CHECK(q.ndim() >= 3, ValueError, op, ": expected query of shape (..., L, E), got ",
           shape_str(q.shape()));
  check_operand(q, k, "key", op);
  check_operand(q, v, "value", op);
  const int64_t nd = q.ndim();
  TS_CHECK(k.dim(nd - 1) == q.dim(nd - 1) && v.dim(nd - 2) == k.dim(nd - 2), ValueError, op,
           ": query ", shape_str(q.shape()), ", key ", shape_str(k.shape()), " and value ",
           shape_str(v.shape()), " do not match (expected (..., L, E), (..., S, E), (..., S, Ev))");
  TS_CHECK(q.dim(nd - 2) > 0 && k.dim(nd - 2) > 0, ValueError, op, ": needs L, S > 0, got query ",
           shape_str(q.shape()), " and key ", shape_str(k.shape()));
  TS_CHECK(std::isfinite(scale), ValueError, op, ": scale must be finite, got ", scale);
  TS_CHECK(block > 0, ValueError, op, ": block must be positive, got ", block);
  return block;
}

}  // namespace

std::tuple<Tensor, Tensor> causal_block_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                  double scale, int64_t block) {
  const char* op = "causal_block_attention";
  const int64_t b = check_qkv(q, k, v, scale, block, op);
  const int64_t nd = q.ndim(), L = q.dim(nd - 2), S = k.dim(nd - 2), Ev = v.dim(nd - 1);
  const Tensor scores = Tensor::empty(with_last2(q, L, S), q.dtype(), q.device());
  const Tensor out = Tensor::empty(with_last2(q, L, Ev), q.dtype(), q.device());
  for (int64_t r0 = 0; r0 < L; r0 += b) {
    const int64_t r1 = std::min(L, r0 + b), kend = std::min(r1, S);
    gemm_into(cols(rows(scores, r0, r1), 0, kend), rows(q, r0, r1), mT(rows(k, 0, kend)));
  }
  Tensor p = attention_softmax(scores, scale, true, b);
  for (int64_t r0 = 0; r0 < L; r0 += b) {
    const int64_t r1 = std::min(L, r0 + b), kend = std::min(r1, S);
    gemm_into(rows(out, r0, r1), cols(rows(p, r0, r1), 0, kend), rows(v, 0, kend));
  }
  return {out, p};
}

std::tuple<Tensor, Tensor, Tensor> causal_block_attention_backward(const Tensor& q, const Tensor& k,
                                                                   const Tensor& v, const Tensor& p,
                                                                   const Tensor& g, double scale,
                                                                   int64_t block) {
  const char* op = "causal_block_attention_backward";
  const int64_t b = check_qkv(q, k, v, scale, block, op);
  const int64_t nd = q.ndim(), L = q.dim(nd - 2), S = k.dim(nd - 2), Ev = v.dim(nd - 1);
  check_operand(q, p, "probabilities", op);
  check_operand(q, g, "grad_out", op);
  TS_CHECK(p.shape() == with_last2(q, L, S) && p.is_contiguous(), ValueError, op,
           ": probabilities of shape ", shape_str(p.shape()), ", expected contiguous ",
           shape_str(with_last2(q, L, S)));
  TS_CHECK(g.shape() == with_last2(q, L, Ev), ValueError, op, ": grad_out of shape ",
           shape_str(g.shape()), ", expected ", shape_str(with_last2(q, L, Ev)));
  const Tensor dq = Tensor::empty(q.shape(), q.dtype(), q.device());
  const Tensor dk = Tensor::empty(k.shape(), q.dtype(), q.device());
  const Tensor dv = Tensor::empty(v.shape(), q.dtype(), q.device());
  const Tensor dp = Tensor::empty(p.shape(), q.dtype(), q.device());
  // Key block [c0, c1) is seen by queries [c0, L); keys at or past L by none.
  for (int64_t c0 = 0; c0 < S; c0 += b) {
    const int64_t c1 = std::min(S, c0 + b);
    if (c0 >= L) {
      fill_(rows(dv, c0, S), Scalar::from_int(0));
      fill_(rows(dk, c0, S), Scalar::from_int(0));
      break;
    }
    gemm_into(rows(dv, c0, c1), mT(cols(rows(p, c0, L), c0, c1)), rows(g, c0, L));
  }
  for (int64_t r0 = 0; r0 < L; r0 += b) {
    const int64_t r1 = std::min(L, r0 + b), kend = std::min(r1, S);
    gemm_into(cols(rows(dp, r0, r1), 0, kend), rows(g, r0, r1), mT(rows(v, 0, kend)));
  }
  const Tensor ds = attention_softmax_backward(p, dp, scale, true, b);
  for (int64_t r0 = 0; r0 < L; r0 += b) {
    const int64_t r1 = std::min(L, r0 + b), kend = std::min(r1, S);
    gemm_into(rows(dq, r0, r1), cols(rows(ds, r0, r1), 0, kend), rows(k, 0, kend));
  }
  for (int64_t c0 = 0; c0 < std::min(S, L); c0 += b) {
    const int64_t c1 = std::min(S, c0 + b);
    gemm_into(rows(dk, c0, c1), mT(cols(rows(ds, c0, L), c0, c1)), rows(q, c0, L));
  }
  return {dq, dk, dv};
}

}  // namespace ts

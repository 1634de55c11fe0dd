#include "ops/nn/attention.h"

#include <cmath>
#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/record_nn.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/attention.h"
#include "ops/attention_causal.h"
#include "ops/autocast_policy.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/linalg.h"
#include "ops/manipulation.h"
#include "ops/nn/embedding.h"
#include "ops/nn/operand_dtype.h"
#include "ops/nn/softmax.h"
#include "ops/random.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::nn {

namespace {

const char* kOp = "scaled_dot_product_attention";

bool g_tracing = false;
std::vector<AttentionCall> g_trace;

void trace(const char* path, Device device, int64_t block) {
  if (g_tracing) g_trace.push_back({path, device, block});
}

bool same_batch(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t nd = q.ndim();
  for (int64_t d = 0; d + 2 < nd; ++d)
    if (k.dim(d) != q.dim(d) || v.dim(d) != q.dim(d)) return false;
  return true;
}

// Floating q/k/v of one dtype and device and rank >= 3 with equal (not broadcast) batch dims:
// what both fused paths need.
bool fusable_qkv(const Tensor& q, const Tensor& k, const Tensor& v) {
  return q.ndim() >= 3 && k.ndim() == q.ndim() && v.ndim() == q.ndim() && is_floating(q.dtype()) &&
         k.dtype() == q.dtype() && v.dtype() == q.dtype() && k.device() == q.device() &&
         v.device() == q.device() && same_batch(q, k, v);
}

// Bytes of the float32 (..., L, S) score tensor the GEMM paths would build.
double score_bytes(const Tensor& q, const Tensor& k) {
  double n = 4.0 * double(q.dim(q.ndim() - 2)) * double(k.dim(k.ndim() - 2));
  for (int64_t d = 0; d + 2 < q.ndim(); ++d) n *= double(q.dim(d));
  return n;
}

bool flash_applies(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (!fusable_qkv(q, k, v)) return false;
  const AttentionSettings& s = attention_settings();
  const DType dt = q.dtype();
  if (q.device().type == DeviceType::CUDA) {
    const int64_t head = std::max(q.dim(q.ndim() - 1), v.dim(v.ndim() - 1));
    if (!(s.flash_on_cuda && dt != DType::Float64 && head <= s.flash_max_head_dim)) return false;
    return dt != DType::Float32 || head <= s.flash_max_head_dim_f32 ||
           score_bytes(q, k) > double(s.flash_min_score_bytes);
  }
  return q.device().is_cpu() && s.flash_on_cpu;
}

// The causal block path's row block, or 0 where it does not apply (asked only where the flash
// kernel does not).
int64_t causal_block(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (!fusable_qkv(q, k, v)) return 0;
  const AttentionSettings& s = attention_settings();
  bool dtype_ok = false;
  for (DType d : s.causal_dtypes) dtype_ok = dtype_ok || d == q.dtype();
  if (!dtype_ok) return 0;
  const int64_t L = q.dim(q.ndim() - 2), S = k.dim(k.ndim() - 2);
  const int64_t per = s.causal_max_blocks * s.causal_block;
  const int64_t block =
      std::max(s.causal_block, per > 0 ? (L + per - 1) / per * s.causal_block : s.causal_block);
  return S > 0 && L >= 2 * block ? block : 0;
}

Tensor scalar(double v) { return wrap_scalar(Scalar::from_double(v)); }

Tensor ones(const Shape& shape, DType dtype, Device device) {
  Tensor t = Tensor::empty(shape, dtype, device);
  fill_(t, Scalar::from_int(1));
  return t;
}

Tensor flash_path(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal,
                  double p) {
  uint64_t seed = 0, offset = 0;
  if (p > 0) std::tie(seed, offset) = default_generator().next_philox(q.device());
  trace("flash", q.device(), 0);
  Tensor y, out, lse;
  {
    autograd::GradModeGuard no_grad(false);
    std::tie(out, lse) = flash_attention(attention_heads(q), attention_heads(k),
                                         attention_heads(v), scale, causal, p, seed, offset);
    Shape shape = q.shape();
    shape.back() = v.dim(v.ndim() - 1);
    y = out.shape() == shape ? out : reshape(out, shape);
  }
  autograd::record_flash_attention(q, k, v, y, out, lse, scale, causal, p, seed, offset);
  return y;
}

Tensor causal_block_path(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                         int64_t block) {
  trace("causal_block", q.device(), block);
  const bool copy = attention_settings().causal_contiguous;
  Tensor out, p, qc = q, kc = k, vc = v;
  {
    autograd::GradModeGuard no_grad(false);
    if (copy) {
      qc = contiguous(q);
      kc = contiguous(k);
      vc = contiguous(v);
    }
    std::tie(out, p) = causal_block_attention(qc, kc, vc, scale, block);
  }
  autograd::record_causal_block_attention(q, k, v, qc, kc, vc, out, p, scale, block, copy);
  return out;
}

}  // namespace

// The dtype is passed so that autocast leaves this inner softmax alone.
Tensor safe_softmax(const Tensor& scores) {
  const int64_t last = scores.ndim() - 1;
  if (scores.dim(last) == 0) return softmax(scores, -1, scores.dtype());
  Tensor dead;
  {
    autograd::GradModeGuard no_grad(false);
    dead = binary_op(equal_def, max(scores, Shape{-1}, true),
                     scalar(-std::numeric_limits<double>::infinity()));
  }
  return where(dead, scalar(0.0),
               softmax(where(dead, scalar(0.0), scores), -1, scores.dtype()));
}

AttentionSettings& attention_settings() {
  static AttentionSettings s;
  return s;
}

void set_attention_trace(bool on) {
  g_tracing = on;
  g_trace.clear();
}

std::vector<AttentionCall> attention_trace() { return g_trace; }

Tensor attention_heads(const Tensor& x) {
  const int64_t nd = x.ndim();
  if (nd <= 4) return x;
  int64_t n = 1;
  for (int64_t d = 0; d + 3 < nd; ++d) n *= x.dim(d);
  return reshape(x, Shape{n, x.dim(nd - 3), x.dim(nd - 2), x.dim(nd - 1)});
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale_arg, bool enable_gqa) {
  Tensor q = query, k = key, v = value, mask = attn_mask;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("scaled_dot_product_attention"), q, k, v, mask);
  check_same_dtype(kOp, "query", q, {{"key", &k}, {"value", &v}});
  TS_CHECK(!(is_causal && mask.defined()), ValueError, kOp,
           ": pass either attn_mask or is_causal, not both");
  TS_CHECK(q.ndim() >= 2 && k.ndim() >= 2 && v.ndim() >= 2, ValueError, kOp,
           ": expected query (..., L, E), key (..., S, E) and value (..., S, Ev) of at least 2 "
           "dims, got query ",
           shape_str(q.shape()), ", key ", shape_str(k.shape()), ", value ", shape_str(v.shape()));
  const int64_t E = q.dim(q.ndim() - 1);
  // Empty head dims give all-zero scores whatever the scale (PyTorch: uniform weights).
  const double scale = scale_arg ? *scale_arg : (E ? 1.0 / std::sqrt(double(E)) : 1.0);
  if (enable_gqa && q.ndim() >= 3 && k.ndim() >= 3 && k.dim(k.ndim() - 3) != q.dim(q.ndim() - 3)) {
    const int64_t hk = k.dim(k.ndim() - 3), hq = q.dim(q.ndim() - 3);
    TS_CHECK(hk > 0 && hq % hk == 0 && v.ndim() >= 3 && v.dim(v.ndim() - 3) == hk, ValueError,
             kOp, ": enable_gqa needs the query's ", hq,
             " heads to be a multiple of the key's and value's (key ", shape_str(k.shape()),
             ", value ", shape_str(v.shape()), ")");
    k = repeat(k, hq / hk, -3, false);
    v = repeat(v, hq / hk, -3, false);
  }
  TS_CHECK(dropout_p >= 0.0 && dropout_p <= 1.0, ValueError, kOp,
           ": dropout_p has to be between 0 and 1, but got ", dropout_p);
  {
    const AttentionSettings& st = attention_settings();
    const bool cuda = q.device().type == DeviceType::CUDA;
    TS_CHECK(st.math_sdp || st.flash_sdp ||
                 (cuda && (st.mem_efficient_sdp || cudnn_attention().enabled)),
             RuntimeError, kOp, ": No viable backend for scaled_dot_product_attention was found ",
             "(the math and flash backends are off", cuda ? "" : "; on CPU only they run",
             "); hint: enable one with torch.nn.attention.sdpa_kernel or ",
             "torch.backends.cuda.enable_math_sdp(True)");
  }
  if (!mask.defined() && flash_applies(q, k, v))
    return flash_path(q, k, v, scale, is_causal, dropout_p);
  const int64_t block =
      is_causal && !mask.defined() && dropout_p == 0.0 ? causal_block(q, k, v) : 0;
  if (block) return causal_block_path(q, k, v, scale, block);
  Tensor scores = matmul(q, matrix_transpose(k));
  if (!mask.defined() && dropout_p == 0.0 && is_floating(scores.dtype()))
    return matmul(attention_softmax(scores, scale, is_causal), v);
  scores = multiply(scores, scalar(scale));
  const int64_t L = q.dim(q.ndim() - 2), S = k.dim(k.ndim() - 2);
  if (is_causal) {
    Tensor keep;
    {
      autograd::GradModeGuard no_grad(false);
      keep = tril(ones(Shape{L, S}, DType::Bool, scores.device()), 0);
    }
    scores = where(keep, scores, scalar(-std::numeric_limits<double>::infinity()));
  }
  Tensor attn;
  if (mask.defined()) {
    if (mask.dtype() == DType::Bool)
      scores = where(mask, scores, scalar(-std::numeric_limits<double>::infinity()));
    else
      scores = add(scores, mask);
    attn = safe_softmax(scores);
  } else {
    attn = softmax(scores, -1, scores.dtype());
  }
  if (dropout_p > 0.0) attn = dropout(attn, dropout_p, true, false, nullptr);
  return matmul(attn, v);
}

}  // namespace ts::nn

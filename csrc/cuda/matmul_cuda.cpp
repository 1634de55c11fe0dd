// CUDA matmul through cuBLAS: one strided-batched GEMM per call (broadcast batch dims stay
// stride-0, a transposed operand is read in place as op=T). Note [Row-major GEMM]: cuBLAS is
// column-major, and a row-major m x n matrix is the column-major n x m transpose, so
// C = A B is computed as C^T = B^T A^T with the operands swapped.
#include <cublas_v2.h>

#include <algorithm>
#include <vector>

#include "core/device_backend.h"
#include "cuda/cublas_util.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "ops/copy.h"
#include "ops/linalg.h"

namespace ts::cuda {
namespace {

cublasHandle_t handle(int dev) {
  thread_local std::vector<cublasHandle_t> handles;
  if (handles.size() <= static_cast<size_t>(dev)) handles.resize(dev + 1, nullptr);
  if (!handles[dev]) {
    DeviceGuard g(dev);
    check_cublas(cublasCreate(&handles[dev]), "cublasCreate");
  }
  return handles[dev];
}

// How cuBLAS can read the last two dims of t (row-major view): `trans` when t is stored
// column-major; ld is the leading dimension in elements.
struct Mat {
  bool ok = false, trans = false;
  int64_t ld = 0;
};

Mat mat_of(const Tensor& t) {
  const int64_t nd = t.ndim(), rows = t.dim(nd - 2), cols = t.dim(nd - 1);
  // A dim of size 1 is never stepped, so its stride is arbitrary (a contiguous (1, 1) tensor
  // may carry strides (0, 0)); give it the value a packed layout would have, else cuBLAS sees
  // an illegal leading dimension.
  const int64_t cs = cols == 1 ? 1 : t.strides()[nd - 1];
  const int64_t rs = rows == 1 ? std::max<int64_t>(cols, 1) : t.strides()[nd - 2];
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) return {true, false, rs};
  if (rs == 1 && cs >= std::max<int64_t>(rows, 1)) return {true, true, cs};
  return {};
}

// One batch dim as the three tensors walk it (element strides; 0 where a or b is broadcast).
struct BatchDim {
  int64_t size, sa, sb, so;
};

// The batch dims outermost first, size-1 dims dropped and neighbours merged wherever all three
// tensors walk them with one stride, so contiguous and broadcast batches give a single dim.
std::vector<BatchDim> batch_dims(const Tensor& out, const Tensor& a, const Tensor& b) {
  std::vector<BatchDim> dims;
  for (int64_t d = 0; d < out.ndim() - 2; ++d) {
    if (out.dim(d) == 1) continue;
    const BatchDim c{out.dim(d), a.strides()[d], b.strides()[d], out.strides()[d]};
    if (!dims.empty()) {
      BatchDim& p = dims.back();
      if (p.sa == c.sa * c.size && p.sb == c.sb * c.size && p.so == c.so * c.size) {
        p = {p.size * c.size, c.sa, c.sb, c.so};
        continue;
      }
    }
    dims.push_back(c);
  }
  return dims;
}

// Note [Strided batches]: cuBLAS takes one stride per operand for the batch. Batch dims that
// do not merge (q/k/v split from one projection and transposed to (B, H, T, D) walk B and H
// with unrelated strides) run as a few strided-batched calls over the largest dim rather than
// as a copy of each operand; past kMaxGemmCalls calls the copy is cheaper again.
constexpr int64_t kMaxGemmCalls = 32;

struct BatchPlan {
  BatchDim inner{1, 0, 0, 0};
  std::vector<BatchDim> outer;  // looped over on the host
  int64_t calls = 1;
};

BatchPlan plan_batches(const Tensor& out, const Tensor& a, const Tensor& b) {
  BatchPlan plan;
  std::vector<BatchDim> dims = batch_dims(out, a, b);
  if (dims.empty()) return plan;
  auto largest =
      std::max_element(dims.begin(), dims.end(),
                       [](const BatchDim& x, const BatchDim& y) { return x.size < y.size; });
  plan.inner = *largest;
  dims.erase(largest);
  plan.outer = std::move(dims);
  for (const BatchDim& d : plan.outer) plan.calls *= d.size;
  return plan;
}

struct GemmCall {
  cublasHandle_t h;
  GemmTypes ty;
  int64_t m, n, k;
  Mat ma, mb;
  const void *alpha, *beta;
};

void run_gemm(const GemmCall& c, const BatchDim& inner, const char* a, const char* b, char* out) {
  // C^T (n x m, col-major, ld n) = B^T (n x k) * A^T (k x m)  (Note [Row-major GEMM]).
  check_cublas(
      cublasGemmStridedBatchedEx(
          c.h, c.mb.trans ? CUBLAS_OP_T : CUBLAS_OP_N, c.ma.trans ? CUBLAS_OP_T : CUBLAS_OP_N,
          static_cast<int>(c.n), static_cast<int>(c.m), static_cast<int>(c.k), c.alpha, b,
          c.ty.data, static_cast<int>(c.mb.ld), inner.sb, a, c.ty.data, static_cast<int>(c.ma.ld),
          inner.sa, c.beta, out, c.ty.data, static_cast<int>(c.n), inner.so,
          static_cast<int>(inner.size), c.ty.compute, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx");
}

// Walks the outer batch dims (odometer order), one strided-batched GEMM per position.
void run_batches(const GemmCall& c, const BatchPlan& plan, const Tensor& out, const Tensor& a,
                 const Tensor& b) {
  const int64_t isz = out.itemsize();
  std::vector<int64_t> idx(plan.outer.size(), 0);
  for (int64_t call = 0; call < plan.calls; ++call) {
    int64_t oa = 0, ob = 0, oo = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      oa += idx[d] * plan.outer[d].sa;
      ob += idx[d] * plan.outer[d].sb;
      oo += idx[d] * plan.outer[d].so;
    }
    run_gemm(c, plan.inner, static_cast<const char*>(a.data_ptr()) + oa * isz,
             static_cast<const char*>(b.data_ptr()) + ob * isz,
             static_cast<char*>(out.data_ptr()) + oo * isz);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < plan.outer[d].size) break;
      idx[d] = 0;
    }
  }
}

void matmul_cuda(const Tensor& out, const Tensor& a0, const Tensor& b0) {
  const GemmTypes ty = gemm_types(out.dtype());
  const int64_t nd = out.ndim(), m = out.dim(nd - 2), n = out.dim(nd - 1), k = a0.dim(nd - 1);
  if (out.numel() == 0) return;  // cuBLAS rejects ldc = n = 0
  if (k == 0) return fill_(out, Scalar::from_int(0));
  TS_CHECK(out.strides()[nd - 1] == 1 && out.strides()[nd - 2] == n, RuntimeError,
           "matmul: internal error: the CUDA kernel expects a row-major output");
  Tensor a = a0, b = b0;
  Mat ma = mat_of(a), mb = mat_of(b);
  if (!ma.ok) ma = mat_of(a = contiguous(a));
  if (!mb.ok) mb = mat_of(b = contiguous(b));
  BatchPlan plan = plan_batches(out, a, b);
  if (plan.calls > kMaxGemmCalls) {
    a = contiguous(a);
    b = contiguous(b);
    ma = mat_of(a);
    mb = mat_of(b);
    plan = plan_batches(out, a, b);
  }
  TS_CHECK(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && plan.inner.size <= INT32_MAX,
           ValueError, "matmul: dims beyond 2^31 are not supported on CUDA");
  const int dev = out.device().index;
  DeviceGuard g(dev);
  cublasHandle_t h = handle(dev);
  check_cublas(cublasSetStream(h, current_stream(dev)), "cublasSetStream");
  // alpha/beta in the compute type: float for 32F compute (incl. half and complex64 as cuComplex).
  static const double one_d[2] = {1.0, 0.0}, zero_d[2] = {0.0, 0.0};
  static const float one_f[2] = {1.0f, 0.0f}, zero_f[2] = {0.0f, 0.0f};
  const bool wide = ty.compute == CUBLAS_COMPUTE_64F;
  const GemmCall call{h,
                      ty,
                      m,
                      n,
                      k,
                      ma,
                      mb,
                      wide ? static_cast<const void*>(one_d) : one_f,
                      wide ? static_cast<const void*>(zero_d) : zero_f};
  run_batches(call, plan, out, a, b);
}

}  // namespace

TS_REGISTER_KERNEL(matmul_stub, CUDA, &matmul_cuda);

}  // namespace ts::cuda

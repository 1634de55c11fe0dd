// CUDA matmul through cuBLAS: one strided-batched GEMM per call (broadcast batch dims stay
// stride-0, a transposed operand is read in place as op=T). Note [Row-major GEMM]: cuBLAS is
// column-major, and a row-major m x n matrix is the column-major n x m transpose, so
// C = A B is computed as C^T = B^T A^T with the operands swapped.
#include <cublas_v2.h>

#include <algorithm>
#include <vector>

#include "core/device_backend.h"
#include "cuda/batch_pointers.h"
#include "cuda/cublas_util.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/gemm_tuning.h"
#include "ops/copy.h"
#include "ops/linalg.h"

namespace ts::cuda {
namespace {

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

// Note [Strided batches]: cuBLAS's strided-batched GEMM takes one stride per operand. Batch
// dims that do not merge (q/k/v split from one projection and moved to (B, H, T, D) walk B and
// H with unrelated strides) are read in place through the pointer-array batched GEMM, the
// pointers computed on the device by one small kernel, rather than copying each operand.
struct GemmCall {
  cublasHandle_t h;
  GemmTypes ty;
  int64_t m, n, k;
  Mat ma, mb;
  int64_t ldc;  // the output's row stride: >= n, more for a column slice of a wider matrix
  const void *alpha, *beta;
};

cublasOperation_t op_of(const Mat& x) { return x.trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

// One batch dim (or none): one strided-batched call.
void run_strided(const GemmCall& c, const BatchDim& bd, const Tensor& out, const Tensor& a,
                 const Tensor& b) {
  // C^T (n x m, col-major, ld ldc) = B^T (n x k) * A^T (k x m)  (Note [Row-major GEMM]).
  check_cublas(
      cublasGemmStridedBatchedEx(c.h, op_of(c.mb), op_of(c.ma), static_cast<int>(c.n),
                                 static_cast<int>(c.m), static_cast<int>(c.k), c.alpha,
                                 b.data_ptr(), c.ty.data, static_cast<int>(c.mb.ld), bd.sb,
                                 a.data_ptr(), c.ty.data, static_cast<int>(c.ma.ld), bd.sa, c.beta,
                                 out.data_ptr(), c.ty.data, static_cast<int>(c.ldc), bd.so,
                                 static_cast<int>(bd.size), c.ty.compute, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx");
}

// Several unmergeable batch dims: one pointer-array call over all positions.
void run_pointer_array(const GemmCall& c, const std::vector<BatchDim>& dims, int64_t count,
                       const Tensor& out, const Tensor& a, const Tensor& b, cudaStream_t s) {
  TS_CHECK(dims.size() <= static_cast<size_t>(kMaxBatchDims), ValueError, "matmul: more than ",
           kMaxBatchDims, " unmergeable batch dims are not supported on CUDA");
  const int64_t isz = out.itemsize();
  BatchWalk w;
  w.ndim = static_cast<int>(dims.size());
  for (int d = 0; d < w.ndim; ++d) {
    w.sizes[d] = dims[d].size;
    w.strides[0][d] = dims[d].sa * isz;
    w.strides[1][d] = dims[d].sb * isz;
    w.strides[2][d] = dims[d].so * isz;
  }
  w.base[0] = static_cast<const char*>(a.data_ptr());
  w.base[1] = static_cast<const char*>(b.data_ptr());
  w.base[2] = static_cast<const char*>(out.data_ptr());
  // Freed when this returns: the caching allocator reuses it only in stream order.
  Tensor table = Tensor::empty(Shape{3 * count}, DType::Int64, out.device());
  const void** p = reinterpret_cast<const void**>(table.data_ptr());
  void** outs = reinterpret_cast<void**>(table.data_ptr()) + 2 * count;
  launch_batch_pointers(w, count, p, s);
  check_cublas(cublasGemmBatchedEx(c.h, op_of(c.mb), op_of(c.ma), static_cast<int>(c.n),
                                   static_cast<int>(c.m), static_cast<int>(c.k), c.alpha, p + count,
                                   c.ty.data, static_cast<int>(c.mb.ld), p, c.ty.data,
                                   static_cast<int>(c.ma.ld), c.beta, outs, c.ty.data,
                                   static_cast<int>(c.ldc), static_cast<int>(count), c.ty.compute,
                                   CUBLAS_GEMM_DEFAULT),
               "cublasGemmBatchedEx");
}

void matmul_cuda(const Tensor& out, const Tensor& a0, const Tensor& b0) {
  const GemmTypes ty = gemm_types(out.dtype());
  const int64_t nd = out.ndim(), m = out.dim(nd - 2), n = out.dim(nd - 1), k = a0.dim(nd - 1);
  if (out.numel() == 0) return;  // cuBLAS rejects ldc = n = 0
  if (k == 0) return fill_(out, Scalar::from_int(0));
  // Rows may be strided (a block of a wider matrix: Note [Causal block attention]).
  const int64_t ldc = m == 1 ? n : out.strides()[nd - 2];
  TS_CHECK((n == 1 || out.strides()[nd - 1] == 1) && ldc >= n && ldc <= INT32_MAX, RuntimeError,
           "matmul: internal error: the CUDA kernel expects row-major output rows");
  Tensor a = a0, b = b0;
  Mat ma = mat_of(a), mb = mat_of(b);
  if (!ma.ok) ma = mat_of(a = contiguous(a));
  if (!mb.ok) mb = mat_of(b = contiguous(b));
  std::vector<BatchDim> dims = batch_dims(out, a, b);
  int64_t rows = m;
  // Note [Folded batches]: a batch against a broadcast right operand (x (B, T, C) @ W^T, every
  // Linear on a 3-D input) whose rows run on from one batch to the next in a and in out is one
  // GEMM of B*T rows, as PyTorch's matmul folds it. cuBLAS then picks its kernel for the big
  // GEMM instead of for B small ones (nanoGPT-char's float32 step: a strided batch of 64
  // (256 x 384) GEMMs took 64x64 tiles).
  if (dims.size() == 1 && dims[0].sb == 0 && !ma.trans && dims[0].sa == m * ma.ld &&
      dims[0].so == m * ldc && m * dims[0].size <= INT32_MAX) {
    rows = m * dims[0].size;
    dims.clear();
  }
  int64_t count = 1;
  for (const BatchDim& d : dims) count *= d.size;
  TS_CHECK(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && count <= INT32_MAX, ValueError,
           "matmul: dims beyond 2^31 are not supported on CUDA");
  const int dev = out.device().index;
  DeviceGuard g(dev);
  cublasHandle_t h = cublas_handle(dev);
  cudaStream_t s = current_stream(dev);
  // alpha/beta in the compute type: float for 32F compute (incl. half and complex64 as cuComplex).
  static const double one_d[2] = {1.0, 0.0}, zero_d[2] = {0.0, 0.0};
  static const float one_f[2] = {1.0f, 0.0f}, zero_f[2] = {0.0f, 0.0f};
  const bool wide = ty.compute == CUBLAS_COMPUTE_64F;
  const GemmCall call{h,
                      ty,
                      rows,
                      n,
                      k,
                      ma,
                      mb,
                      ldc,
                      wide ? static_cast<const void*>(one_d) : one_f,
                      wide ? static_cast<const void*>(zero_d) : zero_f};
  // Tuning runs the GEMM several times: only where out overlaps neither operand.
  if (dims.empty() && !may_overlap(out, a) && !may_overlap(out, b) &&
      tuned_gemm(op_of(mb), op_of(ma), n, rows, k, b.data_ptr(), mb.ld, a.data_ptr(), ma.ld,
                 out.data_ptr(), ldc, ty, dev, s,
                 [&] { run_strided(call, BatchDim{1, 0, 0, 0}, out, a, b); }))
    return;
  if (dims.size() <= 1)
    run_strided(call, dims.empty() ? BatchDim{1, 0, 0, 0} : dims[0], out, a, b);
  else
    run_pointer_array(call, dims, count, out, a, b, s);
}

}  // namespace

TS_REGISTER_KERNEL(matmul_stub, CUDA, &matmul_cuda);

}  // namespace ts::cuda

// CUDA kernels of the linalg extension through cuSOLVER's dense API: one call per batch entry
// on the current stream, in LAPACK's column-major layout (Note [LAPACK layout] in
// ops/linalg_ext.h), so the op layer and its transposing views are shared with the CPU path.
// Workspaces come from the caching allocator; `info` stays on the device until the one
// read-back at the end of a kernel.
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "cuda/cublas_util.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/cusolver_util.h"
#include "cuda/lu_det.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/linalg_lu.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts::cuda {
namespace {

// One struct per cuSOLVER type prefix (S, D, C, Z) so the kernels below are written once; the
// legacy typed API, whose signatures match LAPACK's.
template <class T>
struct Solver;
#define TS_CUSOLVER_TRAITS(T, RT, p, eig, org)                                                     \
  template <>                                                                                      \
  struct Solver<T> {                                                                               \
    using R = RT;                                                                                  \
    static cusolverStatus_t potrf_ws(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T* a,     \
                                     int lda, int* lw) {                                           \
      return cusolverDn##p##potrf_bufferSize(h, uplo, n, a, lda, lw);                              \
    }                                                                                              \
    static cusolverStatus_t potrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T* a,        \
                                  int lda, T* w, int lw, int* info) {                              \
      return cusolverDn##p##potrf(h, uplo, n, a, lda, w, lw, info);                                \
    }                                                                                              \
    static cusolverStatus_t potrf_batched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n,      \
                                          T** as, int lda, int* info, int batch) {                 \
      return cusolverDn##p##potrfBatched(h, uplo, n, as, lda, info, batch);                        \
    }                                                                                              \
    static cusolverStatus_t getrf_ws(cusolverDnHandle_t h, int n, T* a, int lda, int* lw) {        \
      return cusolverDn##p##getrf_bufferSize(h, n, n, a, lda, lw);                                 \
    }                                                                                              \
    static cusolverStatus_t getrf(cusolverDnHandle_t h, int n, T* a, int lda, T* w, int* piv,      \
                                  int* info) {                                                     \
      return cusolverDn##p##getrf(h, n, n, a, lda, w, piv, info);                                  \
    }                                                                                              \
    static cublasStatus_t getrf_batched(cublasHandle_t h, int n, T** as, int lda, int* piv,        \
                                        int* info, int batch) {                                    \
      return cublas##p##getrfBatched(h, n, as, lda, piv, info, batch);                             \
    }                                                                                              \
    static cublasStatus_t getrs_batched(cublasHandle_t h, int n, int k, T** as, int lda,           \
                                        const int* piv, T** bs, int ldb, int* info, int batch) {   \
      return cublas##p##getrsBatched(h, CUBLAS_OP_N, n, k, as, lda, piv, bs, ldb, info, batch);    \
    }                                                                                              \
    static cusolverStatus_t getrs(cusolverDnHandle_t h, int n, int k, const T* a, int lda,         \
                                  const int* piv, T* b, int ldb, int* info) {                      \
      return cusolverDn##p##getrs(h, CUBLAS_OP_N, n, k, a, lda, piv, b, ldb, info);                \
    }                                                                                              \
    static cusolverStatus_t getrf_mn_ws(cusolverDnHandle_t h, int m, int n, T* a, int lda,         \
                                        int* lw) {                                                 \
      return cusolverDn##p##getrf_bufferSize(h, m, n, a, lda, lw);                                 \
    }                                                                                              \
    static cusolverStatus_t getrf_mn(cusolverDnHandle_t h, int m, int n, T* a, int lda, T* w,      \
                                     int* piv, int* info) {                                        \
      return cusolverDn##p##getrf(h, m, n, a, lda, w, piv, info);                                  \
    }                                                                                              \
    static cusolverStatus_t getrs_op(cusolverDnHandle_t h, cublasOperation_t op, int n, int k,     \
                                     const T* a, int lda, const int* piv, T* b, int ldb,           \
                                     int* info) {                                                  \
      return cusolverDn##p##getrs(h, op, n, k, a, lda, piv, b, ldb, info);                         \
    }                                                                                              \
    static cublasStatus_t trsm_batched(cublasHandle_t h, cublasFillMode_t uplo,                    \
                                       cublasDiagType_t diag, int n, int k, const T* alpha,        \
                                       const T* const* as, int lda, T* const* bs, int ldb,         \
                                       int batch) {                                                \
      return cublas##p##trsmBatched(h, CUBLAS_SIDE_LEFT, uplo, CUBLAS_OP_N, diag, n, k, alpha, as, \
                                    lda, bs, ldb, batch);                                          \
    }                                                                                              \
    static cusolverStatus_t heevd_ws(cusolverDnHandle_t h, cusolverEigMode_t jobz, int n,          \
                                     const T* a, int lda, const R* w, int* lw) {                   \
      return cusolverDn##p##eig##d_bufferSize(h, jobz, CUBLAS_FILL_MODE_LOWER, n, a, lda, w, lw);  \
    }                                                                                              \
    static cusolverStatus_t heevd(cusolverDnHandle_t h, cusolverEigMode_t jobz, int n, T* a,       \
                                  int lda, R* w, T* work, int lw, int* info) {                     \
      return cusolverDn##p##eig##d(h, jobz, CUBLAS_FILL_MODE_LOWER, n, a, lda, w, work, lw, info); \
    }                                                                                              \
    static cusolverStatus_t heevj_batched_ws(cusolverDnHandle_t h, cusolverEigMode_t jobz, int n,  \
                                             const T* a, int lda, const R* w, int* lw,             \
                                             syevjInfo_t params, int batch) {                      \
      return cusolverDn##p##eig##jBatched_bufferSize(h, jobz, CUBLAS_FILL_MODE_LOWER, n, a, lda,   \
                                                     w, lw, params, batch);                        \
    }                                                                                              \
    static cusolverStatus_t heevj_batched(cusolverDnHandle_t h, cusolverEigMode_t jobz, int n,     \
                                          T* a, int lda, R* w, T* work, int lw, int* info,         \
                                          syevjInfo_t params, int batch) {                         \
      return cusolverDn##p##eig##jBatched(h, jobz, CUBLAS_FILL_MODE_LOWER, n, a, lda, w, work, lw, \
                                          info, params, batch);                                    \
    }                                                                                              \
    static cusolverStatus_t geqrf_ws(cusolverDnHandle_t h, int m, int n, T* a, int lda, int* lw) { \
      return cusolverDn##p##geqrf_bufferSize(h, m, n, a, lda, lw);                                 \
    }                                                                                              \
    static cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, T* a, int lda, T* tau, T* w, \
                                  int lw, int* info) {                                             \
      return cusolverDn##p##geqrf(h, m, n, a, lda, tau, w, lw, info);                              \
    }                                                                                              \
    static cusolverStatus_t ungqr_ws(cusolverDnHandle_t h, int m, int n, int k, const T* a,        \
                                     int lda, const T* tau, int* lw) {                             \
      return cusolverDn##p##org##_bufferSize(h, m, n, k, a, lda, tau, lw);                         \
    }                                                                                              \
    static cusolverStatus_t ungqr(cusolverDnHandle_t h, int m, int n, int k, T* a, int lda,        \
                                  const T* tau, T* w, int lw, int* info) {                         \
      return cusolverDn##p##org(h, m, n, k, a, lda, tau, w, lw, info);                             \
    }                                                                                              \
    static cusolverStatus_t gesvd_ws(cusolverDnHandle_t h, int m, int n, int* lw) {                \
      return cusolverDn##p##gesvd_bufferSize(h, m, n, lw);                                         \
    }                                                                                              \
    static cusolverStatus_t gesvd(cusolverDnHandle_t h, signed char ju, signed char jvt, int m,    \
                                  int n, T* a, int lda, R* s, T* u, int ldu, T* vt, int ldvt,      \
                                  T* w, int lw, R* rw, int* info) {                                \
      return cusolverDn##p##gesvd(h, ju, jvt, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, rw, info); \
    }                                                                                              \
  };
TS_CUSOLVER_TRAITS(float, float, S, syev, orgqr)
TS_CUSOLVER_TRAITS(double, double, D, syev, orgqr)
TS_CUSOLVER_TRAITS(cuComplex, float, C, heev, ungqr)
TS_CUSOLVER_TRAITS(cuDoubleComplex, double, Z, heev, ungqr)
#undef TS_CUSOLVER_TRAITS

// Calls f(tag) with T the cuSOLVER element type of d.
template <class F>
void visit_solver(DType d, const char* op, const F& f) {
  switch (d) {
    case DType::Float32:
      return f(static_cast<float*>(nullptr));
    case DType::Float64:
      return f(static_cast<double*>(nullptr));
    case DType::Complex64:
      return f(static_cast<cuComplex*>(nullptr));
    case DType::Complex128:
      return f(static_cast<cuDoubleComplex*>(nullptr));
    default:
      throw TypeError(
          str(op, ": CUDA kernels take float32/float64/complex64/complex128, got ", dtype_name(d)));
  }
}
#define TS_SOLVER_T(tag) std::remove_pointer_t<decltype(tag)>

template <class T>
T* ptr(const Tensor& t) {
  return reinterpret_cast<T*>(t.data_ptr());
}

// The per-batch matrices of a (B, ...) contiguous buffer as rows of `stride` elements.
template <class T>
T* at(const Tensor& t, int64_t b, int64_t stride) {
  return ptr<T>(t) + b * stride;
}

Tensor device_info(int64_t batches, Device d) { return workspace(batches, DType::Int32, d); }

// The device array of pointers to each matrix of a contiguous (B, ...) buffer, `stride`
// elements apart, for the pointer-array batched calls. The host array may go right after:
// a copy from pageable memory has read it when cudaMemcpyAsync returns.
Tensor matrix_pointers(const Tensor& a, int64_t stride) {
  const int64_t B = a.dim(0);
  std::vector<char*> host(B);
  for (int64_t b = 0; b < B; ++b) host[b] = a.data_ptr() + b * stride * a.itemsize();
  Tensor ptrs = workspace(B, DType::Int64, a.device());
  TS_CUDA_CHECK(cudaMemcpyAsync(ptrs.data_ptr(), host.data(), B * sizeof(char*),
                                cudaMemcpyHostToDevice, current_stream(a.device())));
  return ptrs;
}

// dst (B, n, m) contiguous <- src (batch..., m, n): the transposing copy runs as one device
// copy into the transposed view.
void cuda_pack(const Tensor& src, const Tensor& dst) {
  const int64_t nd = src.ndim(), m = src.dim(nd - 2), n = src.dim(nd - 1);
  Shape s(src.shape().begin(), src.shape().end() - 2);
  s.push_back(n);
  s.push_back(m);
  copy_(matrix_transpose(reshape(dst, s)), src);
}

// Per (B, ., .) batch entry: whether all its elements are finite (read back to the host).
// Non-finite inputs get the CPU path's outcome (Note [Non-finite factorizations]).
std::vector<char> finite_entries(const Tensor& a) {
  const Tensor f = to_device(all(unary_op(isfinite_def, a), Shape{1, 2}, false), Device());
  const bool* p = f.data<bool>();
  return std::vector<char>(p, p + f.numel());
}

// Note [Non-finite factorizations]: what LAPACK does with NaN/inf is implementation detail,
// and the CPU path's observable behaviour is PyTorch's: svd/svdvals raise "did not converge"
// (LinAlgError), cholesky raises "not positive-definite" for a NaN pivot, det gives NaN. On the
// GPU a batch holding NaN/inf takes the CPU's kernel (cholesky, det) or has cuSOLVER's answer
// replaced by the CPU's (svd).
void override_nonfinite(const std::vector<char>& finite, Info& info, int value) {
  for (size_t b = 0; b < info.size(); ++b)
    if (!finite[b]) info[b] = value;
}

// Keeps the column-major `upper` (else lower) triangle of each (B, n, n) matrix: in the
// row-major view of the buffer that is the lower (upper) one.
void keep_triangle(const Tensor& a, bool upper) { copy_(a, upper ? tril(a, 0) : triu(a, 0)); }

void cuda_cholesky(const Tensor& a, bool upper, Info& info) {
  const std::vector<char> finite = finite_entries(a);
  if (std::any_of(finite.begin(), finite.end(), [](char f) { return !f; })) {
    // LAPACK's potrf reports a NaN pivot as "not positive-definite" (info > 0), as the CPU path
    // and PyTorch raise; cuSOLVER's answer for NaN/inf is not specified, so the batch takes the
    // CPU's kernel (Note [Non-finite factorizations]).
    const Device cpu;
    Tensor ha = to_device(a, cpu);
    cholesky_stub.get(cpu)(ha, upper, info);
    copy_(a, ha);
    return;
  }
  visit_solver(a.dtype(), "cholesky", [&](auto tag) {
    using T = TS_SOLVER_T(tag);
    const Device d = a.device();
    DeviceGuard g(d);
    cusolverDnHandle_t h = cusolver_handle(d);
    const int64_t B = a.dim(0), n = a.dim(1);
    const int n32 = dim32(n, "cholesky");
    const cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    Tensor dinfo = device_info(B, d);
    if (B > 1) {  // one call for the whole batch instead of B (PyTorch does the same)
      const Tensor ptrs = matrix_pointers(a, n * n);
      check_cusolver(Solver<T>::potrf_batched(h, uplo, n32, reinterpret_cast<T**>(ptrs.data_ptr()),
                                              n32, ptr<int>(dinfo), dim32(B, "cholesky")),
                     "potrfBatched", "cholesky");
    } else {
      int lw = 0;
      check_cusolver(Solver<T>::potrf_ws(h, uplo, n32, ptr<T>(a), n32, &lw), "potrf_bufferSize",
                     "cholesky");
      Tensor work = workspace(lw, a.dtype(), d);
      check_cusolver(
          Solver<T>::potrf(h, uplo, n32, ptr<T>(a), n32, ptr<T>(work), lw, ptr<int>(dinfo)),
          "potrf", "cholesky");
    }
    keep_triangle(a, upper);  // cuSOLVER leaves the other triangle as it was, like LAPACK
    read_info(dinfo, info);
  });
}

// The calling thread's cuBLAS handle for d (batched LU lives in cuBLAS, not cuSOLVER), bound
// to d's current stream.
cublasHandle_t cublas_handle(Device d) {
  thread_local std::vector<cublasHandle_t> handles;
  if (handles.size() <= static_cast<size_t>(d.index)) handles.resize(d.index + 1, nullptr);
  if (!handles[d.index]) check_cublas(cublasCreate(&handles[d.index]), "cublasCreate", "linalg");
  check_cublas(cublasSetStream(handles[d.index], current_stream(d)), "cublasSetStream", "linalg");
  return handles[d.index];
}

// Batches of small matrices factor in one cuBLAS getrfBatched call instead of B cuSOLVER
// calls (each a few tiny launches); large matrices use cuSOLVER's blocked getrf.
bool batched_lu(int64_t B, int64_t n) { return B > 1 && n <= 32; }

// LU factors of each (B, n, n) matrix in place; piv (B, n) int32 1-based pivots, as LAPACK's.
// The factor info is written to dinfo (B) on the device.
template <class T>
void lu_factor(const Tensor& a, const Tensor& piv, const Tensor& dinfo, const char* op) {
  const Device d = a.device();
  const int64_t B = a.dim(0), n = a.dim(1);
  const int n32 = dim32(n, op);
  if (batched_lu(B, n)) {
    const Tensor ptrs = matrix_pointers(a, n * n);
    check_cublas(
        Solver<T>::getrf_batched(cublas_handle(d), n32, reinterpret_cast<T**>(ptrs.data_ptr()), n32,
                                 ptr<int>(piv), ptr<int>(dinfo), dim32(B, op)),
        "getrfBatched", op);
    return;
  }
  cusolverDnHandle_t h = cusolver_handle(d);
  int lw = 0;
  check_cusolver(Solver<T>::getrf_ws(h, n32, ptr<T>(a), n32, &lw), "getrf_bufferSize", op);
  Tensor work = workspace(lw, a.dtype(), d);
  for (int64_t b = 0; b < B; ++b)
    check_cusolver(Solver<T>::getrf(h, n32, at<T>(a, b, n * n), n32, ptr<T>(work),
                                    at<int>(piv, b, n), at<int>(dinfo, b, 1)),
                   "getrf", op);
}

// Solves with the factors of lu_factor: rhs (B, k, n) holds n x k right-hand sides.
template <class T>
void lu_solve(const Tensor& a, const Tensor& piv, const Tensor& rhs, const Tensor& dinfo) {
  const Device d = a.device();
  const int64_t B = a.dim(0), n = a.dim(1), k = rhs.dim(1);
  const int n32 = dim32(n, "solve"), k32 = dim32(k, "solve");
  if (batched_lu(B, n)) {
    const Tensor aptrs = matrix_pointers(a, n * n), bptrs = matrix_pointers(rhs, n * k);
    int host_info = 0;  // getrsBatched reports only argument errors, on the host
    check_cublas(Solver<T>::getrs_batched(cublas_handle(d), n32, k32,
                                          reinterpret_cast<T**>(aptrs.data_ptr()), n32,
                                          ptr<int>(piv), reinterpret_cast<T**>(bptrs.data_ptr()),
                                          n32, &host_info, dim32(B, "solve")),
                 "getrsBatched", "solve");
    TS_CHECK(host_info == 0, RuntimeError, "solve: cuBLAS getrsBatched rejected argument ",
             -host_info, " (an internal error; please report it)");
    return;
  }
  cusolverDnHandle_t h = cusolver_handle(d);
  for (int64_t b = 0; b < B; ++b)
    check_cusolver(Solver<T>::getrs(h, n32, k32, at<T>(a, b, n * n), n32, at<int>(piv, b, n),
                                    at<T>(rhs, b, n * k), n32, at<int>(dinfo, b, 1)),
                   "getrs", "solve");
}

void cuda_solve(const Tensor& a, const Tensor& rhs, Info& info) {
  visit_solver(a.dtype(), "solve", [&](auto tag) {
    using T = TS_SOLVER_T(tag);
    const Device d = a.device();
    DeviceGuard g(d);
    const int64_t B = a.dim(0), n = a.dim(1);
    Tensor piv = workspace(B * n, DType::Int32, d), dinfo = device_info(B, d);
    lu_factor<T>(a, piv, dinfo, "solve");
    // Read the factorization's info first: solving with a singular factor would divide by
    // zero, and LAPACK's gesv stops there too.
    read_info(dinfo, info);
    if (std::any_of(info.begin(), info.end(), [](int v) { return v != 0; })) return;
    lu_solve<T>(a, piv, rhs, dinfo);
    read_info(dinfo, info);
  });
}

// A batch holding NaN/inf takes the CPU's LAPACK kernel (Note [Non-finite factorizations]):
// pivoting on NaN is implementation detail, and the H100 run gave det 1 for [[nan, 1], [1, 2]]
// where the CPU (and NumPy) give NaN.
void host_det(const Tensor& a, const Tensor& sign, const Tensor& logabs, const Tensor& det,
              Info& info) {
  const Device cpu;
  Tensor ha = to_device(a, cpu), hs = to_device(sign, cpu), hl = to_device(logabs, cpu),
         hd = to_device(det, cpu);
  det_stub.get(cpu)(ha, hs, hl, hd, info);
  copy_(sign, hs);
  copy_(logabs, hl);
  copy_(det, hd);
}

void cuda_det(const Tensor& a, const Tensor& sign, const Tensor& logabs, const Tensor& det,
              Info& info) {
  if (a.numel() > 0) {
    const std::vector<char> finite = finite_entries(a);
    if (!std::all_of(finite.begin(), finite.end(), [](char f) { return f != 0; }))
      return host_det(a, sign, logabs, det, info);
  }
  visit_solver(a.dtype(), "det", [&](auto tag) {
    using T = TS_SOLVER_T(tag);
    const Device d = a.device();
    DeviceGuard g(d);
    const int64_t B = a.dim(0), n = a.dim(1);
    Tensor piv = workspace(B * n, DType::Int32, d), dinfo = device_info(B, d);
    if (n > 0) {
      lu_factor<T>(a, piv, dinfo, "det");
      read_info(dinfo, info);
    }
    // Singular (info > 0) is a zero determinant, not an error, as on the CPU.
    for (int& v : info) v = v < 0 ? v : 0;
    launch_lu_det(a, piv, sign, logabs, det);
  });
}

// Many small matrices: one Jacobi call for the whole batch (syevjBatched takes n <= 32;
// PyTorch picks it under the same condition). Its eigenvalues come sorted ascending, as
// syevd's, and info = n + 1 reports no convergence.
template <class T>
void eigh_jacobi_batched(cusolverDnHandle_t h, cusolverEigMode_t jobz, const Tensor& a,
                         const Tensor& w, const Tensor& dinfo) {
  using R = typename Solver<T>::R;
  const int n32 = dim32(a.dim(1), "eigh"), b32 = dim32(a.dim(0), "eigh");
  syevjInfo_t params = nullptr;
  check_cusolver(cusolverDnCreateSyevjInfo(&params), "cusolverDnCreateSyevjInfo", "eigh");
  struct Destroy {
    syevjInfo_t p;
    ~Destroy() { cusolverDnDestroySyevjInfo(p); }
  } destroy{params};
  int lw = 0;
  check_cusolver(
      Solver<T>::heevj_batched_ws(h, jobz, n32, ptr<T>(a), n32, ptr<R>(w), &lw, params, b32),
      "syevjBatched_bufferSize", "eigh");
  Tensor work = workspace(lw, a.dtype(), a.device());
  check_cusolver(Solver<T>::heevj_batched(h, jobz, n32, ptr<T>(a), n32, ptr<R>(w), ptr<T>(work), lw,
                                          ptr<int>(dinfo), params, b32),
                 "syevjBatched", "eigh");
}

void cuda_eigh(const Tensor& a, const Tensor& w, bool vectors, Info& info) {
  visit_solver(a.dtype(), "eigh", [&](auto tag) {
    using T = TS_SOLVER_T(tag);
    using R = typename Solver<T>::R;
    const Device d = a.device();
    DeviceGuard g(d);
    cusolverDnHandle_t h = cusolver_handle(d);
    const int64_t B = a.dim(0), n = a.dim(1);
    const int n32 = dim32(n, "eigh");
    const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    Tensor dinfo = device_info(B, d);
    if (B > 1 && n <= 32) {
      eigh_jacobi_batched<T>(h, jobz, a, w, dinfo);
    } else {
      int lw = 0;
      check_cusolver(Solver<T>::heevd_ws(h, jobz, n32, ptr<T>(a), n32, ptr<R>(w), &lw),
                     "syevd_bufferSize", "eigh");
      Tensor work = workspace(lw, a.dtype(), d);
      for (int64_t b = 0; b < B; ++b)
        check_cusolver(Solver<T>::heevd(h, jobz, n32, at<T>(a, b, n * n), n32, at<R>(w, b, n),
                                        ptr<T>(work), lw, at<int>(dinfo, b, 1)),
                       "syevd", "eigh");
    }
    read_info(dinfo, info);
  });
}

// As the CPU kernel: geqrf on the first n columns of an m x max(n, kq) buffer, R from its
// upper triangle, then Q's kq columns generated in place by orgqr/ungqr.
void cuda_qr(const Tensor& a, const Tensor& q, const Tensor& r, Info& info) {
  visit_solver(a.dtype(), "qr", [&](auto tag) {
    using T = TS_SOLVER_T(tag);
    const Device d = a.device();
    DeviceGuard g(d);
    cusolverDnHandle_t h = cusolver_handle(d);
    const int64_t B = a.dim(0), n = a.dim(1), m = a.dim(2), kq = q.dim(1), k = std::min(m, n);
    const int64_t wcols = std::max(n, kq);
    const int m32 = dim32(m, "qr"), ldm = ld32(m, "qr");
    Tensor w = Tensor::empty(Shape{B, wcols, m}, a.dtype(), d);
    Tensor tau = workspace(B * k, a.dtype(), d), dinfo = device_info(B, d);
    fill_(dinfo, Scalar::from_double(0.0));
    if (w.numel() > 0) copy_(slice(w, 1, 0, n, 1), a);
    // orgqr's columns past the reflectors start as the identity's (LAPACK sets them itself;
    // set them here so the result does not rest on that detail).
    if (kq > n && m > 0)
      copy_(slice(w, 1, n, kq, 1), slice(eye(kq, m, 0, a.dtype(), d), 0, n, kq, 1));
    if (m > 0 && n > 0) {
      const int n32 = dim32(n, "qr");
      int lw = 0;
      check_cusolver(Solver<T>::geqrf_ws(h, m32, n32, ptr<T>(w), ldm, &lw), "geqrf_bufferSize",
                     "qr");
      Tensor work = workspace(lw, a.dtype(), d);
      for (int64_t b = 0; b < B; ++b)
        check_cusolver(Solver<T>::geqrf(h, m32, n32, at<T>(w, b, wcols * m), ldm, at<T>(tau, b, k),
                                        ptr<T>(work), lw, at<int>(dinfo, b, 1)),
                       "geqrf", "qr");
    }
    // r (B, n, kq) holds column-major kq x n: rows i < kq (<= m) of w's first n columns, with
    // the strictly lower part (i > j, the upper triangle of the row-major view) zeroed.
    if (r.numel() > 0) copy_(r, tril(slice(slice(w, 1, 0, n, 1), 2, 0, kq, 1), 0));
    if (m > 0 && kq > 0) {
      const int kq32 = dim32(kq, "qr"), k32 = dim32(k, "qr");
      if (k > 0) {  // no reflectors (n == 0): Q is the identity columns set above
        int lw = 0;
        check_cusolver(Solver<T>::ungqr_ws(h, m32, kq32, k32, ptr<T>(w), ldm, ptr<T>(tau), &lw),
                       "orgqr_bufferSize", "qr");
        Tensor work = workspace(lw, a.dtype(), d);
        for (int64_t b = 0; b < B; ++b)
          check_cusolver(Solver<T>::ungqr(h, m32, kq32, k32, at<T>(w, b, wcols * m), ldm,
                                          at<T>(tau, b, k), ptr<T>(work), lw, at<int>(dinfo, b, 1)),
                         "orgqr", "qr");
      }
      copy_(q, slice(w, 1, 0, kq, 1));
    }
    read_info(dinfo, info);
  });
}

// gesvd of column-major rows x cols matrices (rows >= cols, cuSOLVER's requirement) in a
// (B, cols, rows) buffer; u (B, ucols, rows) and vt (B, cols, vtrows) when `vec`.
template <class T>
void gesvd_batches(cusolverDnHandle_t h, const Tensor& a, const Tensor& s, const Tensor& u,
                   const Tensor& vt, const Tensor& dinfo, int64_t rows, int64_t cols) {
  using R = typename Solver<T>::R;
  const bool vec = u.defined();
  const int64_t B = a.dim(0), k = cols, ucols = vec ? u.dim(1) : 0, vtrows = vec ? vt.dim(2) : 0;
  const signed char job = !vec ? 'N' : (ucols == rows && vtrows == cols) ? 'A' : 'S';
  const int r32 = dim32(rows, "svd"), c32 = dim32(cols, "svd");
  int lw = 0;
  check_cusolver(Solver<T>::gesvd_ws(h, r32, c32, &lw), "gesvd_bufferSize", "svd");
  Tensor work = workspace(lw, a.dtype(), a.device());
  Tensor rwork = workspace(cols, s.dtype(), a.device());  // unconverged superdiagonal, if any
  for (int64_t b = 0; b < B; ++b)
    check_cusolver(Solver<T>::gesvd(
                       h, job, job, r32, c32, at<T>(a, b, rows * cols), ld32(rows, "svd"),
                       at<R>(s, b, k), vec ? at<T>(u, b, rows * ucols) : nullptr, ld32(rows, "svd"),
                       vec ? at<T>(vt, b, vtrows * cols) : nullptr, ld32(vtrows, "svd"),
                       ptr<T>(work), lw, ptr<R>(rwork), at<int>(dinfo, b, 1)),
                   "gesvd", "svd");
}

// Column-major conjugate transposes of a (B, c, r) buffer's r x c matrices, as a (B, r, c) one.
Tensor adjoint_buffer(const Tensor& x) { return contiguous(conj(matrix_transpose(x))); }

void cuda_svd(const Tensor& a, const Tensor& s, const Tensor& u, const Tensor& vt, Info& info) {
  visit_solver(a.dtype(), "svd", [&](auto tag) {
    using T = TS_SOLVER_T(tag);
    const Device d = a.device();
    DeviceGuard g(d);
    const int64_t B = a.dim(0), n = a.dim(1), m = a.dim(2), k = s.dim(1);
    const bool vec = u.defined();
    if (k == 0) {  // cuSOLVER rejects empty matrices; full U/V are then identities
      if (vec) {
        copy_(u, eye(u.dim(1), m, 0, a.dtype(), d));
        copy_(vt, eye(n, vt.dim(2), 0, a.dtype(), d));
      }
      return;
    }
    cusolverDnHandle_t h = cusolver_handle(d);
    Tensor dinfo = device_info(B, d);
    const std::vector<char> finite = finite_entries(a);
    if (m >= n) {
      gesvd_batches<T>(h, a, s, u, vt, dinfo, m, n);
    } else {
      // gesvd needs rows >= cols: factor A^H = U' S V'^H instead, so A = V' S U'^H, i.e.
      // U = (V'^H)^H and Vh = U'^H, each an adjoint of the other's buffer.
      Tensor ut, vtt;
      if (vec) {
        ut = Tensor::empty(Shape{B, vt.dim(2), n}, a.dtype(), d);  // U' (n x vtrows)
        vtt = Tensor::empty(Shape{B, m, u.dim(1)}, a.dtype(), d);  // V'^H (ucols x m)
      }
      gesvd_batches<T>(h, adjoint_buffer(a), s, ut, vtt, dinfo, n, m);
      if (vec) {
        copy_(u, adjoint_buffer(vtt));
        copy_(vt, adjoint_buffer(ut));
      }
    }
    read_info(dinfo, info);
    override_nonfinite(finite, info, 1);
  });
}

// ---- the LU family (ops/linalg_lu.h): getrf with pivots, getrs, trsm.
// LU of (B, n, m) column-major m x n matrices; piv (B, min(m, n)).
void cuda_lu_factor(const Tensor& a, const Tensor& piv, Info& info) {
  visit_solver(a.dtype(), "lu_factor", [&](auto tag) {
    using T = TS_SOLVER_T(tag);
    const Device d = a.device();
    DeviceGuard g(d);
    const int64_t B = a.dim(0), n = a.dim(1), m = a.dim(2), k = std::min(m, n);
    Tensor dinfo = device_info(B, d);
    if (m == n) {
      lu_factor<T>(a, piv, dinfo, "lu_factor");
    } else {  // rectangular: cuSOLVER's getrf per matrix
      cusolverDnHandle_t h = cusolver_handle(d);
      const int m32 = dim32(m, "lu_factor"), n32 = dim32(n, "lu_factor");
      int lw = 0;
      check_cusolver(Solver<T>::getrf_mn_ws(h, m32, n32, ptr<T>(a), m32, &lw), "getrf_bufferSize",
                     "lu_factor");
      Tensor work = workspace(lw, a.dtype(), d);
      for (int64_t b = 0; b < B; ++b)
        check_cusolver(Solver<T>::getrf_mn(h, m32, n32, at<T>(a, b, m * n), m32, ptr<T>(work),
                                           at<int>(piv, b, k), at<int>(dinfo, b, 1)),
                       "getrf", "lu_factor");
    }
    read_info(dinfo, info);
  });
}

// rhs (B, k, n) <- op(A)^-1 rhs from the factors of cuda_lu_factor.
void cuda_lu_solve(const Tensor& lu, const Tensor& piv, const Tensor& rhs, char trans) {
  visit_solver(lu.dtype(), "lu_solve", [&](auto tag) {
    using T = TS_SOLVER_T(tag);
    const Device d = lu.device();
    DeviceGuard g(d);
    const int64_t B = lu.dim(0), n = lu.dim(1), k = rhs.dim(1);
    const int n32 = dim32(n, "lu_solve"), k32 = dim32(k, "lu_solve");
    const cublasOperation_t op = trans == 'N'   ? CUBLAS_OP_N
                                 : trans == 'T' ? CUBLAS_OP_T
                                                : CUBLAS_OP_C;
    {  // getrs swaps rows by the pivots: out of range would be out of bounds (one read-back)
      const Tensor hp = to_device(piv, Device());
      const int* pv = hp.data<int>();
      for (int64_t i = 0; i < hp.numel(); ++i)
        TS_CHECK(pv[i] >= 1 && pv[i] <= n, RuntimeError,
                 "linalg.lu_solve: pivots must be between 1 and ", n, ", got ", pv[i],
                 "; hint: pass the pivots of linalg.lu_factor");
    }
    cusolverDnHandle_t h = cusolver_handle(d);
    Tensor dinfo = device_info(B, d);
    for (int64_t b = 0; b < B; ++b)
      check_cusolver(
          Solver<T>::getrs_op(h, op, n32, k32, at<T>(lu, b, n * n), n32, at<int>(piv, b, n),
                              at<T>(rhs, b, n * k), n32, at<int>(dinfo, b, 1)),
          "getrs", "lu_solve");
  });
}

template <class T>
T unit_scalar() {
  if constexpr (std::is_floating_point_v<T>) {
    return T(1);
  } else {
    T v{};
    v.x = 1;
    return v;
  }
}

// b (B, k, n) <- T^-1 b for the triangle T of each (B, n, n) a: one batched cuBLAS call.
void cuda_trsm(const Tensor& a, const Tensor& b, bool upper, bool unit) {
  visit_solver(a.dtype(), "solve_triangular", [&](auto tag) {
    using T = TS_SOLVER_T(tag);
    const Device d = a.device();
    DeviceGuard g(d);
    const int64_t B = a.dim(0), n = a.dim(1), k = b.dim(1);
    const int n32 = dim32(n, "solve_triangular");
    const Tensor aptrs = matrix_pointers(a, n * n), bptrs = matrix_pointers(b, n * k);
    const T alpha = unit_scalar<T>();
    check_cublas(
        Solver<T>::trsm_batched(
            cublas_handle(d), upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER,
            unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT, n32, dim32(k, "solve_triangular"),
            &alpha, reinterpret_cast<const T* const*>(aptrs.data_ptr()), n32,
            reinterpret_cast<T* const*>(bptrs.data_ptr()), n32, dim32(B, "solve_triangular")),
        "trsmBatched", "solve_triangular");
  });
}

}  // namespace

TS_REGISTER_KERNEL(lu_factor_stub, CUDA, &cuda_lu_factor);
TS_REGISTER_KERNEL(lu_solve_stub, CUDA, &cuda_lu_solve);
TS_REGISTER_KERNEL(trsm_stub, CUDA, &cuda_trsm);
TS_REGISTER_KERNEL(lapack_pack_stub, CUDA, &cuda_pack);
TS_REGISTER_KERNEL(cholesky_stub, CUDA, &cuda_cholesky);
TS_REGISTER_KERNEL(solve_stub, CUDA, &cuda_solve);
TS_REGISTER_KERNEL(det_stub, CUDA, &cuda_det);
TS_REGISTER_KERNEL(eigh_stub, CUDA, &cuda_eigh);
TS_REGISTER_KERNEL(qr_stub, CUDA, &cuda_qr);
TS_REGISTER_KERNEL(svd_stub, CUDA, &cuda_svd);

}  // namespace ts::cuda

#include "cpu/blas.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "core/error.h"
#include "core/parallel.h"

#ifdef TESSERA_BLAS_SCIPY_OPENBLAS
#include <cblas.h>
#define TS_CBLAS(name) scipy_cblas_##name
#define TS_OPENBLAS(name) scipy_openblas_##name
#else
#include <cblas.h>
#define TS_CBLAS(name) cblas_##name
#endif

namespace ts {

const char* blas_name() { return TESSERA_BLAS_NAME; }

void blas_set_num_threads(int n) {
#ifdef TESSERA_BLAS_SCIPY_OPENBLAS
  TS_OPENBLAS(set_num_threads)(n);
#else
  (void)n;
#endif
}

int blas_get_num_threads() {
#ifdef TESSERA_BLAS_SCIPY_OPENBLAS
  return TS_OPENBLAS(get_num_threads)();
#else
  return 1;
#endif
}

// Note [One thread pool for the BLAS]: OpenBLAS's own pthreads pool and our OpenMP pool on the
// same cores fight: after a parallel region the OpenMP workers spin waiting for more work while
// OpenBLAS's threads want the cores, and the other way round (on the 2-core machine a 3136->128
// linear layer at two threads ran slower than at one). OpenBLAS (0.3.27+) lets the caller run
// its jobs: the callback below hands each call's jobs to run_concurrently, so OpenBLAS starts no
// threads of its own and its work runs on the OpenMP workers that are already awake. The
// callback must be installed before the first BLAS call, hence at load time.
// TESSERA_BLAS_THREADS=native keeps OpenBLAS's pool.
#ifdef TESSERA_BLAS_SCIPY_OPENBLAS
namespace {
struct BlasJobs {
  openblas_dojob_callback dojob;
  char* data;
  size_t elsize;
  int dojob_data;
};

void run_blas_job(int i, void* ctx) {
  auto* jobs = static_cast<BlasJobs*>(ctx);
  jobs->dojob(i, jobs->data + static_cast<size_t>(i) * jobs->elsize, jobs->dojob_data);
}

void blas_threads_callback(int /*sync*/, openblas_dojob_callback dojob, int numjobs,
                           size_t jobdata_elsize, void* jobdata, int dojob_data) {
  BlasJobs jobs{dojob, static_cast<char*>(jobdata), jobdata_elsize, dojob_data};
  run_concurrently(numjobs, &run_blas_job, &jobs);
}

bool install_blas_threads_callback() {
  const char* mode = std::getenv("TESSERA_BLAS_THREADS");
  if (mode != nullptr && std::strcmp(mode, "native") == 0) return false;
  TS_OPENBLAS(set_threads_callback_function)(&blas_threads_callback);
  return true;
}
[[maybe_unused]] const bool kBlasCallbackInstalled = install_blas_threads_callback();
}  // namespace
#endif

bool blas_uses_our_threads() {
#ifdef TESSERA_BLAS_SCIPY_OPENBLAS
  return kBlasCallbackInstalled;
#else
  return false;
#endif
}

namespace {
std::mutex serial_mutex;
int serial_depth = 0, serial_saved = 1;
}  // namespace

BlasSerialScope::BlasSerialScope() {
  std::lock_guard<std::mutex> lock(serial_mutex);
  if (serial_depth++ == 0) {
    serial_saved = blas_get_num_threads();
    if (serial_saved != 1) blas_set_num_threads(1);
  }
}

BlasSerialScope::~BlasSerialScope() {
  std::lock_guard<std::mutex> lock(serial_mutex);
  if (--serial_depth == 0 && serial_saved != 1) blas_set_num_threads(serial_saved);
}

namespace {
int blasint_of(int64_t v) {
  if (v > INT_MAX) throw ValueError(str("matmul: dimension ", v, " exceeds the 32-bit BLAS limit"));
  return static_cast<int>(v);
}
CBLAS_TRANSPOSE tr(bool t) { return t ? CblasTrans : CblasNoTrans; }
}  // namespace

template <>
void gemm<float>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float* c, int64_t ldc, float beta) {
  TS_CBLAS(sgemm)
  (CblasRowMajor, tr(ta), tr(tb), blasint_of(m), blasint_of(n), blasint_of(k), 1.0f, a,
   blasint_of(lda), b, blasint_of(ldb), beta, c, blasint_of(ldc));
}
template <>
void gemm<double>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
                  const double* b, int64_t ldb, double* c, int64_t ldc, double beta) {
  TS_CBLAS(dgemm)
  (CblasRowMajor, tr(ta), tr(tb), blasint_of(m), blasint_of(n), blasint_of(k), 1.0, a,
   blasint_of(lda), b, blasint_of(ldb), beta, c, blasint_of(ldc));
}
template <>
void gemm<c64>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const c64* a, int64_t lda,
               const c64* b, int64_t ldb, c64* c, int64_t ldc, c64 beta) {
  const c64 one(1, 0);
  TS_CBLAS(cgemm)
  (CblasRowMajor, tr(ta), tr(tb), blasint_of(m), blasint_of(n), blasint_of(k), &one, a,
   blasint_of(lda), b, blasint_of(ldb), &beta, c, blasint_of(ldc));
}
template <>
void gemm<c128>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const c128* a, int64_t lda,
                const c128* b, int64_t ldb, c128* c, int64_t ldc, c128 beta) {
  const c128 one(1, 0);
  TS_CBLAS(zgemm)
  (CblasRowMajor, tr(ta), tr(tb), blasint_of(m), blasint_of(n), blasint_of(k), &one, a,
   blasint_of(lda), b, blasint_of(ldb), &beta, c, blasint_of(ldc));
}

namespace {
CBLAS_UPLO uplo(bool upper) { return upper ? CblasUpper : CblasLower; }
CBLAS_DIAG diag(bool unit) { return unit ? CblasUnit : CblasNonUnit; }
// CBLAS takes real scalars by value, complex ones by pointer.
template <class T>
auto alpha_arg(const T& a) {
  if constexpr (std::is_floating_point_v<T>)
    return a;
  else
    return static_cast<const void*>(&a);
}
}  // namespace

#define TS_TRSM(T, fn, one)                                                                \
  template <>                                                                              \
  void trsm<T>(bool upper, bool unit, int64_t n, int64_t k, const T* a, int64_t lda, T* b, \
               int64_t ldb) {                                                              \
    const T alpha = one;                                                                   \
    TS_CBLAS(fn)                                                                           \
    (CblasColMajor, CblasLeft, uplo(upper), CblasNoTrans, diag(unit), blasint_of(n),       \
     blasint_of(k), alpha_arg(alpha), a, blasint_of(lda), b, blasint_of(ldb));             \
  }
TS_TRSM(float, strsm, 1.0f)
TS_TRSM(double, dtrsm, 1.0)
TS_TRSM(c64, ctrsm, c64(1, 0))
TS_TRSM(c128, ztrsm, c128(1, 0))
#undef TS_TRSM

}  // namespace ts

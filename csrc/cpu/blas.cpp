#include "cpu/blas.h"

#include <climits>
#include <mutex>

#include "core/error.h"

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

}  // namespace ts

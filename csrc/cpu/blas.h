// The BLAS we link (scipy-openblas32 by default; a system BLAS with -DTESSERA_BLAS=system).
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace ts {

const char* blas_name();
void blas_set_num_threads(int n);
int blas_get_num_threads();
// True when OpenBLAS runs its jobs on our threads (Note [One thread pool for the BLAS]).
bool blas_uses_our_threads();

// Note [Serial BLAS inside parallel regions]: while one of these is alive the BLAS runs
// single-threaded, for code that splits its GEMMs across parallel_for's workers itself (each
// worker calling gemm on its own part). Two thread pools on the same cores otherwise
// oversubscribe them: OpenBLAS's pthreads spin after each call while our OpenMP workers wait
// for a core. The count is process-wide (OpenBLAS has no per-thread one); scopes nest and
// overlap across threads, the last one to end restores the count the first one found.
class BlasSerialScope {
 public:
  BlasSerialScope();
  ~BlasSerialScope();
  BlasSerialScope(const BlasSerialScope&) = delete;
  BlasSerialScope& operator=(const BlasSerialScope&) = delete;
};

// Row-major C = op(A) @ op(B) + beta * C for float, double, c64, c128 (beta 0: C is only
// written, never read; beta 1 accumulates).
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          const T* b, int64_t ldb, T* c, int64_t ldc, T beta = T(0));

// Column-major B <- T^-1 B for the n x n triangle T of `a` (upper or lower; unit diagonal when
// `unit`) and n x k B: BLAS trsm, no singularity check (a zero diagonal gives inf / nan).
template <class T>
void trsm(bool upper, bool unit, int64_t n, int64_t k, const T* a, int64_t lda, T* b, int64_t ldb);

}  // namespace ts

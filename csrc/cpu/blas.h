// The BLAS we link (scipy-openblas32 by default; a system BLAS with -DTESSERA_BLAS=system).
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace ts {

const char* blas_name();
void blas_set_num_threads(int n);
int blas_get_num_threads();

// Row-major C = op(A) @ op(B) + beta * C for float, double, c64, c128 (beta 0: C is only
// written, never read; beta 1 accumulates).
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          const T* b, int64_t ldb, T* c, int64_t ldc, T beta = T(0));

}  // namespace ts

#include "cpu/parallel.h"

#include "cpu/blas.h"

namespace ts {

int get_num_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_num_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(std::max(1, n));
#endif
  blas_set_num_threads(std::max(1, n));
}

bool openmp_enabled() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

}  // namespace ts

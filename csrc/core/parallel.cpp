#include "core/parallel.h"

#include <pthread.h>

namespace ts {

namespace detail {
std::atomic<bool> omp_pool_started{false};
std::atomic<bool> omp_forked{false};
}  // namespace detail

namespace {
void after_fork_in_child() {
  if (detail::omp_pool_started.load()) detail::omp_forked.store(true);
}
// Registered when the module loads (Note [OpenMP after fork]).
[[maybe_unused]] const int kAtforkRegistered = pthread_atfork(nullptr, nullptr, &after_fork_in_child);
}  // namespace

int get_num_threads() {
#ifdef _OPENMP
  if (detail::omp_forked.load()) return 1;  // Note [OpenMP after fork]
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_num_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(std::max(1, n));
#else
  (void)n;
#endif
}

bool openmp_enabled() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

}  // namespace ts

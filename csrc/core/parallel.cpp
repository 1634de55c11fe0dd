#include "core/parallel.h"

#include <pthread.h>

#include <thread>
#include <vector>

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

namespace {
// Jobs [first, n) on std::threads, then `rest` (the caller's own share) on this one.
template <class Rest>
void with_threads_for(int first, int n, void (*job)(int, void*), void* ctx, const Rest& rest) {
  std::vector<std::thread> extra;
  extra.reserve(static_cast<size_t>(std::max(0, n - first)));
  for (int i = first; i < n; ++i) extra.emplace_back(job, i, ctx);
  rest();
  for (auto& t : extra) t.join();
}
}  // namespace

void run_concurrently(int n, void (*job)(int, void*), void* ctx) {
  if (n <= 0) return;
  if (n == 1) return job(0, ctx);
#ifdef _OPENMP
  if (!detail::omp_forked.load(std::memory_order_relaxed) && !omp_in_parallel()) {
    if (!detail::omp_pool_started.load(std::memory_order_relaxed))
      detail::omp_pool_started.store(true, std::memory_order_relaxed);
    // The team's size is known only inside the region: its thread 0 starts std::threads for
    // the jobs beyond it before running its own job, so every job is alive together.
#pragma omp parallel num_threads(n)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      if (t == 0 && nt < n)
        with_threads_for(nt, n, job, ctx, [&] { job(0, ctx); });
      else
        job(t, ctx);
    }
    return;
  }
#endif
  with_threads_for(1, n, job, ctx, [&] { job(0, ctx); });
}

bool openmp_enabled() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

}  // namespace ts

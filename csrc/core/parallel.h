// The only place that touches OpenMP. Work below `grain` elements stays on the calling thread.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ts {

constexpr int64_t kGrainSize = 32768;

int get_num_threads();
void set_num_threads(int n);  // OpenMP's; the binding sets the BLAS thread count too
bool openmp_enabled();

// Note [OpenMP after fork]: libgomp's worker threads do not survive fork(), and a parallel
// region in the child waits for them forever (PyTorch hangs the same way). A pthread_atfork
// handler (parallel.cpp) marks the child of a process whose pool was started, and from then on
// parallel_for runs everything on the calling thread. NumPy-like code forking after tessera
// work (multiprocessing's fork start method) thus keeps working, single-threaded.
namespace detail {
extern std::atomic<bool> omp_pool_started;  // set on the first parallel region
extern std::atomic<bool> omp_forked;        // this is the child of a fork after that
}  // namespace detail

// Calls f(begin, end) on contiguous chunks of [begin, end); chunk boundaries depend only on
// the thread count, and callers must not let results depend on them (elementwise ops don't).
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  const int64_t n = end - begin;
  if (n <= 0) return;
#ifdef _OPENMP
  if (n > grain && !detail::omp_forked.load(std::memory_order_relaxed) && !omp_in_parallel() &&
      omp_get_max_threads() > 1) {
    const int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
    const int nt = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), max_chunks));
    if (nt > 1) {
      if (!detail::omp_pool_started.load(std::memory_order_relaxed))
        detail::omp_pool_started.store(true, std::memory_order_relaxed);
#pragma omp parallel num_threads(nt)
      {
        const int t = omp_get_thread_num();
        const int64_t chunk = (n + nt - 1) / nt;
        const int64_t b = begin + t * chunk, e = std::min(end, b + chunk);
        if (b < e) f(b, e);
      }
      return;
    }
  }
#endif
  f(begin, end);
}

// Runs job(0) .. job(n - 1) each on its own thread, all alive at the same time (the jobs may
// wait for one another, as OpenBLAS's level-3 jobs do): an OpenMP team of n threads when one
// can be had (the pool's threads are already running), std::threads for the jobs the team
// cannot take (inside a parallel region, after a fork, or a team cut short). job(0) runs on
// the calling thread. For Note [One thread pool for the BLAS] (cpu/blas.cpp).
void run_concurrently(int n, void (*job)(int, void*), void* ctx);

}  // namespace ts

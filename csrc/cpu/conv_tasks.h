// Note [Convolutions split by images across threads]: with T > 1 threads and at least T
// images, the CPU convolution kernels (cpu/conv_kernels.cpp, cpu/conv_winograd.cpp) split the
// batch's image chunks into T tasks of consecutive chunks, one per thread, each running its
// chunks' column/tile passes and GEMMs start to finish on its own (the GEMMs single-threaded
// under BlasSerialScope, its own buffers): no fork/join per chunk and per pass, and each core
// keeps its chunk in its own L2. Measured on the 2-core machine (docs/benchmarks.md, CNNs on
// the CPU): threaded GEMMs inside the chunk loop made the ResNet-18 step slower at two threads
// than at one (OpenBLAS's pool and ours competing for the cores, a join per pass). Weight
// gradients give each task its own accumulator, summed in task order afterwards (so results
// depend on the thread count by roundings, never on the schedule). Fewer images than threads:
// one task, the passes parallel_for loops and the GEMMs the BLAS's threads.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/parallel.h"
#include "cpu/blas.h"

namespace ts {

// How many tasks a batch of N images is split into.
inline int conv_tasks(int64_t N) {
  const int nt = get_num_threads();
  return nt > 1 && N >= nt ? nt : 1;
}

// A chunk of `want` images, at most one task's share of the N images.
inline int64_t conv_chunk(int64_t want, int64_t N, int tasks) {
  const int64_t share = (std::max<int64_t>(N, 1) + tasks - 1) / tasks;
  return std::clamp<int64_t>(want, 1, share);
}

// Calls f(task, first chunk, end chunk) for each task, the tasks on parallel_for's threads,
// with the BLAS single-threaded when there is more than one.
template <class F>
void run_conv_tasks(int tasks, int64_t chunks, const F& f) {
  if (tasks == 1) return f(0, int64_t(0), chunks);
  BlasSerialScope serial;
  parallel_for(0, tasks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) f(t, t * chunks / tasks, (t + 1) * chunks / tasks);
  });
}

}  // namespace ts

// Full reductions of one contiguous float/double run, vectorized for the machine's SIMD width
// (AVX-512, AVX2 or SSE2, picked at load time). Note [Lane-vector pairwise sum]: the sum keeps
// kLanes = 256 bytes of independent lane accumulators (64 floats or 32 doubles), sums leaves of
// kLeaf elements into them, merges leaf partials pairwise (a binary counter over the leaves,
// so the tree depends on n alone), reduces the lanes by a fixed halving tree and adds the
// last n % kLanes elements in order. Every SIMD width performs the same additions in the same
// order, so the result is bit-identical on every CPU and for any layout of the work; the error
// grows like O(log n). max/min are exact; a NaN anywhere makes them NaN (NumPy).
#pragma once
#include <cstdint>

namespace ts::reduce_simd {

// Longest run these take: callers cut longer runs into chunks (reduce_loops.h kChunk).
constexpr int64_t kMaxRun = int64_t(1) << 15;

// Note [Streamed sums]: for cached data the sum advances 4 leaves together (4 x 4 vector add
// chains in flight); read from memory, those 4 interleaved streams 4 KiB apart ran 1.3x
// slower than one sequential stream (2^24 float32: 3.2-3.6 ms vs 2.5 ms in a standalone
// model), so callers summing a run too large for the caches pass from_memory and get leaves
// one at a time: the same tree, the same result.
float sum(const float* q, int64_t n, bool from_memory = false);
double sum(const double* q, int64_t n, bool from_memory = false);
float max(const float* q, int64_t n);
double max(const double* q, int64_t n);
float min(const float* q, int64_t n);
double min(const double* q, int64_t n);

}  // namespace ts::reduce_simd

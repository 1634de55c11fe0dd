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

float sum(const float* q, int64_t n);
double sum(const double* q, int64_t n);
float max(const float* q, int64_t n);
double max(const double* q, int64_t n);
float min(const float* q, int64_t n);
double min(const double* q, int64_t n);

}  // namespace ts::reduce_simd

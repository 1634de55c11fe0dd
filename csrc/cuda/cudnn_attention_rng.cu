// The dropout seed of cuDNN's fused attention (Note [cuDNN attention dropout] in
// cuda/cudnn_attention.cpp): one thread turns tessera's (seed, offset) pair -- plain, or the
// graph-safe pair of Note [Graph-safe RNG] -- into the {seed, offset} int64 words that cuDNN
// reads from device memory, on the stream, so that a captured CUDA graph redraws at each replay.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/cudnn_attention.h"
#include "kernels/random_math.h"

namespace ts::cuda {
namespace {

// splitmix64's finalizer: a bijection of 64-bit words that spreads every input bit.
__device__ __forceinline__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__global__ void cudnn_dropout_seed_kernel(uint64_t seed, uint64_t offset, int64_t* words) {
  rng::resolve_philox(seed, offset);
  // Each (seed, offset) op call gets its own Philox key; cuDNN's counter offset starts at 0.
  words[0] = static_cast<int64_t>(mix64(seed ^ mix64(offset + 0x9E3779B97F4A7C15ull)));
  words[1] = 0;
}

}  // namespace

cudaError_t cudnn_dropout_seed(uint64_t seed, uint64_t offset, int64_t* words, cudaStream_t st) {
  cudnn_dropout_seed_kernel<<<1, 1, 0, st>>>(seed, offset, words);
  return cudaGetLastError();
}

}  // namespace ts::cuda

// The normalization factor of a cuFFT transform (cuFFT never scales), applied in place.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace ts::cuda {

// Multiplies `count` reals (float, or double when `dbl`) at p by scale on `stream`; a complex
// buffer is its 2 * elements reals.
void scale_reals(void* p, int64_t count, bool dbl, double scale, cudaStream_t stream);

}  // namespace ts::cuda

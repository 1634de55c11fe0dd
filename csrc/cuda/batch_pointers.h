// Pointer arrays for cuBLAS's pointer-array batched GEMM (Note [Strided batches]).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace ts::cuda {

constexpr int kMaxBatchDims = 12;

// Batch dims (any order) with each operand's byte stride; base pointers of a, b, out.
struct BatchWalk {
  int ndim = 0;
  int64_t sizes[kMaxBatchDims] = {};
  int64_t strides[3][kMaxBatchDims] = {};
  const char* base[3] = {};
};

// Writes ptrs[k * count + i] = base[k] + offset_k(i) for the count = prod(sizes) batch
// positions i and the three operands k, on `stream` (device memory of 3 * count pointers).
void launch_batch_pointers(const BatchWalk& walk, int64_t count, const void** ptrs,
                           cudaStream_t stream);

}  // namespace ts::cuda

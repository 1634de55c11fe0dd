// Note [Staged host copies]: cudaMemcpyAsync from pageable host memory waits for the stream to
// drain before it copies (CUDA's documented behaviour for pageable sources), so a small host
// -> device copy inside a training step (nanoGPT's `arange(0, t, device='cuda')` every forward)
// left the GPU idle while the host issued the next step's first kernels: about 1 ms of a 30 ms
// nanoGPT-char step. Small copies go through pinned staging blocks instead: the bytes are
// copied into a block on the host, the block is copied to the device asynchronously, and an
// event recorded after that copy tells when the block may be reused.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace ts::cuda {

// The largest copy that is staged; larger ones keep the plain (synchronizing) copy.
constexpr size_t kMaxStagedBytes = 1 << 20;

// Copies n <= kMaxStagedBytes bytes from pageable host memory to device memory on stream s of
// the current device, without waiting for the stream. Returns false (nothing copied) when no
// staging block is available.
bool staged_host_to_device(void* dst, const void* src, size_t n, int dev, cudaStream_t s);

}  // namespace ts::cuda

#include "cuda/host_staging.h"

#include <cstring>
#include <mutex>
#include <vector>

#include "cuda/cuda_check.h"

namespace ts::cuda {
namespace {

constexpr size_t kMinBlock = 64 << 10;
constexpr size_t kMaxBlocks = 64;  // per device; more copies in flight use the plain path

struct Block {
  int dev;
  size_t size;
  void* host;
  cudaEvent_t done;  // recorded after the block's last copy; a new event counts as done
};

bool block_free(const Block& b) {
  const cudaError_t st = cudaEventQuery(b.done);
  if (st == cudaSuccess) return true;
  if (st == cudaErrorNotReady) {
    (void)cudaGetLastError();  // "not ready" is a state, not an error: do not leave it behind
    return false;
  }
  TS_CUDA_CHECK(st);
  return false;
}

}  // namespace

bool staged_host_to_device(void* dst, const void* src, size_t n, int dev, cudaStream_t s) {
  if (n > kMaxStagedBytes) return false;
  static std::mutex mu;
  static std::vector<Block> blocks;  // never freed: pinned memory outlives every stream
  std::lock_guard<std::mutex> lock(mu);
  Block* blk = nullptr;
  size_t mine = 0;
  for (Block& b : blocks) {
    if (b.dev != dev) continue;
    ++mine;
    if (!blk && b.size >= n && block_free(b)) blk = &b;
  }
  if (!blk) {
    if (mine >= kMaxBlocks) return false;
    size_t size = kMinBlock;
    while (size < n) size *= 2;
    Block b{dev, size, nullptr, nullptr};
    if (cudaHostAlloc(&b.host, size, cudaHostAllocDefault) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    TS_CUDA_CHECK(cudaEventCreateWithFlags(&b.done, cudaEventDisableTiming));
    blocks.push_back(b);
    blk = &blocks.back();
  }
  std::memcpy(blk->host, src, n);
  TS_CUDA_CHECK(cudaMemcpyAsync(dst, blk->host, n, cudaMemcpyHostToDevice, s));
  TS_CUDA_CHECK(cudaEventRecord(blk->done, s));
  return true;
}

}  // namespace ts::cuda

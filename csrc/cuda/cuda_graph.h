// CUDA graphs behind ts.cuda.CUDAGraph.
//
// Note [CUDA graphs]: capture records the kernels that ops queue on one (non-default) stream
// into a cudaGraph, instantiated once and replayed with a single launch. What makes tessera's
// ops capturable, following PyTorch's rules:
// - Memory: allocations on the capturing stream come from a private pool (Note [Graph memory
//   pools] in caching_allocator.h), so every address the graph uses stays reserved for it.
// - Random numbers: the generator hands CUDA ops device-resident (seed, offset) words during
//   capture (Note [Graph-safe RNG] in kernels/random_math.h); each replay first writes the
//   generator's current (seed, offset) there and advances the generator by the number of
//   offsets the graph uses, so successive replays draw fresh numbers, exactly those eager
//   execution would have drawn from the same state.
// - No host synchronization: synchronize(), stream/event synchronize and copies from the
//   device to the host (item(), numpy(), cpu()) raise a RuntimeError naming the call while
//   any capture is underway, before CUDA would invalidate the capture with an opaque error.
// - Host data copied to the device during capture (ts.arange(..., device="cuda"), tensors
//   built from Python lists, CPU index arrays) is snapshotted: the bytes go to pinned memory
//   the graph owns and every replay copies that snapshot, so a constant stays what it was at
//   capture (PyTorch refuses such copies during capture; here they are constants).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace ts::cuda {

class Graph {
 public:
  Graph() = default;
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // pool 0: a fresh private pool; mode: a cudaStreamCaptureMode.
  void capture_begin(int device, cudaStream_t stream, uint64_t pool, cudaStreamCaptureMode mode);
  void capture_end();
  void replay();
  void reset();
  uint64_t pool() const { return pool_; }
  // A pinned copy of n host bytes that lives as long as the captured graph.
  const void* snapshot_host(const void* src, size_t n);

 private:
  void finish_capture();  // allocator/generator bookkeeping shared by success and failure

  int device_ = -1;
  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  uint64_t pool_ = 0;
  uint64_t* rng_state_ = nullptr;  // {seed, base offset} on the device
  uint64_t rng_calls_ = 0;         // offsets one replay uses
  bool capturing_ = false;
  std::vector<void*> pinned_;  // host snapshots replays copy from (snapshot_host)
};

uint64_t new_graph_pool_id();
// RuntimeError naming `what` while a graph capture is underway (Note [CUDA graphs]).
void check_not_capturing(const char* what);
// The graph being captured now, or nullptr (captures cannot nest).
Graph* capturing_graph();

}  // namespace ts::cuda

// Note [CUDA graphs] (cuda_graph.h): capture, instantiation and replay, and the kernel that
// hands each replay its random-number state.
#include "cuda/cuda_graph.h"

#include <atomic>
#include <cstring>

#include "core/error.h"
#include "cuda/caching_allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/device_error.h"
#include "ops/random.h"

namespace ts::cuda {
namespace {

__global__ void set_rng_state(uint64_t* state, uint64_t seed, uint64_t offset) {
  state[0] = seed;
  state[1] = offset;
}

std::atomic<int> g_captures{0};
std::atomic<Graph*> g_capturing{nullptr};

}  // namespace

uint64_t new_graph_pool_id() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

void check_not_capturing(const char* what) {
  TS_CHECK(g_captures.load() == 0, RuntimeError, what,
           ": not allowed while a CUDA graph is being captured: it waits for the device (or "
           "reads host memory) and a graph can only record work queued on the capturing "
           "stream. hint: keep item(), numpy(), print, .cpu(), tensors built from host data and "
           "synchronize() out of the captured region (use static device tensors and copy_() "
           "into them before replay)");
}

Graph* capturing_graph() { return g_capturing.load(); }

const void* Graph::snapshot_host(const void* src, size_t n) {
  void* p = nullptr;
  // cudaHostAlloc is not a stream operation; relaxed mode lets it run during the capture.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  TS_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  const cudaError_t e = cudaHostAlloc(&p, n > 0 ? n : 1, cudaHostAllocDefault);
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  TS_CUDA_CHECK(e);
  std::memcpy(p, src, n);
  pinned_.push_back(p);
  return p;
}

Graph::~Graph() {
  try {
    reset();
  } catch (...) {
    // Destructors must not throw; a failing cudaFree at shutdown only leaks.
  }
}

void Graph::capture_begin(int device, cudaStream_t stream, uint64_t pool,
                          cudaStreamCaptureMode mode) {
  TS_CHECK(!capturing_ && exec_ == nullptr, RuntimeError,
           "CUDAGraph.capture_begin: this graph already holds a capture; call reset() first");
  TS_CHECK(stream != nullptr, RuntimeError,
           "CUDAGraph.capture_begin: cannot capture on the default stream. hint: use "
           "`with ts.cuda.graph(g):`, which captures on a side stream, or set one with "
           "ts.cuda.stream(ts.cuda.Stream())");
  Generator& gen = default_generator();
  TS_CHECK(!gen.graph_capturing(), RuntimeError,
           "CUDAGraph.capture_begin: another graph is being captured; captures cannot nest");
  DeviceGuard g(device);
  (void)device_error_slot(device);  // its lazy cudaHostAlloc/cudaMalloc are illegal in capture
  if (!rng_state_) {
    void* p = nullptr;
    TS_CUDA_CHECK(cudaMalloc(&p, 2 * sizeof(uint64_t)));
    rng_state_ = static_cast<uint64_t*>(p);
  }
  device_ = device;
  stream_ = stream;
  pool_ = pool != 0 ? pool : new_graph_pool_id();
  // Work already queued on the stream (e.g. a warm-up) must not be part of the capture.
  TS_CUDA_CHECK(cudaStreamSynchronize(stream));
  cache_begin_capture(device, pool_, stream);
  gen.begin_graph_capture(reinterpret_cast<uint64_t>(rng_state_));
  const cudaError_t e = cudaStreamBeginCapture(stream, mode);
  if (e != cudaSuccess) {
    (void)gen.end_graph_capture();
    cache_end_capture(device, pool_);
    cache_release_pool(device, pool_);
    TS_CUDA_CHECK(e);
  }
  capturing_ = true;
  ++g_captures;
  g_capturing = this;
}

void Graph::finish_capture() {
  capturing_ = false;
  g_capturing = nullptr;
  --g_captures;
  rng_calls_ = default_generator().end_graph_capture();
  cache_end_capture(device_, pool_);
}

void Graph::capture_end() {
  TS_CHECK(capturing_, RuntimeError, "CUDAGraph.capture_end: no capture in progress");
  DeviceGuard g(device_);
  cudaGraph_t graph = nullptr;
  const cudaError_t e = cudaStreamEndCapture(stream_, &graph);
  finish_capture();
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (graph) cudaGraphDestroy(graph);
    cache_release_pool(device_, pool_);
    throw RuntimeError(str(
        "CUDAGraph.capture_end: the capture failed (", cudaGetErrorName(e), ": ",
        cudaGetErrorString(e), "). Something in the captured region was not capturable: a "
        "host synchronization, work on another stream that did not join the capturing stream, "
        "or a CUDA call that is illegal during capture"));
  }
  const cudaError_t ie = cudaGraphInstantiate(&exec_, graph, 0);
  cudaGraphDestroy(graph);
  if (ie != cudaSuccess) {
    exec_ = nullptr;
    cache_release_pool(device_, pool_);
    TS_CUDA_CHECK(ie);
  }
}

void Graph::replay() {
  TS_CHECK(exec_ != nullptr, RuntimeError,
           "CUDAGraph.replay: nothing captured (call capture_begin/capture_end, or use "
           "ts.cuda.graph, first)");
  DeviceGuard g(device_);
  cudaStream_t s = current_stream(device_);
  if (rng_calls_ > 0) {
    Generator& gen = default_generator();
    set_rng_state<<<1, 1, 0, s>>>(rng_state_, gen.seed(), gen.offset());
    TS_CUDA_CHECK_LAUNCH();
    gen.advance(rng_calls_);
  }
  TS_CUDA_CHECK(cudaGraphLaunch(exec_, s));
}

void Graph::reset() {
  if (capturing_) {
    DeviceGuard g(device_);
    cudaGraph_t graph = nullptr;
    (void)cudaStreamEndCapture(stream_, &graph);
    (void)cudaGetLastError();
    if (graph) cudaGraphDestroy(graph);
    finish_capture();
    cache_release_pool(device_, pool_);
  } else if (exec_) {
    DeviceGuard g(device_);
    // A replay may still run: the pool's memory goes back only after it finished.
    TS_CUDA_CHECK(cudaDeviceSynchronize());
    cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
    cache_release_pool(device_, pool_);
  }
  if (rng_state_) {
    DeviceGuard g(device_);
    (void)cudaFree(rng_state_);
    rng_state_ = nullptr;
  }
  for (void* p : pinned_) (void)cudaFreeHost(p);
  pinned_.clear();
}

}  // namespace ts::cuda

// The CUDA DeviceBackend (Note [Backend registration]): device queries, the caching allocator,
// cross-device copies, streams and events, registered at static-initialization time.
#include <cuda_runtime.h>
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>  // header-only NVTX 3 (CUDA 12 toolkits ship it)
#define TS_HAS_NVTX 1
#endif

#include "core/device_backend.h"
#include "core/error.h"
#include "cuda/caching_allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_graph.h"
#include "cuda/cuda_state.h"
#include "cuda/device_error.h"
#include "cuda/host_staging.h"

namespace ts::cuda {
namespace {

cudaStream_t as_stream(uintptr_t s) { return reinterpret_cast<cudaStream_t>(s); }
cudaEvent_t as_event(uintptr_t e) { return reinterpret_cast<cudaEvent_t>(e); }
Graph* as_graph(uintptr_t g) { return reinterpret_cast<Graph*>(g); }

// cudaStreamQuery/cudaEventQuery: done, still running (not an error), or a real error.
bool ready(cudaError_t r) {
  if (r == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  TS_CUDA_CHECK(r);
  return true;
}

class CudaBackend final : public DeviceBackend {
 public:
  bool available() const override { return device_count() > 0; }
  int device_count() const override { return cuda::device_count(); }
  int current_device() const override { return cuda::current_device(); }
  void set_device(int index) override { cuda::set_device(index); }

  std::string device_name(int index) const override {
    cudaDeviceProp p;
    TS_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
    return p.name;
  }

  std::map<std::string, int64_t> device_properties(int index) const override {
    cudaDeviceProp p;
    TS_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
    return {{"major", p.major},
            {"minor", p.minor},
            {"total_memory", static_cast<int64_t>(p.totalGlobalMem)},
            {"multi_processor_count", p.multiProcessorCount},
            {"l2_cache_size", p.l2CacheSize},
            {"warp_size", p.warpSize}};
  }

  void synchronize(int index) override {
    check_not_capturing("cuda.synchronize");
    DeviceGuard g(index);
    TS_CUDA_CHECK(cudaDeviceSynchronize());
    raise_device_error(index);
  }

  void* allocate(int64_t nbytes, Device d) override {
    return cache_allocate(nbytes, d.index, cuda::current_stream(d.index));
  }
  void deallocate(void* p) override {
    try {
      cache_free(p);
    } catch (...) {
      // Destructors must not throw; a failing event record at shutdown only leaks the block.
    }
  }
  std::map<std::string, int64_t> memory_stats(int index) const override {
    return cache_stats(index);
  }
  void reset_peak_memory_stats(int index) override { cache_reset_peak(index); }
  void reset_accumulated_memory_stats(int index) override { cache_reset_accumulated(index); }
  std::vector<MemorySegment> memory_snapshot() override { return cache_snapshot(); }
  void empty_cache() override { cache_empty(); }
  std::pair<int64_t, int64_t> mem_get_info(int index) override {
    DeviceGuard g(index);
    size_t free_bytes = 0, total_bytes = 0;
    TS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return {static_cast<int64_t>(free_bytes), static_cast<int64_t>(total_bytes)};
  }
#ifdef TS_HAS_NVTX
  int nvtx_range_push(const std::string& msg) override { return nvtxRangePushA(msg.c_str()); }
  int nvtx_range_pop() override { return nvtxRangePop(); }
  void nvtx_mark(const std::string& msg) override { nvtxMarkA(msg.c_str()); }
#else
  [[noreturn]] static void no_nvtx() {
    throw ::ts::RuntimeError(
        "cuda.nvtx: this build of tessera was compiled without the NVTX header "
        "(nvtx3/nvToolsExt.h of the CUDA toolkit)");
  }
  int nvtx_range_push(const std::string&) override { no_nvtx(); }
  int nvtx_range_pop() override { no_nvtx(); }
  void nvtx_mark(const std::string&) override { no_nvtx(); }
#endif
  void set_memory_fraction(int index, double fraction) override {
    cudaDeviceProp p;
    TS_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
    cache_set_memory_fraction(index, fraction, p.totalGlobalMem);
  }
  double memory_fraction(int index) override { return cache_memory_fraction(index); }
  std::vector<std::string> arch_list() const override {
    std::vector<std::string> out;
    for (int arch : compiled_arch_list()) out.push_back("sm_" + std::to_string(arch / 10));
    return out;
  }

  void copy_bytes(void* dst, Device dd, const void* src, Device sd, int64_t n,
                  bool non_blocking) override {
    const Device gpu = dd.is_cpu() ? sd : dd;
    if (dd.is_cpu()) check_not_capturing("copy from a CUDA device to the host (item(), numpy(), cpu())");
    DeviceGuard g(gpu);
    if (sd.is_cpu()) {
      if (Graph* graph = capturing_graph()) {  // Note [CUDA graphs]: host data is a constant
        const void* snap = graph->snapshot_host(src, static_cast<size_t>(n));
        TS_CUDA_CHECK(cudaMemcpyAsync(dst, snap, n, cudaMemcpyHostToDevice,
                                      cuda::current_stream(gpu.index)));
        return;
      }
    }
    cudaStream_t s = cuda::current_stream(gpu.index);
    // Note [Staged host copies]: a small copy from the host does not wait for the stream.
    if (sd.is_cpu() && !dd.is_cpu() &&
        staged_host_to_device(dst, src, static_cast<size_t>(n), gpu.index, s))
      return;
    if (!dd.is_cpu() && !sd.is_cpu() && dd.index != sd.index) {
      TS_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dd.index, src, sd.index, n, s));
    } else {
      TS_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s));
    }
    // A copy to the host must be complete before the host reads it, unless the caller asked
    // for an asynchronous copy into pinned memory.
    if (!non_blocking && dd.is_cpu()) {
      TS_CUDA_CHECK(cudaStreamSynchronize(s));
      raise_device_error(gpu.index);
    }
  }

  void* allocate_pinned(int64_t n) override {
    void* p = nullptr;
    TS_CUDA_CHECK(cudaHostAlloc(&p, n > 0 ? n : 1, cudaHostAllocDefault));
    return p;
  }
  void free_pinned(void* p) override { (void)cudaFreeHost(p); }

  uintptr_t current_stream(int index) const override {
    return reinterpret_cast<uintptr_t>(cuda::current_stream(index));
  }
  void set_current_stream(int index, uintptr_t s) override {
    cuda::set_current_stream(index, as_stream(s));
  }
  uintptr_t create_stream(int index, int priority) override {
    DeviceGuard g(index);
    cudaStream_t s;
    TS_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
    return reinterpret_cast<uintptr_t>(s);
  }
  void destroy_stream(int index, uintptr_t s) override {
    DeviceGuard g(index);
    // Note [Destroyed streams]: finish the stream's work, then make the allocator forget it.
    (void)cudaStreamSynchronize(as_stream(s));
    cache_forget_stream(as_stream(s));
    (void)cudaStreamDestroy(as_stream(s));
  }
  void stream_synchronize(int index, uintptr_t s) override {
    check_not_capturing("Stream.synchronize");
    DeviceGuard g(index);
    TS_CUDA_CHECK(cudaStreamSynchronize(as_stream(s)));
    raise_device_error(index);
  }
  bool stream_query(int index, uintptr_t s) override {
    DeviceGuard g(index);
    return ready(cudaStreamQuery(as_stream(s)));
  }
  uintptr_t create_event(int index, bool timing) override {
    DeviceGuard g(index);
    cudaEvent_t e;
    TS_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
    return reinterpret_cast<uintptr_t>(e);
  }
  void destroy_event(uintptr_t e) override { (void)cudaEventDestroy(as_event(e)); }
  void record_event(uintptr_t e, int index, uintptr_t s) override {
    DeviceGuard g(index);
    TS_CUDA_CHECK(cudaEventRecord(as_event(e), as_stream(s)));
  }
  void stream_wait_event(int index, uintptr_t s, uintptr_t e) override {
    DeviceGuard g(index);
    TS_CUDA_CHECK(cudaStreamWaitEvent(as_stream(s), as_event(e), 0));
  }
  // Events do not know their device here; every device's report is looked at.
  void event_synchronize(uintptr_t e) override {
    check_not_capturing("Event.synchronize");
    TS_CUDA_CHECK(cudaEventSynchronize(as_event(e)));
    for (int i = 0; i < cuda::device_count(); ++i) raise_device_error(i);
  }
  bool event_query(uintptr_t e) override { return ready(cudaEventQuery(as_event(e))); }
  float event_elapsed_ms(uintptr_t a, uintptr_t b) override {
    float ms = 0;
    TS_CUDA_CHECK(cudaEventElapsedTime(&ms, as_event(a), as_event(b)));
    return ms;
  }
  void record_stream(void* p, int /*index*/, uintptr_t s) override {
    cache_record_stream(p, as_stream(s));
  }

  uint64_t graph_pool_handle() override { return new_graph_pool_id(); }
  uintptr_t graph_create() override { return reinterpret_cast<uintptr_t>(new Graph); }
  void graph_destroy(uintptr_t g) override { delete as_graph(g); }
  void graph_capture_begin(uintptr_t g, int index, uintptr_t s, uint64_t pool, int mode) override {
    TS_CHECK(mode >= 0 && mode <= 2, ValueError, "CUDAGraph.capture_begin: unknown capture mode ",
             mode);
    static constexpr cudaStreamCaptureMode kModes[3] = {
        cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed};
    as_graph(g)->capture_begin(index, as_stream(s), pool, kModes[mode]);
  }
  void graph_capture_end(uintptr_t g) override { as_graph(g)->capture_end(); }
  void graph_replay(uintptr_t g) override { as_graph(g)->replay(); }
  void graph_reset(uintptr_t g) override { as_graph(g)->reset(); }
  uint64_t graph_pool(uintptr_t g) override { return as_graph(g)->pool(); }
  bool is_current_stream_capturing() override {
    const cudaStream_t s = cuda::current_stream(cuda::current_device());
    if (s == nullptr) return false;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    TS_CUDA_CHECK(cudaStreamIsCapturing(s, &status));
    return status == cudaStreamCaptureStatusActive;
  }
};

struct Registrar {
  Registrar() {
    // Leaked on purpose: storages freed during interpreter shutdown still reach it.
    register_cuda_backend(new CudaBackend);
  }
} registrar;

}  // namespace
}  // namespace ts::cuda

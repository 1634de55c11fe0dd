// DeviceBackend: what the core needs from a non-CPU backend (memory, cross-device copies,
// streams, events), behind one interface so the CPU build never links against CUDA.
// Note [Backend registration]: csrc/cuda registers its backend at static-initialization time;
// without it, every query answers "not available" and allocation raises a clear error.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/tensor.h"

namespace ts {

// Device memory exhausted even after the allocator released its cache (Python: MemoryError's
// subclass ts.cuda.OutOfMemoryError).
struct OutOfMemoryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One block of the caching allocator (ts.cuda.memory_snapshot; Note [Allocator statistics]).
struct MemoryBlock {
  enum State : uint8_t { kActiveAllocated, kActivePendingFree, kInactive };
  uintptr_t address = 0;
  int64_t size = 0, requested_size = 0;
  State state = kInactive;
};
// One segment (one cudaMalloc) and its blocks in address order.
struct MemorySegment {
  int device = 0;
  uintptr_t address = 0, stream = 0;
  int64_t total_size = 0, allocated_size = 0, active_size = 0, requested_size = 0;
  bool large = false;
  uint64_t pool_id = 0;  // 0: the device's own pool, else a graph's private pool
  std::vector<MemoryBlock> blocks;
};

struct DeviceBackend {
  virtual ~DeviceBackend() = default;
  virtual bool available() const = 0;
  virtual int device_count() const = 0;
  virtual int current_device() const = 0;
  virtual void set_device(int index) = 0;
  virtual std::string device_name(int index) const = 0;
  virtual std::map<std::string, int64_t> device_properties(int index) const = 0;
  virtual void synchronize(int index) = 0;

  // Memory (the caching allocator); sizes in bytes.
  virtual void* allocate(int64_t nbytes, Device d) = 0;
  virtual void deallocate(void* p) = 0;
  virtual std::map<std::string, int64_t> memory_stats(int index) const = 0;
  virtual void reset_peak_memory_stats(int index) = 0;
  virtual void reset_accumulated_memory_stats(int index) = 0;
  virtual std::vector<MemorySegment> memory_snapshot() = 0;
  virtual void empty_cache() = 0;
  // (free, total) bytes of the device's memory as the driver reports them (cudaMemGetInfo).
  virtual std::pair<int64_t, int64_t> mem_get_info(int index) = 0;
  // The caching allocator's cap on reserved memory, a fraction of the device's total memory
  // (torch.cuda.set_per_process_memory_fraction; 1.0: no cap).
  virtual void set_memory_fraction(int index, double fraction) = 0;
  virtual double memory_fraction(int index) = 0;
  // The GPU architectures this build has kernels for, as "sm_80" (torch.cuda.get_arch_list).
  virtual std::vector<std::string> arch_list() const = 0;
  // NVTX markers for profilers (torch.cuda.nvtx): push/pop return the nesting depth (NVTX's
  // value, negative on error); they raise a RuntimeError where the build has no NVTX header.
  virtual int nvtx_range_push(const std::string& msg) = 0;
  virtual int nvtx_range_pop() = 0;
  virtual void nvtx_mark(const std::string& msg) = 0;

  // dst and src are contiguous, same dtype and size, on different devices (one may be CPU).
  virtual void copy_bytes(void* dst, Device dst_dev, const void* src, Device src_dev,
                          int64_t nbytes, bool non_blocking) = 0;
  // Pinned (page-locked) host memory for non-blocking copies.
  virtual void* allocate_pinned(int64_t nbytes) = 0;
  virtual void free_pinned(void* p) = 0;

  // Streams and events are opaque handles (cudaStream_t / cudaEvent_t as integers).
  virtual uintptr_t current_stream(int index) const = 0;
  virtual void set_current_stream(int index, uintptr_t stream) = 0;
  virtual uintptr_t create_stream(int index, int priority) = 0;
  virtual void destroy_stream(int index, uintptr_t stream) = 0;
  virtual void stream_synchronize(int index, uintptr_t stream) = 0;
  virtual bool stream_query(int index, uintptr_t stream) = 0;
  virtual uintptr_t create_event(int index, bool timing) = 0;
  virtual void destroy_event(uintptr_t event) = 0;
  virtual void record_event(uintptr_t event, int index, uintptr_t stream) = 0;
  virtual void stream_wait_event(int index, uintptr_t stream, uintptr_t event) = 0;
  virtual void event_synchronize(uintptr_t event) = 0;
  virtual bool event_query(uintptr_t event) = 0;
  virtual float event_elapsed_ms(uintptr_t start, uintptr_t end) = 0;
  // Tells the allocator that `p` (a block it handed out) is used on `stream` too, so it is
  // not reused before that stream's work is done.
  virtual void record_stream(void* p, int index, uintptr_t stream) = 0;

  // CUDA graphs (Note [CUDA graphs] in cuda/cuda_graph.h): graphs are opaque handles.
  virtual uint64_t graph_pool_handle() = 0;
  virtual uintptr_t graph_create() = 0;
  virtual void graph_destroy(uintptr_t graph) = 0;
  // Captures the work queued on `stream` (not the legacy default stream) until capture_end;
  // mode: 0 global, 1 thread_local, 2 relaxed (cudaStreamCaptureMode). pool 0: a new pool.
  virtual void graph_capture_begin(uintptr_t graph, int index, uintptr_t stream, uint64_t pool,
                                   int mode) = 0;
  virtual void graph_capture_end(uintptr_t graph) = 0;
  virtual void graph_replay(uintptr_t graph) = 0;  // on the current stream of its device
  virtual void graph_reset(uintptr_t graph) = 0;
  virtual uint64_t graph_pool(uintptr_t graph) = 0;
  virtual bool is_current_stream_capturing() = 0;
};

// The CUDA backend, or nullptr when this build has none.
DeviceBackend* cuda_backend();
void register_cuda_backend(DeviceBackend* b);
// The backend or a RuntimeError naming `what` and explaining why it is unavailable.
DeviceBackend& require_cuda(const char* what);

}  // namespace ts

namespace ts {
// ts.backends.cuda.matmul.allow_tf32 (default False, like PyTorch): float32 matmuls on CUDA
// may then round their inputs to TF32 on the tensor cores.
bool& cuda_matmul_allow_tf32();
// ts.cuda.tunable (Note [Tuned GEMMs] in cuda/gemm_tuning.h): large float32 GEMMs time
// cuBLASLt's candidates once per problem; on by default.
bool& cuda_gemm_tuning();
}  // namespace ts

namespace ts {
// For ops that have only a host implementation so far: NotImplementedError naming the op and
// the device when any tensor is not on the CPU (instead of reading device memory).
void require_host(const char* op, std::initializer_list<const Tensor*> tensors);
}  // namespace ts

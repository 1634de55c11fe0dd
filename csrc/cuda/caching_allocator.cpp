#include "cuda/caching_allocator.h"

#include <cstdio>
#include <deque>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/device_backend.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"

namespace ts::cuda {
namespace {

constexpr size_t kRound = 512;
constexpr size_t kSmallSize = 1 << 20;      // requests up to this use the small pool
constexpr size_t kSmallSegment = 2 << 20;   // small pool segment
constexpr size_t kLargeSegment = 20 << 20;  // large pool segment for requests < kMinLarge
constexpr size_t kMinLarge = 10 << 20;
constexpr size_t kLargeRound = 2 << 20;

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

struct Block {
  int device = 0;
  cudaStream_t stream = nullptr;
  size_t size = 0;
  char* ptr = nullptr;
  bool small = false;
  bool allocated = false;
  int pending = 0;        // outstanding cross-stream events
  Block* prev = nullptr;  // neighbours inside one segment
  Block* next = nullptr;
  std::vector<cudaStream_t> streams;  // other streams that used it (record_stream)
};

struct BlockLess {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream)
      return reinterpret_cast<uintptr_t>(a->stream) < reinterpret_cast<uintptr_t>(b->stream);
    if (a->size != b->size) return a->size < b->size;
    return a->ptr < b->ptr;
  }
};

using Pool = std::set<Block*, BlockLess>;

struct Stat {
  int64_t current = 0, peak = 0, total = 0;
  void add(int64_t n) {
    current += n;
    if (n > 0) total += n;
    if (current > peak) peak = current;
  }
};

struct DeviceCache {
  Pool small, large;
  Stat allocated, reserved, active, segments;
  int64_t retries = 0, ooms = 0;
  std::deque<std::pair<cudaEvent_t, Block*>> events;
};

class Allocator {
 public:
  void* allocate(size_t n, int dev, cudaStream_t s) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceCache& dc = cache(dev);
    process_events(dc);
    const size_t size = round_up(n == 0 ? 1 : n, kRound);
    const bool small = size <= kSmallSize;
    Pool& pool = small ? dc.small : dc.large;
    Block* b = take_free(pool, s, size);
    if (!b) b = new_segment(dc, dev, s, size, small);
    if (should_split(b, size)) split(pool, b, size);
    b->allocated = true;
    active_[b->ptr] = b;
    dc.allocated.add(static_cast<int64_t>(b->size));
    dc.active.add(1);
    return b->ptr;
  }

  void free(void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = active_.find(p);
    if (it == active_.end()) return;
    Block* b = it->second;
    active_.erase(it);
    DeviceCache& dc = cache(b->device);
    dc.allocated.add(-static_cast<int64_t>(b->size));
    dc.active.add(-1);
    b->allocated = false;
    if (!b->streams.empty()) {
      DeviceGuard g(b->device);
      for (cudaStream_t s : b->streams) {
        cudaEvent_t e;
        TS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        TS_CUDA_CHECK(cudaEventRecord(e, s));
        ++b->pending;
        dc.events.emplace_back(e, b);
      }
      b->streams.clear();
      return;
    }
    release_to_pool(b);
  }

  void record_stream(void* p, cudaStream_t s) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = active_.find(p);
    if (it == active_.end() || it->second->stream == s) return;
    for (cudaStream_t o : it->second->streams)
      if (o == s) return;
    it->second->streams.push_back(s);
  }

  void empty() {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t d = 0; d < caches_.size(); ++d) release_cached(caches_[d], static_cast<int>(d));
  }

  std::map<std::string, int64_t> stats(int dev) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceCache& dc = cache(dev);
    return {{"allocated_bytes.all.current", dc.allocated.current},
            {"allocated_bytes.all.peak", dc.allocated.peak},
            {"allocated_bytes.all.allocated", dc.allocated.total},
            {"reserved_bytes.all.current", dc.reserved.current},
            {"reserved_bytes.all.peak", dc.reserved.peak},
            {"active.all.current", dc.active.current},
            {"active.all.peak", dc.active.peak},
            {"segment.all.current", dc.segments.current},
            {"num_alloc_retries", dc.retries},
            {"num_ooms", dc.ooms}};
  }

  void reset_peak(int dev) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceCache& dc = cache(dev);
    dc.allocated.peak = dc.allocated.current;
    dc.reserved.peak = dc.reserved.current;
    dc.active.peak = dc.active.current;
  }

 private:
  DeviceCache& cache(int dev) {
    if (caches_.size() <= static_cast<size_t>(dev)) caches_.resize(dev + 1);
    return caches_[dev];
  }

  static Block* take_free(Pool& pool, cudaStream_t s, size_t size) {
    Block key;
    key.stream = s;
    key.size = size;
    auto it = pool.lower_bound(&key);
    if (it == pool.end() || (*it)->stream != s) return nullptr;
    Block* b = *it;
    pool.erase(it);
    return b;
  }

  static bool should_split(const Block* b, size_t size) {
    const size_t rest = b->size - size;
    return b->small ? rest >= kRound : rest > kSmallSize;
  }

  static void split(Pool& pool, Block* b, size_t size) {
    Block* rest = new Block(*b);
    rest->ptr = b->ptr + size;
    rest->size = b->size - size;
    rest->prev = b;
    rest->next = b->next;
    rest->streams.clear();
    if (b->next) b->next->prev = rest;
    b->next = rest;
    b->size = size;
    pool.insert(rest);
  }

  Block* new_segment(DeviceCache& dc, int dev, cudaStream_t s, size_t size, bool small) {
    const size_t seg =
        small ? kSmallSegment : (size < kMinLarge ? kLargeSegment : round_up(size, kLargeRound));
    DeviceGuard g(dev);
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, seg);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      ++dc.retries;
      release_cached(dc, dev);
      e = cudaMalloc(&p, seg);
    }
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      ++dc.ooms;
      throw_oom(dc, dev, size);
    }
    TS_CUDA_CHECK(e);
    Block* b = new Block;
    b->device = dev;
    b->stream = s;
    b->size = seg;
    b->ptr = static_cast<char*>(p);
    b->small = small;
    dc.reserved.add(static_cast<int64_t>(seg));
    dc.segments.add(1);
    return b;
  }

  [[noreturn]] static void throw_oom(const DeviceCache& dc, int dev, size_t size) {
    size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    (void)cudaGetLastError();
    // snprintf, not iostreams: a toolchain that links libstdc++ statically (seen on the GPU
    // build machine) crashed formatting doubles through the stream locale here.
    auto mib = [](double bytes) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024.0));
      return std::string(buf);
    };
    throw OutOfMemoryError(
        str("CUDA out of memory: tried to allocate ", mib(size), " on cuda:", dev, " (device has ",
            mib(total_b), " in all, ", mib(free_b), " free; tessera holds ",
            mib(dc.allocated.current), " in tensors and ", mib(dc.reserved.current),
            " reserved in its cache). hint: free tensors you no longer need (del x), use a ",
            "smaller batch, or call ts.cuda.empty_cache() if another library needs the memory"));
  }

  void release_to_pool(Block* b) {
    DeviceCache& dc = cache(b->device);
    Pool& pool = b->small ? dc.small : dc.large;
    merge(pool, b, b->prev);
    merge(pool, b, b->next);
    pool.insert(b);
  }

  // Absorbs the free neighbour `n` into `b` (same segment, both free).
  static void merge(Pool& pool, Block* b, Block* n) {
    if (!n || n->allocated || n->pending > 0) return;
    auto it = pool.find(n);
    if (it == pool.end()) return;
    pool.erase(it);
    if (n == b->prev) {
      b->ptr = n->ptr;
      b->prev = n->prev;
      if (b->prev) b->prev->next = b;
    } else {
      b->next = n->next;
      if (b->next) b->next->prev = b;
    }
    b->size += n->size;
    delete n;
  }

  void process_events(DeviceCache& dc) {
    while (!dc.events.empty()) {
      auto [e, b] = dc.events.front();
      const cudaError_t r = cudaEventQuery(e);
      if (r == cudaErrorNotReady) {
        (void)cudaGetLastError();
        break;
      }
      TS_CUDA_CHECK(r);
      cudaEventDestroy(e);
      dc.events.pop_front();
      if (--b->pending == 0) release_to_pool(b);
    }
  }

  // Frees every cached segment that is wholly free (needs the pending events done first).
  void release_cached(DeviceCache& dc, int dev) {
    DeviceGuard g(dev);
    if (!dc.events.empty()) {
      TS_CUDA_CHECK(cudaDeviceSynchronize());
      process_events(dc);
    }
    for (Pool* pool : {&dc.small, &dc.large}) {
      for (auto it = pool->begin(); it != pool->end();) {
        Block* b = *it;
        if (b->prev || b->next) {
          ++it;
          continue;
        }
        TS_CUDA_CHECK(cudaFree(b->ptr));
        dc.reserved.add(-static_cast<int64_t>(b->size));
        dc.segments.add(-1);
        it = pool->erase(it);
        delete b;
      }
    }
  }

  std::mutex mu_;
  std::vector<DeviceCache> caches_;
  std::unordered_map<void*, Block*> active_;
};

Allocator& allocator() {
  // Leaked on purpose: tensors freed during interpreter shutdown still find it.
  static Allocator* a = new Allocator;
  return *a;
}

}  // namespace

void* cache_allocate(int64_t nbytes, int device, cudaStream_t stream) {
  return allocator().allocate(static_cast<size_t>(nbytes), device, stream);
}
void cache_free(void* p) { allocator().free(p); }
void cache_record_stream(void* p, cudaStream_t s) { allocator().record_stream(p, s); }
void cache_empty() { allocator().empty(); }
std::map<std::string, int64_t> cache_stats(int device) { return allocator().stats(device); }
void cache_reset_peak(int device) { allocator().reset_peak(device); }

}  // namespace ts::cuda

#include "cuda/caching_allocator.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

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

struct PrivatePool;

struct Block {
  int device = 0;
  cudaStream_t stream = nullptr;
  size_t size = 0;
  size_t requested = 0;  // the size asked for (allocated blocks)
  char* ptr = nullptr;
  bool small = false;
  bool allocated = false;
  int pending = 0;              // outstanding cross-stream events
  PrivatePool* owner = nullptr;  // Note [Graph memory pools]; nullptr: the device's own pool
  Block* prev = nullptr;         // neighbours inside one segment
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

struct PoolPair {
  Pool small, large;
  Pool& of(bool is_small) { return is_small ? small : large; }
};

struct PrivatePool {
  uint64_t id = 0;
  int refs = 0;  // graphs (and the capture in progress) using it
  PoolPair free;
};

// Note [Allocator statistics]: one counter, kept for all blocks and per pool kind.
struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void add(int64_t n) {
    current += n;
    if (n > 0) allocated += n;
    if (n < 0) freed -= n;
    peak = std::max(peak, current);
  }
};
enum Kind { kAll = 0, kSmall = 1, kLarge = 2 };
struct StatArray {
  std::array<Stat, 3> s;
  void add(bool small, int64_t n) {
    s[kAll].add(n);
    s[small ? kSmall : kLarge].add(n);
  }
};
enum StatName {
  kAllocation, kSegment, kActive, kInactiveSplit,
  kAllocatedBytes, kReservedBytes, kActiveBytes, kInactiveSplitBytes, kRequestedBytes, kNumStats
};
constexpr const char* kStatNames[kNumStats] = {
    "allocation",     "segment",        "active",       "inactive_split",       "allocated_bytes",
    "reserved_bytes", "active_bytes",   "inactive_split_bytes", "requested_bytes"};

struct Segment {
  size_t size = 0;
  int device = 0;
  cudaStream_t stream = nullptr;
  bool small = false;
  PrivatePool* owner = nullptr;
};

struct DeviceCache {
  PoolPair pools;
  std::array<StatArray, kNumStats> stats;
  int64_t retries = 0, ooms = 0, device_allocs = 0, device_frees = 0;
  std::deque<std::pair<cudaEvent_t, Block*>> events;
  std::map<uint64_t, std::unique_ptr<PrivatePool>> private_pools;
  std::vector<std::pair<cudaStream_t, PrivatePool*>> captures;  // streams capturing now
  std::vector<Block*> deferred;  // freed during a capture with record_stream users
  // set_per_process_memory_fraction: reserved bytes may not exceed `limit` (0: no limit)
  double fraction = 1.0;
  size_t limit = 0;
  bool within_limit(size_t more) const {
    return limit == 0 || static_cast<size_t>(stats[kReservedBytes].s[kAll].current) + more <= limit;
  }
  void add(StatName n, bool small, int64_t v) { stats[n].add(small, v); }
};

bool is_split(const Block* b) { return b->prev != nullptr || b->next != nullptr; }

class Allocator {
 public:
  void* allocate(size_t n, int dev, cudaStream_t s) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceCache& dc = cache(dev);
    if (captures_ == 0) {
      process_deferred(dc);
      process_events(dc);
    }
    const size_t size = round_up(n == 0 ? 1 : n, kRound);
    const bool small = size <= kSmallSize;
    PrivatePool* owner = capture_pool(dc, s);
    Pool& pool = pools_of(dc, owner).of(small);
    Block* b = take_free(pool, s, size);
    if (b && is_split(b)) {
      dc.add(kInactiveSplit, small, -1);
      dc.add(kInactiveSplitBytes, small, -static_cast<int64_t>(b->size));
    }
    if (!b) b = new_segment(dc, dev, s, size, small, owner);
    if (should_split(b, size)) {
      Block* rest = split(pool, b, size);
      dc.add(kInactiveSplit, small, 1);
      dc.add(kInactiveSplitBytes, small, static_cast<int64_t>(rest->size));
    }
    b->allocated = true;
    b->requested = n;
    active_[b->ptr] = b;
    dc.add(kAllocation, small, 1);
    dc.add(kAllocatedBytes, small, static_cast<int64_t>(b->size));
    dc.add(kActive, small, 1);
    dc.add(kActiveBytes, small, static_cast<int64_t>(b->size));
    dc.add(kRequestedBytes, small, static_cast<int64_t>(n));
    return b->ptr;
  }

  void free(void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = active_.find(p);
    if (it == active_.end()) return;
    Block* b = it->second;
    active_.erase(it);
    DeviceCache& dc = cache(b->device);
    dc.add(kAllocation, b->small, -1);
    dc.add(kAllocatedBytes, b->small, -static_cast<int64_t>(b->size));
    dc.add(kRequestedBytes, b->small, -static_cast<int64_t>(b->requested));
    b->allocated = false;
    b->requested = 0;
    if (!b->streams.empty()) {
      if (captures_ > 0) {
        // No event records or queries while a stream captures: decided after the capture.
        dc.deferred.push_back(b);
        ++b->pending;
        return;
      }
      record_events(dc, b);
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

  // Note [Destroyed streams]: a stream is about to be destroyed (its work has completed: the
  // caller synchronized it). Blocks that recorded it need no event on it any more, and an event
  // recorded on a destroyed stream is undefined behaviour (it crashed NCCL workers whose
  // process-group stream died before tensors it had touched were freed).
  void forget_stream(cudaStream_t s) {
    std::lock_guard<std::mutex> lock(mu_);
    auto drop = [s](Block* b) {
      b->streams.erase(std::remove(b->streams.begin(), b->streams.end(), s), b->streams.end());
    };
    for (auto& kv : active_) drop(kv.second);
    for (DeviceCache& dc : caches_)
      for (Block* b : dc.deferred) drop(b);
  }

  void empty() {
    std::lock_guard<std::mutex> lock(mu_);
    TS_CHECK(captures_ == 0, RuntimeError,
             "cuda.empty_cache: not allowed while a CUDA graph is being captured (cudaFree would "
             "invalidate the capture); call it before capture_begin or after capture_end");
    for (size_t d = 0; d < caches_.size(); ++d) release_cached(caches_[d], static_cast<int>(d));
  }

  std::map<std::string, int64_t> stats(int dev) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceCache& dc = cache(dev);
    std::map<std::string, int64_t> out;
    static constexpr const char* kKinds[3] = {"all", "small_pool", "large_pool"};
    for (int n = 0; n < kNumStats; ++n)
      for (int k = 0; k < 3; ++k) {
        const Stat& s = dc.stats[n].s[k];
        const std::string pre = std::string(kStatNames[n]) + "." + kKinds[k] + ".";
        out[pre + "current"] = s.current;
        out[pre + "peak"] = s.peak;
        out[pre + "allocated"] = s.allocated;
        out[pre + "freed"] = s.freed;
      }
    out["num_alloc_retries"] = dc.retries;
    out["num_ooms"] = dc.ooms;
    out["num_device_alloc"] = dc.device_allocs;
    out["num_device_free"] = dc.device_frees;
    out["num_sync_all_streams"] = 0;
    out["max_split_size"] = -1;  // every block may be split (no max_split_size_mb setting)
    return out;
  }

  void set_memory_fraction(int dev, double fraction, size_t total) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceCache& dc = cache(dev);
    dc.fraction = fraction;
    dc.limit = fraction >= 1.0 ? 0 : static_cast<size_t>(fraction * static_cast<double>(total));
    if (dc.limit == 0 && fraction < 1.0) dc.limit = 1;  // fraction 0: no new segment fits
  }

  double memory_fraction(int dev) {
    std::lock_guard<std::mutex> lock(mu_);
    return cache(dev).fraction;
  }

  void reset_peak(int dev) {
    std::lock_guard<std::mutex> lock(mu_);
    for (StatArray& a : cache(dev).stats)
      for (Stat& s : a.s) s.peak = s.current;
  }

  void reset_accumulated(int dev) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceCache& dc = cache(dev);
    for (StatArray& a : dc.stats)
      for (Stat& s : a.s) s.allocated = s.freed = 0;
    dc.retries = dc.ooms = dc.device_allocs = dc.device_frees = 0;
  }

  std::vector<MemorySegment> snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    // Every block is allocated (active_), free in some pool, or waiting for events/capture end.
    std::vector<const Block*> blocks;
    for (const auto& [p, b] : active_) blocks.push_back(b);
    auto add_pool = [&](const PoolPair& pp) {
      for (const Pool* pool : {&pp.small, &pp.large}) blocks.insert(blocks.end(), pool->begin(), pool->end());
    };
    for (DeviceCache& dc : caches_) {
      add_pool(dc.pools);
      for (const auto& [id, pp] : dc.private_pools) add_pool(pp->free);
      for (const auto& [e, b] : dc.events)
        if (std::find(blocks.begin(), blocks.end(), b) == blocks.end()) blocks.push_back(b);
      for (const Block* b : dc.deferred)
        if (std::find(blocks.begin(), blocks.end(), b) == blocks.end()) blocks.push_back(b);
    }
    std::sort(blocks.begin(), blocks.end(), [](const Block* a, const Block* b) { return a->ptr < b->ptr; });
    std::vector<MemorySegment> out;
    size_t bi = 0;
    for (const auto& [base, seg] : segments_) {
      MemorySegment m;
      m.device = seg.device;
      m.address = reinterpret_cast<uintptr_t>(base);
      m.total_size = static_cast<int64_t>(seg.size);
      m.stream = reinterpret_cast<uintptr_t>(seg.stream);
      m.large = !seg.small;
      m.pool_id = seg.owner ? seg.owner->id : 0;
      while (bi < blocks.size() && blocks[bi]->ptr < base) ++bi;
      for (; bi < blocks.size() && blocks[bi]->ptr < base + seg.size; ++bi) {
        const Block* b = blocks[bi];
        MemoryBlock mb;
        mb.address = reinterpret_cast<uintptr_t>(b->ptr);
        mb.size = static_cast<int64_t>(b->size);
        mb.requested_size = static_cast<int64_t>(b->requested);
        mb.state = b->allocated ? MemoryBlock::kActiveAllocated
                                : (b->pending > 0 ? MemoryBlock::kActivePendingFree
                                                  : MemoryBlock::kInactive);
        if (b->allocated) m.allocated_size += mb.size;
        if (b->allocated || b->pending > 0) m.active_size += mb.size;
        m.requested_size += mb.requested_size;
        m.blocks.push_back(mb);
      }
      out.push_back(std::move(m));
    }
    return out;
  }

  void begin_capture(int dev, uint64_t id, cudaStream_t s) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceCache& dc = cache(dev);
    auto& slot = dc.private_pools[id];
    if (!slot) {
      slot = std::make_unique<PrivatePool>();
      slot->id = id;
    }
    ++slot->refs;
    dc.captures.emplace_back(s, slot.get());
    ++captures_;
  }

  void end_capture(int dev, uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceCache& dc = cache(dev);
    for (auto it = dc.captures.begin(); it != dc.captures.end(); ++it)
      if (it->second->id == id) {
        dc.captures.erase(it);
        --captures_;
        return;
      }
  }

  void retain_pool(int dev, uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache(dev).private_pools.find(id);
    if (it != cache(dev).private_pools.end()) ++it->second->refs;
  }

  void release_pool(int dev, uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceCache& dc = cache(dev);
    auto it = dc.private_pools.find(id);
    if (it == dc.private_pools.end()) return;
    if (--it->second->refs > 0 || captures_ > 0) return;
    release_free_segments(dc, dev, it->second->free);
    free_dead_pools(dc);
  }

  bool capture_underway() {
    std::lock_guard<std::mutex> lock(mu_);
    return captures_ > 0;
  }

 private:
  DeviceCache& cache(int dev) {
    if (caches_.size() <= static_cast<size_t>(dev)) caches_.resize(dev + 1);
    return caches_[dev];
  }

  static PrivatePool* capture_pool(DeviceCache& dc, cudaStream_t s) {
    for (const auto& [cs, pool] : dc.captures)
      if (cs == s) return pool;
    return nullptr;
  }

  static PoolPair& pools_of(DeviceCache& dc, PrivatePool* owner) {
    return owner ? owner->free : dc.pools;
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

  static Block* split(Pool& pool, Block* b, size_t size) {
    Block* rest = new Block(*b);
    rest->ptr = b->ptr + size;
    rest->size = b->size - size;
    rest->requested = 0;
    rest->prev = b;
    rest->next = b->next;
    rest->streams.clear();
    if (b->next) b->next->prev = rest;
    b->next = rest;
    b->size = size;
    pool.insert(rest);
    return rest;
  }

  Block* new_segment(DeviceCache& dc, int dev, cudaStream_t s, size_t size, bool small,
                     PrivatePool* owner) {
    const size_t seg =
        small ? kSmallSegment : (size < kMinLarge ? kLargeSegment : round_up(size, kLargeRound));
    DeviceGuard g(dev);
    void* p = nullptr;
    // over the per-process limit counts as cudaMalloc failing (torch's allowed_memory_maximum)
    cudaError_t e = dc.within_limit(seg) ? device_malloc(&p, seg) : cudaErrorMemoryAllocation;
    if (e == cudaErrorMemoryAllocation && captures_ == 0) {
      (void)cudaGetLastError();
      ++dc.retries;
      release_cached(dc, dev);
      e = dc.within_limit(seg) ? device_malloc(&p, seg) : cudaErrorMemoryAllocation;
    }
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      ++dc.ooms;
      throw_oom(dc, dev, size);
    }
    TS_CUDA_CHECK(e);
    ++dc.device_allocs;
    Block* b = new Block;
    b->device = dev;
    b->stream = s;
    b->size = seg;
    b->ptr = static_cast<char*>(p);
    b->small = small;
    b->owner = owner;
    segments_[b->ptr] = Segment{seg, dev, s, small, owner};
    dc.add(kReservedBytes, small, static_cast<int64_t>(seg));
    dc.add(kSegment, small, 1);
    return b;
  }

  // cudaMalloc, in relaxed capture mode while a stream captures (Note [Graph memory pools]).
  cudaError_t device_malloc(void** p, size_t n) {
    if (captures_ == 0) return cudaMalloc(p, n);
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    TS_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    const cudaError_t e = cudaMalloc(p, n);
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    return e;
  }

  [[noreturn]] void throw_oom(const DeviceCache& dc, int dev, size_t size) {
    size_t free_b = 0, total_b = 0;
    if (captures_ == 0) (void)cudaMemGetInfo(&free_b, &total_b);
    (void)cudaGetLastError();
    // snprintf, not iostreams: a toolchain that links libstdc++ statically (seen on the GPU
    // build machine) crashed formatting doubles through the stream locale here.
    auto mib = [](double bytes) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024.0));
      return std::string(buf);
    };
    throw OutOfMemoryError(str(
        "CUDA out of memory: tried to allocate ", mib(static_cast<double>(size)), " on cuda:", dev,
        " (device has ", mib(static_cast<double>(total_b)), " in all, ",
        mib(static_cast<double>(free_b)), " free; tessera holds ",
        mib(static_cast<double>(dc.stats[kAllocatedBytes].s[kAll].current)), " in tensors and ",
        mib(static_cast<double>(dc.stats[kReservedBytes].s[kAll].current)),
        " reserved in its cache). hint: free tensors you no longer need (del x), use a ",
        "smaller batch, or call ts.cuda.empty_cache() if another library needs the memory; ",
        "ts.cuda.memory_summary() shows where the memory is"));
  }

  void record_events(DeviceCache& dc, Block* b) {
    DeviceGuard g(b->device);
    for (cudaStream_t s : b->streams) {
      cudaEvent_t e;
      TS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      TS_CUDA_CHECK(cudaEventRecord(e, s));
      ++b->pending;
      dc.events.emplace_back(e, b);
    }
    b->streams.clear();
  }

  void process_deferred(DeviceCache& dc) {
    if (dc.deferred.empty()) return;
    std::vector<Block*> blocks;
    blocks.swap(dc.deferred);
    for (Block* b : blocks) {
      --b->pending;
      record_events(dc, b);
      if (b->pending == 0) release_to_pool(b);
    }
  }

  // A freed block with no outstanding events back into its pool (merged with free neighbours).
  void release_to_pool(Block* b) {
    DeviceCache& dc = cache(b->device);
    Pool& pool = pools_of(dc, b->owner).of(b->small);
    dc.add(kActive, b->small, -1);
    dc.add(kActiveBytes, b->small, -static_cast<int64_t>(b->size));
    merge(dc, pool, b, b->prev);
    merge(dc, pool, b, b->next);
    if (is_split(b)) {
      dc.add(kInactiveSplit, b->small, 1);
      dc.add(kInactiveSplitBytes, b->small, static_cast<int64_t>(b->size));
    }
    pool.insert(b);
  }

  // Absorbs the free neighbour `n` into `b` (same segment, both free).
  static void merge(DeviceCache& dc, Pool& pool, Block* b, Block* n) {
    if (!n || n->allocated || n->pending > 0) return;
    auto it = pool.find(n);
    if (it == pool.end()) return;
    pool.erase(it);
    dc.add(kInactiveSplit, n->small, -1);
    dc.add(kInactiveSplitBytes, n->small, -static_cast<int64_t>(n->size));
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

  void release_free_segments(DeviceCache& dc, int dev, PoolPair& pp) {
    DeviceGuard g(dev);
    for (Pool* pool : {&pp.small, &pp.large}) {
      for (auto it = pool->begin(); it != pool->end();) {
        Block* b = *it;
        if (is_split(b)) {
          ++it;
          continue;
        }
        TS_CUDA_CHECK(cudaFree(b->ptr));
        ++dc.device_frees;
        segments_.erase(b->ptr);
        dc.add(kReservedBytes, b->small, -static_cast<int64_t>(b->size));
        dc.add(kSegment, b->small, -1);
        it = pool->erase(it);
        delete b;
      }
    }
  }

  // Drops private pools that no graph uses and that hold no segment any more.
  void free_dead_pools(DeviceCache& dc) {
    for (auto it = dc.private_pools.begin(); it != dc.private_pools.end();) {
      const PrivatePool* pp = it->second.get();
      bool used = pp->refs > 0;
      for (const auto& [base, seg] : segments_) used = used || seg.owner == pp;
      it = used ? std::next(it) : dc.private_pools.erase(it);
    }
  }

  // Frees every cached segment that is wholly free (needs the pending events done first), in
  // the device's own pool and in private pools no graph uses any more.
  void release_cached(DeviceCache& dc, int dev) {
    DeviceGuard g(dev);
    process_deferred(dc);
    if (!dc.events.empty()) {
      TS_CUDA_CHECK(cudaDeviceSynchronize());
      process_events(dc);
    }
    release_free_segments(dc, dev, dc.pools);
    for (auto& [id, pp] : dc.private_pools)
      if (pp->refs == 0) release_free_segments(dc, dev, pp->free);
    free_dead_pools(dc);
  }

  std::mutex mu_;
  std::deque<DeviceCache> caches_;  // a deque: growing it never moves a DeviceCache
  std::unordered_map<void*, Block*> active_;
  std::map<char*, Segment> segments_;  // every segment taken from cudaMalloc, by base address
  int captures_ = 0;                   // captures underway on any device
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
void cache_forget_stream(cudaStream_t s) { allocator().forget_stream(s); }
void cache_empty() { allocator().empty(); }
std::map<std::string, int64_t> cache_stats(int device) { return allocator().stats(device); }
void cache_reset_peak(int device) { allocator().reset_peak(device); }
void cache_set_memory_fraction(int device, double fraction, size_t total) {
  allocator().set_memory_fraction(device, fraction, total);
}
double cache_memory_fraction(int device) { return allocator().memory_fraction(device); }
void cache_reset_accumulated(int device) { allocator().reset_accumulated(device); }
std::vector<MemorySegment> cache_snapshot() { return allocator().snapshot(); }
void cache_begin_capture(int device, uint64_t pool, cudaStream_t stream) {
  allocator().begin_capture(device, pool, stream);
}
void cache_end_capture(int device, uint64_t pool) { allocator().end_capture(device, pool); }
void cache_retain_pool(int device, uint64_t pool) { allocator().retain_pool(device, pool); }
void cache_release_pool(int device, uint64_t pool) { allocator().release_pool(device, pool); }
bool cache_capture_underway() { return allocator().capture_underway(); }

}  // namespace ts::cuda

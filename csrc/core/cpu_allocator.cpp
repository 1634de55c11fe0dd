#include "core/cpu_allocator.h"

#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace ts {

// Note [CPU block cache]: glibc serves allocations above its mmap threshold (at most 32 MiB)
// with fresh mmaps, so every large op output pays page faults on first touch. We keep freed
// blocks of >= 1 MiB, rounded to a quarter of their power of two (at most 25% slack), and hand
// them back for the same rounded size. The cache is capped; beyond the cap blocks are freed.
namespace {

constexpr int64_t kMinCached = int64_t(1) << 20;
constexpr int64_t kMaxCachedTotal = int64_t(1) << 30;

// No machine has 2^60 bytes: larger requests fail before any size arithmetic near int64's
// limit (the rounding below once looped forever past 2^62, where p * 2 overflowed).
constexpr int64_t kMaxRequest = int64_t(1) << 60;

int64_t round_size(int64_t n) {  // kMinCached <= n <= kMaxRequest
  const int64_t p = int64_t(1) << (63 - __builtin_clzll(static_cast<uint64_t>(n)));
  const int64_t q = p / 4;
  return (n + q - 1) / q * q;
}

struct BlockCache {
  std::mutex mu;
  std::unordered_map<int64_t, std::vector<void*>> free_blocks;
  int64_t cached = 0;

  void* take(int64_t size) {
    std::lock_guard<std::mutex> g(mu);
    auto it = free_blocks.find(size);
    if (it == free_blocks.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached -= size;
    return p;
  }
  bool give(void* p, int64_t size) {
    std::lock_guard<std::mutex> g(mu);
    if (cached + size > kMaxCachedTotal) return false;
    free_blocks[size].push_back(p);
    cached += size;
    return true;
  }
  void clear() {
    std::lock_guard<std::mutex> g(mu);
    for (auto& kv : free_blocks)
      for (void* p : kv.second) std::free(p);
    free_blocks.clear();
    cached = 0;
  }
};

BlockCache& cache() {
  static BlockCache* c = new BlockCache();  // never destroyed: tensors may outlive statics
  return *c;
}

// Blocks of 2 MiB or more start on a 2 MiB boundary, so that transparent huge pages can back
// all of them (madvise below): a walk across rows (a + a.T) then misses the TLB far less.
constexpr int64_t kHugePage = int64_t(2) << 20;

void* raw_alloc(int64_t nbytes) {
  void* p = nullptr;
  const size_t align = nbytes >= kHugePage ? kHugePage : 64;
  if (posix_memalign(&p, align, static_cast<size_t>(nbytes)) != 0 || p == nullptr)
    throw OutOfMemory(nbytes);
  return p;
}

}  // namespace

OutOfMemory::OutOfMemory(int64_t nbytes) {
  const double gib = static_cast<double>(nbytes) / static_cast<double>(int64_t(1) << 30);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", gib);
  msg_ = "out of memory: a tensor of " + std::to_string(nbytes) + " bytes (" + buf +
         " GiB) cannot be allocated on the CPU; hint: use smaller sizes (or check them: a "
         "size from a file or a user may be bogus)";
}

void* cpu_alloc(int64_t nbytes) {
  if (nbytes < 0 || nbytes > kMaxRequest) throw OutOfMemory(nbytes);  // MemoryError in Python
  if (nbytes < kMinCached) return raw_alloc(nbytes == 0 ? 1 : nbytes);
  const int64_t size = round_size(nbytes);
  if (void* p = cache().take(size)) return p;
  void* p = raw_alloc(size);
  madvise(p, static_cast<size_t>(size), MADV_HUGEPAGE);  // fewer faults on first touch
  return p;
}

void cpu_free(void* p, int64_t nbytes) {
  if (nbytes >= kMinCached && nbytes <= kMaxRequest && cache().give(p, round_size(nbytes))) return;
  std::free(p);
}

int64_t cpu_cached_bytes() {
  std::lock_guard<std::mutex> g(cache().mu);
  return cache().cached;
}

void cpu_empty_cache() { cache().clear(); }

}  // namespace ts

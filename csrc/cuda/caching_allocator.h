// The stream-aware caching allocator for device memory.
// Note [Caching allocator]: cudaMalloc/cudaFree synchronize the device and cost tens of
// microseconds, so freed blocks are kept and reused. Requests round up to 512 bytes; those up to
// 1 MiB come from 2 MiB segments (the small pool), larger ones from segments of at least 20 MiB
// (the large pool); a block larger than needed is split and the rest stays free, and neighbours
// inside a segment coalesce again when both are free. A free block is reused only by requests
// on the stream it was last used on: work on one stream runs in order, so the new owner cannot
// overtake the old one. Blocks used on other streams too (record_stream) go back to the pool
// only once an event recorded on each of those streams has completed. When cudaMalloc fails,
// the cache's unsplit segments are released and the allocation retried once before
// OutOfMemoryError.
//
// Note [Allocator statistics]: the counters follow PyTorch's memory_stats() names. For each of
// "all", "small_pool", "large_pool": allocated_bytes (blocks handed out, rounded sizes),
// requested_bytes (the sizes asked for: allocated - requested is the rounding waste),
// active_bytes (allocated plus freed blocks still waiting for another stream's events),
// inactive_split_bytes (free blocks inside a split segment: fragmentation), reserved_bytes
// (segments taken from cudaMalloc), with their counts (allocation, active, inactive_split,
// segment); each has current, peak, allocated (sum of increases) and freed (sum of decreases).
//
// Note [Graph memory pools]: while a CUDA graph is captured on a stream, allocations made on
// that stream come from a private pool (its own segments, found by pool id). The addresses a
// captured kernel uses must stay valid and unused by anything else for as long as the graph may
// be replayed, so blocks freed during or after the capture return to that private pool only:
// later captures that share the pool (pool=g.pool()) may reuse them, ordinary allocations never
// do. The pool's cached segments go back to CUDA once every graph using it is released (and no
// block of it is still allocated). During a capture the allocator neither queries events nor
// calls cudaFree (both are illegal while a stream captures); cudaMalloc runs in relaxed capture
// mode, which CUDA allows and which does not record the allocation into the graph.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/device_backend.h"

namespace ts::cuda {

void* cache_allocate(int64_t nbytes, int device, cudaStream_t stream);
void cache_free(void* p);
void cache_record_stream(void* p, cudaStream_t stream);
// Note [Destroyed streams]: drops `stream` from every block's record_stream list.
void cache_forget_stream(cudaStream_t stream);
// Releases every wholly free cached segment (RuntimeError during a graph capture).
void cache_empty();
std::map<std::string, int64_t> cache_stats(int device);
void cache_reset_peak(int device);
// set_per_process_memory_fraction: the device's reserved memory stays within fraction * total
// bytes (an allocation beyond it releases the cache, then raises OutOfMemoryError).
void cache_set_memory_fraction(int device, double fraction, size_t total);
double cache_memory_fraction(int device);
void cache_reset_accumulated(int device);
std::vector<MemorySegment> cache_snapshot();

// Note [Graph memory pools]. Allocations on `stream` of `device` go to private pool `pool`
// (created on first use, with one reference held by the caller) until cache_end_capture.
void cache_begin_capture(int device, uint64_t pool, cudaStream_t stream);
void cache_end_capture(int device, uint64_t pool);
// Adds or drops a reference to a pool (a graph that captured into it); at zero references its
// free segments are released.
void cache_retain_pool(int device, uint64_t pool);
void cache_release_pool(int device, uint64_t pool);
// True while any stream captures into a private pool.
bool cache_capture_underway();

}  // namespace ts::cuda

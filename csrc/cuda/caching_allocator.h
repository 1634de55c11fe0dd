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
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <string>

namespace ts::cuda {

void* cache_allocate(int64_t nbytes, int device, cudaStream_t stream);
void cache_free(void* p);
void cache_record_stream(void* p, cudaStream_t stream);
void cache_empty();
std::map<std::string, int64_t> cache_stats(int device);
void cache_reset_peak(int device);

}  // namespace ts::cuda

// CPU allocator: 64-byte aligned. Blocks of 1 MiB and more are cached on free and reused
// (Note [CPU block cache]): large outputs then cost no mmap/munmap and no page faults per op.
#pragma once
#include <cstdint>

namespace ts {

void* cpu_alloc(int64_t nbytes);
void cpu_free(void* p, int64_t nbytes);
int64_t cpu_cached_bytes();
void cpu_empty_cache();

}  // namespace ts

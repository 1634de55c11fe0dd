// CPU allocator: 64-byte aligned. Blocks of 1 MiB and more are cached on free and reused
// (Note [CPU block cache]): large outputs then cost no mmap/munmap and no page faults per op.
#pragma once
#include <cstdint>
#include <new>
#include <string>

namespace ts {

// A failed host allocation: a std::bad_alloc (MemoryError in Python) whose message names the
// request's size, so a user sees how much was asked for (as PyTorch's "you tried to
// allocate N bytes") instead of a bare "out of memory".
class OutOfMemory : public std::bad_alloc {
 public:
  explicit OutOfMemory(int64_t nbytes);
  const char* what() const noexcept override { return msg_.c_str(); }

 private:
  std::string msg_;
};

void* cpu_alloc(int64_t nbytes);
void cpu_free(void* p, int64_t nbytes);
int64_t cpu_cached_bytes();
void cpu_empty_cache();

}  // namespace ts

// Storage: a block of memory on a device, shared by every view of it.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/device.h"

namespace ts {

struct Storage {
  // Owned allocation from the device allocator.
  Storage(int64_t nbytes, Device device);
  // Borrowed memory (NumPy, DLPack, ...): `release` runs exactly once when the last view dies.
  // Not resizable.
  Storage(void* data, int64_t nbytes, Device device, std::function<void()> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data = nullptr;
  int64_t nbytes = 0;
  Device device;
  bool readonly = false;
  bool pinned = false;  // page-locked host memory (fast, asynchronous device copies)
  // False once the memory is borrowed or exported (NumPy, buffer protocol, DLPack): resize_
  // then raises as PyTorch does instead of giving the tensor other memory (Note [Exported
  // storage] in python/py_buffer.h).
  bool resizable = true;
  // The shared-memory file (memfd) backing `data` once share_memory() moved it there or the
  // storage was mapped from another process's file; -1 otherwise (Note [Shared memory]).
  int shared_fd = -1;
  // Bumped by every in-place write through any view (autograd checks saved tensors against it).
  std::atomic<uint64_t> version{0};

  // Moves a CPU storage into an anonymous shared-memory file (memfd + mmap MAP_SHARED): every
  // view sees the move, the bytes are copied, the version is kept. A no-op once shared.
  void share_memory();
  // A storage mapping `nbytes` of the shared-memory file `fd` (received from another process);
  // it owns `fd` and closes it when the last view dies.
  static std::shared_ptr<Storage> from_shared_fd(int fd, int64_t nbytes);

 private:
  std::function<void()> release_;
  bool owned_ = false;
  // Tiny tensors (scalars, 4-element vectors) live inline: no second allocation.
  alignas(16) unsigned char inline_[32];
};

using StoragePtr = std::shared_ptr<Storage>;

}  // namespace ts

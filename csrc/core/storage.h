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
  // Bumped by every in-place write through any view (autograd checks saved tensors against it).
  std::atomic<uint64_t> version{0};

 private:
  std::function<void()> release_;
  bool owned_ = false;
  // Tiny tensors (scalars, 4-element vectors) live inline: no second allocation.
  alignas(16) unsigned char inline_[32];
};

using StoragePtr = std::shared_ptr<Storage>;

}  // namespace ts

#include "core/storage.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "core/cpu_allocator.h"
#include "core/device_backend.h"
#include "core/error.h"

namespace ts {

Storage::Storage(int64_t n, Device d) : nbytes(n), device(d) {
  if (!d.is_cpu()) {
    const std::string what = "a tensor on " + d.str();
    DeviceBackend& b = require_cuda(what.c_str());
    TS_CHECK(d.index < b.device_count(), RuntimeError, what, ": the device", " does not exist (",
             b.device_count(), " CUDA device(s) found)");
    data = n > 0 ? b.allocate(n, d) : nullptr;
    owned_ = true;
    return;
  }
  if (n <= static_cast<int64_t>(sizeof(inline_))) {
    data = inline_;
  } else {
    data = cpu_alloc(n);
    owned_ = true;
  }
}

Storage::Storage(void* p, int64_t n, Device d, std::function<void()> release)
    : data(p), nbytes(n), device(d), resizable(false), release_(std::move(release)) {}

Storage::~Storage() {
  if (owned_) {
    if (device.is_cpu())
      cpu_free(data, nbytes);
    else if (data)
      cuda_backend()->deallocate(data);
  }
  if (release_) release_();
}

// Note [Shared memory]: share_memory_() moves a CPU storage into an anonymous memfd mapped
// MAP_SHARED (as PyTorch's file_descriptor strategy): a forked child inherits the mapping, and
// tessera.multiprocessing sends the fd itself (SCM_RIGHTS through multiprocessing.reduction) to
// other processes, which map the same pages. A memfd has no name in /dev/shm, so nothing leaks
// when a process dies; the memory is freed once the last mapping and fd are gone. Memory
// exported before the move (NumPy, buffer protocol, DLPack) stays valid until the storage dies.
namespace {

[[noreturn]] void shm_fail(const char* what, int64_t nbytes) {
  const int e = errno;
  throw RuntimeError(str("share_memory_: ", what, " failed for ", nbytes,
                         " bytes: ", std::strerror(e),
                         "; hint: check the free space of /dev/shm and the open-file limit"));
}

// At least one page is mapped so that an empty storage also has a file to send.
size_t map_length(int64_t nbytes) {
  TS_CHECK(nbytes >= 0 && static_cast<uint64_t>(nbytes) <=
                              static_cast<uint64_t>(std::numeric_limits<off_t>::max()),
           ValueError, "share_memory_: a storage of ", nbytes, " bytes cannot be mapped");
  return nbytes > 0 ? static_cast<size_t>(nbytes) : 1;
}

// Maps the file; on failure closes `fd` (both callers own it) and raises.
void* map_fd(int fd, int64_t nbytes) {
  void* p = mmap(nullptr, map_length(nbytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    close(fd);
    errno = err;
    shm_fail("mmap", nbytes);
  }
  return p;
}

int new_shm_file(int64_t nbytes) {
  const size_t len = map_length(nbytes);
#if defined(__linux__)
  const int fd = memfd_create("tessera_shm", MFD_CLOEXEC);
  if (fd < 0) shm_fail("memfd_create", nbytes);
#else
  // Elsewhere: a POSIX shm object unlinked at once (it has no name left to leak).
  const std::string name = str("/tessera_", getpid(), "_", reinterpret_cast<uintptr_t>(&len));
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) shm_fail("shm_open", nbytes);
  shm_unlink(name.c_str());
#endif
  if (ftruncate(fd, static_cast<off_t>(len)) != 0) {
    const int e = errno;
    close(fd);
    errno = e;
    shm_fail("ftruncate", nbytes);
  }
  return fd;
}

std::function<void()> unmapper(void* p, int64_t nbytes, int fd) {
  const size_t len = map_length(nbytes);
  return [p, len, fd] {
    munmap(p, len);
    close(fd);
  };
}

}  // namespace

void Storage::share_memory() {
  if (shared_fd >= 0 || !device.is_cpu()) return;
  const int fd = new_shm_file(nbytes);
  void* p = map_fd(fd, nbytes);
  if (nbytes > 0) std::memcpy(p, data, static_cast<size_t>(nbytes));
  // The old memory: freed now, or (exported or borrowed) when the storage dies.
  std::function<void()> old = std::move(release_);
  if (owned_) {
    void* q = data;
    const int64_t n = nbytes;
    std::function<void()> borrowed = std::move(old);
    old = [q, n, borrowed] {
      cpu_free(q, n);
      if (borrowed) borrowed();
    };
  }
  std::function<void()> unmap = unmapper(p, nbytes, fd);
  if (resizable) {
    if (old) old();
    release_ = std::move(unmap);
  } else {
    release_ = [unmap, old] {
      unmap();
      if (old) old();
    };
  }
  owned_ = false;
  pinned = false;
  data = p;
  shared_fd = fd;
}

std::shared_ptr<Storage> Storage::from_shared_fd(int fd, int64_t nbytes) {
  void* p = map_fd(fd, nbytes);
  auto s = std::make_shared<Storage>(p, nbytes, Device{}, unmapper(p, nbytes, fd));
  s->shared_fd = fd;
  return s;
}

}  // namespace ts

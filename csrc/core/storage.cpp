#include "core/storage.h"

#include <cstdlib>
#include <new>

#include "core/error.h"

namespace ts {

void* cpu_alloc(int64_t nbytes) {
  void* p = nullptr;
  if (nbytes == 0) nbytes = 1;
  if (posix_memalign(&p, 64, static_cast<size_t>(nbytes)) != 0 || p == nullptr)
    throw std::bad_alloc();
  return p;
}

void cpu_free(void* p, int64_t) { std::free(p); }

Storage::Storage(int64_t n, Device d) : nbytes(n), device(d) {
  TS_CHECK(d.is_cpu(), RuntimeError, "storage: device ", d.str(),
           " is not available in this build (CUDA backend not built)");
  if (n <= static_cast<int64_t>(sizeof(inline_))) {
    data = inline_;
  } else {
    data = cpu_alloc(n);
    owned_ = true;
  }
}

Storage::Storage(void* p, int64_t n, Device d, std::function<void()> release)
    : data(p), nbytes(n), device(d), release_(std::move(release)) {}

Storage::~Storage() {
  if (owned_) cpu_free(data, nbytes);
  if (release_) release_();
}

}  // namespace ts

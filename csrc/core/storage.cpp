#include "core/storage.h"

#include <cstdlib>
#include <new>

#include "core/cpu_allocator.h"
#include "core/error.h"

namespace ts {

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

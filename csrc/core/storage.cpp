#include "core/storage.h"

#include <cstdlib>
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

}  // namespace ts

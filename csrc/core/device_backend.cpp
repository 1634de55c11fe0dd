#include "core/device_backend.h"

#include "core/error.h"
#include "core/no_cuda_error.h"

namespace ts {

namespace {
DeviceBackend*& slot() {
  static DeviceBackend* b = nullptr;
  return b;
}
}  // namespace

DeviceBackend* cuda_backend() { return slot(); }
void register_cuda_backend(DeviceBackend* b) { slot() = b; }

DeviceBackend& require_cuda(const char* what) {
  DeviceBackend* b = slot();
  if (!b)
    throw CudaNotCompiledError(str(what, ": CUDA is not available: tessera was not compiled ",
                                   "with CUDA enabled (it was built without nvcc/cuBLAS; rebuild ",
                                   "with -DTESSERA_CUDA=ON on a machine with the CUDA toolkit)"));
  if (!b->available())
    throw RuntimeError(str(what, ": CUDA is not available: no CUDA device was found (the CUDA ",
                           "backend is built, but the driver reports no GPU)"));
  return *b;
}

}  // namespace ts

namespace ts {
bool& cuda_matmul_allow_tf32() {
  static bool allow = false;
  return allow;
}
bool& cuda_gemm_tuning() {
  static bool on = true;
  return on;
}
}  // namespace ts

namespace ts {
void require_host(const char* op, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors)
    if (t->defined() && !t->device().is_cpu())
      throw NotImplementedError(str(op, ": not implemented for tensors on ", t->device().str(),
                                    " yet; hint: compute on the CPU (x.cpu()) and move the ",
                                    "result back with .to(device)"));
}
}  // namespace ts

// cuSOLVER plumbing shared by the CUDA linalg kernels: the dense handle (one per device and
// thread, bound to the current stream at each use), status checks, device workspaces from the
// caching allocator, and the per-batch `info` read back to the host.
#pragma once
#include <cusolverDn.h>

#include <cstdint>

#include "core/tensor.h"
#include "ops/linalg_ext.h"

namespace ts::cuda {

// The calling thread's cusolverDn handle for `d`, bound to d's current stream. Makes d the
// current device for cuSOLVER's internal allocations only through the caller's DeviceGuard.
cusolverDnHandle_t cusolver_handle(Device d);

// Throws RuntimeError("<op>: cuSOLVER failed in <what> with <status>") unless s is SUCCESS.
void check_cusolver(cusolverStatus_t s, const char* what, const char* op);

// A device buffer of `count` elements of dtype (at least one, so pointers are never null);
// freed back to the stream-ordered cache when the Tensor dies, which is safe right after the
// calls using it were enqueued.
Tensor workspace(int64_t count, DType dtype, Device d);

// Copies the (B) int32 device `info` into the host Info that the op layer turns into errors
// (a synchronization, as LAPACK's info is on the CPU path).
void read_info(const Tensor& info, Info& out);

// A dimension for cuSOLVER's 32-bit ints; a leading dimension is at least 1.
int dim32(int64_t v, const char* op);
inline int ld32(int64_t v, const char* op) { return dim32(v < 1 ? 1 : v, op); }

}  // namespace ts::cuda

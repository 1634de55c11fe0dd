#include "ops/tensor_convert.h"

#include "autograd/record_tensor.h"
#include "core/device_backend.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/memory_format.h"
#include "ops/views.h"

namespace ts {

Tensor to_device_op(const Tensor& x, Device device, bool non_blocking, const char* op) {
  if (x.device() == device) return x;
  if (!device.is_cpu()) require_cuda(str(op, ": device '", device.str(), "'").c_str());
  // preserve_format, as PyTorch's x.to(device) / .cuda() / .cpu(): a dense transposed or
  // channels-last tensor arrives with its strides (copy_across_devices moves its bytes as they
  // are), a strided one dense in its stride order (internal moves, to_device, and non-blocking
  // moves to pinned host memory stay contiguous).
  Tensor out;
  const Strides st =
      x.is_contiguous() || (non_blocking && device.is_cpu()) ? Strides{} : preserved_strides(x);
  if (st.empty()) {
    out = to_device(x, device, non_blocking);
  } else {
    out = empty_preserving_layout(x, x.dtype(), device);
    copy_(out, x, non_blocking);
  }
  autograd::record_to_device(x, out);
  return out;
}

Tensor to_op(const Tensor& x, std::optional<Device> device, std::optional<DType> dtype,
             bool non_blocking, bool copy, MemoryFormat fmt) {
  Tensor out = x;
  if (device && *device != out.device()) out = to_device_op(out, *device, non_blocking);
  if (dtype && *dtype != out.dtype())
    out = astype_op(out, *dtype, true, fmt);  // one copy, straight into fmt's layout
  else
    out = to_memory_format(out, fmt, "to");
  return copy && out.impl() == x.impl() ? clone_op(out, fmt) : out;
}

Tensor adjoint_op(const Tensor& x, const char* op) {
  TS_CHECK(x.ndim() >= 2, ValueError, op,
           ": expected a matrix or a batch of matrices (2 or more dimensions), got a ", x.ndim(),
           "-d tensor of shape ", shape_str(x.shape()), "; hint: unsqueeze a 1-d tensor first");
  const Tensor t = matrix_transpose(x);
  return is_complex(x.dtype()) ? conj(t) : t;
}

Tensor H_op(const Tensor& x) {
  TS_CHECK(x.ndim() == 0 || x.ndim() == 2, ValueError,
           "H: expected a matrix (2-d) or a 0-d tensor, got a ", x.ndim(), "-d tensor of shape ",
           shape_str(x.shape()), "; hint: x.mH transposes the last two dims of a batch");
  if (x.ndim() == 2) return adjoint_op(x, "H");
  return is_complex(x.dtype()) ? conj(x) : x;
}

}  // namespace ts

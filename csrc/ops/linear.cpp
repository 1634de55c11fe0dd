#include "ops/linear.h"

#include "ops/arithmetic.h"
#include "ops/linalg.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(LinearBiasKernel, linear_bias_stub, "linear");

namespace {

// The fused kernel takes one dtype and device throughout, a 2-D-collapsible x and packed
// W and b; anything else (promotion, broadcasting biases, odd strides) takes the general path.
bool fusable(const Tensor& x, const Tensor& w, const Tensor& b) {
  const DType dt = x.dtype();
  if (!linear_bias_stub.table[static_cast<int>(x.device().type)]) return false;
  if (w.dtype() != dt || b.dtype() != dt || w.device() != x.device() || b.device() != x.device())
    return false;
  if (x.ndim() < 1 || w.ndim() != 2 || b.ndim() != 1 || b.dim(0) != w.dim(0)) return false;
  if (x.dim(x.ndim() - 1) != w.dim(1) || x.numel() == 0 || w.numel() == 0) return false;
  return x.is_contiguous() && w.is_contiguous() && b.is_contiguous();
}

}  // namespace

Tensor linear_bias(const Tensor& x, const Tensor& w, const Tensor& b) {
  if (fusable(x, w, b)) {
    const int64_t k = w.dim(1), n = w.dim(0), m = x.numel() / k;
    Shape out_shape = x.shape();
    out_shape[out_shape.size() - 1] = n;
    Tensor out = Tensor::empty(out_shape, x.dtype(), x.device());
    if (linear_bias_stub.get(x.device())(reshape(out, Shape{m, n}), reshape(x, Shape{m, k}), w, b))
      return out;
  }
  return add(matmul(x, matrix_transpose(w)), b);
}

}  // namespace ts

#include "ops/nn/softmax.h"

#include "autograd/grad_mode.h"
#include "autograd/record_nn.h"
#include "core/error.h"
#include "ops/autocast_policy.h"
#include "ops/copy.h"
#include "ops/nn_fused.h"
#include "ops/views.h"

namespace ts::nn {

namespace {
// (dim moved last) -> kernel -> (moved back), contiguous throughout.
Tensor to_last(const Tensor& x, int64_t dim) {
  return dim == x.ndim() - 1 ? x : moveaxis(x, Shape{dim}, Shape{-1});
}
Tensor from_last(const Tensor& y, int64_t dim) {
  return dim == y.ndim() - 1 ? y : contiguous(moveaxis(y, Shape{-1}, Shape{dim}));
}
}  // namespace

Tensor softmax_values(const Tensor& x, int64_t dim, bool log) {
  autograd::GradModeGuard no_grad(false);
  if (x.ndim() == 0) return reshape(softmax_last(reshape(x, Shape{1}), log), Shape{});
  return from_last(softmax_last(to_last(x, dim), log), dim);
}

Tensor softmax_backward_values(const Tensor& y, const Tensor& gy, int64_t dim, bool log) {
  autograd::GradModeGuard no_grad(false);
  if (y.ndim() == 0)
    return reshape(softmax_last_backward(reshape(y, Shape{1}), reshape(gy, Shape{1}), log),
                   Shape{});
  return from_last(softmax_last_backward(contiguous(to_last(y, dim)),
                                         contiguous(to_last(gy, dim)), log),
                   dim);
}

Tensor softmax(const Tensor& input, std::optional<int64_t> dim, std::optional<DType> dtype,
               bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  Tensor x = input;
  // F.softmax is this op's binding, so the calling Python frame decides whether this is a
  // nested call (Note [Autocast]).
  const autocast::OpScope scope(log ? (dtype ? TS_AUTOCAST_POLICY_DTYPE("log_softmax")
                                             : TS_AUTOCAST_POLICY("log_softmax"))
                                    : (dtype ? TS_AUTOCAST_POLICY_DTYPE("softmax")
                                             : TS_AUTOCAST_POLICY("softmax")),
                                x);
  if (dtype) x = astype_op(x, *dtype, /*copy=*/false);
  TS_CHECK(!is_complex(x.dtype()), TypeError, op,
           ": expected a real (floating or integer) input, got ", dtype_name(x.dtype()));
  if (!is_floating(x.dtype())) x = astype_op(x, DType::Float32, /*copy=*/false);
  const int64_t nd = x.ndim();
  int64_t d = dim ? *dim : (nd == 0 || nd == 1 || nd == 3 ? 0 : 1);
  const int64_t rank = nd > 0 ? nd : 1;
  TS_CHECK(d >= -rank && d < rank, IndexError, op, ": dim ", d, " is out of range for a ", nd,
           "-D tensor of shape ", shape_str(x.shape()), " (expected in [", -rank, ", ", rank - 1,
           "])");
  if (d < 0) d += rank;
  Tensor y = softmax_values(x, d, log);
  autograd::record_softmax(x, y, d, log);
  return y;
}

Tensor attention_softmax(const Tensor& scores, double scale, bool causal) {
  Tensor y;
  {
    autograd::GradModeGuard no_grad(false);
    y = ts::attention_softmax(scores, scale, causal);
  }
  autograd::record_attention_softmax(scores, y, scale, causal);
  return y;
}

}  // namespace ts::nn

#include "ops/nn/dropout.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/random.h"

namespace ts::nn {

namespace {

constexpr double kSeluAlphaPrime = 1.7580993408473766;  // -scale * alpha of SELU

Tensor scalar(double v) { return wrap_scalar(Scalar::from_double(v)); }

// The mask of `shape` (one value per dropped unit, broadcasting against x): (keep factor in x's
// dtype, 0 or 1/(1-p); bool keep mask), drawn by the fused dropout op from a tensor of ones.
std::pair<Tensor, Tensor> unit_mask(const Tensor& x, const Shape& shape, double p, Generator* g) {
  autograd::GradModeGuard no_grad(false);
  Tensor ones = Tensor::empty(shape, x.dtype(), x.device());
  fill_(ones, Scalar::from_double(1.0));
  return ts::dropout(ones, p, g ? *g : default_generator(), true);
}

// x's shape with every dim but the kept leading ones set to 1.
Shape channel_shape(const Tensor& x, int64_t kept) {
  Shape s(x.ndim(), 1);
  for (int64_t d = 0; d < kept; ++d) s[d] = x.dim(d);
  return s;
}

// y written into x (autograd's in-place rules: a leaf that requires grad is refused, x takes
// y's history), or y itself.
Tensor finish(const Tensor& x, const Tensor& y, bool inplace, const char* op) {
  if (!inplace) return y;
  autograd::check_inplace(x, op);
  assign_inplace_result(op, x, y);
  return x;
}

}  // namespace

void check_dropout_p(double p, const char* op) {
  TS_CHECK(p >= 0 && p <= 1, ValueError, op, ": probability has to be between 0 and 1, but got ",
           p);
}

Tensor feature_dropout(const Tensor& x, double p, bool training, bool inplace, int nsp,
                       const char* op, Generator* g) {
  check_dropout_p(p, op);
  // dropout1d and dropout3d refuse other ranks (PyTorch: an error, and a deprecation warning
  // for dropout3d); dropout2d takes any (PyTorch warns).
  if (nsp == 1 || nsp == 3)
    TS_CHECK(x.ndim() == nsp + 1 || x.ndim() == nsp + 2, ValueError, op, ": expected a ", nsp + 1,
             "-D or ", nsp + 2, "-D input (N, C, *spatial) or (C, *spatial), got shape ",
             shape_str(x.shape()), "; hint: dropout1d/2d/3d take 1, 2 or 3 spatial dims");
  const bool batched = nsp == 0 || x.ndim() == nsp + 2;
  TS_CHECK(x.ndim() >= (batched ? 2 : 1), ValueError, op,
           ": feature dropout needs an input of at least ", batched ? 2 : 1,
           " dims (N, C, *) or (C, *), got shape ", shape_str(x.shape()));
  if (!training || p == 0) return x;
  const Tensor keep = unit_mask(x, channel_shape(x, batched ? 2 : 1), p, g).first;
  return finish(x, multiply(x, keep), inplace, op);
}

Tensor alpha_dropout(const Tensor& x, double p, bool training, bool inplace, bool feature,
                     const char* op, Generator* g) {
  check_dropout_p(p, op);
  if (!training || p == 0 || x.numel() == 0) return x;
  Tensor y;
  if (p == 1) {
    y = multiply(x, scalar(0.0));
  } else {
    TS_CHECK(!feature || x.ndim() >= 2, ValueError, op,
             ": expected an input of at least 2 dims (N, C, *), got shape ", shape_str(x.shape()));
    const Shape shape = feature ? channel_shape(x, 2) : x.shape();
    const double a = 1.0 / std::sqrt((kSeluAlphaPrime * kSeluAlphaPrime * p + 1) * (1 - p));
    Tensor scale, shift;
    {
      // kept: a x + alpha a p; dropped: alpha a (p - 1)
      autograd::GradModeGuard no_grad(false);
      const Tensor kept = astype(unit_mask(x, shape, p, g).second, x.dtype(), false);
      scale = multiply(kept, scalar(a));
      shift = multiply(add(kept, scalar(p - 1)), scalar(kSeluAlphaPrime * a));
    }
    y = add(multiply(x, scale), shift);
  }
  return finish(x, y, inplace, op);
}

}  // namespace ts::nn

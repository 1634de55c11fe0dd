// PyTorch's pointwise activations: activation_pointwise.h.
//
// Note [Activation kinks]
// Each activation is written with `where` on the same test as PyTorch's backward kernel, so the
// gradient at a kink (x == 0, the hardtanh bounds, +-3 of hardswish) and at NaN is PyTorch's,
// and so that no branch `where` discards can overflow: an inf there would turn its zero
// gradient into NaN (0 * inf). The second derivative follows from the same ops.
//
// Note [In-place activations]
// f(x, inplace=True) checks x may be written (a leaf that requires grad raises, as PyTorch),
// computes y = f(x) -- from a recorded clone of x when a graph is being recorded, so the values
// y's backward saved are not the ones the write overwrites -- and writes y into x with PyTorch's
// in-place rules (assign_inplace_result: same shape, a dtype x can hold; x takes y's history).
#include "ops/nn/activation_pointwise.h"

#include "autograd/autocast.h"
#include "autograd/function.h"
#include "autograd/meta.h"
#include "autograd/record.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/default_dtype.h"
#include "ops/math.h"
#include "ops/nn/activation.h"
#include "ops/nn/activation_fused.h"
#include "ops/nn/operand_dtype.h"
#include "ops/nn/softmax.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::nn {

namespace {

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }
Tensor U(const ElementwiseDef& d, const Tensor& x) { return unary_op(d, x); }
Tensor B(const ElementwiseDef& d, const Tensor& a, const Tensor& b) { return binary_op(d, a, b); }
Tensor B(const ElementwiseDef& d, const Tensor& a, double b) { return binary_op(d, a, sc(b)); }

// Real floating inputs run the fused kernels (Note [Fused activations]); integer and complex
// ones the composite forms below.
bool fused(const Tensor& x) { return is_floating(x.dtype()); }
using act::Act;

// Note [In-place activations]
// Note [Activations under autocast]: PyTorch runs these activations as single kernels on no
// autocast list, so they keep a float16/bfloat16 input's dtype; their elementwise insides
// (exp, expm1, pow are on the float32 list) must not autocast one by one. Each entry point
// suspends autocast (softplus, on the float32 list, applies its own policy instead).
template <class Fn>
Tensor apply(const char* op, const Tensor& x, bool inplace, Fn fn) {
  const autocast::Suspended no_autocast;
  if (!inplace) return fn(x);
  autograd::check_inplace(x, op);
  const Tensor y = fn(autograd::needs_grad({&x}) ? clone_op(x) : x);
  assign_inplace_result(op, x, y);
  return x;
}

// alpha * expm1(x / scale) for x <= 0, else x; x > 0 is kept out of expm1 (Note [Activation
// kinks]); x == 0 takes the negative branch's derivative alpha / scale * scale, NaN the identity's.
Tensor elu_value(const Tensor& x, double alpha, double scale) {
  const Tensor neg = B(less_equal_def, x, 0.0);
  Tensor inner = where(neg, x, sc(0.0));
  if (scale != 1.0) inner = divide(inner, sc(scale));
  return where(neg, multiply(sc(alpha), U(expm1_def, inner)), x);
}

void check_not_bool(const Tensor& x, const char* op) {
  TS_CHECK(!is_bool(x.dtype()), TypeError, op, ": boolean inputs are not supported (got ",
           dtype_name(x.dtype()), " of shape ", shape_str(x.shape()),
           "); hint: cast the input to a floating dtype first");
}

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

}  // namespace

Tensor sigmoid(const Tensor& input) {
  const autocast::Suspended no_autocast;  // Note [Activations under autocast]
  const Tensor x = is_floating(input.dtype()) || is_complex(input.dtype())
                       ? input
                       : astype_op(input, default_float_dtype(), false);
  if (fused(x)) return fused_activation(x, {Act::Sigmoid});
  // exp(-|x|) with -|x| as a where on the same test (abs has gradient 0 at 0, which would make
  // sigmoid'(0) 0 instead of 0.25); nothing overflows
  const Tensor pos = B(greater_equal_def, x, 0.0);
  const Tensor e = U(exp_def, where(pos, negative(x), x));
  const Tensor d = add(sc(1.0), e);
  return where(pos, divide(sc(1.0), d), divide(e, d));
}

Tensor logsigmoid(const Tensor& x) {
  const autocast::Suspended no_autocast;  // Note [Activations under autocast]
  // min(x, 0) - log1p(exp(-|x|)) with the kinks at 0 as wheres: the second derivative at 0 is
  // PyTorch's -1/4 (minimum / abs have none there)
  const Tensor pos = B(greater_equal_def, x, 0.0);
  return subtract(where(pos, sc(0.0), x), U(log1p_def, U(exp_def, where(pos, negative(x), x))));
}

Tensor softplus(const Tensor& input, double beta, double threshold) {
  Tensor x = input;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("softplus"), x);
  if (fused(x)) return fused_activation(x, {Act::Softplus, beta, threshold});
  const Tensor bx = multiply(x, sc(beta));
  // where (not minimum): at beta*x == threshold PyTorch takes the soft branch's derivative
  const Tensor above = B(greater_def, bx, threshold);
  const Tensor soft = divide(U(log1p_def, U(exp_def, where(above, sc(threshold), bx))), sc(beta));
  return where(above, x, soft);
}

Tensor softsign(const Tensor& x) {
  const autocast::Suspended no_autocast;  // Note [Activations under autocast]
  return divide(x, add(sc(1.0), U(abs_def, x)));
}

Tensor tanhshrink(const Tensor& x) {
  const autocast::Suspended no_autocast;  // Note [Activations under autocast]
  return subtract(x, U(tanh_def, x));
}

Tensor hardshrink(const Tensor& x, double lambd) {
  const autocast::Suspended no_autocast;  // Note [Activations under autocast]
  TS_CHECK(is_floating(x.dtype()), NotImplementedError, "hardshrink: not implemented for ",
           dtype_name(x.dtype()), " input of shape ", shape_str(x.shape()),
           "; hint: cast it to a floating dtype");
  // PyTorch's: NaN stays NaN with gradient 0 (its value comes through a detached branch)
  const Tensor outside = B(logical_or_def, B(greater_def, x, lambd), B(less_def, x, -lambd));
  const Tensor inside =
      B(logical_and_def, B(greater_equal_def, x, -lambd), B(less_equal_def, x, lambd));
  return where(outside, x, where(inside, sc(0.0), autograd::detach(x)));
}

Tensor softshrink(const Tensor& x, double lambd) {
  const autocast::Suspended no_autocast;  // Note [Activations under autocast]
  TS_CHECK(lambd >= 0, ValueError, "softshrink: lambda must be non-negative, got ", lambd,
           " (input ", dtype_name(x.dtype()), " of shape ", shape_str(x.shape()), ")");
  return where(B(greater_def, x, lambd), subtract(x, sc(lambd)),
               where(B(less_def, x, -lambd), add(x, sc(lambd)), multiply(x, sc(0.0))));
}

Tensor glu(const Tensor& x, int64_t dim) {
  const autocast::Suspended no_autocast;  // Note [Activations under autocast]
  TS_CHECK(x.ndim() > 0, ValueError,
           "glu: does not support 0-d input (the halving dimension must have an even size); "
           "hint: reshape the input to at least 1-D");
  const int64_t d = normalize_axis(dim, x.ndim(), "glu");
  const int64_t n = x.dim(d);
  TS_CHECK(n % 2 == 0, ValueError, "glu: halving dimension ", dim, " of input shape ",
           shape_str(x.shape()), " has size ", n, ", which must be even");
  return multiply(slice(x, d, 0, n / 2, 1), sigmoid(slice(x, d, n / 2, n, 1)));
}

Tensor prelu(const Tensor& x, const Tensor& weight) {
  const autocast::Suspended no_autocast;  // Note [Activations under autocast]
  check_same_dtype("prelu", "input", x, {{"weight", &weight}});
  TS_CHECK(weight.ndim() <= 1, ValueError, "prelu: weight must be 0-D or 1-D, got shape ",
           shape_str(weight.shape()));
  const int64_t n = weight.numel();
  Tensor w = weight;
  if (n != 1) {
    const int64_t channels = x.ndim() >= 2 ? x.dim(1) : 1;
    TS_CHECK(n == channels, ValueError, "prelu: weight of ", n, " elements does not match the ",
             channels, " channels of input shape ", shape_str(x.shape()), " (expected 1 or ",
             channels, ")");
    if (x.ndim() >= 2) {
      Shape s{n};
      for (int64_t i = 2; i < x.ndim(); ++i) s.push_back(1);
      w = reshape(weight, s);
    }
  } else if (weight.ndim() == 1 && x.ndim() == 0) {
    w = reshape(weight, Shape{});
  }
  return where(B(greater_def, x, 0.0), x, multiply(w, x));
}

Tensor softmax2d(const Tensor& x) {
  TS_CHECK(x.ndim() == 3 || x.ndim() == 4, ValueError,
           "Softmax2d: expected a 3-D or 4-D input, got shape ", shape_str(x.shape()));
  return softmax(x, -3, std::nullopt, false);
}

Tensor relu(const Tensor& x, bool inplace) { return relu(x, inplace, "relu"); }

Tensor relu(const Tensor& x, bool inplace, const char* op) {
  check_not_bool(x, op);
  return apply(op, x, inplace, [](const Tensor& v) { return relu(v); });
}

namespace {
// hardtanh, and relu6 naming itself in errors
Tensor hardtanh_as(const char* op, const Tensor& x, double min_val, double max_val, bool inplace) {
  TS_CHECK(min_val <= max_val, ValueError, op, ": min_val cannot be greater than max_val (",
           min_val, " > ", max_val, ")");
  // strict tests route the bounds to the constant branches (gradient 0 there, as PyTorch's
  // hardtanh_backward); NaN stays NaN and keeps its gradient (PyTorch's scalar and CUDA rule;
  // its vectorized CPU loop gives 0)
  return apply(op, x, inplace, [&](const Tensor& v) {
    if (fused(v)) return fused_activation(v, {Act::Hardtanh, min_val, max_val});
    return where(B(less_equal_def, v, min_val), sc(min_val),
                 where(B(greater_equal_def, v, max_val), sc(max_val), v));
  });
}

// leaky_relu, and eval-mode rrelu naming itself in errors
Tensor leaky_relu_as(const char* op, const Tensor& x, double negative_slope, bool inplace) {
  return apply(op, x, inplace, [&](const Tensor& v) {
    if (fused(v)) return fused_activation(v, {Act::LeakyRelu, negative_slope});
    return where(B(greater_def, v, 0.0), v, multiply(v, sc(negative_slope)));
  });
}
}  // namespace

Tensor hardtanh(const Tensor& x, double min_val, double max_val, bool inplace) {
  return hardtanh_as("hardtanh", x, min_val, max_val, inplace);
}

Tensor relu6(const Tensor& x, bool inplace) { return hardtanh_as("relu6", x, 0.0, 6.0, inplace); }

Tensor leaky_relu(const Tensor& x, double negative_slope, bool inplace) {
  return leaky_relu_as("leaky_relu", x, negative_slope, inplace);
}

Tensor elu(const Tensor& x, double alpha, bool inplace) {
  return apply("elu", x, inplace, [&](const Tensor& v) {
    return fused(v) ? fused_activation(v, {Act::Elu, alpha, 1.0, 1.0}) : elu_value(v, alpha, 1.0);
  });
}

Tensor celu(const Tensor& x, double alpha, bool inplace) {
  return apply("celu", x, inplace, [&](const Tensor& v) {
    return fused(v) ? fused_activation(v, {Act::Elu, alpha, 1.0, alpha})
                    : elu_value(v, alpha, alpha);
  });
}

Tensor selu(const Tensor& x, bool inplace) {
  return apply("selu", x, inplace, [](const Tensor& v) {
    if (fused(v)) return fused_activation(v, {Act::Elu, kSeluAlpha, kSeluScale, 1.0});
    return multiply(sc(kSeluScale), elu_value(v, kSeluAlpha, 1.0));
  });
}

Tensor silu(const Tensor& x, bool inplace) {
  return apply("silu", x, inplace, [](const Tensor& v) {
    return fused(v) ? fused_activation(v, {Act::Silu}) : multiply(v, sigmoid(v));
  });
}

Tensor mish(const Tensor& x, bool inplace) {
  return apply("mish", x, inplace, [](const Tensor& v) {
    return fused(v) ? fused_activation(v, {Act::Mish})
                    : multiply(v, U(tanh_def, softplus(v, 1.0, 20.0)));
  });
}

Tensor hardsigmoid(const Tensor& x, bool inplace) {
  // clamp(x/6 + 1/2, 0, 1); gradient 1/6 where -3 < x < 3, else 0 (NaN included: its value
  // comes through a detached branch), PyTorch's hardsigmoid_backward
  return apply("hardsigmoid", x, inplace, [](const Tensor& v) {
    if (fused(v)) return fused_activation(v, {Act::Hardsigmoid});
    const Tensor inside = B(logical_and_def, B(greater_def, v, -3.0), B(less_def, v, 3.0));
    const Tensor lin = add(divide(v, sc(6.0)), sc(0.5));
    if (!is_floating(v.dtype()))
      return where(B(less_equal_def, lin, 0.0), sc(0.0),
                   where(B(greater_equal_def, lin, 1.0), sc(1.0), lin));
    const Tensor outside =
        where(B(less_equal_def, v, -3.0), sc(0.0),
              where(B(greater_equal_def, v, 3.0), sc(1.0), autograd::detach(lin)));
    return where(inside, lin, outside);
  });
}

Tensor hardswish(const Tensor& x, bool inplace) {
  // x * clamp(x + 3, 0, 6) / 6; gradient 0 for x <= -3, x/3 + 1/2 for -3 < x < 3, 1 for x >= 3
  // (NaN and +inf included), PyTorch's hardswish_backward
  return apply("hardswish", x, inplace, [](const Tensor& v) {
    if (fused(v)) return fused_activation(v, {Act::Hardswish});
    if (!is_floating(v.dtype())) {
      const Tensor c = add(v, sc(3.0));
      const Tensor r6 = where(B(less_equal_def, c, 0.0), sc(0.0),
                              where(B(greater_equal_def, c, 6.0), sc(6.0), c));
      return divide(multiply(v, r6), sc(6.0));
    }
    // x * 0 below -3 keeps PyTorch's values there (-0, NaN at -inf) with gradient 0; the
    // middle branch sees only -3 < x < 3 (Note [Activation kinks])
    const Tensor low = B(less_equal_def, v, -3.0), mid = B(less_def, v, 3.0);
    const Tensor m = where(B(logical_and_def, B(greater_def, v, -3.0), mid), v, sc(0.0));
    return where(low, multiply(v, sc(0.0)),
                 where(mid, divide(multiply(m, add(m, sc(3.0))), sc(6.0)), v));
  });
}

Tensor threshold(const Tensor& x, double threshold, double value, bool inplace) {
  return apply("threshold", x, inplace, [&](const Tensor& v) {
    return where(B(less_equal_def, v, threshold), sc(value), v);
  });
}

Tensor rrelu(const Tensor& x, double lower, double upper, bool training, bool inplace,
             Generator* g) {
  TS_CHECK(0 <= lower && lower <= upper, ValueError,
           "rrelu: expected 0 <= lower <= upper, got lower=", lower, ", upper=", upper);
  if (!training) return leaky_relu_as("rrelu", x, (lower + upper) / 2, inplace);
  TS_CHECK(is_floating(x.dtype()), TypeError, "rrelu: training needs a floating input, got ",
           dtype_name(x.dtype()), " of shape ", shape_str(x.shape()));
  const Tensor slope = Tensor::empty(x.shape(), x.dtype(), x.device());
  uniform_(slope, lower, upper, g ? *g : default_generator());
  return apply("rrelu", x, inplace, [&](const Tensor& v) {
    return where(B(greater_def, v, 0.0), v, multiply(v, slope));
  });
}

}  // namespace ts::nn

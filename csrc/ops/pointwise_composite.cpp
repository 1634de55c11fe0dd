#include "ops/pointwise_composite.h"

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "autograd/record_inplace.h"
#include "core/error.h"
#include "core/scalar_range.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/default_dtype.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/rounding.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

namespace {

Tensor num(double v) { return wrap_scalar(Scalar::from_double(v)); }

// x itself when floating or complex, else x in the default float dtype (PyTorch's int -> float).
Tensor floating(const Tensor& x) {
  return is_inexact(x.dtype()) ? x : astype_op(x, default_float_dtype(), false);
}

void check_inexact(const char* op, const Tensor& x) {
  TS_CHECK(is_inexact(x.dtype()), RuntimeError, op, ": not implemented for ", dtype_name(x.dtype()),
           " (input of shape ", shape_str(x.shape()),
           "); hint: convert the input to a floating dtype first, e.g. x.float()");
}

// The broadcast shape of the operands, checked up front so a mismatch names `op`.
void check_broadcast(const char* op, std::initializer_list<const Tensor*> ts) {
  Shape s;
  for (const Tensor* t : ts) s = broadcast_shapes(s, t->shape(), op);
}

Tensor scaled(const Scalar& value, const Tensor& t) {
  const bool one = (value.kind == ScalarKind::Int && !value.is_u64 && value.i == 1);
  return one ? t : multiply(wrap_scalar(value), t);
}

}  // namespace

namespace {

// clamp's input before clip: x broadcast to the tensor bounds' shape and promoted (an integer or
// bool x only) by PyTorch's rule (pointwise_composite.h).
Tensor clamp_input(const Tensor& x, const std::optional<Tensor>& lo,
                   const std::optional<Tensor>& hi, const char* op) {
  Tensor in = x;
  Shape shape = x.shape();
  for (const std::optional<Tensor>* b : {&lo, &hi}) {
    if (!*b || (*b)->is_wrapped_number()) continue;
    shape = broadcast_shapes(shape, (*b)->shape(), op);
  }
  if (shape != x.shape()) in = broadcast_to(in, shape);
  if (is_inexact(x.dtype())) return in;
  for (const std::optional<Tensor>* b : {&lo, &hi}) {
    if (!*b) continue;
    const Tensor& t = **b;
    if (t.is_wrapped_number()) {
      if (is_floating(t.dtype()) && !is_inexact(in.dtype()))
        in = astype_op(in, default_float_dtype(), false);
      else if (is_bool(in.dtype()) && is_integral(t.dtype()))
        in = astype_op(in, DType::Int64, false);  // bool with an int bound: int64 (torch)
    } else if (t.dtype() != in.dtype()) {
      in = astype_op(in, promote_types(in.dtype(), t.dtype()), false);
    }
  }
  return in;
}

// Nothing records and a is written in place by binary_op_ (Note [In-place without a
// temporary]): a is a contiguous, writable tensor with elements.
bool writes_directly(const Tensor& a, const Tensor& l, const Tensor& h) {
  if (a.numel() == 0 || !a.is_contiguous() || a.storage()->readonly) return false;
  for (const Tensor* t : {&l, &h})
    if (t->defined() && t->device() != a.device() && !(t->ndim() == 0 && t->device().is_cpu()))
      return false;
  return !autograd::needs_grad({&a, &l, &h});
}

}  // namespace

Tensor clamp(const Tensor& x, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi,
             const char* op) {
  return clip(clamp_input(x, lo, hi, op), lo, hi, op);
}

void clamp_(const Tensor& x, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi,
            const char* op) {
  autograd::check_inplace(x, op);
  const Tensor in = clamp_input(x, lo, hi, op);
  if (in.dtype() == x.dtype() && in.shape() == x.shape() && in_set(x.dtype(), kRealSet) &&
      (lo || hi)) {
    const Tensor l = lo ? clip_bound(x, *lo, "min", op) : Tensor();
    const Tensor h = hi ? clip_bound(x, *hi, "max", op) : Tensor();
    // max then min, each straight into x; a max bound that shares x's memory would see the
    // first write, so that case (and anything that records) takes clip's path.
    if (writes_directly(x, l, h) && !(lo && hi && may_overlap(x, h))) {
      if (lo) binary_op_(maximum_def, x, l, op);
      if (hi) binary_op_(minimum_def, x, h, op);
      return;
    }
  }
  assign_inplace_result(op, x, clip(in, lo, hi, op));
}

Tensor lerp(const Tensor& input, const Tensor& end, const Tensor& weight, const char* op) {
  check_inexact(op, input);
  check_broadcast(op, {&input, &end, &weight});
  return add(input, multiply(weight, subtract(end, input)));
}

void lerp_(const Tensor& x, const Tensor& end, const Tensor& weight, const char* op) {
  autograd::check_inplace(x, op);
  check_inexact(op, x);
  check_broadcast(op, {&x, &end, &weight});
  autograd::record_inplace(autograd::InplaceGrad::Lerp, x, end, weight, {}, op, [&] {
    binary_op_(kAdd, x, multiply(weight, subtract(end, x)), op);
  });
}

Tensor addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value,
               const char* op) {
  check_broadcast(op, {&input, &t1, &t2});
  return add(input, scaled(value, multiply(t1, t2)));
}

void addcmul_(const Tensor& x, const Tensor& t1, const Tensor& t2, const Scalar& value,
              const char* op) {
  autograd::check_inplace(x, op);
  check_broadcast(op, {&x, &t1, &t2});
  autograd::record_inplace(autograd::InplaceGrad::Addcmul, x, t1, t2, {value}, op,
                           [&] { binary_op_(kAdd, x, scaled(value, multiply(t1, t2)), op); });
}

namespace {
void check_addcdiv(const char* op, const Tensor& input, const Tensor& t1, const Tensor& t2) {
  TS_CHECK(is_inexact(t1.dtype()) || is_inexact(t2.dtype()), RuntimeError, op,
           ": integer division with addcdiv is no longer supported (tensor1 ",
           dtype_name(t1.dtype()), ", tensor2 ", dtype_name(t2.dtype()),
           "); hint: convert tensor1 or tensor2 to a floating dtype");
  check_broadcast(op, {&input, &t1, &t2});
}
}  // namespace

Tensor addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value,
               const char* op) {
  check_addcdiv(op, input, t1, t2);
  return add(input, scaled(value, divide(t1, t2)));
}

void addcdiv_(const Tensor& x, const Tensor& t1, const Tensor& t2, const Scalar& value,
              const char* op) {
  autograd::check_inplace(x, op);
  check_addcdiv(op, x, t1, t2);
  autograd::record_inplace(autograd::InplaceGrad::Addcdiv, x, t1, t2, {value}, op,
                           [&] { binary_op_(kAdd, x, scaled(value, divide(t1, t2)), op); });
}

Tensor nan_to_num(const Tensor& x, double nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  if (is_complex(x.dtype())) {
    const Tensor re = nan_to_num(real(x), nan, posinf, neginf);
    const Tensor im = nan_to_num(imag(x), nan, posinf, neginf);
    return add(re, multiply(im, wrap_scalar(Scalar::from_complex({0.0, 1.0}))));
  }
  if (!is_floating(x.dtype())) return clone_op(x);
  const double big = float_max(x.dtype());
  Tensor isinf_x, positive;
  {
    autograd::GradModeGuard no_grad(false);
    isinf_x = unary_op(isinf_def, x);
    positive = binary_op(greater_def, x, num(0.0));
  }
  Tensor out = where(unary_op(isnan_def, x), num(nan), x);
  out = where(binary_op(logical_and_def, isinf_x, positive), num(posinf.value_or(big)), out);
  return where(binary_op(logical_and_def, isinf_x, unary_op(logical_not_def, positive)),
               num(neginf.value_or(-big)), out);
}

Tensor isclose(const Tensor& x, const Tensor& y, double rtol, double atol, bool equal_nan,
               bool same_dtype) {
  TS_CHECK(!same_dtype || x.dtype() == y.dtype(), RuntimeError, "isclose: ", dtype_name(x.dtype()),
           " did not match ", dtype_name(y.dtype()), " (shapes ", shape_str(x.shape()), " and ",
           shape_str(y.shape()), "); hint: cast other to input's dtype first");
  check_broadcast("isclose", {&x, &y});
  autograd::GradModeGuard no_grad(false);  // a bool result: nothing to differentiate
  if (is_bool(x.dtype()) || (!is_inexact(x.dtype()) && rtol == 0 && atol == 0))
    return binary_op(equal_def, x, y);
  const Tensor xf = floating(x), yf = floating(y);
  const Tensor eq = binary_op(equal_def, xf, yf);
  const Tensor finite =
      binary_op(logical_and_def, unary_op(isfinite_def, xf), unary_op(isfinite_def, yf));
  const Tensor tol = add(num(atol), multiply(num(rtol), unary_op(abs_def, yf)));
  const Tensor close = binary_op(less_equal_def, unary_op(abs_def, subtract(xf, yf)), tol);
  Tensor out = binary_op(logical_or_def, eq, binary_op(logical_and_def, finite, close));
  if (equal_nan)
    out = binary_op(logical_or_def, out,
                    binary_op(logical_and_def, unary_op(isnan_def, xf), unary_op(isnan_def, yf)));
  return out;
}

bool allclose(const Tensor& x, const Tensor& y, double rtol, double atol, bool equal_nan,
              bool same_dtype) {
  const Tensor close = isclose(x, y, rtol, atol, equal_nan, same_dtype);
  return item(all(close, std::nullopt, false)).i != 0;
}

Tensor fmod(const Tensor& x, const Tensor& y) {
  check_broadcast("fmod", {&x, &y});
  const Tensor r = binary_op(remainder_def, x, y, "fmod");
  if (!is_inexact(r.dtype())) {
    bool zero;
    {
      autograd::GradModeGuard no_grad(false);
      zero = item(any(binary_op(equal_def, y, num(0.0)), std::nullopt, false)).i != 0;
    }
    TS_CHECK(!zero, ZeroDivisionError, "fmod: integer division by zero (input ",
             dtype_name(x.dtype()), " of shape ", shape_str(x.shape()), ", other ",
             dtype_name(y.dtype()), " of shape ", shape_str(y.shape()),
             "); hint: use a floating dtype to get NaN, or mask the zeros");
  }
  Tensor fix_sign;
  {
    autograd::GradModeGuard no_grad(false);
    const Tensor r_neg = binary_op(less_def, r, num(0.0));
    const Tensor x_neg = binary_op(less_def, x, num(0.0));
    fix_sign = binary_op(logical_and_def, binary_op(not_equal_def, r, num(0.0)),
                         binary_op(not_equal_def, r_neg, x_neg));
  }
  return where(fix_sign, subtract(r, y), r);
}

namespace {
constexpr double kPi = 3.14159265358979323846;
constexpr double kLn2 = 0.69314718055994530942;
}  // namespace

Tensor rsqrt(const Tensor& x) { return unary_op(reciprocal_def, unary_op(sqrt_def, floating(x))); }

Tensor exp2(const Tensor& x) { return pow(num(2.0), floating(x)); }

Tensor frac(const Tensor& x, const char* op) {
  TS_CHECK(is_floating(x.dtype()), RuntimeError, op, ": not implemented for ",
           dtype_name(x.dtype()), " (input of shape ", shape_str(x.shape()),
           "); hint: frac takes a floating tensor");
  return subtract(x, unary_op(trunc_def, x));
}

Tensor deg2rad(const Tensor& x) { return multiply(floating(x), num(kPi / 180.0)); }

Tensor rad2deg(const Tensor& x) { return multiply(floating(x), num(180.0 / kPi)); }

Tensor isposinf(const Tensor& x) {
  autograd::GradModeGuard no_grad(false);
  return binary_op(logical_and_def, unary_op(isinf_def, x), binary_op(greater_def, x, num(0.0)));
}

Tensor isneginf(const Tensor& x) {
  autograd::GradModeGuard no_grad(false);
  return binary_op(logical_and_def, unary_op(isinf_def, x), binary_op(less_def, x, num(0.0)));
}

Tensor sgn(const Tensor& x) {
  if (is_bool(x.dtype())) return clone_op(x);
  if (is_floating(x.dtype()))  // torch: sgn(NaN) == 0
    return where(unary_op(isnan_def, x), num(0.0), unary_op(sign_def, x));
  if (!is_complex(x.dtype())) return unary_op(sign_def, x);
  const Tensor a = unary_op(abs_def, x);
  Tensor zero;
  {
    autograd::GradModeGuard no_grad(false);
    zero = binary_op(equal_def, a, num(0.0));
  }
  return where(zero, num(0.0), divide(x, where(zero, num(1.0), a)));
}

Tensor angle(const Tensor& x) {
  if (is_complex(x.dtype())) return binary_op(atan2_def, imag(x), real(x));
  const Tensor f = floating(x);
  Tensor negative_x, nan_x;
  {
    autograd::GradModeGuard no_grad(false);
    negative_x = binary_op(less_def, f, num(0.0));
    nan_x = unary_op(isnan_def, f);
  }
  return where(negative_x, num(kPi), where(nan_x, f, num(0.0)));
}

Tensor isreal(const Tensor& x) {
  autograd::GradModeGuard no_grad(false);
  if (is_complex(x.dtype())) return binary_op(equal_def, imag(x), num(0.0));
  Tensor out = Tensor::empty(x.shape(), DType::Bool, x.device());
  fill_(out, Scalar::from_bool(true));
  return out;
}

namespace {
// fmax / fmin: x where (x >= y, or x <= y) or y is NaN, else y; integral operands: max / min.
Tensor nan_ignoring(const Tensor& x, const Tensor& y, bool is_max) {
  if (!is_floating(x.dtype()) && !is_floating(y.dtype()))
    return binary_op(is_max ? maximum_def : minimum_def, x, y);
  Tensor take_x;
  {
    autograd::GradModeGuard no_grad(false);
    take_x = binary_op(logical_or_def, binary_op(is_max ? greater_equal_def : less_equal_def, x, y),
                       unary_op(isnan_def, y));
  }
  return where(take_x, x, y);
}
}  // namespace

Tensor fmax(const Tensor& x, const Tensor& y) {
  check_broadcast("fmax", {&x, &y});
  return nan_ignoring(x, y, true);
}

Tensor fmin(const Tensor& x, const Tensor& y) {
  check_broadcast("fmin", {&x, &y});
  return nan_ignoring(x, y, false);
}

Tensor logaddexp2(const Tensor& x, const Tensor& y) {
  check_broadcast("logaddexp2", {&x, &y});
  const Tensor ln2 = num(kLn2);
  return divide(binary_op(logaddexp_def, multiply(floating(x), ln2), multiply(floating(y), ln2)),
                ln2);
}

Tensor ldexp(const Tensor& x, const Tensor& y) {
  check_broadcast("ldexp", {&x, &y});
  return multiply(floating(x), pow(num(2.0), floating(y)));
}

Tensor heaviside(const Tensor& x, const Tensor& values, bool same_dtype, const char* op) {
  TS_CHECK(!same_dtype || values.dtype() == x.dtype(), RuntimeError, op, ": input (",
           dtype_name(x.dtype()), ") and values (", dtype_name(values.dtype()),
           ") must have the same dtype; hint: cast values with .to(input.dtype)");
  check_broadcast(op, {&x, &values});
  const Tensor one = scalar_tensor(Scalar::from_int(1), x.dtype());
  const Tensor zero = scalar_tensor(Scalar::from_int(0), x.dtype());
  Tensor at_zero, positive;
  {
    autograd::GradModeGuard no_grad(false);
    at_zero = binary_op(equal_def, x, zero);
    positive = binary_op(greater_def, x, zero);
  }
  return where(at_zero, values, where(positive, one, zero));
}

}  // namespace ts

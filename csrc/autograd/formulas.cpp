// Note [Backward formulas]: the one table of gradients. Each formula maps the gradients of an
// op's outputs to those of its inputs using tessera ops only, so backward runs on any device
// and is itself recorded under create_graph=True (double backward). Formulas may return
// gradients in the broadcast shape and compute dtype: FormulaNode sums and casts them back
// (Note [Sum back to input shape]). Complex inputs follow PyTorch's convention: for a
// holomorphic f, grad_in = grad_out * conj(f'(x)).
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "autograd/formulas_elementwise.h"
#include "autograd/function.h"
#include "autograd/record.h"
#include "autograd/view_writes.h"
#include "ops/arithmetic.h"
#include "ops/batch_norm.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/conv.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/cumulative.h"
#include "ops/indexing_advanced.h"
#include "ops/indexing_basic.h"
#include "ops/linalg.h"
#include "ops/linalg_ext.h"
#include "ops/manipulation.h"
#include "ops/math.h"
#include "ops/pool.h"
#include "ops/reduce.h"
#include "ops/rounding.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::autograd {

namespace {

// ---- small helpers over ops
Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }
Tensor zeros(const Shape& s, DType d, Device dev) {
  Tensor z = Tensor::empty(s, d, dev);
  fill_(z, Scalar::from_int(0));
  return z;
}
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype(), t.device()); }
Tensor ones_like(const Tensor& t) {
  Tensor o = Tensor::empty(t.shape(), t.dtype(), t.device());
  fill_(o, Scalar::from_int(1));
  return o;
}
Tensor mul(const Tensor& a, const Tensor& b) { return multiply(a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return divide(a, b); }
Tensor U(const ElementwiseDef& d, const Tensor& x) { return unary_op(d, x); }
Tensor B(const ElementwiseDef& d, const Tensor& a, const Tensor& b) { return binary_op(d, a, b); }
// grad * conj(derivative): the chain rule for holomorphic (and real) functions.
Tensor chain(const Tensor& g, const Tensor& d) { return mul(g, conj(d)); }
Tensor as_float_mask(const Tensor& m, DType d) { return astype(m, d, false); }

using G = const variable_list&;
#define FORMULA(name) variable_list name(const BackwardCtx& c, G g)

// ---- elementwise: save flags say which of (a, b, out) the formula reads
constexpr int kA = kSaveA, kB = kSaveB, kOut = kSaveOut;
// saved(): index of each saved tensor in the order a, b, out (only those flagged).
struct Saved {
  const BackwardCtx& c;
  int flags;
  Tensor a() const { return c.saved(0); }
  Tensor b() const { return c.saved((flags & kA) ? 1 : 0); }
  Tensor out() const { return c.saved(((flags & kA) ? 1 : 0) + ((flags & kB) ? 1 : 0)); }
};

FORMULA(add_bw) { return {g[0], g[0]}; }
FORMULA(sub_bw) { return {g[0], c.needs(1) ? negative(g[0]) : Tensor()}; }
FORMULA(neg_bw) { return {negative(g[0])}; }
FORMULA(pos_bw) { return {g[0]}; }
FORMULA(conj_bw) { return {conj(g[0])}; }
FORMULA(zero_bw) {
  return {zeros_like(g[0]), c.node.inputs.size() > 1 ? zeros_like(g[0]) : Tensor()};
}
FORMULA(mul_bw) {
  Saved s{c, kA | kB};
  return {c.needs(0) ? chain(g[0], s.b()) : Tensor(), c.needs(1) ? chain(g[0], s.a()) : Tensor()};
}
FORMULA(div_bw) {
  Saved s{c, kB | kOut};
  const Tensor b = s.b();
  return {c.needs(0) ? div(g[0], conj(b)) : Tensor(),
          c.needs(1) ? negative(chain(g[0], div(s.out(), b))) : Tensor()};
}
FORMULA(abs_bw) {
  const Tensor x = c.saved(0);
  if (!is_complex(x.dtype())) return {mul(g[0], U(sign_def, x))};
  // sgn(x) = x / |x| (0 at 0) written with differentiable ops, so double backward sees its
  // derivative (sign_def's is zero); the safe denominator keeps 0/0 out of it.
  const Tensor a = U(abs_def, x);
  const Tensor zero = B(equal_def, a, sc(0.0));
  return {mul(g[0], div(x, where(zero, scalar_tensor(Scalar::from_int(1), a.dtype()), a)))};
}
FORMULA(sqrt_bw) { return {div(g[0], mul(sc(2.0), conj(c.saved(0))))}; }
FORMULA(exp_bw) { return {chain(g[0], c.saved(0))}; }
FORMULA(expm1_bw) { return {chain(g[0], add(c.saved(0), sc(1.0)))}; }
FORMULA(log_bw) { return {div(g[0], conj(c.saved(0)))}; }
FORMULA(log1p_bw) { return {div(g[0], conj(add(c.saved(0), sc(1.0))))}; }
FORMULA(log2_bw) { return {div(g[0], conj(mul(c.saved(0), sc(std::log(2.0)))))}; }
FORMULA(log10_bw) { return {div(g[0], conj(mul(c.saved(0), sc(std::log(10.0)))))}; }
FORMULA(sin_bw) { return {chain(g[0], U(cos_def, c.saved(0)))}; }
FORMULA(cos_bw) { return {negative(chain(g[0], U(sin_def, c.saved(0))))}; }
FORMULA(tan_bw) {
  const Tensor y = c.saved(0);
  return {chain(g[0], add(sc(1.0), mul(y, y)))};
}
FORMULA(sinh_bw) { return {chain(g[0], U(cosh_def, c.saved(0)))}; }
FORMULA(cosh_bw) { return {chain(g[0], U(sinh_def, c.saved(0)))}; }
FORMULA(tanh_bw) {
  const Tensor y = c.saved(0);
  return {chain(g[0], subtract(sc(1.0), mul(y, y)))};
}
Tensor one_minus_sq(const Tensor& x) { return subtract(sc(1.0), mul(x, x)); }
FORMULA(asin_bw) { return {chain(g[0], U(reciprocal_def, U(sqrt_def, one_minus_sq(c.saved(0)))))}; }
FORMULA(acos_bw) {
  return {negative(chain(g[0], U(reciprocal_def, U(sqrt_def, one_minus_sq(c.saved(0))))))};
}
FORMULA(atan_bw) {
  const Tensor x = c.saved(0);
  return {chain(g[0], U(reciprocal_def, add(sc(1.0), mul(x, x))))};
}
FORMULA(asinh_bw) {
  const Tensor x = c.saved(0);
  return {chain(g[0], U(reciprocal_def, U(sqrt_def, add(mul(x, x), sc(1.0)))))};
}
FORMULA(acosh_bw) {
  const Tensor x = c.saved(0);
  return {chain(g[0], U(reciprocal_def, U(sqrt_def, subtract(mul(x, x), sc(1.0)))))};
}
FORMULA(atanh_bw) { return {chain(g[0], U(reciprocal_def, one_minus_sq(c.saved(0))))}; }
FORMULA(reciprocal_bw) {
  const Tensor y = c.saved(0);
  return {negative(chain(g[0], mul(y, y)))};
}
FORMULA(square_bw) { return {chain(g[0], mul(sc(2.0), c.saved(0)))}; }
FORMULA(real_bw) { return {g[0]}; }
FORMULA(imag_bw) { return {mul(g[0], wrap_scalar(Scalar::from_complex({0.0, 1.0})))}; }
// b - 1 for pow's gradient. A Python-number exponent (a weak 0-d tensor) is decremented on
// the host: two weak operands would promote to the default float dtype, and x ** (1/3) on
// float64 got its gradient from a float32-rounded exponent.
Tensor exponent_minus_one(const Tensor& b) {
  if (!b.impl()->wrapped_number) return subtract(b, sc(1.0));
  const Scalar v = item(b);
  if (v.kind == ScalarKind::Complex) return wrap_scalar(Scalar::from_complex(v.c - 1.0));
  return wrap_scalar(Scalar::from_double(v.to<double>() - 1.0));
}
FORMULA(pow_bw) {
  Saved s{c, kA | kB | kOut};
  const Tensor a = s.a(), b = s.b();
  Tensor ga, gb;
  if (c.needs(0)) {
    // b * a^(b-1), defined as 0 where b == 0 (PyTorch's convention, also at a == 0).
    const Tensor d = mul(b, pow(a, exponent_minus_one(b)));
    ga = where(B(equal_def, b, sc(0.0)), zeros_like(d), chain(g[0], d));
  }
  if (c.needs(1)) {
    // out * log(a), defined as 0 where a == 0 and b >= 0.
    const Tensor d = mul(s.out(), U(log_def, a));
    const Tensor cond = B(logical_and_def, B(equal_def, a, sc(0.0)),
                          B(greater_equal_def, is_complex(b.dtype()) ? real(b) : b, sc(0.0)));
    gb = where(cond, zeros_like(d), chain(g[0], d));
  }
  return {ga, gb};
}
FORMULA(atan2_bw) {
  Saved s{c, kA | kB};
  const Tensor y = s.a(), x = s.b();
  const Tensor den = add(mul(x, x), mul(y, y));
  // At the origin PyTorch takes 1 / (x^2 + y^2) as 0, not inf: both gradients are 0 there.
  const Tensor at0 = B(equal_def, den, sc(0.0));
  const Tensor recip = where(at0, zeros_like(den), div(ones_like(den), den));
  return {c.needs(0) ? mul(g[0], mul(x, recip)) : Tensor(),
          c.needs(1) ? mul(g[0], mul(negative(y), recip)) : Tensor()};
}
FORMULA(hypot_bw) {
  Saved s{c, kA | kB | kOut};
  const Tensor out = s.out();
  return {c.needs(0) ? mul(g[0], div(s.a(), out)) : Tensor(),
          c.needs(1) ? mul(g[0], div(s.b(), out)) : Tensor()};
}
FORMULA(logaddexp_bw) {
  Saved s{c, kA | kB | kOut};
  const Tensor out = s.out();
  return {c.needs(0) ? mul(g[0], U(exp_def, subtract(s.a(), out))) : Tensor(),
          c.needs(1) ? mul(g[0], U(exp_def, subtract(s.b(), out))) : Tensor()};
}
// Note [maximum/minimum ties]: like PyTorch, equal operands split the gradient in half; NaN
// comparisons are false, so both sides get the full gradient there. Each side's gradient is g
// times a weight 1 - [loses] - [tie]/2 built from casts of the comparisons: masks of random
// signs (relu) make a select's branches unpredictable, arithmetic on them is branch-free.
variable_list extremum_bw(const BackwardCtx& c, G g, const ElementwiseDef& loses_a,
                          const ElementwiseDef& loses_b) {
  Saved s{c, kA | kB};
  const Tensor a = s.a(), b = s.b();
  const DType dt = g[0].dtype();
  const Tensor half_tie = mul(astype(B(equal_def, a, b), dt, false), sc(0.5));
  auto side = [&](const ElementwiseDef& loses) {
    const Tensor lose = astype(B(loses, a, b), dt, false);
    return mul(g[0], subtract(subtract(sc(1.0), lose), half_tie));
  };
  return {c.needs(0) ? side(loses_a) : Tensor(), c.needs(1) ? side(loses_b) : Tensor()};
}
FORMULA(maximum_bw) { return extremum_bw(c, g, less_def, greater_def); }
FORMULA(minimum_bw) { return extremum_bw(c, g, greater_def, less_def); }
FORMULA(copysign_bw) {
  Saved s{c, kA | kOut};
  const Tensor a = s.a();
  const Tensor ratio = div(s.out(), a);
  return {where(B(equal_def, a, sc(0.0)), zeros_like(ratio), mul(g[0], ratio)),
          c.needs(1) ? zeros_like(g[0]) : Tensor()};
}
FORMULA(remainder_bw) {
  Saved s{c, kA | kB};
  return {g[0], c.needs(1) ? negative(mul(g[0], B(floor_divide_def, s.a(), s.b()))) : Tensor()};
}
FORMULA(not_implemented_bw) {
  throw NotImplementedError(str("backward: the derivative of ", c.node.formula->name,
                                " is not implemented (PyTorch does not define it either)"));
}

const std::unordered_map<std::string_view, ElementwiseFormula>& elementwise_table() {
  static const std::unordered_map<std::string_view, ElementwiseFormula> t = {
      {"add", {{"AddBackward", add_bw}, 0}},
      {"subtract", {{"SubBackward", sub_bw}, 0}},
      {"multiply", {{"MulBackward", mul_bw}, kA | kB}},
      {"divide", {{"DivBackward", div_bw}, kB | kOut}},
      {"negative", {{"NegBackward", neg_bw}, 0}},
      {"positive", {{"PosBackward", pos_bw}, 0}},
      {"conj", {{"ConjBackward", conj_bw}, 0}},
      {"abs", {{"AbsBackward", abs_bw}, kA}},
      {"sqrt", {{"SqrtBackward", sqrt_bw}, kOut}},
      {"exp", {{"ExpBackward", exp_bw}, kOut}},
      {"expm1", {{"Expm1Backward", expm1_bw}, kOut}},
      {"log", {{"LogBackward", log_bw}, kA}},
      {"log1p", {{"Log1pBackward", log1p_bw}, kA}},
      {"log2", {{"Log2Backward", log2_bw}, kA}},
      {"log10", {{"Log10Backward", log10_bw}, kA}},
      {"sin", {{"SinBackward", sin_bw}, kA}},
      {"cos", {{"CosBackward", cos_bw}, kA}},
      {"tan", {{"TanBackward", tan_bw}, kOut}},
      {"sinh", {{"SinhBackward", sinh_bw}, kA}},
      {"cosh", {{"CoshBackward", cosh_bw}, kA}},
      {"tanh", {{"TanhBackward", tanh_bw}, kOut}},
      {"asin", {{"AsinBackward", asin_bw}, kA}},
      {"acos", {{"AcosBackward", acos_bw}, kA}},
      {"atan", {{"AtanBackward", atan_bw}, kA}},
      {"asinh", {{"AsinhBackward", asinh_bw}, kA}},
      {"acosh", {{"AcoshBackward", acosh_bw}, kA}},
      {"atanh", {{"AtanhBackward", atanh_bw}, kA}},
      {"reciprocal", {{"ReciprocalBackward", reciprocal_bw}, kOut}},
      {"square", {{"SquareBackward", square_bw}, kA}},
      {"real", {{"RealBackward", real_bw}, 0}},
      {"imag", {{"ImagBackward", imag_bw}, 0}},
      {"pow", {{"PowBackward", pow_bw}, kA | kB | kOut}},
      {"atan2", {{"Atan2Backward", atan2_bw}, kA | kB}},
      {"hypot", {{"HypotBackward", hypot_bw}, kA | kB | kOut}},
      {"logaddexp", {{"LogaddexpBackward", logaddexp_bw}, kA | kB | kOut}},
      {"maximum", {{"MaximumBackward", maximum_bw}, kA | kB}},
      {"minimum", {{"MinimumBackward", minimum_bw}, kA | kB}},
      {"copysign", {{"CopysignBackward", copysign_bw}, kA | kOut}},
      {"remainder", {{"RemainderBackward", remainder_bw}, kA | kB}},
      {"floor_divide", {{"FloorDivideBackward", zero_bw}, 0}},
      {"floor", {{"FloorBackward", zero_bw}, 0}},
      {"ceil", {{"CeilBackward", zero_bw}, 0}},
      {"trunc", {{"TruncBackward", zero_bw}, 0}},
      {"round", {{"RoundBackward", zero_bw}, 0}},
      {"sign", {{"SignBackward", zero_bw}, 0}},
      {"nextafter", {{"NextafterBackward", not_implemented_bw}, 0}},
  };
  return t;
}

// ---- reductions
// Gradient of a reduction, broadcast back: g reshaped to keepdims form, then expanded.
Tensor expand_back(const Tensor& g, const BackwardCtx& c) {
  return broadcast_to(reshape(g, c.attrs()), c.input(0).shape);
}
int64_t reduced_count(const BackwardCtx& c) {
  const int64_t kept = numel_of(c.attrs());
  return kept == 0 ? 0 : numel_of(c.input(0).shape) / kept;
}
FORMULA(sum_bw) { return {expand_back(g[0], c)}; }
FORMULA(mean_bw) {
  return {
      div(expand_back(g[0], c), sc(static_cast<double>(std::max<int64_t>(reduced_count(c), 1))))};
}
FORMULA(var_bw) {
  // d var / dx = 2 (x - mean) / (N - correction)
  const Tensor x = c.saved(0);
  Shape axes;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (c.attrs()[d] == 1 && x.dim(d) != 1) axes.push_back(d);
  const Tensor mu = mean(x, Axes(axes), true);
  const double dof = std::max(static_cast<double>(reduced_count(c)) - c.scalar(0), 0.0);
  return {mul(expand_back(g[0], c), div(mul(sc(2.0), subtract(x, mu)), sc(dof)))};
}
FORMULA(std_bw) {
  const Tensor x = c.saved(0), out = c.saved(1);
  Shape axes;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (c.attrs()[d] == 1 && x.dim(d) != 1) axes.push_back(d);
  const Tensor mu = mean(x, Axes(axes), true);
  const double dof = std::max(static_cast<double>(reduced_count(c)) - c.scalar(0), 0.0);
  // Where the std is 0 (constant data) the gradient is 0, as in PyTorch, not 0/0.
  const Tensor kept = reshape(out, c.attrs());
  const Tensor denom = mul(kept, sc(dof));
  const Tensor q = div(expand_back(g[0], c), denom);
  const Tensor zero_std = B(equal_def, kept, sc(0.0));
  return {mul(where(zero_std, zeros_like(q), q), subtract(x, mu))};
}
FORMULA(prod_bw) {
  // Product of all the other elements of each reduced group, exact with zeros: move the
  // reduced dims last, flatten them, and multiply exclusive prefix and suffix products.
  const Tensor x = c.saved(0);
  const Shape& keep = c.attrs();
  Shape red, kept, perm;
  for (int64_t d = 0; d < x.ndim(); ++d) (keep[d] == 1 && x.dim(d) != 1 ? red : kept).push_back(d);
  for (int64_t d : kept) perm.push_back(d);
  for (int64_t d : red) perm.push_back(d);
  Shape kshape;
  for (int64_t d : kept) kshape.push_back(x.dim(d));
  int64_t r = 1;
  for (int64_t d : red) r *= x.dim(d);
  Shape flat = kshape;
  flat.push_back(r);
  const Tensor xp = reshape(permute_dims(x, perm), flat);
  const int64_t ax = flat.size() - 1;
  const Tensor left = slice(cumulative_prod(xp, ax, std::nullopt, true), ax, 0, r, 1);
  const Tensor xr = flip(xp, Shape{ax});
  const Tensor right =
      flip(slice(cumulative_prod(xr, ax, std::nullopt, true), ax, 0, r, 1), Shape{ax});
  const Tensor others = mul(left, right);
  Shape gshape = kshape;
  gshape.push_back(1);
  const Tensor gp = chain(reshape(g[0], gshape), others);
  Shape pshape = kshape;
  for (int64_t d : red) pshape.push_back(x.dim(d));
  Shape inv(perm.size());
  for (int64_t i = 0; i < perm.size(); ++i) inv[perm[i]] = i;
  return {permute_dims(reshape(gp, pshape), inv)};
}
// Note [max/min backward]: over all elements (or several axes) ties share the gradient
// evenly; along one axis the first extremum takes it all (PyTorch's max(dim) picks one).
FORMULA(maxmin_bw) {
  const Tensor x = c.saved(0), out = c.saved(1);
  const Tensor ok = reshape(out, c.attrs());
  const int64_t axis = static_cast<int64_t>(c.scalar(1));
  Tensor mask;
  if (axis >= 0) {
    const Tensor idx = argmax(as_float_mask(B(equal_def, x, ok), DType::Float32), axis, true);
    Shape s(x.ndim(), 1);
    s[axis] = x.dim(axis);
    const Tensor ar = arange(Scalar::from_int(0), Scalar::from_int(x.dim(axis)),
                             Scalar::from_int(1), DType::Int64, x.device());
    mask = as_float_mask(B(equal_def, reshape(ar, s), idx), x.dtype());
  } else {
    mask = as_float_mask(B(equal_def, x, ok), x.dtype());
    Shape axes;
    for (int64_t d = 0; d < x.ndim(); ++d)
      if (c.attrs()[d] == 1 && x.dim(d) != 1) axes.push_back(d);
    mask = div(mask, sum(mask, Axes(axes), true, std::nullopt));
  }
  return {mul(expand_back(g[0], c), mask)};
}

// ---- views and shape functions
FORMULA(reshape_bw) { return {reshape(g[0], c.input(0).shape)}; }
FORMULA(identity_bw) { return {g[0]}; }
FORMULA(permute_bw) {
  Shape inv(c.attrs().size());
  for (int64_t i = 0; i < c.attrs().size(); ++i) inv[c.attrs()[i]] = i;
  return {permute_dims(g[0], inv)};
}
FORMULA(flip_bw) { return {flip(g[0], c.attrs())}; }

// The gradient of a view is the gradient scattered into zeros through the same view; the
// scatter is recorded too (its backward is the view again), so double backward works.
template <class ViewFn>
Tensor scatter_through_view(const Tensor& g, const InputMeta& in, const ViewFn& view,
                            const Formula& self_formula, const Shape& attrs);

FORMULA(slice_bw);
FORMULA(slice_bw_bw) {
  const Shape& a = c.attrs();
  return {slice(g[0], a[0], a[1], a[2], a[3])};
}
const Formula kSliceBackwardBackward{"SliceBackwardBackward", slice_bw_bw};
FORMULA(slice_bw) {
  const Shape& a = c.attrs();
  return {scatter_through_view(
      g[0], c.input(0), [&](const Tensor& z) { return slice(z, a[0], a[1], a[2], a[3]); },
      kSliceBackwardBackward, a)};
}
// split_with_sizes: the pieces' gradients (zeros for pieces without one) side by side.
FORMULA(split_bw) { return {concat(std::vector<Tensor>(g.begin(), g.end()), c.attr(0))}; }
FORMULA(select_bw_bw) { return {select(g[0], c.attr(0), c.attr(1))}; }
const Formula kSelectBackwardBackward{"SelectBackwardBackward", select_bw_bw};
FORMULA(select_bw) {
  return {scatter_through_view(
      g[0], c.input(0), [&](const Tensor& z) { return select(z, c.attr(0), c.attr(1)); },
      kSelectBackwardBackward, c.attrs())};
}
FORMULA(diagonal_bw_bw) { return {diagonal(g[0], c.attr(0), c.attr(1), c.attr(2))}; }
const Formula kDiagonalBackwardBackward{"DiagonalBackwardBackward", diagonal_bw_bw};
FORMULA(diagonal_bw) {
  return {scatter_through_view(
      g[0], c.input(0),
      [&](const Tensor& z) { return diagonal(z, c.attr(0), c.attr(1), c.attr(2)); },
      kDiagonalBackwardBackward, c.attrs())};
}
IndexKey key_of(const Shape& a) {
  IndexKey k;
  for (int64_t i = 0; i + 3 < a.size(); i += 4) {
    IndexItem it;
    it.kind = static_cast<IndexItem::Kind>(a[i]);
    it.start = a[i + 1];
    it.stop = a[i + 2];
    it.step = a[i + 3];
    k.push_back(it);
  }
  return k;
}
FORMULA(index_bw_bw) { return {index_basic(g[0], key_of(c.attrs()))}; }
const Formula kIndexBackwardBackward{"IndexBackwardBackward", index_bw_bw};
FORMULA(index_bw) {
  const IndexKey key = key_of(c.attrs());
  return {scatter_through_view(
      g[0], c.input(0), [&](const Tensor& z) { return index_basic(z, key); },
      kIndexBackwardBackward, c.attrs())};
}
FORMULA(index_put_bw) {
  const IndexKey key = key_of(c.attrs());
  Tensor gx, gv;
  if (c.needs(0)) {
    // The written region gets no gradient; under create_graph as a recorded product with a
    // constant mask, so double backward follows it.
    gx = clone(grad_enabled() ? ones_like(g[0]) : g[0]);
    fill_(index_basic(gx, key), Scalar::from_int(0));
    if (grad_enabled()) gx = mul(g[0], gx);
  }
  if (c.needs(1)) gv = index_basic(g[0], key);
  return {gx, gv};
}

template <class ViewFn>
Tensor scatter_through_view(const Tensor& g, const InputMeta& in, const ViewFn& view,
                            const Formula& self_formula, const Shape& attrs) {
  Tensor z = zeros(in.shape, g.dtype(), g.device());
  copy_(view(z), g);
  if (needs_grad({&g})) {
    auto node = record(self_formula, {g}, {z});
    node->attrs = attrs;
  }
  return z;
}

// ---- linear algebra, selection, joins
Tensor mH(const Tensor& t) { return conj(matrix_transpose(t)); }
// A matrix laid out column-major (the transpose of a contiguous one).
bool is_transposed_2d(const Tensor& t) {
  return t.ndim() == 2 && t.dim(0) > 1 && t.dim(1) > 1 && t.strides()[0] == 1 &&
         t.strides()[1] == t.dim(0);
}
FORMULA(matmul_bw) {
  Tensor a = c.saved(0), b = c.saved(1);
  const bool av = a.ndim() == 1, bv = b.ndim() == 1;
  if (av && bv)  // a dot product: the gradient of each side is g times the other
    return {c.needs(0) ? chain(g[0], b) : Tensor(), c.needs(1) ? chain(g[0], a) : Tensor()};
  Tensor go = g[0];
  if (av) {
    a = expand_dims(a, 0);
    go = expand_dims(go, -2);
  }
  if (bv) {
    b = expand_dims(b, 1);
    go = expand_dims(go, -1);
  }
  Tensor ga, gb;
  // Like PyTorch's mm_mat*_backward: an operand stored transposed (x.mT of a contiguous x, as
  // in x @ w.mT) gets its gradient computed transposed too, so the gradient that reaches x
  // through the transpose's backward is contiguous and is not copied again.
  if (c.needs(0)) {
    ga = is_transposed_2d(a) ? mH(matmul(b, mH(go))) : matmul(go, mH(b));
    if (av) ga = reshape(sum_to(ga, Shape{1, a.dim(1)}), Shape{a.dim(1)});
  }
  if (c.needs(1)) {
    gb = is_transposed_2d(b) ? mH(matmul(mH(go), a)) : matmul(mH(a), go);
    if (bv) gb = reshape(sum_to(gb, Shape{b.dim(0), 1}), Shape{b.dim(0)});
  }
  return {ga, gb};
}
FORMULA(where_bw) {
  const Tensor cond = c.saved(0);
  const Tensor z = zeros_like(g[0]);
  return {Tensor(), c.needs(1) ? where(cond, g[0], z) : Tensor(),
          c.needs(2) ? where(cond, z, g[0]) : Tensor()};
}
// Note [clip gradient]: PyTorch's clamp rules, not those of the maximum/minimum it is made of
// (which split ties in half): x gets the gradient where lo <= x <= hi, bounds included; lo
// where x < lo (and lo < hi), hi where x > hi or hi < lo (hi wins when the bounds cross).
FORMULA(clip_bw) {
  const bool has_lo = c.attr(0) != 0, has_hi = c.attr(1) != 0;
  const Tensor x = c.saved(0);
  const Tensor lo = has_lo ? c.saved(1) : Tensor(),
               hi = has_hi ? c.saved(has_lo ? 2 : 1) : Tensor();
  const Tensor z = zeros_like(g[0]);
  Tensor keep;
  if (has_lo) keep = B(greater_equal_def, x, lo);
  if (has_hi) {
    const Tensor le = B(less_equal_def, x, hi);
    keep = has_lo ? B(logical_and_def, keep, le) : le;
  }
  variable_list out{c.needs(0) ? where(keep, g[0], z) : Tensor(), Tensor(), Tensor()};
  if (has_lo && c.needs(1)) {
    Tensor below = B(less_def, x, lo);
    if (has_hi) below = B(logical_and_def, below, B(less_def, lo, hi));
    out[1] = where(below, g[0], z);
  }
  if (has_hi && c.needs(2)) {
    Tensor above = B(greater_def, x, hi);
    if (has_lo) above = B(logical_or_def, above, B(less_def, hi, lo));
    out[2] = where(above, g[0], z);
  }
  return out;
}
FORMULA(concat_bw) {
  variable_list out;
  const int64_t axis = c.attrs().back();
  int64_t at = 0;
  for (size_t i = 0; i < c.node.inputs.size(); ++i) {
    const int64_t len = c.input(i).shape.size() ? c.input(i).shape[axis] : 1;
    out.push_back(c.needs(i) ? slice(g[0], axis, at, at + len, 1) : Tensor());
    at += len;
  }
  return out;
}
FORMULA(stack_bw) {  // input i's gradient: the slot i along the new axis
  variable_list out;
  for (size_t i = 0; i < c.node.inputs.size(); ++i)
    out.push_back(c.needs(i) ? select(g[0], c.attr(0), static_cast<int64_t>(i)) : Tensor());
  return out;
}
FORMULA(cumsum_bw) {
  const int64_t axis = c.attr(0);
  Tensor gg = g[0];
  if (c.attr(1)) gg = slice(gg, axis, 1, gg.dim(axis), 1);  // include_initial: drop the 0 slot
  return {flip(cumulative_sum(flip(gg, Shape{axis}), axis, std::nullopt, false), Shape{axis})};
}

// Note [cumprod backward with zeros]: d out_i / d x_k = prod_{j<=i, j!=k} x_j for i >= k.
// Without zeros that is out_i / x_k, so grad_x = reversed_cumsum(g * conj(out)) / conj(x).
// With zeros (PyTorch's cumprod_backward): positions before a slice's first zero z still use
// the division (out_i = 0 past z, so only i < z contribute); x_z gets prod_{j<z} x_j times
// sum_{z<=i<z2} g_i prod_{z<j<=i} x_j (z2: the second zero); positions past z get nothing.
// That O(n) form masks terms whose derivatives are not zero, so under create_graph (double
// backward) the exact O(n^2) form is used instead: all n "omit x_k" cumprods at once, which
// materializes (..., n, n) per call (PyTorch loops over k instead: O(n) memory, n launches).
Tensor reversed_cumsum(const Tensor& t, int64_t ax) {
  return flip(cumulative_sum(flip(t, Shape{ax}), ax, std::nullopt, false), Shape{ax});
}
Tensor cumprod_grad_quadratic(const Tensor& x, const Tensor& g, int64_t ax) {
  const int64_t n = x.dim(ax);
  const Tensor xl = moveaxis(x, Shape{ax}, Shape{-1}), gl = moveaxis(g, Shape{ax}, Shape{-1});
  const Tensor on_diag = eye(n, n, 0, DType::Bool, x.device());
  // omit[..., k, i] = prod_{j <= i, j != k} x_j, kept for i >= k only.
  const Tensor omit =
      triu(cumulative_prod(
               where(on_diag, scalar_tensor(Scalar::from_int(1), x.dtype()), expand_dims(xl, -2)),
               -1, std::nullopt, false),
           0);
  const Tensor gk = sum(mul(conj(omit), expand_dims(gl, -2)), Axes(Shape{-1}), false, std::nullopt);
  return moveaxis(gk, Shape{-1}, Shape{ax});
}
Tensor cumprod_grad_masked(const Tensor& x, const Tensor& out, const Tensor& g, int64_t ax) {
  const int64_t n = x.dim(ax);
  const Tensor is_zero = B(equal_def, x, sc(0.0));
  const Tensor zeros_seen = cumulative_sum(is_zero, ax, DType::Int64, false);
  const Tensor before = B(equal_def, zeros_seen, sc(0.0));
  const Tensor upto_second = B(equal_def, zeros_seen, sc(1.0));
  const Tensor first_zero = B(logical_and_def, upto_second, is_zero);
  const Tensor z = zeros_like(g);
  const Tensor one = scalar_tensor(Scalar::from_int(1), x.dtype());
  // k before the first zero: the division form over i < z.
  const Tensor part_before = where(
      before,
      div(reversed_cumsum(where(before, chain(g, out), z), ax), conj(where(before, x, one))), z);
  // k at the first zero: prod_{j<z} x_j (the exclusive cumprod) * sum over [z, z2).
  const Tensor between = B(logical_and_def, upto_second, U(logical_not_def, first_zero));
  const Tensor run = cumulative_prod(where(between, x, one), ax, std::nullopt, false);
  const Tensor tail =
      sum(mul(where(upto_second, g, z), conj(run)), Axes(Shape{ax}), true, std::nullopt);
  const Tensor exclusive =
      slice(cumulative_prod(x, ax, std::nullopt, true), ax, 0, n, 1);  // prod_{j<k} x_j
  return add(part_before, where(first_zero, mul(tail, conj(exclusive)), z));
}
FORMULA(cumprod_bw) {
  const int64_t ax = c.attr(0);
  Tensor x = c.saved(0), out = c.saved(1), gg = g[0];
  if (c.attr(1)) {  // include_initial: drop the leading 1 slot
    gg = slice(gg, ax, 1, gg.dim(ax), 1);
    out = slice(out, ax, 1, out.dim(ax), 1);
  }
  if (x.numel() == 0) return {zeros_like(x)};
  x = astype_op(x, out.dtype(), false);
  const bool has_zero = item(any(B(equal_def, x, sc(0.0)), std::nullopt, false)).to<bool>();
  if (!has_zero) return {div(reversed_cumsum(chain(gg, out), ax), conj(x))};
  if (grad_enabled()) return {cumprod_grad_quadratic(x, gg, ax)};
  return {cumprod_grad_masked(x, out, gg, ax)};
}

// ---- LAPACK-backed linalg (PyTorch's formulas; A^H is the conjugate transpose)
Tensor unsq2(const Tensor& t) { return expand_dims(expand_dims(t, -1), -1); }
FORMULA(inv_bw) {
  const Tensor out = c.saved(0);
  return {negative(matmul(matmul(mH(out), g[0]), mH(out)))};
}
FORMULA(det_bw) {
  const Tensor a = c.saved(0), d = c.saved(1);
  // grad * conj(det) * A^-H. PyTorch gives an exactly singular matrix (det == 0) a zero
  // gradient; there inv would fail, so those matrices are swapped for I first.
  const Tensor singular = unsq2(B(equal_def, d, sc(0.0)));
  const int64_t n = a.dim(a.ndim() - 1);
  const Tensor safe = where(singular, eye(n, n, 0, a.dtype(), a.device()), a);
  const Tensor gr = mul(unsq2(mul(g[0], conj(d))), mH(inv(safe)));
  return {where(singular, zeros_like(gr), gr)};
}
FORMULA(slogdet_bw) {
  // Only logabsdet carries a gradient (the sign is piecewise constant for real inputs).
  const Tensor a = c.saved(0);
  return {mul(unsq2(g[1]), mH(inv(a)))};
}
FORMULA(solve_bw) {
  const Tensor a = c.saved(0), x = c.saved(1);
  const bool vec = c.attr(0) != 0;
  const Tensor gx = vec ? expand_dims(g[0], -1) : g[0];
  const Tensor xm = vec ? expand_dims(x, -1) : x;
  const Tensor gb = solve(mH(a), gx);
  Tensor ga;
  if (c.needs(0)) ga = negative(matmul(gb, mH(xm)));
  return {ga, c.needs(1) ? (vec ? squeeze(gb, Shape{-1}) : gb) : Tensor()};
}
FORMULA(cholesky_bw) {
  const bool upper = c.attr(0) != 0;
  Tensor l = c.saved(0), gl = g[0];
  if (upper) {
    l = mH(l);
    gl = mH(gl);
  }
  const Tensor p = matmul(mH(l), gl);
  const Tensor phi = mul(add(tril(p, 0), tril(p, -1)), sc(0.5));  // lower part, half diagonal
  const Tensor li = inv(l);
  const Tensor s = matmul(matmul(mH(li), phi), li);
  return {mul(add(s, mH(s)), sc(0.5))};
}
Tensor diag_embed(const Tensor& v) {
  const int64_t n = v.dim(v.ndim() - 1);
  return mul(eye(n, n, 0, v.dtype(), v.device()), expand_dims(v, -2));
}
FORMULA(eigh_bw) {
  const Tensor w = c.saved(0), v = c.saved(1);
  const int64_t n = w.dim(w.ndim() - 1);
  Tensor inner = g[0].defined() ? diag_embed(g[0]) : Tensor();
  if (g[1].defined()) {
    const Tensor e = subtract(expand_dims(w, -2), expand_dims(w, -1));  // E_ij = w_j - w_i
    const Tensor on_diag = astype(eye(n, n, 0, DType::Bool, w.device()), DType::Bool, false);
    const Tensor f = where(on_diag, zeros_like(e), U(reciprocal_def, e));
    const Tensor vg = mul(matmul(mH(v), g[1]), f);
    inner = inner.defined() ? add(inner, vg) : vg;
  }
  const Tensor ga = matmul(matmul(v, inner), mH(v));
  return {mul(add(ga, mH(ga)), sc(0.5))};
}
// Note [QR backward]: PyTorch's rule for the reduced QR of a tall (m >= n) full-rank A:
// gA = (gQ + Q copyltu(M)) R^-H with M = R gR^H - gQ^H Q, copyltu(M) = the Hermitian matrix
// with M's strict lower triangle below the diagonal and Re diag(M) on it. A wide A = [X | Y]
// (m < n) is X's QR (Q, R_X) plus Y = Q R_Y: gY = Q gR_Y and X's rule with gQ + Y gR_Y^H.
Tensor copyltu(const Tensor& m) {
  const Tensor low = tril(m, -1);
  return add(add(low, mH(low)), diag_embed(real(diagonal(m, 0, -2, -1))));
}
Tensor qr_grad_tall(const Tensor& q, const Tensor& r, const Tensor& gq, const Tensor& gr) {
  const Tensor m = subtract(matmul(r, mH(gr)), matmul(mH(gq), q));
  const Tensor b = add(gq, matmul(q, copyltu(m)));
  return mH(solve(r, mH(b)));  // b R^-H
}
FORMULA(qr_bw) {
  const Tensor q = c.saved(0), r = c.saved(1);
  const int64_t m = q.dim(q.ndim() - 2), n = r.dim(r.ndim() - 1);
  if (c.attr(0) && m > n)
    throw RuntimeError(str("linalg.qr backward: the QR decomposition is not differentiable when ",
                           "mode='complete' and nrows > ncols (got ", m, " x ", n,
                           "); hint: use mode='reduced'"));
  const Tensor gq = g[0], gr = g[1];
  if (m >= n) return {qr_grad_tall(q, r, gq, gr)};
  const int64_t cols = r.ndim() - 1;  // slice takes a normalized axis
  const Tensor rx = slice(r, cols, 0, m, 1), ry = slice(r, cols, m, n, 1);
  const Tensor grx = slice(gr, cols, 0, m, 1), gry = slice(gr, cols, m, n, 1);
  const Tensor y = matmul(q, ry);
  const Tensor gx = qr_grad_tall(q, rx, add(gq, matmul(y, mH(gry))), grx);
  return {concat({gx, matmul(q, gry)}, -1)};
}

// Note [SVD backward]: PyTorch's svd_backward for A = U diag(S) Vh with distinct singular values
// (and full rank when A is not square): with skew(X) = X - X^H, E_ij = S_j^2 - S_i^2 (1 on the
// diagonal), the core is (skew(U^H gU) S + S skew(Vh gVh^H)) / E + diag(gS), plus, for complex
// input, i Im diag(skew(U^H gU)) / (2S) on the diagonal; tall/wide inputs add the components of
// gU/gVh outside the column/row space. With full_matrices the extra columns of U (rows of Vh)
// are arbitrary bases, so their gradients are ignored, as in PyTorch. Complex singular vectors
// are defined only up to a phase e^{i phi} per pair: a loss that depends on it raises.
Tensor allclose_t(const Tensor& a, const Tensor& b, double rtol, double atol) {
  const Tensor ok =
      B(less_equal_def, U(abs_def, subtract(a, b)), add(sc(atol), mul(sc(rtol), U(abs_def, b))));
  return all(ok, std::nullopt, false);
}
Tensor skew(const Tensor& x) { return subtract(x, mH(x)); }
Tensor svd_grad(Tensor u, const Tensor& s, Tensor vh, Tensor gu, const Tensor& gs, Tensor gvh,
                bool full) {
  const int64_t k = s.dim(s.ndim() - 1);
  if (full) {
    const int64_t cols = u.ndim() - 1, rows = vh.ndim() - 2;  // slice takes a normalized axis
    u = slice(u, cols, 0, k, 1);
    vh = slice(vh, rows, 0, k, 1);
    if (gu.defined()) gu = slice(gu, cols, 0, k, 1);
    if (gvh.defined()) gvh = slice(gvh, rows, 0, k, 1);
  }
  const int64_t m = u.dim(u.ndim() - 2), n = vh.dim(vh.ndim() - 1);
  if (!gu.defined() && !gvh.defined()) return matmul(mul(u, expand_dims(gs, -2)), vh);
  const bool cplx = is_complex(u.dtype());
  const Tensor uhgu = gu.defined() ? skew(matmul(mH(u), gu)) : Tensor();
  const Tensor vhgv = gvh.defined() ? skew(matmul(vh, mH(gvh))) : Tensor();
  Tensor im_u;
  if (cplx) {
    im_u = gu.defined() ? imag(diagonal(uhgu, 0, -2, -1)) : zeros_like(s);
    const Tensor im_v = gvh.defined() ? imag(diagonal(vhgv, 0, -2, -1)) : zeros_like(s);
    if (!item(allclose_t(im_u, negative(im_v), 1e-2, 1e-2)).to<bool>())
      throw RuntimeError(
          "linalg.svd backward: the singular vectors in the complex case are specified up to "
          "multiplication by e^{i phi}; the loss depends on this phase term, making it "
          "ill-defined (see Note [SVD backward])");
  }
  const Tensor s2 = mul(s, s);
  const Tensor on_diag = eye(k, k, 0, DType::Bool, s.device());
  const Tensor e = where(on_diag, scalar_tensor(Scalar::from_int(1), s.dtype()),
                         subtract(expand_dims(s2, -2), expand_dims(s2, -1)));
  Tensor ret;
  if (gu.defined() && gvh.defined())
    ret = div(add(mul(uhgu, expand_dims(s, -2)), mul(expand_dims(s, -1), vhgv)), e);
  else if (gu.defined())
    ret = mul(div(uhgu, e), expand_dims(s, -2));
  else
    ret = mul(expand_dims(s, -1), div(vhgv, e));
  if (gs.defined()) ret = add(ret, diag_embed(gs));
  if (cplx && gu.defined())
    ret = add(ret, mul(diag_embed(div(im_u, mul(sc(2.0), s))),
                       wrap_scalar(Scalar::from_complex({0.0, 1.0}))));
  if (m > n && gu.defined()) {
    const Tensor gu_sinv = div(gu, expand_dims(s, -2));
    Tensor ga = add(matmul(u, ret), subtract(gu_sinv, matmul(u, matmul(mH(u), gu_sinv))));
    return matmul(ga, vh);
  }
  if (m < n && gvh.defined()) {
    const Tensor sinv_gvh = div(gvh, expand_dims(s, -1));
    Tensor ga = add(matmul(ret, vh), subtract(sinv_gvh, matmul(matmul(sinv_gvh, mH(vh)), vh)));
    return matmul(u, ga);
  }
  return m >= n ? matmul(u, matmul(ret, vh)) : matmul(matmul(u, ret), vh);
}
FORMULA(svd_bw) {
  if (!g[0].defined() && !g[1].defined() && !g[2].defined()) return {Tensor()};
  return {svd_grad(c.saved(0), c.saved(1), c.saved(2), g[0], g[1], g[2], c.attr(0) != 0)};
}
FORMULA(svdvals_bw) {
  const Tensor a = c.saved(0);
  auto [u, s, vh] = svd(a, false);
  (void)s;
  return {matmul(mul(u, expand_dims(g[0], -2)), vh)};
}

// ---- rearrangements
FORMULA(roll_bw) {
  Shape back, axes;
  for (int64_t d = 0; d < c.attrs().size(); ++d) {
    back.push_back(-c.attr(d));
    axes.push_back(d);
  }
  return {roll(g[0], back, axes, false)};
}
FORMULA(repeat_bw) {
  // out[..., i*r + j, ...] = x[..., i, ...]: split the axis into (n, r) and sum the r part.
  const int64_t ax = c.attr(0), r = c.attr(1);
  const Shape& in = c.input(0).shape;
  Shape split = in;
  split.insert(ax + 1, r);
  return {sum(reshape(g[0], split), Axes(Shape{ax + 1}), false, std::nullopt)};
}
FORMULA(repeat_counts_bw) {
  // out along the axis is x gathered at `index` (element i repeated counts[i] times), so each
  // input element's gradient is the sum of its segment: an index_add of g into zeros.
  const InputMeta& in = c.input(0);
  return {index_add(zeros(in.shape, g[0].dtype(), g[0].device()), c.attr(0), c.saved(0), g[0])};
}
FORMULA(tri_bw) { return {c.attr(1) ? triu(g[0], c.attr(0)) : tril(g[0], c.attr(0))}; }

// ---- advanced indexing, gather/scatter, sort/topk
// The key of an advanced index: items in attrs (kind, start, stop, step, has_array), arrays saved.
AdvKey adv_key_of(const BackwardCtx& c, size_t first_saved) {
  AdvKey k;
  size_t next = first_saved;
  for (int64_t i = 0; i + 4 < c.attrs().size(); i += 5) {
    AdvItem it;
    it.item.kind = static_cast<IndexItem::Kind>(c.attr(i));
    it.item.start = c.attr(i + 1);
    it.item.stop = c.attr(i + 2);
    it.item.step = c.attr(i + 3);
    if (c.attr(i + 4)) it.array = c.saved(next++);
    k.push_back(it);
  }
  return k;
}
Tensor scatter_add_into_zeros(const Shape& shape, const Tensor& g, int64_t dim,
                              const Tensor& index) {
  return scatter(zeros(shape, g.dtype(), g.device()), dim, index, g, /*add=*/true);
}
FORMULA(index_adv_bw) {
  // Every element's flat position, selected with the same key, says where each g goes.
  const InputMeta& in = c.input(0);
  const int64_t n = numel_of(in.shape);
  const Tensor flat = reshape(arange(Scalar::from_int(0), Scalar::from_int(n), Scalar::from_int(1),
                                     DType::Int64, in.device),
                              in.shape);
  const Tensor where_to = reshape(index_advanced(flat, adv_key_of(c, 0)), Shape{-1});
  const Tensor gx = scatter_add_into_zeros(Shape{n}, reshape(g[0], Shape{-1}), 0, where_to);
  return {reshape(gx, in.shape)};
}
FORMULA(index_put_adv_bw) {
  const AdvKey key = adv_key_of(c, 0);
  Tensor gx, gv;
  if (c.needs(0)) {  // as in index_put_bw
    gx = clone(grad_enabled() ? ones_like(g[0]) : g[0]);
    {
      GradModeGuard off(false);
      index_put_advanced(gx, key, scalar_tensor(Scalar::from_int(0), gx.dtype()));
    }
    if (grad_enabled()) gx = mul(g[0], gx);
  }
  if (c.needs(1)) gv = index_advanced(g[0], key);
  return {gx, gv};
}
FORMULA(gather_bw) {
  return {scatter_add_into_zeros(c.input(0).shape, g[0], c.attr(0), c.saved(0))};
}
FORMULA(scatter_bw) {
  const int64_t dim = c.attr(0);
  const bool add_mode = c.attr(1) != 0;
  const Tensor index = c.saved(0);
  Tensor gx, gsrc;
  if (c.needs(0))
    gx = add_mode
             ? g[0]
             : scatter(g[0], dim, index, scalar_tensor(Scalar::from_int(0), g[0].dtype()), false);
  if (c.needs(1)) {
    const Tensor picked = gather(g[0], dim, index);
    const Shape& src_shape = c.input(1).shape;
    if (src_shape == picked.shape()) {
      gsrc = picked;
    } else if (src_shape.empty()) {
      gsrc = sum(picked, std::nullopt, false, std::nullopt);
    } else {  // src larger than index: only its leading block was used
      gsrc = zeros(src_shape, picked.dtype(), picked.device());
      Tensor block = gsrc;
      for (int64_t d = 0; d < picked.ndim(); ++d) block = slice(block, d, 0, picked.dim(d), 1);
      copy_(block, picked);
    }
  }
  return {gx, gsrc};
}
FORMULA(take_along_bw) {
  return {scatter_add_into_zeros(c.input(0).shape, g[0], c.attr(0), c.saved(0))};
}

const Formula kSum{"SumBackward", sum_bw}, kMean{"MeanBackward", mean_bw},
    kProd{"ProdBackward", prod_bw}, kVar{"VarBackward", var_bw}, kStd{"StdBackward", std_bw},
    kMaxMin{"MaxBackward", maxmin_bw}, kReshape{"ViewBackward", reshape_bw},
    kPermute{"PermuteBackward", permute_bw}, kFlip{"FlipBackward", flip_bw},
    kSlice{"SliceBackward", slice_bw}, kSelect{"SelectBackward", select_bw},
    kDiagonal{"DiagonalBackward", diagonal_bw}, kIndex{"IndexBackward", index_bw},
    kIndexPut{"IndexPutBackward", index_put_bw}, kMatmul{"MatmulBackward", matmul_bw},
    kWhere{"WhereBackward", where_bw}, kConcat{"CatBackward", concat_bw},
    kStack{"StackBackward", stack_bw}, kCumsum{"CumsumBackward", cumsum_bw},
    kClip{"ClampBackward", clip_bw};

// ---- convolution (Note [Convolution as three ops]): each gradient is one of the three ops.
// The bias gradient sums over the batch and spatial axes.
Tensor bias_grad(const Tensor& g) {
  Shape axes{0};
  for (int64_t d = 2; d < g.ndim(); ++d) axes.push_back(d);
  return sum(g, axes, false, std::nullopt);
}
FORMULA(conv_bw) {  // y = conv(x, w) + b
  const ConvSpec s = ConvSpec::decode(c.attrs());
  Tensor gx, gw, gb;
  if (c.needs(0)) gx = conv_transpose_op(g[0], c.saved(1), Tensor(), s);
  if (c.needs(1)) gw = conv_weight(g[0], c.saved(0), c.input(1).shape, s);
  if (c.node.inputs.size() > 2 && c.needs(2)) gb = bias_grad(g[0]);
  return {gx, gw, gb};
}
FORMULA(conv_transpose_bw) {  // y = conv^T(x, w) + b: x on the narrow side
  const ConvSpec s = ConvSpec::decode(c.attrs());
  Tensor gx, gw, gb;
  if (c.needs(0)) gx = conv_forward(g[0], c.saved(1), Tensor(), s);
  if (c.needs(1)) gw = conv_weight(c.saved(0), g[0], c.input(1).shape, s);
  if (c.node.inputs.size() > 2 && c.needs(2)) gb = bias_grad(g[0]);
  return {gx, gw, gb};
}
FORMULA(conv_weight_bw) {  // gw = dconv/dw(gy, x)
  const ConvSpec s = ConvSpec::decode(c.attrs());
  Tensor ggy, gx;
  if (c.needs(0)) ggy = conv_forward(c.saved(1), g[0], Tensor(), s);
  if (c.needs(1)) gx = conv_transpose_op(c.saved(0), g[0], Tensor(), s);
  return {ggy, gx};
}

// ---- batch norm: attrs (batch_stats, has_w); saved x, mean, rstd[, w]. Without a graph of the
// backward, the fused kernel; with one (create_graph), differentiable ops that recompute the
// batch statistics from x, so second derivatives see their dependence on x.
FORMULA(batch_norm_bw) {
  const bool batch = c.attr(0) != 0, has_w = c.attr(1) != 0;
  const Tensor x = c.saved(0), mean = c.saved(1), rstd = c.saved(2);
  const Tensor w = has_w ? c.saved(3) : Tensor();
  const bool need_w = c.needs(1), need_b = c.node.inputs.size() > 2 && c.needs(2);
  if (!grad_enabled()) {
    auto [gx, gw, gb] =
        batch_norm_backward(g[0], x, mean, rstd, w, batch, c.needs(0), need_w, need_b);
    return {gx, gw, gb};
  }
  Shape axes{0}, cshape{1, x.dim(1)};
  for (int64_t d = 2; d < x.ndim(); ++d) {
    axes.push_back(d);
    cshape.push_back(1);
  }
  Tensor m = reshape(astype(mean, x.dtype(), false), cshape);
  Tensor r = reshape(astype(rstd, x.dtype(), false), cshape);
  if (batch) {
    m = ts::mean(x, axes, true);
    r = U(reciprocal_def, U(sqrt_def, add(var(x, axes, 0, true), sc(c.scalar(0)))));
  }
  const Tensor xhat = mul(subtract(x, m), r);
  // (A 16-bit x may have float32 parameters: their gradients take the parameters' dtype.)
  const Tensor wb = has_w ? reshape(astype(w, x.dtype(), false), cshape) : Tensor();
  const DType pd = has_w ? w.dtype() : x.dtype();
  Tensor gx, gw, gb;
  if (need_b) gb = astype(sum(g[0], axes, false, std::nullopt), pd, false);
  if (need_w) gw = astype(sum(mul(g[0], xhat), axes, false, std::nullopt), pd, false);
  if (c.needs(0)) {
    if (batch) {
      const Tensor inner = subtract(subtract(g[0], ts::mean(g[0], axes, true)),
                                    mul(xhat, ts::mean(mul(g[0], xhat), axes, true)));
      gx = mul(inner, r);
    } else {
      gx = mul(g[0], r);
    }
    if (has_w) gx = mul(gx, wb);
  }
  return {gx, gw, gb};
}

// ---- pooling: the max's gradient scatters to the saved indices (the fused kernel, or under
// create_graph a differentiable scatter-add); the average and its gradient are each other's
// adjoints.
FORMULA(max_pool_bw) {
  const PoolSpec s = PoolSpec::decode(c.attrs());
  const Tensor idx = c.saved(0);
  const Shape& in = c.input(0).shape;
  if (!grad_enabled()) return {max_pool_backward_op(g[0], idx, in, s)};
  const int64_t N = in[0], C = in[1];
  const Tensor z = zeros(Shape{N, C, s.in_numel()}, g[0].dtype(), g[0].device());
  const Tensor flat = scatter(z, 2, reshape(idx, Shape{N, C, s.out_numel()}),
                              reshape(g[0], Shape{N, C, s.out_numel()}), true);
  return {reshape(flat, in)};
}
FORMULA(avg_pool_bw) {
  return {avg_pool_backward_op(g[0], c.input(0).shape, PoolSpec::decode(c.attrs()))};
}
FORMULA(avg_pool_backward_bw) { return {avg_pool_forward_op(g[0], PoolSpec::decode(c.attrs()))}; }
// max_unpool and the gather of its gradient are each other's adjoints.
FORMULA(max_unpool_bw) { return {max_unpool_gather_op(g[0], c.saved(0))}; }
FORMULA(max_unpool_gather_bw) { return {max_unpool_op(g[0], c.saved(0), c.attrs())}; }
// LP pooling: the fused kernel, or under create_graph PyTorch's chain written with
// differentiable ops: gx = p x^(p-1) avg_pool^T(where(out != 0, gy (1/p) out^(1/p-1) K, 0)),
// out = K avg_pool(x^p) (the where's other branch keeps inf out of the graph at out == 0).
FORMULA(lp_pool_bw) {
  const PoolSpec s = PoolSpec::decode(c.attrs());
  const double p = c.scalar(0);
  const Tensor x = c.saved(0);
  if (!grad_enabled()) return {lp_pool_backward_op(g[0], x, s, p)};
  auto num = [&](double v) {
    Tensor t = Tensor::empty(Shape{}, x.dtype(), x.device());
    fill_(t, Scalar::from_double(v));
    return t;
  };
  const Tensor K = num(static_cast<double>(s.k[0] * s.k[1] * s.k[2]));
  const Tensor out = mul(avg_pool_forward_op(pow(x, num(p)), s), K);
  const Tensor zero = zeros_like(out);
  const Tensor nz = B(not_equal_def, out, zero);
  const Tensor safe = where(nz, out, ones_like(out));
  const Tensor coef =
      where(nz, mul(mul(g[0], num(1.0 / p)), mul(pow(safe, num(1.0 / p - 1.0)), K)), zero);
  return {mul(mul(avg_pool_backward_op(coef, x.shape(), s), num(p)), pow(x, num(p - 1.0)))};
}

bool any_needs(const std::vector<Tensor>& ts) { return needs_grad(ts); }

void stamp_site(Node& n) {
  if (anomaly_enabled()) n.creation_site = "(see the Python traceback of the forward call)";
}

}  // namespace

// ---- entry points used by ops
void record_elementwise(const ElementwiseDef& def, const std::vector<Tensor>& inputs,
                        const std::vector<Tensor>& computed, const Tensor& out) {
  if (!any_needs(inputs) || !is_inexact(out.dtype())) return;
  const auto& table = elementwise_table();
  auto it = table.find(def.name);
  static const ElementwiseFormula missing{{"ElementwiseBackward", not_implemented_bw}, 0};
  const ElementwiseFormula* special = it == table.end() ? special_formula(def.name) : nullptr;
  if (special && !special->formula.fn) return;  // not differentiable
  const ElementwiseFormula& f = it != table.end() ? it->second : special ? *special : missing;
  auto node = record(f.formula, inputs, {out});
  stamp_site(*node);
  if (f.save & kA) node->save(computed[0]);
  if (f.save & kB) node->save(computed[1]);
  if (f.save & kOut) node->save(out, /*is_output=*/true);
}

void record_reduction(ReduceKind kind, const Tensor& x, const Tensor& out, const Shape& keep_shape,
                      double correction, int64_t single_axis) {
  if (!any_needs({x}) || !is_inexact(out.dtype())) return;
  const Formula* f = &kSum;
  switch (kind) {
    case ReduceKind::Sum:
      f = &kSum;
      break;
    case ReduceKind::Mean:
      f = &kMean;
      break;
    case ReduceKind::Prod:
      f = &kProd;
      break;
    case ReduceKind::Var:
      f = &kVar;
      break;
    case ReduceKind::Std:
      f = &kStd;
      break;
    case ReduceKind::MaxMin:
      f = &kMaxMin;
      break;
  }
  auto node = record(*f, {x}, {out});
  stamp_site(*node);
  node->attrs = keep_shape;
  node->scalars.push_back(correction);
  node->scalars.push_back(static_cast<double>(single_axis));
  if (kind == ReduceKind::Prod || kind == ReduceKind::Var || kind == ReduceKind::Std ||
      kind == ReduceKind::MaxMin)
    node->save(x);
  if (kind == ReduceKind::Std || kind == ReduceKind::MaxMin) node->save(out, true);
}

void record_reshape(const Tensor& x, const Tensor& out) {
  if (any_needs({x})) record(kReshape, {x}, {out});
}
void record_identity(const Tensor& x, const Tensor& out, const char* name) {
  if (!any_needs({x})) return;
  static const Formula kIdentity{"IdentityBackward", identity_bw};
  static const Formula kExpand{"ExpandBackward", identity_bw};
  static const Formula kClone{"CloneBackward", identity_bw};
  static const Formula kCast{"ToCopyBackward", identity_bw};
  const std::string_view n(name);
  const Formula& f = n == "broadcast_to" ? kExpand
                     : n == "clone"      ? kClone
                     : n == "astype"     ? kCast
                                         : kIdentity;
  record(f, {x}, {out});
}
// view_as_real / view_as_complex: each one's gradient is the other's view of the (contiguous)
// gradient, as PyTorch's derivatives.
FORMULA(view_as_real_bw) { return {view_as_complex(contiguous_op(g[0]))}; }
FORMULA(view_as_complex_bw) { return {view_as_real(contiguous_op(g[0]))}; }
void record_view_as(const Tensor& x, const Tensor& out, bool to_real) {
  if (!any_needs({x})) return;
  static const Formula kAsReal{"ViewAsRealBackward0", view_as_real_bw};
  static const Formula kAsComplex{"ViewAsComplexBackward0", view_as_complex_bw};
  record(to_real ? kAsReal : kAsComplex, {x}, {out});
}
void record_permute(const Tensor& x, const Tensor& out, const Shape& axes) {
  if (!any_needs({x})) return;
  auto node = record(kPermute, {x}, {out});
  for (int64_t a : axes) node->attrs.push_back(a < 0 ? a + x.ndim() : a);
}
void record_flip(const Tensor& x, const Tensor& out, const Shape& axes) {
  if (!any_needs({x})) return;
  auto node = record(kFlip, {x}, {out});
  node->attrs = axes;
}
void record_slice(const Tensor& x, const Tensor& out, int64_t axis, int64_t start, int64_t stop,
                  int64_t step) {
  if (!any_needs({x})) return;
  auto node = record(kSlice, {x}, {out});
  node->attrs = Shape{axis, start, stop, step};
}
void record_split(const Tensor& x, const std::vector<Tensor>& outs, int64_t axis) {
  if (!any_needs({x})) return;
  static const Formula kSplit{"SplitWithSizesBackward", split_bw};
  auto node = record(kSplit, {x}, outs);
  node->attrs = Shape{axis};
}
void record_select(const Tensor& x, const Tensor& out, int64_t axis, int64_t index) {
  if (!any_needs({x})) return;
  auto node = record(kSelect, {x}, {out});
  node->attrs = Shape{axis, index};
}
void record_diagonal(const Tensor& x, const Tensor& out, int64_t offset, int64_t a1, int64_t a2) {
  if (!any_needs({x})) return;
  auto node = record(kDiagonal, {x}, {out});
  node->attrs = Shape{offset, a1, a2};
}
namespace {
Shape encode_key(const IndexItem* key, int64_t n) {
  Shape a;
  for (int64_t i = 0; i < n; ++i) {
    a.push_back(static_cast<int64_t>(key[i].kind));
    a.push_back(key[i].start);
    a.push_back(key[i].stop);
    a.push_back(key[i].step);
  }
  return a;
}
}  // namespace
void record_index_basic(const Tensor& x, const Tensor& out, const IndexItem* key, int64_t n) {
  if (!any_needs({x})) return;
  auto node = record(kIndex, {x}, {out});
  node->attrs = encode_key(key, n);
}
void record_index_put(const Tensor& x, const Tensor& value, const IndexItem* key, int64_t n) {
  if (!any_needs({x, value})) return;
  auto node = record(kIndexPut, {x, value}, {});  // edges from x's history before the write
  node->out_meta.push_back({x.shape(), x.dtype(), x.device()});
  node->attrs = encode_key(key, n);
  commit_write(x, Edge{node, 0});
}
void record_matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (!any_needs({a, b})) return;
  auto node = record(kMatmul, {a, b}, {out});
  stamp_site(*node);
  node->save(a);
  node->save(b);
}
void record_where(const Tensor& cond, const Tensor& x1, const Tensor& x2, const Tensor& out) {
  if (!any_needs({x1, x2})) return;
  auto node = record(kWhere, {Tensor(), x1, x2}, {out});
  node->save(cond);
}
void record_clip(const Tensor& x, const Tensor& lo, const Tensor& hi, const Tensor& out) {
  if (!any_needs({x, lo, hi})) return;
  auto node = record(kClip, {x, lo, hi}, {out});
  node->attrs = Shape{lo.defined() ? 1 : 0, hi.defined() ? 1 : 0};
  node->save(x);
  if (lo.defined()) node->save(lo);
  if (hi.defined()) node->save(hi);
}
void record_concat(const std::vector<Tensor>& xs, const Tensor& out, int64_t axis) {
  if (!any_needs(xs)) return;
  auto node = record(kConcat, xs, {out});
  node->attrs.push_back(axis);
}
void record_stack(const std::vector<Tensor>& xs, const Tensor& out, int64_t axis) {
  if (!any_needs(xs)) return;
  auto node = record(kStack, xs, {out});
  node->attrs.push_back(axis);
}
void record_cumsum(const Tensor& x, const Tensor& out, int64_t axis, bool include_initial) {
  if (!any_needs({x})) return;
  auto node = record(kCumsum, {x}, {out});
  node->attrs = Shape{axis, include_initial ? 1 : 0};
}

void record_linalg(LinalgOp op, const std::vector<Tensor>& inputs,
                   const std::vector<Tensor>& outputs, int64_t flag) {
  if (!any_needs(inputs)) return;
  static const Formula kInv{"LinalgInvBackward", inv_bw}, kDet{"LinalgDetBackward", det_bw},
      kSlogdet{"LinalgSlogdetBackward", slogdet_bw}, kSolve{"LinalgSolveBackward", solve_bw},
      kCholesky{"LinalgCholeskyBackward", cholesky_bw}, kEigh{"LinalgEighBackward", eigh_bw},
      kSvdvals{"LinalgSvdvalsBackward", svdvals_bw}, kQr{"LinalgQrBackward", qr_bw},
      kSvd{"LinalgSvdBackward", svd_bw, /*pass_undefined=*/true};
  const Formula* f = &kInv;
  switch (op) {
    case LinalgOp::Inv:
      f = &kInv;
      break;
    case LinalgOp::Det:
      f = &kDet;
      break;
    case LinalgOp::Slogdet:
      f = &kSlogdet;
      break;
    case LinalgOp::Solve:
      f = &kSolve;
      break;
    case LinalgOp::Cholesky:
      f = &kCholesky;
      break;
    case LinalgOp::Eigh:
      f = &kEigh;
      break;
    case LinalgOp::Svdvals:
      f = &kSvdvals;
      break;
    case LinalgOp::Qr:
      f = &kQr;
      break;
    case LinalgOp::Svd:
      f = &kSvd;
      break;
  }
  auto node = record(*f, inputs, outputs);
  node->attrs.push_back(flag);
  switch (op) {
    case LinalgOp::Inv:
    case LinalgOp::Cholesky:
      node->save(outputs[0], true);
      break;
    case LinalgOp::Det:
      node->save(inputs[0]);
      node->save(outputs[0], true);
      break;
    case LinalgOp::Slogdet:
    case LinalgOp::Svdvals:
      node->save(inputs[0]);
      break;
    case LinalgOp::Solve:
      node->save(inputs[0]);
      node->save(outputs[0], true);
      break;
    case LinalgOp::Eigh:
      node->save(outputs[0], true);
      node->save(outputs[1], true);
      break;
    case LinalgOp::Qr:
      node->save(outputs[0], true);
      node->save(outputs[1], true);
      break;
    case LinalgOp::Svd:
      node->save(outputs[0], true);
      node->save(outputs[1], true);
      node->save(outputs[2], true);
      break;
  }
}

void record_roll(const Tensor& x, const Tensor& out, const Shape& net) {
  if (!any_needs({x})) return;
  static const Formula kRoll{"RollBackward", roll_bw};
  record(kRoll, {x}, {out})->attrs = net;
}
void record_repeat(const Tensor& src, const Tensor& out, int64_t axis, int64_t repeats) {
  if (!any_needs({src})) return;
  static const Formula kRepeat{"RepeatBackward", repeat_bw};
  record(kRepeat, {src}, {out})->attrs = Shape{axis, repeats};
}
void record_repeat_counts(const Tensor& src, const Tensor& out, int64_t axis, const Tensor& index) {
  if (!any_needs({src})) return;
  static const Formula kRepeat{"RepeatBackward", repeat_counts_bw};
  auto node = record(kRepeat, {src}, {out});
  node->attrs = Shape{axis};
  node->save(index);
}
void record_cumprod(const Tensor& x, const Tensor& out, int64_t axis, bool include_initial) {
  if (!any_needs({x}) || !is_inexact(out.dtype())) return;
  static const Formula kCumprod{"CumprodBackward", cumprod_bw};
  auto node = record(kCumprod, {x}, {out});
  node->attrs = Shape{axis, include_initial ? 1 : 0};
  node->save(x);
  node->save(out, true);
}
void record_tri(const Tensor& x, const Tensor& out, int64_t k, bool upper) {
  if (!any_needs({x})) return;
  static const Formula kTri{"TriBackward", tri_bw};
  record(kTri, {x}, {out})->attrs = Shape{k, upper ? 1 : 0};
}
void record_conv(ConvKind kind, const std::vector<Tensor>& inputs, const Tensor& out,
                 const Shape& spec) {
  if (!any_needs(inputs)) return;
  static const Formula kConv{"ConvolutionBackward", conv_bw},
      kConvT{"ConvolutionTransposeBackward", conv_transpose_bw},
      kConvW{"ConvolutionBackwardWeightBackward", conv_weight_bw};
  const Formula& f = kind == ConvKind::Forward     ? kConv
                     : kind == ConvKind::Transpose ? kConvT
                                                   : kConvW;
  std::vector<Tensor> ins = inputs;
  if (ins.size() == 3 && !ins[2].defined()) ins.pop_back();
  auto node = record(f, ins, {out});
  stamp_site(*node);
  node->attrs = spec;
  node->save(ins[0]);
  node->save(ins[1]);
}

void record_batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& out,
                       const Tensor& x_saved, const Tensor& mean, const Tensor& rstd,
                       bool batch_stats, double eps) {
  std::vector<Tensor> ins{x, w, b};
  if (!any_needs(ins)) return;
  static const Formula kBatchNorm{"NativeBatchNormBackward", batch_norm_bw};
  if (!b.defined()) ins.pop_back();
  auto node = record(kBatchNorm, ins, {out});
  stamp_site(*node);
  node->attrs = Shape{batch_stats ? 1 : 0, w.defined() ? 1 : 0};
  node->scalars.push_back(eps);
  node->save(x_saved);
  node->save(mean);
  node->save(rstd);
  if (w.defined()) node->save(w);
}

void record_pool(PoolKind kind, const Tensor& input, const Tensor& out, const Tensor& idx,
                 const Shape& spec) {
  if (!any_needs({input})) return;
  static const Formula kMaxPool{"MaxPoolBackward", max_pool_bw},
      kAvgPool{"AvgPoolBackward", avg_pool_bw},
      kAvgPoolBackward{"AvgPoolBackwardBackward", avg_pool_backward_bw};
  const Formula& f = kind == PoolKind::Max   ? kMaxPool
                     : kind == PoolKind::Avg ? kAvgPool
                                             : kAvgPoolBackward;
  auto node = record(f, {input}, {out});
  stamp_site(*node);
  node->attrs = spec;
  if (kind == PoolKind::Max) node->save(idx);
}

void record_unpool(UnpoolKind kind, const Tensor& input, const Tensor& out, const Tensor& idx,
                   const Shape& out_sp) {
  if (!any_needs({input})) return;
  static const Formula kUnpool{"MaxUnpoolBackward", max_unpool_bw},
      kGather{"MaxUnpoolGatherBackward", max_unpool_gather_bw};
  auto node = record(kind == UnpoolKind::Unpool ? kUnpool : kGather, {input}, {out});
  stamp_site(*node);
  node->attrs = out_sp;
  node->save(idx);
}

void record_lp_pool(const Tensor& x, const Tensor& out, const Shape& spec, double p) {
  if (!any_needs({x})) return;
  static const Formula kLp{"LpPoolBackward", lp_pool_bw};
  auto node = record(kLp, {x}, {out});
  stamp_site(*node);
  node->attrs = spec;
  node->scalars.push_back(p);
  node->save(x);
}

void record_missing(const char* node_name, const std::vector<Tensor>& inputs,
                    const std::vector<Tensor>& outputs) {
  if (!any_needs(inputs)) return;
  // Formulas are looked up by pointer; keep one per distinct name for the node's name().
  static std::mutex mu;
  static std::unordered_map<std::string, std::unique_ptr<Formula>> by_name;
  const Formula* f;
  {
    std::lock_guard<std::mutex> g(mu);
    auto& slot = by_name[node_name];
    if (!slot) {
      static std::vector<std::unique_ptr<std::string>> names;
      names.push_back(std::make_unique<std::string>(node_name));
      slot = std::make_unique<Formula>(Formula{names.back()->c_str(), not_implemented_bw});
    }
    f = slot.get();
  }
  record(*f, inputs, outputs);
}

namespace {
void encode_adv_key(FormulaNode& node, const std::vector<AdvItem>& key) {
  for (const AdvItem& it : key) {
    node.attrs.push_back(static_cast<int64_t>(it.item.kind));
    node.attrs.push_back(it.item.start);
    node.attrs.push_back(it.item.stop);
    node.attrs.push_back(it.item.step);
    node.attrs.push_back(it.array.defined() ? 1 : 0);
    if (it.array.defined()) node.save(it.array);
  }
}
}  // namespace

void record_index_advanced(const Tensor& x, const Tensor& out, const std::vector<AdvItem>& key) {
  if (!any_needs({x})) return;
  static const Formula kF{"IndexBackward", index_adv_bw};
  encode_adv_key(*record(kF, {x}, {out}), key);
}
void record_index_put_advanced(const Tensor& x, const Tensor& value,
                               const std::vector<AdvItem>& key) {
  if (!any_needs({x, value})) return;
  static const Formula kF{"IndexPutBackward", index_put_adv_bw};
  auto node = record(kF, {x, value}, {});
  node->out_meta.push_back({x.shape(), x.dtype(), x.device()});
  encode_adv_key(*node, key);
  commit_write(x, Edge{node, 0});
}
void record_gather(const Tensor& x, const Tensor& out, int64_t dim, const Tensor& index) {
  if (!any_needs({x})) return;
  static const Formula kF{"GatherBackward", gather_bw};
  auto node = record(kF, {x}, {out});
  node->attrs.push_back(dim);
  node->save(index);
}
void record_scatter(const Tensor& x, const Tensor& src, const Tensor& out, int64_t dim,
                    const Tensor& index, bool add_mode) {
  if (!any_needs({x, src})) return;
  static const Formula kF{"ScatterBackward", scatter_bw};
  auto node = record(kF, {x, src}, {out});
  node->attrs = Shape{dim, add_mode ? 1 : 0};
  node->save(index);
}
void record_take_along(const Tensor& x, const Tensor& out, int64_t dim, const Tensor& indices) {
  if (!any_needs({x})) return;
  static const Formula kF{"SortBackward", take_along_bw};
  auto node = record(kF, {x}, {out});
  node->attrs.push_back(dim);
  node->save(indices);
}

void check_inplace(const Tensor& a, const char* op) {
  if (!grad_enabled() || !a.impl()->autograd) return;
  if (is_leaf(a) && requires_grad(a))
    throw RuntimeError(str(op, " (in-place): a leaf Variable that requires grad is being used in ",
                           "an in-place operation (a leaf tensor that requires grad cannot be "
                           "written in place). Hint: wrap it in `with ts.no_grad():` (e.g. ",
                           "for parameter updates) or use an out-of-place op"));
}

bool begin_setitem(const Tensor& x, const Tensor& value) {
  check_inplace(x, "setitem");
  const bool record = needs_grad({&x, &value});
  if (record) check_view_write(x, requires_grad(value), "setitem");
  return record;
}

// Note [Writes into views] covers `a` being a view; otherwise a takes result's history.
void rebase_history(const Tensor& a, const Tensor& result, const char* op) {
  if (!grad_enabled() || !requires_grad(result)) return;
  check_view_write(a, true, op);
  if (auto* node = dynamic_cast<FormulaNode*>(grad_fn(result).get()))
    for (SavedTensor& s : node->saved) s.preserve_if_aliases(a);
  commit_write(a, gradient_edge(result));
}

}  // namespace ts::autograd

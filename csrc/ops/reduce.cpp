#include "ops/reduce.h"

#include "autograd/function.h"
#include "autograd/record.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/copy.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(ReduceKernel, sum_stub, "sum");
TS_DEFINE_STUB(ReduceKernel, prod_stub, "prod");
TS_DEFINE_STUB(ReduceKernel, sum_squares_stub, "var");
TS_DEFINE_STUB(ReduceKernel, max_stub, "max");
TS_DEFINE_STUB(ReduceKernel, min_stub, "min");
TS_DEFINE_STUB(ReduceKernel, all_stub, "all");
TS_DEFINE_STUB(ReduceKernel, any_stub, "any");
TS_DEFINE_STUB(ReduceKernel, count_nonzero_stub, "count_nonzero");
TS_DEFINE_STUB(ArgReduceKernel, argmax_stub, "argmax");
TS_DEFINE_STUB(ArgReduceKernel, argmin_stub, "argmin");
TS_DEFINE_STUB(SqrtKernel, std_sqrt_stub, "std");

DType sum_dtype(DType in) {
  if (is_bool(in) || is_signed_int(in)) return DType::Int64;
  if (is_unsigned_int(in)) return DType::UInt64;
  return in;
}

SmallVec<bool, 8> axes_mask(const Axes& axes, int64_t ndim, const char* op) {
  SmallVec<bool, 8> mask(ndim, !axes.has_value());
  if (!axes) return mask;
  for (int64_t a : *axes) {
    const int64_t d = normalize_axis(a, ndim, op);
    TS_CHECK(!mask[d], ValueError, op, ": duplicate axis ", a, " in axes ", shape_str(*axes));
    mask[d] = true;
  }
  return mask;
}

namespace {

struct ReduceDef {
  const char* name;
  KernelStub<ReduceKernel>* stub;
  uint32_t allowed;
  const char* allowed_desc;
  const char* no_identity;  // NumPy's name of the op for the empty-reduction error, or null
  // The reduction that combines partial results of this one (Note [Two-stage reductions]).
  const ReduceDef* combine;
};

extern const ReduceDef kSumDef;
const ReduceDef kSumDef{"sum", &sum_stub, kAllSet, "numeric", nullptr, &kSumDef};
const ReduceDef kSumSquaresDef{"var",           &sum_squares_stub, kFloatSet,
                               "real floating", nullptr,           &kSumDef};
extern const ReduceDef kProdDef, kMaxDef, kMinDef, kAllDef, kAnyDef;
const ReduceDef kProdDef{"prod", &prod_stub, kAllSet, "numeric", nullptr, &kProdDef};
const ReduceDef kMaxDef{"max", &max_stub, kRealSet | kBoolSet, "real-valued", "maximum", &kMaxDef};
const ReduceDef kMinDef{"min", &min_stub, kRealSet | kBoolSet, "real-valued", "minimum", &kMinDef};
const ReduceDef kAllDef{"all", &all_stub, kAllSet, "any", nullptr, &kAllDef};
const ReduceDef kAnyDef{"any", &any_stub, kAllSet, "any", nullptr, &kAnyDef};
const ReduceDef kCountDef{"count_nonzero", &count_nonzero_stub, kAllSet, "any", nullptr, &kSumDef};

void check_dtype(const char* op, DType d, uint32_t allowed, const char* desc) {
  TS_CHECK(in_set(d, allowed), TypeError, op, ": not supported for dtype ", dtype_name(d),
           " (expected ", desc, " input)");
}

Shape keepdims_shape(const Shape& s, const SmallVec<bool, 8>& mask) {
  Shape r = s;
  for (int64_t d = 0; d < r.size(); ++d)
    if (mask[d]) r[d] = 1;
  return r;
}

Tensor drop_reduced(const Tensor& out, const SmallVec<bool, 8>& mask, bool keepdims) {
  if (keepdims) return out;
  Shape s;
  for (int64_t d = 0; d < out.ndim(); ++d)
    if (!mask[d]) s.push_back(out.dim(d));
  return out.as_strided(s, contiguous_strides(s), out.offset());
}

// Plans x -> out; when several reduced dims cannot walk as one, reduces a copy of x laid out
// as (kept dims..., reduced dims...) instead (Note [Reduction plan]).
template <class Run>
void plan_and_run(const Tensor& x, const SmallVec<bool, 8>& mask, const Tensor& out,
                  const Run& run) {
  ReducePlan p = ReducePlan::make(x, mask, out);
  if (p.red_sizes.size() <= 1 || p.n_out == 0) return run(p);
  Shape perm;
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t d = 0; d < x.ndim(); ++d)
      if (mask[d] == (pass == 1)) perm.push_back(d);
  SmallVec<bool, 8> mask2(x.ndim(), false);
  for (int64_t d = x.ndim() - 1; d >= 0 && mask[perm[d]]; --d) mask2[d] = true;
  const Tensor x2 = contiguous(permute_dims(x, perm));
  run(ReducePlan::make(x2, mask2, permute_dims(out, perm)));
}

// Note [Two-stage reductions]: reduced dims that do not coalesce (a bias gradient's sum over
// (N, H, W) of an NCHW tensor: C sits between N and H) would make plan_and_run copy the whole
// input into (kept..., reduced...) order first (the 128x32x28x28 sum took 2.0 ms against
// PyTorch's 0.4). When some reduced dims lie inside every kept dim (smaller strides), they are
// reduced first, in place, into partial results in the output dtype, and the partials are
// reduced over the remaining dims by the combining reduction (sums of squares and counts add
// up with sum); the divisor is applied once, at the end. Not for 16-bit outputs, whose partials
// would be rounded. Block boundaries still depend on the shape alone.
bool reduce_in_two_stages(const ReduceDef& def, const Tensor& x, const SmallVec<bool, 8>& mask,
                          const Tensor& out, DType out_dtype, double divisor) {
  if (!def.combine || (is_floating(out_dtype) && itemsize(out_dtype) < 4)) return false;
  int64_t min_kept = INT64_MAX;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (!mask[d] && x.dim(d) > 1) min_kept = std::min<int64_t>(min_kept, std::abs(x.strides()[d]));
  SmallVec<bool, 8> inner(x.ndim(), false), rest(x.ndim(), false);
  bool has_inner = false, has_rest = false;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    if (!mask[d]) continue;
    if (x.dim(d) > 1 && std::abs(x.strides()[d]) < min_kept)
      inner[d] = has_inner = true;
    else
      rest[d] = true, has_rest = has_rest || x.dim(d) > 1;
  }
  if (!has_inner || !has_rest || ReducePlan::make(x, mask, out).red_sizes.size() <= 1) return false;
  Tensor part = Tensor::empty(keepdims_shape(x.shape(), inner), out_dtype, x.device());
  const auto first = def.stub->get(x.device());
  plan_and_run(x, inner, part, [&](const ReducePlan& p) { first(p, x.dtype(), out_dtype, 1.0); });
  const auto second = def.combine->stub->get(x.device());
  plan_and_run(part, rest, out,
               [&](const ReducePlan& p) { second(p, out_dtype, out_dtype, divisor); });
  return true;
}

// The shared path of the accumulating reductions: x already in the kernel's input dtype.
Tensor reduce(const ReduceDef& def, const Tensor& x, const Axes& axes, bool keepdims,
              DType out_dtype, bool divide_by_count = false, const char* op = nullptr) {
  if (!op) op = def.name;
  check_dtype(op, x.dtype(), def.allowed, def.allowed_desc);
  const auto mask = axes_mask(axes, x.ndim(), op);
  const Shape oshape = keepdims_shape(x.shape(), mask);
  Tensor out = Tensor::empty(oshape, out_dtype, x.device());
  int64_t n_red = 1;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (mask[d]) n_red *= x.dim(d);
  // NumPy raises whenever the reduced axes hold no elements, even for an empty result; with
  // axes given, PyTorch's IndexError naming the empty dim (ValueError, also a RuntimeError,
  // for a reduction over everything, where torch raises RuntimeError)
  if (def.no_identity && n_red == 0 && axes)
    for (int64_t d = 0; d < x.ndim(); ++d)
      TS_CHECK(!mask[d] || x.dim(d) != 0, IndexError, op, "(): Expected reduction dim ", d,
               " to have non-zero size (input shape ", shape_str(x.shape()),
               "); hint: reduce over non-empty dims");
  if (def.no_identity && n_red == 0)
    throw ValueError(str(def.name, ": zero-size array to reduction operation ", def.no_identity,
                         " which has no identity (input shape ", shape_str(x.shape()),
                         "); hint: reduce over non-empty axes"));
  if (out.numel() != 0) {
    const double divisor = divide_by_count ? static_cast<double>(n_red) : 1.0;
    if (!reduce_in_two_stages(def, x, mask, out, out_dtype, divisor)) {
      const auto kernel = def.stub->get(x.device());
      plan_and_run(x, mask, out,
                   [&](const ReducePlan& p) { kernel(p, x.dtype(), out_dtype, divisor); });
    }
  }
  return drop_reduced(out, mask, keepdims);
}

// sum/prod: the standard's default dtypes; an explicit dtype casts the input first.
Tensor sum_like(const ReduceDef& def, const Tensor& x, const Axes& axes, bool keepdims,
                std::optional<DType> dtype) {
  if (!dtype || *dtype == sum_dtype(x.dtype()))
    return reduce(def, x, axes, keepdims, sum_dtype(x.dtype()));
  Tensor r = reduce(def, astype(x, *dtype, false), axes, keepdims, sum_dtype(*dtype));
  return astype(r, *dtype, false);
}

// Integers and bool compute mean/var/std in the default float dtype (float32).
Tensor to_inexact(const Tensor& x, const char* op, bool allow_complex) {
  const DType d = x.dtype();
  if (is_integral(d) || is_bool(d)) return astype(x, kDefaultFloat, false);
  TS_CHECK(allow_complex || !is_complex(d), TypeError, op, ": not supported for dtype ",
           dtype_name(d), " (expected real-valued input)");
  return x;
}

}  // namespace

Tensor sum_plain(const Tensor& x, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
  return sum_like(kSumDef, x, axes, keepdims, dtype);
}
Tensor prod_plain(const Tensor& x, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
  return sum_like(kProdDef, x, axes, keepdims, dtype);
}

Tensor mean_plain(const Tensor& x, const Axes& axes, bool keepdims) {
  const Tensor xf = to_inexact(x, "mean", true);
  return reduce(kSumDef, xf, axes, keepdims, xf.dtype(), /*divide_by_count=*/true, "mean");
}

namespace {

Tensor var_impl(const Tensor& x, const Axes& axes, double correction, bool keepdims,
                const char* op) {
  const Tensor xf = to_inexact(x, op, false);
  axes_mask(axes, x.ndim(), op);  // validates axes under this op's name
  // Two passes in at least float32: sum((x - mean)^2) / max(N - correction, 0).
  const DType wide =
      is_floating(xf.dtype()) && itemsize(xf.dtype()) < 4 ? DType::Float32 : xf.dtype();
  const Tensor xw = astype(xf, wide, false);
  const Tensor m = mean_plain(xw, axes, true);
  const Tensor d = subtract(xw, m);
  const Tensor ss = reduce(kSumSquaresDef, d, axes, keepdims, wide, false, op);
  const int64_t count = ss.numel() == 0 ? 0 : x.numel() / ss.numel();
  const double dof = std::max(static_cast<double>(count) - correction, 0.0);
  Tensor r = divide(ss, wrap_scalar(Scalar::from_double(dof)));
  return astype(r, xf.dtype(), false);
}

}  // namespace

Tensor var_plain(const Tensor& x, const Axes& axes, double correction, bool keepdims) {
  return var_impl(x, axes, correction, keepdims, "var");
}

Tensor std_plain(const Tensor& x, const Axes& axes, double correction, bool keepdims) {
  Tensor v = var_impl(x, axes, correction, keepdims, "std");
  v = contiguous(v);  // var's result is always fresh; contiguous() returns it as is
  if (v.numel() != 0) std_sqrt_stub.get(v.device())(v);
  return v;
}

Tensor max_plain(const Tensor& x, const Axes& axes, bool keepdims, const char* op = "max") {
  return reduce(kMaxDef, x, axes, keepdims, x.dtype(), false, op);
}
Tensor min_plain(const Tensor& x, const Axes& axes, bool keepdims, const char* op = "min") {
  return reduce(kMinDef, x, axes, keepdims, x.dtype(), false, op);
}
Tensor all(const Tensor& x, const Axes& axes, bool keepdims) {
  return reduce(kAllDef, x, axes, keepdims, DType::Bool);
}
Tensor any(const Tensor& x, const Axes& axes, bool keepdims) {
  return reduce(kAnyDef, x, axes, keepdims, DType::Bool);
}
Tensor count_nonzero(const Tensor& x, const Axes& axes, bool keepdims) {
  return reduce(kCountDef, x, axes, keepdims, DType::Int64);
}

namespace {

Tensor arg_reduce(const char* op, KernelStub<ArgReduceKernel>& stub, const Tensor& x,
                  std::optional<int64_t> axis, bool keepdims) {
  check_dtype(op, x.dtype(), kRealSet | kBoolSet, "real-valued");
  const Tensor xs = axis ? x : reshape(x, Shape{x.numel()});
  const int64_t ax = axis ? normalize_axis(*axis, x.ndim(), op) : 0;
  SmallVec<bool, 8> mask(xs.ndim(), false);
  mask[ax] = true;
  Tensor out = Tensor::empty(keepdims_shape(xs.shape(), mask), DType::Int64, x.device());
  // PyTorch's IndexError along an empty dim; NumPy's ValueError (also a RuntimeError) for the
  // flattened input
  TS_CHECK(!axis || xs.dim(ax) != 0, IndexError, op, "(): Expected reduction dim ", ax,
           " to have non-zero size (input shape ", shape_str(x.shape()),
           "); hint: reduce over a non-empty dim");
  TS_CHECK(xs.dim(ax) != 0, ValueError, op, ": attempt to get ", op,
           " of an empty sequence (input shape ", shape_str(x.shape()), ")");
  if (out.numel() != 0)
    stub.get(x.device())(ReducePlan::make(xs, mask, out, /*keep_reduced_order=*/true), x.dtype());
  if (!axis) {
    Shape s = keepdims ? Shape(x.ndim(), 1) : Shape{};
    return out.as_strided(s, contiguous_strides(s), 0);
  }
  return drop_reduced(out, mask, keepdims);
}

}  // namespace

Tensor argmax(const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduce("argmax", argmax_stub, x, axis, keepdims);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> axis, bool keepdims) {
  return arg_reduce("argmin", argmin_stub, x, axis, keepdims);
}

// ---- autograd: each reduction runs without recording its internals and is recorded as one
// node (Note [Backward formulas] in autograd/formulas.cpp).
namespace {
template <class F>
Tensor recorded(autograd::ReduceKind kind, const Tensor& x, const Axes& axes, const char* op,
                const F& compute, double correction = 0, bool evenly = false) {
  if (!autograd::needs_grad({&x})) return compute();
  Tensor out;
  {
    autograd::GradModeGuard no_grad(false);
    out = compute();
  }
  out.impl()->is_view = false;  // a fresh result (possibly reshaped), not a view of x
  const auto mask = axes_mask(axes, x.ndim(), op);
  const Shape keep = keepdims_shape(x.shape(), mask);
  const int64_t single =
      !evenly && axes && axes->size() == 1 ? normalize_axis((*axes)[0], x.ndim(), op) : -1;
  autograd::record_reduction(kind, x, out, keep, correction, single);
  return out;
}
}  // namespace

Tensor sum(const Tensor& x, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
  if (autocast::active()) {  // Note [Autocast inside the ops]
    Tensor xc = x;
    const autocast::OpScope scope(
        dtype ? TS_AUTOCAST_POLICY_DTYPE("sum") : TS_AUTOCAST_POLICY("sum"), xc);
    return sum(xc, axes, keepdims, dtype);
  }
  return recorded(autograd::ReduceKind::Sum, x, axes, "sum",
                  [&] { return sum_plain(x, axes, keepdims, dtype); });
}
Tensor prod(const Tensor& x, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
  if (autocast::active()) {  // Note [Autocast inside the ops]
    Tensor xc = x;
    const autocast::OpScope scope(
        dtype ? TS_AUTOCAST_POLICY_DTYPE("prod") : TS_AUTOCAST_POLICY("prod"), xc);
    return prod(xc, axes, keepdims, dtype);
  }
  return recorded(autograd::ReduceKind::Prod, x, axes, "prod",
                  [&] { return prod_plain(x, axes, keepdims, dtype); });
}
Tensor mean(const Tensor& x, const Axes& axes, bool keepdims) {
  return recorded(autograd::ReduceKind::Mean, x, axes, "mean",
                  [&] { return mean_plain(x, axes, keepdims); });
}
Tensor var(const Tensor& x, const Axes& axes, double correction, bool keepdims) {
  return recorded(
      autograd::ReduceKind::Var, x, axes, "var",
      [&] { return var_plain(x, axes, correction, keepdims); }, correction);
}
Tensor std(const Tensor& x, const Axes& axes, double correction, bool keepdims) {
  return recorded(
      autograd::ReduceKind::Std, x, axes, "std",
      [&] { return std_plain(x, axes, correction, keepdims); }, correction);
}
Tensor max(const Tensor& x, const Axes& axes, bool keepdims) {
  return recorded(autograd::ReduceKind::MaxMin, x, axes, "max",
                  [&] { return max_plain(x, axes, keepdims); });
}
Tensor min(const Tensor& x, const Axes& axes, bool keepdims) {
  return recorded(autograd::ReduceKind::MaxMin, x, axes, "min",
                  [&] { return min_plain(x, axes, keepdims); });
}

Tensor amax(const Tensor& x, const Axes& axes, bool keepdims) {
  return recorded(
      autograd::ReduceKind::MaxMin, x, axes, "amax",
      [&] { return max_plain(x, axes, keepdims, "amax"); },
      0, /*evenly=*/true);
}
Tensor amin(const Tensor& x, const Axes& axes, bool keepdims) {
  return recorded(
      autograd::ReduceKind::MaxMin, x, axes, "amin",
      [&] { return min_plain(x, axes, keepdims, "amin"); },
      0, /*evenly=*/true);
}

}  // namespace ts

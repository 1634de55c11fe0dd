#include "ops/unique.h"

#include <tuple>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/cumulative.h"
#include "ops/elementwise.h"
#include "ops/indexing_advanced.h"
#include "ops/linalg_composite.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/sort.h"
#include "ops/views.h"

namespace ts {

namespace {

Tensor int64_number(int64_t v) { return wrap_scalar(Scalar::from_int(v)); }

Tensor filled(const Shape& shape, DType dtype, Device device, const Scalar& v) {
  Tensor t = Tensor::empty(shape, dtype, device);
  fill_(t, v);
  return t;
}

// The permutation that sorts the 1-D v ascending, stably (Note [Unique order]). Complex values
// take three stable sorts: by imag, by real, then by their NaN class (none, imag, real, both).
Tensor stable_order(const Tensor& v) {
  if (!is_complex(v.dtype())) return argsort(v, 0, false);
  Tensor perm = argsort(imag(v), 0, false);
  perm = index_select(perm, 0, argsort(index_select(real(v), 0, perm), 0, false));
  const Tensor s = index_select(v, 0, perm);
  const auto nan_of = [](const Tensor& t) { return astype(unary_op(isnan_def, t), DType::Int8); };
  const Tensor nan_class = add(nan_of(imag(s)), multiply(nan_of(real(s)), int64_number(2)));
  return index_select(perm, 0, argsort(nan_class, 0, false));
}

// flags[i]: row i of `s` (n, ...) starts a run, differing from row i - 1 in some element
// (NaN != NaN: every NaN starts its own run).
Tensor run_starts(const Tensor& s) {
  const int64_t n = s.dim(0);
  Tensor flags = Tensor::empty({n}, DType::Bool, s.device());
  if (n == 0) return flags;
  fill_(slice(flags, 0, 0, 1, 1), Scalar::from_bool(true));
  if (n > 1) {
    Tensor ne = binary_op(not_equal_def, slice(s, 0, 1, n, 1), slice(s, 0, 0, n - 1, 1));
    if (ne.ndim() > 1) ne = any(ne, Axes(Shape{1}), false);
    copy_(slice(flags, 0, 1, n, 1), ne);
  }
  return flags;
}

// The order of the rows of `rows` (n, k): lexicographic, by one stable sort per column from
// the last to the first.
Tensor row_order(const Tensor& rows) {
  const int64_t n = rows.dim(0);
  Tensor perm = arange(Scalar::from_int(0), Scalar::from_int(n), Scalar::from_int(1), DType::Int64,
                       rows.device());
  for (int64_t j = rows.dim(1) - 1; j >= 0; --j)
    perm = index_select(perm, 0, stable_order(index_select(select(rows, 1, j), 0, perm)));
  return perm;
}

}  // namespace

UniqueParts unique(const Tensor& x, std::optional<int64_t> dim, bool consecutive, bool want_indices,
                   bool want_inverse, bool want_counts) {
  const char* op = consecutive ? "unique_consecutive" : "unique";
  autograd::GradModeGuard no_grad(false);
  Tensor rows;  // the elements, or the slices along dim flattened to rows (n, k)
  int64_t d = 0;
  if (dim) {
    TS_CHECK(x.ndim() > 0, IndexError, op, ": dim ", *dim, " was given but the input is 0-d; ",
             "hint: leave dim=None for a 0-d tensor");
    d = normalize_axis(*dim, x.ndim(), op);
    if (x.numel() == 0) {  // torch's rules: only the selected dim may be 0-sized
      int64_t zero_dims = 0;
      for (int64_t i = 0; i < x.ndim(); ++i) zero_dims += x.dim(i) == 0;
      TS_CHECK(x.dim(d) == 0, RuntimeError, op, ": input of shape ", shape_str(x.shape()),
               " has 0-sized dims and they aren't dim ", d, ", so unique cannot be applied; ",
               "hint: select the empty dim or reshape the input");
      TS_CHECK(zero_dims == 1, RuntimeError, op, ": input of shape ", shape_str(x.shape()),
               " has more than one 0-sized dim, so unique cannot be applied along dim ", d,
               "; hint: reshape the input");
      UniqueParts r;
      r.values = clone(x);
      r.indices = r.inverse = r.counts = Tensor::empty({0}, DType::Int64, x.device());
      return r;
    }
    // Materialized (a copy only when x is a strided or expanded view): one sort per column of
    // an expanded (2^20, 2^20) view ran 2^20 sorts of 2^20 elements (a hang) where its copy
    // raises MemoryError at once, as in PyTorch.
    rows = contiguous(reshape(moveaxis(x, Shape{d}, Shape{0}), {x.dim(d), -1}));
  } else {
    rows = reshape(x, {-1});
  }
  const bool need_perm = want_indices || want_inverse || dim.has_value();
  Tensor perm;  // the order that sorts the rows; undefined: as they are
  Tensor sorted = rows;
  if (!consecutive) {
    if (rows.ndim() == 2) {
      perm = row_order(rows);
      sorted = index_select(rows, 0, perm);
    } else if (is_complex(rows.dtype())) {
      perm = stable_order(rows);
      sorted = index_select(rows, 0, perm);
    } else if (need_perm) {
      std::tie(sorted, perm) = sort_with_indices(rows, 0, false);
    } else {
      sorted = sort(rows, 0, false);
    }
  }
  const Tensor flags = run_starts(sorted);
  const Tensor starts = reshape(nonzero(flags), {-1});
  const Tensor first = perm.defined() ? index_select(perm, 0, starts) : starts;
  UniqueParts r;
  r.values = dim ? index_select(x, d, first) : index_select(sorted, 0, starts);
  if (want_indices) r.indices = first;
  if (want_inverse) {
    Tensor inv = subtract(cumulative_sum(flags, 0, DType::Int64, false), int64_number(1));
    if (perm.defined()) inv = scatter_permutation(perm, inv);
    r.inverse = dim ? inv : reshape(inv, x.shape());
  }
  if (want_counts) {
    const Tensor end = filled({1}, DType::Int64, x.device(), Scalar::from_int(rows.dim(0)));
    r.counts = diff(starts, 0, 1, nullptr, &end);
  }
  return r;
}

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool invert) {
  autograd::GradModeGuard no_grad(false);
  // (the promoted dtype first: a Python number stays weak; then it goes where the other is)
  const DType dt = result_type(elements, test_elements);
  Tensor a = astype(elements, dt, false), b = astype(test_elements, dt, false);
  if (elements.is_wrapped_number() && !test_elements.is_wrapped_number())
    a = to_device(a, b.device());
  if (test_elements.is_wrapped_number() && !elements.is_wrapped_number())
    b = to_device(b, a.device());
  check_same_device("isin", a, b);
  b = reshape(b, {-1});
  const int64_t m = b.dim(0);
  Tensor found;
  if (m == 0) {
    found = filled(a.shape(), DType::Bool, a.device(), Scalar::from_bool(false));
  } else if (is_complex(dt)) {  // no order: compare against every element
    found = any(binary_op(equal_def, expand_dims(a, a.ndim()), b), Axes(Shape{-1}), false);
  } else {
    const Tensor sb = sort(b, 0, false);
    const Tensor pos = binary_op(minimum_def, searchsorted(sb, contiguous(a), false, nullptr),
                                 int64_number(m - 1));
    found = binary_op(equal_def, reshape(index_select(sb, 0, reshape(pos, {-1})), a.shape()), a);
  }
  return invert ? unary_op(logical_not_def, found) : found;
}

Tensor cross_torch(const Tensor& input, const Tensor& other, std::optional<int64_t> dim) {
  if (!dim) {
    for (int64_t i = 0; i < input.ndim() && !dim; ++i)
      if (input.dim(i) == 3) dim = i;
    TS_CHECK(dim.has_value(), RuntimeError, "cross: no dimension of size 3 in input ",
             shape_str(input.shape()), " (other ", shape_str(other.shape()),
             "); hint: pass dim=, or use linalg.cross (the last dim)");
  }
  return cross(input, other, *dim);
}

}  // namespace ts

#include "ops/sort.h"

#include "autograd/function.h"
#include "autograd/record.h"
#include "core/shape.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(SortKernel, sort_stub, "sort");
TS_DEFINE_STUB(TopkKernel, topk_stub, "topk");
TS_DEFINE_STUB(SearchSortedKernel, searchsorted_stub, "searchsorted");

namespace {
void check_sortable(const char* op, const Tensor& x) {
  TS_CHECK(!is_complex(x.dtype()), TypeError, op, ": complex tensors have no order; got ",
           dtype_name(x.dtype()));
}

// Runs the sort kernel with `axis` moved last; outputs are allocated in x's shape.
void run_sort(const char* op, const Tensor& x, int64_t axis, bool descending, Tensor* values,
              Tensor* indices) {
  check_sortable(op, x);
  const int64_t nd = std::max<int64_t>(x.ndim(), 1);
  axis = normalize_axis(axis, nd, op);
  const Tensor xx = x.ndim() == 0 ? reshape(x, {1}) : x;
  TS_CHECK(xx.dim(axis) < (int64_t{1} << 32), NotImplementedError, op,
           ": axes of 2**32 or more elements are not supported");
  const int64_t last = xx.ndim() - 1;
  auto moved = [&](const Tensor& t) { return axis == last ? t : moveaxis(t, {axis}, {last}); };
  Tensor v, i;
  if (values) *values = Tensor::empty(x.shape(), x.dtype(), x.device());
  if (indices) *indices = Tensor::empty(x.shape(), DType::Int64, x.device());
  if (values) v = moved(x.ndim() == 0 ? reshape(*values, {1}) : *values);
  if (indices) i = moved(x.ndim() == 0 ? reshape(*indices, {1}) : *indices);
  sort_stub.get(x.device())(moved(xx), values ? &v : nullptr, indices ? &i : nullptr, descending);
}
}  // namespace

Tensor sort(const Tensor& x, int64_t axis, bool descending) {
  Tensor v;
  if (autograd::needs_grad({&x}) && x.ndim() > 0) {
    Tensor i;
    run_sort("sort", x, axis, descending, &v, &i);
    autograd::record_take_along(x, v, normalize_axis(axis, x.ndim(), "sort"), i);
    return v;
  }
  run_sort("sort", x, axis, descending, &v, nullptr);
  return v;
}

Tensor argsort(const Tensor& x, int64_t axis, bool descending) {
  Tensor i;
  run_sort("argsort", x, axis, descending, nullptr, &i);
  return i;
}

std::pair<Tensor, Tensor> sort_with_indices(const Tensor& x, int64_t axis, bool descending) {
  Tensor v, i;
  run_sort("sort", x, axis, descending, &v, &i);
  if (autograd::needs_grad({&x}) && x.ndim() > 0)
    autograd::record_take_along(x, v, normalize_axis(axis, x.ndim(), "sort"), i);
  return {v, i};
}

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  const int64_t nd = std::max<int64_t>(x.ndim(), 1);
  dim = normalize_axis(dim, nd, "topk");
  const int64_t size = x.ndim() == 0 ? 1 : x.dim(dim);
  TS_CHECK(k >= 0 && k <= size, ValueError, "topk: k (", k, ") must be in [0, ", size,
           "], the size of dim ", dim, " of input ", shape_str(x.shape()));
  check_sortable("topk", x);
  const Tensor xx = x.ndim() == 0 ? reshape(x, {1}) : x;
  Shape oshape = xx.shape();
  oshape[dim] = k;
  Tensor v = Tensor::empty(oshape, x.dtype(), x.device());
  Tensor i = Tensor::empty(oshape, DType::Int64, x.device());
  const int64_t last = xx.ndim() - 1;
  auto moved = [&](const Tensor& t) { return dim == last ? t : moveaxis(t, {dim}, {last}); };
  topk_stub.get(x.device())(moved(xx), moved(v), moved(i), k, largest);
  if (x.ndim() == 0) return {reshape(v, {}), reshape(i, {})};
  if (autograd::needs_grad({&x})) autograd::record_take_along(x, v, dim, i);
  return {v, i};
}

namespace {
// PyTorch's N-D form: row r of x2 searched in row r of x1 (same leading dims).
Tensor searchsorted_rows(const Tensor& x1, const Tensor& x2, bool right, const Tensor* sorter) {
  const Shape lead(x1.shape().begin(), x1.shape().end() - 1);
  TS_CHECK(x2.ndim() == x1.ndim() && Shape(x2.shape().begin(), x2.shape().end() - 1) == lead,
           ValueError, "searchsorted: x1 ", shape_str(x1.shape()), " and x2 ",
           shape_str(x2.shape()),
           " must have the same leading dims; hint: x1 is 1-d, or its rows are searched with ",
           "the matching rows of x2 (PyTorch's N-D form)");
  TS_CHECK(!sorter || sorter->shape() == x1.shape(), ValueError,
           "searchsorted: boundary and sorter must have the same size, but got boundary ",
           shape_str(x1.shape()), " and sorter ", shape_str(sorter ? sorter->shape() : Shape{}));
  Tensor out = Tensor::empty(x2.shape(), DType::Int64, x2.device());
  const int64_t rows = numel_of(lead);
  if (rows == 0 || out.numel() == 0) return out;
  const Tensor s = reshape(x1, {rows, x1.shape().back()}), v = reshape(x2, {rows, -1});
  const Tensor o = reshape(out, {rows, -1});
  const Tensor k = sorter ? reshape(*sorter, {rows, -1}) : Tensor();
  for (int64_t r = 0; r < rows; ++r) {
    const Tensor kr = sorter ? select(k, 0, r) : Tensor();
    copy_(select(o, 0, r),
          searchsorted(select(s, 0, r), select(v, 0, r), right, sorter ? &kr : nullptr));
  }
  return out;
}
}  // namespace

Tensor searchsorted(const Tensor& x1, const Tensor& x2, bool right, const Tensor* sorter) {
  TS_CHECK(x1.ndim() >= 1, ValueError, "searchsorted: x1 must be 1-d, got shape ",
           shape_str(x1.shape()));
  if (x1.ndim() > 1) return searchsorted_rows(x1, x2, right, sorter);
  check_sortable("searchsorted", x1);
  check_sortable("searchsorted", x2);
  // A Python number stays weak against a float x1; against an integer x1 it is compared at
  // full width (1.5 or 300 must not be cast into x1's dtype first).
  const DType common = x2.is_wrapped_number() && is_floating(x1.dtype())
                           ? x1.dtype()
                           : promote_types(x1.dtype(), x2.dtype());
  Tensor s = x1;
  if (sorter) {
    TS_CHECK(is_integral(sorter->dtype()), TypeError,
             "searchsorted: sorter must be an integer tensor, got ", dtype_name(sorter->dtype()));
    TS_CHECK(sorter->shape() == x1.shape(), ValueError, "searchsorted: sorter ",
             shape_str(sorter->shape()), " must have x1's shape ", shape_str(x1.shape()));
    s = index_select(x1, 0, *sorter);
  }
  s = contiguous(astype(s, common, false));
  check_same_device("searchsorted", x1, x2);
  // a Python number (a 0-d CPU tensor) searched in a device tensor moves there: the kernel
  // reads both, and the result lives on x1's device (PyTorch's)
  const Tensor v = contiguous(astype(to_device(x2, x1.device()), common, false));
  Tensor out = Tensor::empty(x2.shape(), DType::Int64, x1.device());
  searchsorted_stub.get(x1.device())(s, v, out, right);
  return out;
}

}  // namespace ts

// Bindings for PyTorch's gather/scatter/index/masked family and take_along_axis (every
// argument form parsed here), and the private entry points of sorting and searching (the
// Python layer, _sorting.py and _searching.py, adds their keyword handling and docstrings).
#include <pybind11/stl.h>

#include "autograd/record.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/indexing_advanced.h"
#include "ops/indexing_scatter.h"
#include "ops/masked.h"
#include "ops/sort.h"
#include "ops/views.h"
#include "python/convert.h"
#include "python/elementwise_binding.h"
#include "python/function_method.h"
#include "python/input_arg.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {

// ---- PyTorch's index-based selection and update (gather, scatter, scatter_add, index_select,
// index_add, masked_fill, masked_select) and the standard's take_along_axis: every argument
// form parsed here once (dim positional or keyword, out=, alpha=, sparse_grad= accepted and
// ignored); the ops check shapes and dtypes and name themselves. Tensor.gather is ts.gather
// (Note [One function, two spellings]); the in-place forms are methods.
Tensor operand(py::handle h, const char* op) { return operand_or_throw(h, op); }

// The src / source of scatter, scatter_add and index_add: a tensor of self's dtype (torch's
// RuntimeError otherwise, never a silent cast); an array-like is read as a tensor.
Tensor src_like(py::handle src, const Tensor& x, const char* op, const char* what) {
  Tensor s = operand(src, op);
  if (py::isinstance<Tensor>(src) && s.dtype() != x.dtype())
    throw RuntimeError(str(op, ": expected self (", dtype_name(x.dtype()), ") and ", what, " (",
                           dtype_name(s.dtype()), ") to have the same dtype; hint: cast ", what,
                           " with .to(self.dtype)"));
  return s;
}

// scatter's src: a tensor (or array-like) of x's dtype, or a number given as src or value= (one
// of them; a number takes x's dtype).
Tensor scatter_src(py::handle src, py::handle value, const Tensor& x, const char* op) {
  if (src.is_none() == value.is_none())
    throw py::type_error(std::string(op) + (src.is_none()
                                                ? ": pass src (a tensor) or value (a number)"
                                                : ": pass only one of src and value"));
  return src.is_none() ? operand(value, op) : src_like(src, x, op, "src");
}

// reduce=None / 'add' as a flag; 'multiply' is -1 (scatter_reduce's 'prod', include_self).
int scatter_reduce_mode(py::handle reduce, const char* op) {
  if (reduce.is_none()) return 0;
  const std::string r = py::str(reduce);
  if (r == "add") return 1;
  if (r == "multiply") return -1;
  throw ValueError(str(op, ": reduce must be None, 'add' or 'multiply', got '", r, "'"));
}

// reduce='multiply': scatter_reduce's prod (include_self), with a number src filled to index's
// shape in x's dtype.
Tensor scatter_multiply(const Tensor& x, int64_t dim, const Tensor& index, Tensor src) {
  if (src.ndim() == 0) src = broadcast_to(astype(src, x.dtype(), false), index.shape());
  return scatter_reduce(x, dim, index, src, ScatterReduceOp::Prod, true);
}

Tensor scatter_py(const Tensor& x, py::handle dim, py::handle index, py::handle src,
                  py::handle value, py::handle reduce, const char* op) {
  const int64_t d = int_arg(dim, op, "dim");
  const Tensor idx = operand(index, op), s = scatter_src(src, value, x, op);
  const int mode = scatter_reduce_mode(reduce, op);
  return mode < 0 ? scatter_multiply(x, d, idx, s) : scatter(x, d, idx, s, mode > 0);
}

Tensor index_add_py(const Tensor& x, py::handle dim, py::handle index, py::handle source,
                    py::handle alpha, const char* op) {
  Tensor src = src_like(source, x, op, "source");
  const Scalar a = alpha_of(alpha, op);
  if (!(a.kind == ScalarKind::Int && a.i == 1)) src = multiply(src, wrap_scalar(a));
  return index_add(x, int_arg(dim, op, "dim"), operand(index, op), src);
}

constexpr const char* kGatherDoc =
    "gather(input, dim, index, *, sparse_grad=False, out=None)\n--\n\n"
    "out[i][j][k] = input[index[i][j][k]][j][k] for dim=0 (and so on): index is an integer\n"
    "tensor of input's rank, no larger than input in any dim but `dim`; the result has index's\n"
    "shape and input's dtype. sparse_grad is accepted and ignored (dense gradients).";
constexpr const char* kScatterDoc =
    "scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None)\n--\n\n"
    "A copy of input with out[index[i][j]][j] = src[i][j] for dim=0. src is a tensor (at least\n"
    "index's size in every dim) or a number (also as value=). Repeated indices: the last write\n"
    "wins; reduce='add' accumulates, reduce='multiply' multiplies.";
constexpr const char* kScatterAddDoc =
    "scatter_add(input, dim, index, src, *, out=None)\n--\n\n"
    "A copy of input with out[index[i][j]][j] += src[i][j] for dim=0; repeated indices "
    "accumulate.";
constexpr const char* kIndexSelectDoc =
    "index_select(input, dim, index, *, out=None)\n--\n\n"
    "The slices of input at the 0-d or 1-d integer `index` along `dim` (a copy; input's shape\n"
    "with `dim` replaced by len(index)).";
constexpr const char* kIndexAddDoc =
    "index_add(input, dim, index, source, *, alpha=1, out=None)\n--\n\n"
    "A copy of input with out.select(dim, index[i]) += alpha * source.select(dim, i); repeated\n"
    "indices accumulate. source has input's shape with `dim` of len(index).";
constexpr const char* kMaskedFillDoc =
    "masked_fill(input, mask, value)\n--\n\n"
    "input with `value` (a number or 0-d tensor, cast to input's dtype) where the bool `mask`\n"
    "(broadcastable to input) is True.";
constexpr const char* kMaskedSelectDoc =
    "masked_select(input, mask, *, out=None)\n--\n\n"
    "The 1-d tensor of input's elements where `mask` is True, input and mask broadcast\n"
    "together (row-major order).";
constexpr const char* kTakeAlongAxisDoc =
    "take_along_axis(x, indices, /, *, axis=-1)\n--\n\n"
    "out[..., j, ...] = x[..., indices[..., j, ...], ...] along `axis` (NumPy's take_along_axis):\n"
    "x and indices have the same rank and broadcast against each other in every other axis.";

void def_gather_scatter(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def(
      "gather",
      [](py::handle x, py::handle dim, py::handle index, py::handle, py::handle out) {
        const Tensor t = operand(x, "gather"), i = operand(index, "gather");
        return result_or_out("gather", gather(t, int_arg(dim, "gather", "dim"), i), out,
                             OutDtype::Exact, {&t, &i});
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::kw_only(),
      py::arg("sparse_grad") = false, py::arg("out") = py::none(), kGatherDoc);
  m.def(
      "scatter",
      [](py::handle x, py::handle dim, py::handle index, py::handle src, py::handle value,
         py::handle reduce, py::handle out) {
        return result_or_out(
            "scatter", scatter_py(operand(x, "scatter"), dim, index, src, value, reduce, "scatter"),
            out, OutDtype::Exact);
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("src") = py::none(),
      py::kw_only(), py::arg("value") = py::none(), py::arg("reduce") = py::none(),
      py::arg("out") = py::none(), kScatterDoc);
  m.def(
      "scatter_add",
      [](py::handle x, py::handle dim, py::handle index, py::handle src, py::handle out) {
        const char* op = "scatter_add";
        const Tensor t = operand(x, op);
        return result_or_out(op,
                             scatter(t, int_arg(dim, op, "dim"), operand(index, op),
                                     src_like(src, t, op, "src"), true),
                             out, OutDtype::Exact);
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("src"), py::kw_only(),
      py::arg("out") = py::none(), kScatterAddDoc);
  m.def(
      "index_select",
      [](py::handle x, py::handle dim, py::handle index, py::handle out) {
        const char* op = "index_select";
        const Tensor t = operand(x, op), i = operand(index, op);
        return result_or_out(op, index_select(t, int_arg(dim, op, "dim"), i), out, OutDtype::Exact,
                             {&t, &i});
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::kw_only(),
      py::arg("out") = py::none(), kIndexSelectDoc);
  m.def(
      "index_add",
      [](py::handle x, py::handle dim, py::handle index, py::handle source, py::handle alpha,
         py::handle out) {
        return result_or_out(
            "index_add",
            index_add_py(operand(x, "index_add"), dim, index, source, alpha, "index_add"), out,
            OutDtype::Exact);
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("source"), py::kw_only(),
      py::arg("alpha") = 1, py::arg("out") = py::none(), kIndexAddDoc);
  m.def(
      "masked_fill",
      [](py::handle x, py::handle mask, py::handle value) {
        return masked_fill(operand(x, "masked_fill"), operand(mask, "masked_fill"),
                           operand(value, "masked_fill"), "masked_fill");
      },
      py::arg("input"), py::arg("mask"), py::arg("value"), kMaskedFillDoc);
  m.def(
      "masked_select",
      [](py::handle x, py::handle mask, py::handle out) {
        return result_or_out(
            "masked_select",
            masked_select(operand(x, "masked_select"), operand(mask, "masked_select")), out,
            OutDtype::Exact);
      },
      py::arg("input"), py::arg("mask"), py::kw_only(), py::arg("out") = py::none(),
      kMaskedSelectDoc);
  m.def(
      "take_along_axis",
      [](py::handle x, py::handle indices, py::handle axis) {
        const char* op = "take_along_axis";
        return take_along_axis(operand(x, op), operand(indices, op), int_arg(axis, op, "axis"),
                               true);
      },
      py::arg("x"), py::arg("indices"), py::pos_only(), py::kw_only(), py::arg("axis") = -1,
      kTakeAlongAxisDoc);
  bind_functions_as_methods(m, {"gather", "scatter", "scatter_add", "index_select", "index_add",
                                "masked_fill", "masked_select"});

  // The in-place forms: x.scatter_(...), x.scatter_add_(...), x.index_add_(...),
  // x.masked_fill_(...); each returns self.
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "scatter_",
      [](py::object self, py::handle dim, py::handle index, py::handle src, py::handle value,
         py::handle reduce) {
        const char* op = "scatter_";
        const Tensor& x = self_of(self, op);
        if (scatter_reduce_mode(reduce, op) < 0) {
          autograd::check_inplace(x, op);
          assign_inplace_result(op, x, scatter_py(x, dim, index, src, value, reduce, op));
        } else {
          scatter_(x, int_arg(dim, op, "dim"), operand(index, op),
                   scatter_src(src, value, x, op), scatter_reduce_mode(reduce, op) > 0);
        }
        return self;
      },
      py::arg("dim"), py::arg("index"), py::arg("src") = py::none(), py::kw_only(),
      py::arg("value") = py::none(), py::arg("reduce") = py::none(),
      "scatter_($self, /, dim, index, src=None, *, value=None, reduce=None)\n--\n\n"
      "In-place scatter (see ts.scatter); returns self.");
  cls.def(
      "scatter_add_",
      [](py::object self, py::handle dim, py::handle index, py::handle src) {
        const char* op = "scatter_add_";
        const Tensor& x = self_of(self, op);
        scatter_(x, int_arg(dim, op, "dim"), operand(index, op), src_like(src, x, op, "src"), true);
        return self;
      },
      py::arg("dim"), py::arg("index"), py::arg("src"),
      "scatter_add_($self, /, dim, index, src)\n--\n\n"
      "In-place scatter_add (see ts.scatter_add); returns self.");
  cls.def(
      "index_add_",
      [](py::object self, py::handle dim, py::handle index, py::handle source, py::handle alpha) {
        const char* op = "index_add_";
        const Tensor& x = self_of(self, op);
        autograd::check_inplace(x, op);
        assign_inplace_result(op, x, index_add_py(x, dim, index, source, alpha, op));
        return self;
      },
      py::arg("dim"), py::arg("index"), py::arg("source"), py::kw_only(), py::arg("alpha") = 1,
      "index_add_($self, /, dim, index, source, *, alpha=1)\n--\n\n"
      "In-place index_add (see ts.index_add); returns self.");
  cls.def(
      "masked_fill_",
      [](py::object self, py::handle mask, py::handle value) {
        const char* op = "masked_fill_";
        masked_fill_(self_of(self, op), operand(mask, op), operand(value, op), op);
        return self;
      },
      py::arg("mask"), py::arg("value"),
      "masked_fill_($self, /, mask, value)\n--\n\n"
      "In-place masked_fill (see ts.masked_fill); returns self.");
}

// ---- nonzero / argwhere, index_fill / index_copy
// ts.nonzero follows the standard (a tuple of x.ndim index tensors); x.nonzero() follows
// PyTorch ((count, ndim) coordinates, or the tuple with as_tuple=True); ts.argwhere is NumPy's
// name for PyTorch's form.
py::tuple coordinate_columns(const Tensor& coords, int64_t ndim) {
  py::tuple out(ndim);
  for (int64_t j = 0; j < ndim; ++j) out[j] = py::cast(select(coords, 1, j));
  return out;
}

constexpr const char* kNonzeroDoc =
    "nonzero(x, /, *, as_tuple=None)\n--\n\n"
    "Indices of the nonzero (truthy) elements: a tuple of x.ndim int64 tensors of equal length,\n"
    "in row-major order (array API / NumPy); 0-d input raises ValueError, as in NumPy 2. With\n"
    "PyTorch's as_tuple=False: one (count, x.ndim) int64 tensor (as argwhere and x.nonzero()).";
constexpr const char* kArgwhereDoc =
    "argwhere(x, /)\n--\n\n"
    "Coordinates of the nonzero elements as one (count, x.ndim) int64 tensor (NumPy's argwhere,\n"
    "torch's x.nonzero()).";
constexpr const char* kIndexFillDoc =
    "index_fill(input, dim, index, value)\n--\n\n"
    "input with the slices at `index` (an integer vector; negative counts from the end) along\n"
    "`dim` set to `value` (a number or 0-d tensor, cast to input's dtype).";
constexpr const char* kIndexCopyDoc =
    "index_copy(input, dim, index, source, *, out=None)\n--\n\n"
    "input with input.select(dim, index[i]) replaced by source.select(dim, i); source has input's\n"
    "dtype and input's shape with `dim` of len(index). Repeated indices: the last write wins.";

void def_nonzero_index_fill(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def(
      "nonzero",
      [](py::handle x, py::handle as_tuple) -> py::object {
        const Tensor t = operand(x, "nonzero");
        if (!as_tuple.is_none() && !PyObject_IsTrue(as_tuple.ptr())) return py::cast(nonzero(t));
        if (t.ndim() == 0)
          throw ValueError(
              "nonzero: 0-d tensors are not supported; hint: use x[None], "
              "argwhere(x) or x.nonzero()");
        return coordinate_columns(nonzero(t), t.ndim());
      },
      py::arg("x"), py::pos_only(), py::kw_only(), py::arg("as_tuple") = py::none(), kNonzeroDoc);
  m.def(
      "argwhere", [](py::handle x) { return nonzero(operand(x, "argwhere")); }, py::arg("x"),
      py::pos_only(), kArgwhereDoc);
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "nonzero",
      [](const Tensor& self, bool as_tuple) -> py::object {
        if (!as_tuple) return py::cast(nonzero(self));
        if (self.ndim() == 0) return coordinate_columns(nonzero(reshape(self, {1})), 1);
        return coordinate_columns(nonzero(self), self.ndim());
      },
      py::kw_only(), py::arg("as_tuple") = false,
      "nonzero($self, /, *, as_tuple=False)\n--\n\n"
      "torch.Tensor.nonzero: a (count, ndim) int64 tensor of the nonzero elements' coordinates,\n"
      "or with as_tuple=True a tuple of 1-d index tensors (one for 0-d input, as PyTorch).");
  cls.def(
      "argwhere", [](const Tensor& self) { return nonzero(self); },
      "argwhere($self, /)\n--\n\nThe (count, ndim) int64 coordinates of the nonzero elements "
      "(ts.argwhere, which also takes array-likes).");
  m.def(
      "index_fill",
      [](py::handle x, py::handle dim, py::handle index, py::handle value) {
        const char* op = "index_fill";
        return index_fill(tensor_or_throw(x, op, "input"), int_arg(dim, op, "dim"),
                          operand(index, op), operand(value, op));
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("value"), kIndexFillDoc);
  m.def(
      "index_copy",
      [](py::handle x, py::handle dim, py::handle index, py::handle source, py::handle out) {
        const char* op = "index_copy";
        return result_or_out(op,
                             index_copy(tensor_or_throw(x, op, "input"), int_arg(dim, op, "dim"),
                                        operand(index, op), tensor_or_throw(source, op, "source")),
                             out, OutDtype::Exact);
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("source"), py::kw_only(),
      py::arg("out") = py::none(), kIndexCopyDoc);
  bind_functions_as_methods(m, {"index_fill", "index_copy"});
}

// ---- sort / argsort / topk (Note [sort forms]): every argument form parsed here once, for
// the namespace function and the Tensor method alike.
//
// Note [sort forms]: the standard spells sort(x, /, *, axis=-1, descending=False, stable=True)
// and returns the sorted values; PyTorch's sort(input, dim=-1, descending=False, *, stable)
// returns (values, indices). A call with a dim (positional or dim=) is PyTorch's, as is every
// x.sort(); one with axis= or no dim is the standard's. argsort returns indices either way.
// The flags are bools (TypeError otherwise, as PyTorch's parser; sort's stable= may be None).
// The sort is always stable, so stable= only checks its type. Order: Note [Sort order].
bool flag_arg(py::handle h, const char* op, const char* name, bool none_ok = false) {
  if (none_ok && h.is_none()) return true;
  if (!PyBool_Check(h.ptr()))
    throw py::type_error(str(op, "(): argument '", name, "' must be bool, not ", type_name(h)));
  return h.ptr() == Py_True;
}

// dim= and its alias axis= (missing() when not given); -1 when neither is.
int64_t sort_dim(py::handle dim, py::handle axis, const char* op) {
  const bool has_dim = !dim.is(missing()), has_axis = !axis.is(missing());
  if (has_dim && has_axis)
    throw py::type_error(str(op, ": got both axis= and its alias dim=; pass one"));
  if (!has_dim && !has_axis) return -1;
  return int_arg(has_dim ? dim : axis, op, "dim");
}

// sort (argsort: the indices only) in every form; `method`: x.sort / x.argsort (PyTorch's).
py::object sort_forms(bool arg, py::handle x, py::handle dim, py::handle descending,
                      py::handle stable, py::handle axis, bool method) {
  const char* op = arg ? "argsort" : "sort";
  const Tensor t = method ? tensor_or_throw(x, op, "self") : operand_or_throw(x, op);
  const int64_t d = sort_dim(dim, axis, op);
  const bool desc = flag_arg(descending, op, "descending");
  flag_arg(stable, op, "stable", !arg);  // torch: sort's stable may be None, argsort's not
  if (arg) return py::cast(argsort(t, d, desc));
  if (!method && dim.is(missing())) return py::cast(sort(t, d, desc));  // the standard's
  const auto vi = sort_with_indices(t, d, desc);
  return return_type("sort")(vi.first, vi.second);
}

py::object topk_py(py::handle x, py::handle k, py::handle dim, py::handle largest,
                   py::handle sorted) {
  const char* op = "topk";
  const Tensor t = operand_or_throw(x, op);
  const int64_t kk = int_arg(k, op, "k");
  const int64_t d = int_arg(dim, op, "dim");
  const bool large = flag_arg(largest, op, "largest");
  flag_arg(sorted, op, "sorted");  // the result is sorted either way
  const auto vi = topk(t, kk, d, large);
  return return_type("topk")(vi.first, vi.second);
}

void def_sort(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  const py::handle unset = missing();
  const py::bool_ no(false), yes(true);
  struct Form {
    const char* name;
    const char* doc;
    const char* method_doc;
  };
  const Form forms[] = {
      {"sort",
       "sort(x, /, dim=-1, descending=False, stable=True, *, axis=-1)\n--\n\n"
       "The sorted copy of x along axis (the standard's form: values only) or, given a dim\n"
       "(positional or dim=), PyTorch's (values, indices). Stable in both directions;\n"
       "descending puts NaNs first (Note [sort forms]).",
       "sort($self, /, dim=-1, descending=False, *, stable=True)\n--\n\n"
       "torch.Tensor.sort: (values, indices) along dim (stable)."},
      {"argsort",
       "argsort(x, /, dim=-1, descending=False, stable=True, *, axis=-1)\n--\n\n"
       "int64 indices that sort x along dim / axis (take_along_axis(x, argsort(x)) is\n"
       "sorted); ties keep their original order.",
       "argsort($self, /, dim=-1, descending=False, *, stable=True)\n--\n\n"
       "torch.Tensor.argsort: int64 indices that sort along dim (stable)."}};
  for (const Form& f : forms) {
    const bool arg = f.name[0] == 'a';
    m.def(
        f.name,
        [arg](py::handle x, py::handle dim, py::handle descending, py::handle stable,
              py::handle axis) { return sort_forms(arg, x, dim, descending, stable, axis, false); },
        py::arg("x"), py::pos_only(), py::arg("dim") = unset, py::arg("descending") = no,
        py::arg("stable") = yes, py::kw_only(), py::arg("axis") = unset, f.doc);
    cls.def(
        f.name,
        [arg](py::handle self, py::handle dim, py::handle descending, py::handle stable) {
          return sort_forms(arg, self, dim, descending, stable, missing(), true);
        },
        py::arg("dim") = -1, py::arg("descending") = no, py::kw_only(), py::arg("stable") = yes,
        f.method_doc);
  }
  m.def("topk", &topk_py, py::arg("input"), py::arg("k"), py::arg("dim") = -1,
        py::arg("largest") = yes, py::arg("sorted") = yes,
        "topk(input, k, dim=-1, largest=True, sorted=True)\n--\n\n"
        "torch.topk: the k largest (largest=False: smallest) elements along dim as (values,\n"
        "indices), in sorted order (NaN counts as the largest value); among equal values the\n"
        "lower index comes first. sorted=False gives the same sorted result.");
  bind_functions_as_methods(m, {"topk"});
}

}  // namespace

void init_search(py::module_& m) {
  def_sort(m);
  def_gather_scatter(m);
  def_nonzero_index_fill(m);
  auto t = [](py::handle h, const char* op) { return operand_or_throw(h, op); };
  m.def("_scatter_permutation", [=](py::handle perm, py::handle values) {
    return scatter_permutation(t(perm, "scatter_permutation"), t(values, "scatter_permutation"));
  });
  m.def("_sort", [=](py::handle x, int64_t axis, bool descending) {
    return sort(t(x, "sort"), axis, descending);
  });
  m.def("_sort_with_indices", [=](py::handle x, int64_t axis, bool descending) {
    return sort_with_indices(t(x, "sort"), axis, descending);
  });
  m.def("_searchsorted", [=](py::handle x1, py::handle x2, bool right, py::handle sorter) {
    Tensor s;
    if (!sorter.is_none()) s = t(sorter, "searchsorted");
    return searchsorted(t(x1, "searchsorted"), t(x2, "searchsorted"), right,
                        sorter.is_none() ? nullptr : &s);
  });
}

}  // namespace ts::python

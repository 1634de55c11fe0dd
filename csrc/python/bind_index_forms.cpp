// Bindings of PyTorch's scatter reductions and index writes (ops/indexing_scatter.h), and of the
// functions that take both the array API's and PyTorch's argument forms: where (torch's
// one-argument form), round (decimals=), searchsorted (side=/right=/sorter=/out_int32=, N-D).
// Every form is parsed here once, with the signatures inspect.signature shows (Note [Readable
// signatures]); the ops check shapes and dtypes and name themselves.
#include "autograd/record.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/indexing_advanced.h"
#include "ops/indexing_scatter.h"
#include "ops/rounding.h"
#include "ops/sort.h"
#include "ops/views.h"
#include "ops/where.h"
#include "python/convert.h"
#include "python/elementwise_binding.h"
#include "python/function_method.h"
#include "python/input_arg.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {

Tensor operand(py::handle h, const char* op) { return operand_or_throw(h, op); }

ScatterReduceOp reduce_arg(py::handle reduce, const char* op) {
  if (!py::isinstance<py::str>(reduce))
    throw py::type_error(std::string(op) + ": reduce must be a str ('sum', 'prod', 'mean', " +
                         "'amax' or 'amin'), got " +
                         py::type::handle_of(reduce).attr("__name__").cast<std::string>());
  return scatter_reduce_op(reduce.cast<std::string>(), op);
}

Tensor scatter_reduce_py(const Tensor& x, py::handle dim, py::handle index, py::handle src,
                         py::handle reduce, bool include_self, const char* op) {
  return scatter_reduce(x, int_arg(dim, op, "dim"), operand(index, op),
                        tensor_or_throw(src, op, "src"), reduce_arg(reduce, op), include_self);
}

constexpr const char* kScatterReduceDoc =
    "scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None)\n--\n\n"
    "A copy of input with src's values reduced into the elements index addresses along `dim`\n"
    "(out[index[i][j]][j] op= src[i][j] for dim=0), reduce one of 'sum', 'prod', 'mean', 'amax',\n"
    "'amin'. include_self=False leaves input's own values out where something is scattered.\n"
    "src has input's dtype; repeated indices combine. Differentiable in input and src.";

Tensor index_reduce_py(const Tensor& x, py::handle dim, py::handle index, py::handle source,
                       py::handle reduce, bool include_self, const char* op) {
  if (!py::isinstance<py::str>(reduce))
    throw py::type_error(str(op, "(): argument 'reduce' must be str, not ", type_name(reduce)));
  return index_reduce(x, int_arg(dim, op, "dim"), tensor_or_throw(index, op, "index"),
                      tensor_or_throw(source, op, "source"), reduce.cast<std::string>(),
                      include_self, op);
}

constexpr const char* kIndexReduceDoc =
    "index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None)\n--\n\n"
    "A copy of input with source's slices along `dim` reduced into input's slices index[i]\n"
    "with reduce 'prod', 'mean', 'amax' or 'amin' (repeated indices combine);\n"
    "include_self=False leaves input's own values out where something is reduced.\n"
    "Differentiable in input and source.";

// fill_diagonal_'s value: a Python number or a one-element tensor.
Scalar fill_value_of(py::handle h, const char* op) {
  Scalar s;
  if (PyBool_Check(h.ptr())) return Scalar::from_bool(h.ptr() == Py_True);
  if (to_scalar(h, s)) return s;
  if (py::isinstance<Tensor>(h) && h.cast<const Tensor&>().numel() == 1)
    return item(h.cast<const Tensor&>());
  throw py::type_error(str(op, "(): argument 'fill_value' must be Number, not ", type_name(h)));
}

// torch.where(condition): the standard's nonzero tuple (one index tensor for 0-d, as PyTorch).
py::tuple where_indices(const Tensor& c) {
  const Tensor cc = c.ndim() == 0 ? reshape(c, {1}) : c;
  const Tensor coords = nonzero(cc);
  py::tuple out(cc.ndim());
  for (int64_t j = 0; j < cc.ndim(); ++j) out[j] = py::cast(select(coords, 1, j));
  return out;
}

py::object where_py(py::handle condition, py::handle x, py::handle other, py::handle out) {
  const char* op = "where";
  const bool has_x = !x.is(missing()), has_other = !other.is(missing());
  if (!has_x && !has_other) {
    no_out(out, op);
    return where_indices(operand_or_throw(condition, op));
  }
  if (has_x != has_other)
    throw py::type_error(std::string("where() missing required argument '") +
                         (has_x ? "other" : "input") +
                         "'; hint: where(condition, input, other), or where(condition) alone");
  return result_or_out(
      op,
      where(operand_or_throw(condition, op), operand_or_throw(x, op), operand_or_throw(other, op)),
      out, OutDtype::Exact);
}

int64_t decimals_arg(py::handle decimals) { return int_arg(decimals, "round", "decimals"); }

py::object searchsorted_py(py::handle seq, py::handle values, py::handle side, py::handle sorter,
                           py::handle right, bool out_int32, py::handle out) {
  const char* op = "searchsorted";
  bool r = false;
  if (!side.is_none()) {
    const std::string sd = py::isinstance<py::str>(side) ? side.cast<std::string>() : "";
    if (sd != "left" && sd != "right")
      throw ValueError(
          str(op, ": side must be 'left' or 'right', got ", py::repr(side).cast<std::string>()));
    r = sd == "right";
  }
  if (!right.is_none()) {
    const bool rr = PyObject_IsTrue(right.ptr()) == 1;
    if (!side.is_none() && rr != r)
      throw RuntimeError(str(op, ": side and right can't be set to opposites, got side of ",
                             r ? "right" : "left", " while right was ", rr ? "True" : "False"));
    r = rr;
  }
  Tensor k;
  if (!sorter.is_none()) k = operand_or_throw(sorter, op);
  Tensor res = searchsorted(operand_or_throw(seq, op), operand_or_throw(values, op), r,
                            sorter.is_none() ? nullptr : &k);
  if (out_int32) res = astype(res, DType::Int32, false);
  return result_or_out(op, res, out, OutDtype::Exact);
}

constexpr const char* kWhereDoc =
    "where(condition, input, other, *, out=None)\n--\n\n"
    "Elements of input where condition is true, else of other; all three broadcast together\n"
    "(the standard's where(condition, x1, x2)). The result dtype promotes input and other\n"
    "(Python numbers are weak); condition is read as bool. where(condition) alone is\n"
    "nonzero(condition) as a tuple of index tensors (PyTorch).";
constexpr const char* kRoundDoc =
    "round(x, /, *, decimals=0, out=None)\n--\n\n"
    "x rounded to the nearest integer, ties to even (both parts for complex). decimals=d rounds\n"
    "to d decimal places as PyTorch computes it (round(x * 10**d) / 10**d; d < 0 rounds to tens,\n"
    "hundreds, ...).";
constexpr const char* kSearchsortedDoc =
    "searchsorted(sorted_sequence, values, /, *, side=None, sorter=None, right=None, "
    "out_int32=False, out=None)\n--\n\n"
    "Insertion points (int64, values' shape) that keep the ascending sorted_sequence sorted:\n"
    "side='left' (the default) gives the first such position, 'right' (or PyTorch's right=True)\n"
    "the last. Compared in the promoted dtype, NaNs sorting last. sorter (integer indices) sorts\n"
    "the sequence when it is not sorted itself. An N-D sequence is searched row by row with the\n"
    "rows of values (same leading dims, PyTorch's form). out_int32=True returns int32.";

// index_put's indices: a tuple or list of tensors (array-likes) or None (a full slice).
std::vector<Tensor> indices_arg(py::handle indices, const char* op) {
  if (!py::isinstance<py::tuple>(indices) && !py::isinstance<py::list>(indices))
    throw py::type_error(std::string(op) + ": indices must be a tuple of tensors, got " +
                         type_name(indices) + "; hint: pass (index,) for one index tensor");
  std::vector<Tensor> out;
  for (py::handle h : indices) out.push_back(h.is_none() ? Tensor() : operand(h, op));
  return out;
}

// values / source: a tensor, or a number / array-like taken in x's dtype.
Tensor values_arg(py::handle v, const Tensor& x, const char* op) {
  if (py::isinstance<Tensor>(v)) return v.cast<Tensor>();
  return astype(operand(v, op), x.dtype(), false);
}

constexpr const char* kIndexPutDoc =
    "index_put(input, indices, values, accumulate=False)\n--\n\n"
    "A copy of input with input[indices] = values (indices: a tuple of index tensors, None for a\n"
    "full slice; values broadcast to the selection, of input's dtype). accumulate=True adds\n"
    "instead, summing repeated indices. Differentiable in input and values.";
constexpr const char* kMaskedScatterDoc =
    "masked_scatter(input, mask, source)\n--\n\n"
    "A copy of input with the positions where the bool `mask` (broadcast to input) is True\n"
    "filled, in row-major order, by the first elements of `source` (input's dtype).";
constexpr const char* kPutDoc =
    "put(input, index, source, accumulate=False)\n--\n\n"
    "A copy of input, seen flattened, with input.flatten()[index] = source (+= with\n"
    "accumulate=True, summing repeated indices); index and source have equally many elements.";

std::optional<int64_t> opt_int(py::handle h, const char* op, const char* name) {
  if (h.is_none()) return std::nullopt;
  return int_arg(h, op, name);
}

constexpr const char* kSelectScatterDoc =
    "select_scatter(input, src, dim, index)\n--\n\n"
    "A copy of input with input.select(dim, index) replaced by src (of that slice's shape).";
constexpr const char* kSliceScatterDoc =
    "slice_scatter(input, src, dim=0, start=None, end=None, step=1)\n--\n\n"
    "A copy of input with input[..., start:end:step, ...] (at dim) replaced by src (of that\n"
    "slice's shape).";
constexpr const char* kDiagonalScatterDoc =
    "diagonal_scatter(input, src, offset=0, dim1=0, dim2=1)\n--\n\n"
    "A copy of input with its diagonal (offset, dim1, dim2) replaced by src (of the diagonal's\n"
    "shape).";
constexpr const char* kNonzeroStaticDoc =
    "nonzero_static(input, *, size, fill_value=-1)\n--\n\n"
    "nonzero() as a (size, ndim) int64 tensor: the coordinates of the nonzero elements cut to\n"
    "`size` rows, or padded with rows of fill_value.";

// take's indices: positionally, or as torch's index= or the standard's indices= (one of them).
Tensor take_indices(py::handle index, py::handle indices) {
  const bool a = !index.is(missing()), b = !indices.is(missing());
  if (a && b) throw py::type_error("take() got multiple values for argument 'index'");
  if (!a && !b) throw py::type_error("take() missing required argument 'index' (pos 2)");
  return operand(a ? index : indices, "take");
}

constexpr const char* kTakeDoc =
    "take(input, index, *, axis=None)\n--\n\n"
    "Elements of input at the integer `index` (also indices=) along `axis` (a copy), of shape\n"
    "input.shape[:axis] + index.shape + input.shape[axis+1:]; with axis=None input is flattened\n"
    "first (torch.take, NumPy). Negative indices count from the end.";

}  // namespace

void init_index_forms(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def(
      "scatter_reduce",
      [](py::handle x, py::handle dim, py::handle index, py::handle src, py::handle reduce,
         bool include_self, py::handle out) {
        const char* op = "scatter_reduce";
        return result_or_out(op,
                             scatter_reduce_py(tensor_or_throw(x, op, "input"), dim, index, src,
                                               reduce, include_self, op),
                             out, OutDtype::Exact);
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce"),
      py::kw_only(), py::arg("include_self") = true, py::arg("out") = py::none(),
      kScatterReduceDoc);
  bind_functions_as_methods(m, {"scatter_reduce"});
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "scatter_reduce_",
      [](py::object self, py::handle dim, py::handle index, py::handle src, py::handle reduce,
         bool include_self) {
        const char* op = "scatter_reduce_";
        const Tensor& x = self_of(self, op);
        autograd::check_inplace(x, op);
        assign_inplace_result(op, x,
                              scatter_reduce_py(x, dim, index, src, reduce, include_self, op));
        return self;
      },
      py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce"), py::kw_only(),
      py::arg("include_self") = true,
      "scatter_reduce_($self, /, dim, index, src, reduce, *, include_self=True)\n--\n\n"
      "In-place scatter_reduce (see ts.scatter_reduce); returns self.");

  m.def(
      "index_put",
      [](py::handle x, py::handle indices, py::handle values, bool accumulate) {
        const char* op = "index_put";
        const Tensor& t = tensor_or_throw(x, op, "input");
        return index_put(t, indices_arg(indices, op), values_arg(values, t, op), accumulate);
      },
      py::arg("input"), py::arg("indices"), py::arg("values"), py::arg("accumulate") = false,
      kIndexPutDoc);
  m.def(
      "masked_scatter",
      [](py::handle x, py::handle mask, py::handle source) {
        const char* op = "masked_scatter";
        return masked_scatter(tensor_or_throw(x, op, "input"), operand(mask, op),
                              tensor_or_throw(source, op, "source"));
      },
      py::arg("input"), py::arg("mask"), py::arg("source"), kMaskedScatterDoc);
  m.def(
      "put",
      [](py::handle x, py::handle index, py::handle source, bool accumulate) {
        const char* op = "put";
        return put(tensor_or_throw(x, op, "input"), operand(index, op),
                   tensor_or_throw(source, op, "source"), accumulate);
      },
      py::arg("input"), py::arg("index"), py::arg("source"), py::arg("accumulate") = false,
      kPutDoc);
  bind_functions_as_methods(m, {"index_put", "masked_scatter", "put"});
  cls.def(
      "index_put_",
      [](py::object self, py::handle indices, py::handle values, bool accumulate) {
        const char* op = "index_put_";
        const Tensor& x = self_of(self, op);
        autograd::check_inplace(x, op);
        warn_expanded_write(x, op);
        const std::vector<Tensor> idx = indices_arg(indices, op);
        const Tensor v = values_arg(values, x, op);
        // torch runs masked_fill_ (warning again) for one bool mask and a 0-d value
        if (!accumulate && idx.size() == 1 && idx[0].defined() && idx[0].dtype() == DType::Bool &&
            v.ndim() == 0)
          warn_expanded_write(x, "masked_fill_");
        assign_inplace_result(op, x, index_put(x, idx, v, accumulate, op), true);
        return self;
      },
      py::arg("indices"), py::arg("values"), py::arg("accumulate") = false,
      "index_put_($self, /, indices, values, accumulate=False)\n--\n\n"
      "In-place index_put (see ts.index_put); returns self.");
  cls.def(
      "masked_scatter_",
      [](py::object self, py::handle mask, py::handle source) {
        const char* op = "masked_scatter_";
        const Tensor& x = self_of(self, op);
        autograd::check_inplace(x, op);
        assign_inplace_result(
            op, x, masked_scatter(x, operand(mask, op), tensor_or_throw(source, op, "source")));
        return self;
      },
      py::arg("mask"), py::arg("source"),
      "masked_scatter_($self, /, mask, source)\n--\n\n"
      "In-place masked_scatter (see ts.masked_scatter); returns self.");
  cls.def(
      "put_",
      [](py::object self, py::handle index, py::handle source, bool accumulate) {
        const char* op = "put_";
        const Tensor& x = self_of(self, op);
        autograd::check_inplace(x, op);
        assign_inplace_result(
            op, x, put(x, operand(index, op), tensor_or_throw(source, op, "source"), accumulate));
        return self;
      },
      py::arg("index"), py::arg("source"), py::arg("accumulate") = false,
      "put_($self, /, index, source, accumulate=False)\n--\n\n"
      "In-place put (see ts.put); returns self.");
  m.def(
      "select_scatter",
      [](py::handle x, py::handle src, py::handle dim, py::handle index) {
        const char* op = "select_scatter";
        return select_scatter(tensor_or_throw(x, op, "input"), tensor_or_throw(src, op, "src"),
                              int_arg(dim, op, "dim"), int_arg(index, op, "index"));
      },
      py::arg("input"), py::arg("src"), py::arg("dim"), py::arg("index"), kSelectScatterDoc);
  m.def(
      "slice_scatter",
      [](py::handle x, py::handle src, py::handle dim, py::handle start, py::handle end,
         py::handle step) {
        const char* op = "slice_scatter";
        return slice_scatter(tensor_or_throw(x, op, "input"), tensor_or_throw(src, op, "src"),
                             int_arg(dim, op, "dim"), opt_int(start, op, "start"),
                             opt_int(end, op, "end"), int_arg(step, op, "step"));
      },
      py::arg("input"), py::arg("src"), py::arg("dim") = 0, py::arg("start") = py::none(),
      py::arg("end") = py::none(), py::arg("step") = 1, kSliceScatterDoc);
  m.def(
      "diagonal_scatter",
      [](py::handle x, py::handle src, py::handle offset, py::handle dim1, py::handle dim2) {
        const char* op = "diagonal_scatter";
        return diagonal_scatter(tensor_or_throw(x, op, "input"), tensor_or_throw(src, op, "src"),
                                int_arg(offset, op, "offset"), int_arg(dim1, op, "dim1"),
                                int_arg(dim2, op, "dim2"));
      },
      py::arg("input"), py::arg("src"), py::arg("offset") = 0, py::arg("dim1") = 0,
      py::arg("dim2") = 1, kDiagonalScatterDoc);
  m.def(
      "nonzero_static",
      [](py::handle x, py::handle size, py::handle fill_value) {
        const char* op = "nonzero_static";
        return nonzero_static(operand(x, op), int_arg(size, op, "size"),
                              int_arg(fill_value, op, "fill_value"));
      },
      py::arg("input"), py::kw_only(), py::arg("size"), py::arg("fill_value") = -1,
      kNonzeroStaticDoc);
  bind_functions_as_methods(
      m, {"select_scatter", "slice_scatter", "diagonal_scatter", "nonzero_static"});
  m.def(
      "as_strided_scatter",
      [](py::handle x, py::handle src, py::handle size, py::handle stride,
         py::handle storage_offset) {
        const char* op = "as_strided_scatter";
        return as_strided_scatter(tensor_or_throw(x, op, "input"), tensor_or_throw(src, op, "src"),
                                  to_shape(size, op), to_shape(stride, op),
                                  opt_int(storage_offset, op, "storage_offset"));
      },
      py::arg("input"), py::arg("src"), py::arg("size"), py::arg("stride"),
      py::arg("storage_offset") = py::none(),
      "as_strided_scatter(input, src, size, stride, storage_offset=None)\n--\n\n"
      "A copy of input (laid out as input.clone()) whose as_strided(size, stride,\n"
      "storage_offset) view holds src, whose shape must be `size`. Differentiable in input\n"
      "(contiguous, as PyTorch) and src.");
  m.def(
      "index_reduce",
      [](py::handle x, py::handle dim, py::handle index, py::handle source, py::handle reduce,
         bool include_self, py::handle out) {
        const char* op = "index_reduce";
        const Tensor& t = tensor_or_throw(x, op, "input");
        return result_or_out(op, index_reduce_py(t, dim, index, source, reduce, include_self, op),
                             out, OutDtype::Exact);
      },
      py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("source"), py::arg("reduce"),
      py::kw_only(), py::arg("include_self") = true, py::arg("out") = py::none(), kIndexReduceDoc);
  bind_functions_as_methods(m, {"as_strided_scatter", "index_reduce"});
  cls.def(
      "index_reduce_",
      [](py::object self, py::handle dim, py::handle index, py::handle source, py::handle reduce,
         bool include_self) {
        const char* op = "index_reduce_";
        const Tensor& x = self_of(self, op);
        autograd::check_inplace(x, op);
        assign_inplace_result(op, x,
                              index_reduce_py(x, dim, index, source, reduce, include_self, op));
        return self;
      },
      py::arg("dim"), py::arg("index"), py::arg("source"), py::arg("reduce"), py::kw_only(),
      py::arg("include_self") = true,
      "index_reduce_($self, /, dim, index, source, reduce, *, include_self=True)\n--\n\n"
      "In-place index_reduce (see ts.index_reduce); returns self.");
  cls.def(
      "fill_diagonal_",
      [](py::object self, py::handle fill_value, bool wrap) {
        const char* op = "fill_diagonal_";
        const Tensor& x = self_of(self, op);
        autograd::check_inplace(x, op);
        const Tensor r = fill_diagonal(x, fill_value_of(fill_value, op), wrap);
        if (r.impl() != x.impl()) assign_inplace_result(op, x, r);
        return self;
      },
      py::arg("fill_value"), py::arg("wrap") = false,
      "fill_diagonal_($self, /, fill_value, wrap=False)\n--\n\n"
      "Fills the main diagonal (all dims equal for ndim > 2) with fill_value in place;\n"
      "wrap=True continues below a tall matrix every ncols + 1 rows, as torch and NumPy.\n"
      "Returns self.");
  m.def(
      "unravel_index",
      [](py::handle indices, py::handle shape) {
        const char* op = "unravel_index";
        const std::vector<Tensor> parts = unravel_index(operand(indices, op), to_shape(shape, op));
        py::tuple out(parts.size());
        for (size_t i = 0; i < parts.size(); ++i) out[i] = py::cast(parts[i]);
        return out;
      },
      py::arg("indices"), py::arg("shape"),
      "unravel_index(indices, shape)\n--\n\n"
      "The coordinate tensors (int64, one per dim of `shape`) of the flat `indices` into an\n"
      "array of `shape` (torch.unravel_index); flat indices outside [0, prod(shape)) wrap\n"
      "around as torch's do.");
  m.def(
      "take",
      [](py::handle x, py::handle index, py::handle axis, py::handle indices) {
        return take(operand(x, "take"), take_indices(index, indices),
                    opt_int(axis, "take", "axis"));
      },
      py::arg("input"), py::arg("index") = missing(), py::kw_only(), py::arg("axis") = py::none(),
      py::arg("indices") = missing(), kTakeDoc);
  bind_functions_as_methods(m, {"take"});
  m.def("where", &where_py, py::arg("condition"), py::arg("input") = missing(),
        py::arg("other") = missing(), py::kw_only(), py::arg("out") = py::none(), kWhereDoc);
  cls.def(
      "where",
      [](const Tensor& self, py::handle condition, py::handle other) {
        return where(operand_or_throw(condition, "where"), self, operand_or_throw(other, "where"));
      },
      py::arg("condition"), py::arg("other"),
      "where($self, /, condition, other)\n--\n\n"
      "self where condition is true, else other (torch.Tensor.where).");
  m.def(
      "round",
      [](py::handle x, py::handle decimals, py::handle out) {
        return result_or_out("round", round(operand_or_throw(x, "round"), decimals_arg(decimals)),
                             out, OutDtype::Exact);
      },
      py::arg("x"), py::pos_only(), py::kw_only(), py::arg("decimals") = 0,
      py::arg("out") = py::none(), kRoundDoc);
  bind_functions_as_methods(m, {"round"});
  cls.def(
      "round_",
      [](py::object self, py::handle decimals) {
        const char* op = "round_";
        const Tensor& x = self_of(self, op);
        autograd::check_inplace(x, op);
        assign_inplace_result(op, x, round(x, decimals_arg(decimals), op));
        return self;
      },
      py::kw_only(), py::arg("decimals") = 0,
      "round_($self, /, *, decimals=0)\n--\n\nIn-place round (see ts.round); returns self.");
  m.def("searchsorted", &searchsorted_py, py::arg("sorted_sequence"), py::arg("values"),
        py::pos_only(), py::kw_only(), py::arg("side") = py::none(), py::arg("sorter") = py::none(),
        py::arg("right") = py::none(), py::arg("out_int32") = false, py::arg("out") = py::none(),
        kSearchsortedDoc);
}

}  // namespace ts::python

// Bindings for the statistical/utility area: reductions, cumulative ops, diff, where.
// sum (ts.sum and Tensor.sum) parses every argument form here (the standard's axis=/keepdims=,
// PyTorch's positional dim, keepdim, dim=, dtype=); the other reductions' argument conventions
// still live in tessera/_statistical.py over private positional entry points.
#include <pybind11/stl.h>

#include "ops/cumulative.h"
#include "ops/reduce.h"
#include "ops/where.h"
#include "python/convert.h"

namespace ts::python {

namespace {

Axes to_axes(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return to_shape(h, op);
}

std::optional<DType> to_opt_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_dtype(h);
}

std::optional<int64_t> to_opt_axis(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  if (!PyLong_Check(h.ptr()) && !py::hasattr(h, "__index__"))
    throw py::type_error(std::string(op) + ": axis must be an int or None");
  return py::cast<int64_t>(h.attr("__index__")());
}

using AxesFn = Tensor (*)(const Tensor&, const Axes&, bool);
using DTypeFn = Tensor (*)(const Tensor&, const Axes&, bool, std::optional<DType>);
using VarFn = Tensor (*)(const Tensor&, const Axes&, double, bool);
using ArgFn = Tensor (*)(const Tensor&, std::optional<int64_t>, bool);
using ScanFn = Tensor (*)(const Tensor&, std::optional<int64_t>, std::optional<DType>, bool);

void def_axes(py::module_& m, const char* name, const char* op, AxesFn fn) {
  m.def(name, [op, fn](py::handle x, py::handle axis, bool keepdims) {
    return fn(operand_or_throw(x, op), to_axes(axis, op), keepdims);
  });
}

void def_with_dtype(py::module_& m, const char* name, const char* op, DTypeFn fn) {
  m.def(name, [op, fn](py::handle x, py::handle axis, bool keepdims, py::handle dtype) {
    return fn(operand_or_throw(x, op), to_axes(axis, op), keepdims, to_opt_dtype(dtype));
  });
}

void def_var(py::module_& m, const char* name, const char* op, VarFn fn) {
  m.def(name, [op, fn](py::handle x, py::handle axis, double correction, bool keepdims) {
    return fn(operand_or_throw(x, op), to_axes(axis, op), correction, keepdims);
  });
}

void def_arg(py::module_& m, const char* name, const char* op, ArgFn fn) {
  m.def(name, [op, fn](py::handle x, py::handle axis, bool keepdims) {
    return fn(operand_or_throw(x, op), to_opt_axis(axis, op), keepdims);
  });
}

void def_scan(py::module_& m, const char* name, const char* op, ScanFn fn) {
  m.def(name, [op, fn](py::handle x, py::handle axis, py::handle dtype, bool include_initial) {
    return fn(operand_or_throw(x, op), to_opt_axis(axis, op), to_opt_dtype(dtype), include_initial);
  });
}

// The axes and keepdims of a reduction called in either convention: the standard's
// (axis=, keepdims=) or PyTorch's (positional or keyword dim, keepdim); one of each pair.
std::pair<Axes, bool> reduce_args(const std::string& op, py::handle dim, py::handle keepdim,
                                  py::handle axis, bool keepdims) {
  py::handle ax = axis;
  if (!dim.is_none()) {
    if (!axis.is_none())
      throw py::type_error(op + ": got both axis= and its alias dim=; pass one");
    ax = dim;
  }
  if (!keepdim.is_none()) {
    if (keepdims)
      throw py::type_error(op + ": got both keepdims= and its alias keepdim=; pass one");
    const int t = PyObject_IsTrue(keepdim.ptr());
    if (t < 0) throw py::error_already_set();
    keepdims = t != 0;
  }
  return {to_axes(ax, op.c_str()), keepdims};
}

Tensor sum_py(const Tensor& x, py::handle dim, py::handle keepdim, py::handle axis,
              py::handle dtype, bool keepdims, py::handle out) {
  if (!out.is_none()) {  // as the creation functions (and the former torch-form ts.sum)
    PyErr_SetString(PyExc_NotImplementedError, "sum(): out= is not supported");
    throw py::error_already_set();
  }
  auto [axes, keep] = reduce_args("sum", dim, keepdim, axis, keepdims);
  return sum(x, axes, keep, to_opt_dtype(dtype));
}

constexpr const char* kSumDoc =
    "Sum over axis (all axes when None). Default result dtype: bool and signed ints -> int64,\n"
    "unsigned ints -> uint64, floats and complex keep theirs; dtype= casts the input first and\n"
    "accumulates in it. The sum over no elements is 0. PyTorch's forms too: a positional dim\n"
    "(int or tuple) and keepdim, or dim=/keepdim= (one of each alias pair).";

}  // namespace

void init_reduction(py::module_& m) {
  {
    py::options text_signature;  // Note [Readable signatures]
    text_signature.disable_function_signatures();
    m.def(
        "sum",
        [](py::handle x, py::handle dim, py::handle keepdim, py::handle axis, py::handle dtype,
           bool keepdims, py::handle out) {
          return sum_py(operand_or_throw(x, "sum"), dim, keepdim, axis, dtype, keepdims, out);
        },
        py::arg("x"), py::pos_only(), py::arg("dim") = py::none(),
        py::arg("keepdim") = py::none(), py::kw_only(), py::arg("axis") = py::none(),
        py::arg("dtype") = py::none(), py::arg("keepdims") = false, py::arg("out") = py::none(),
        (std::string("sum(x, /, dim=None, keepdim=None, *, axis=None, dtype=None, keepdims=False, "
                     "out=None)\n--\n\n") + kSumDoc).c_str());
    auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
    cls.def("sum", &sum_py, py::arg("dim") = py::none(), py::arg("keepdim") = py::none(),
            py::kw_only(), py::arg("axis") = py::none(), py::arg("dtype") = py::none(),
            py::arg("keepdims") = false, py::arg("out") = py::none(),
            (std::string("sum($self, /, dim=None, keepdim=None, *, axis=None, dtype=None, "
                         "keepdims=False, out=None)\n--\n\n") + kSumDoc).c_str());
  }
  def_with_dtype(m, "_sum", "sum", &sum);
  def_with_dtype(m, "_prod", "prod", &prod);
  def_axes(m, "_mean", "mean", &mean);
  def_var(m, "_var", "var", &var);
  def_var(m, "_std", "std", &std);
  def_axes(m, "_max", "max", &max);
  def_axes(m, "_min", "min", &min);
  def_axes(m, "_all", "all", &all);
  def_axes(m, "_any", "any", &any);
  def_axes(m, "_count_nonzero", "count_nonzero", &count_nonzero);
  def_arg(m, "_argmax", "argmax", &argmax);
  def_arg(m, "_argmin", "argmin", &argmin);
  def_scan(m, "_cumulative_sum", "cumulative_sum", &cumulative_sum);
  def_scan(m, "_cumulative_prod", "cumulative_prod", &cumulative_prod);
  m.def("_diff", [](py::handle x, int64_t axis, int64_t n, py::handle prepend, py::handle append) {
    const Tensor xt = operand_or_throw(x, "diff");
    Tensor pre, app;
    if (!prepend.is_none()) pre = operand_or_throw(prepend, "diff");
    if (!append.is_none()) app = operand_or_throw(append, "diff");
    return diff(xt, axis, n, pre.defined() ? &pre : nullptr, app.defined() ? &app : nullptr);
  });
  m.def(
      "where",
      [](py::handle condition, py::handle x1, py::handle x2) {
        return where(operand_or_throw(condition, "where"), operand_or_throw(x1, "where"),
                     operand_or_throw(x2, "where"));
      },
      py::arg("condition"), py::arg("x1"), py::arg("x2"), py::pos_only(),
      "Elements of x1 where condition is true, else of x2; all three broadcast together.\n"
      "The result dtype promotes x1 and x2 (Python numbers are weak); condition is read as bool.");
}

}  // namespace ts::python

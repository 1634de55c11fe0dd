// Bindings for the statistical/utility area: reductions, cumulative ops, diff, where.
// Argument conventions (keyword names, dim= aliases, docstrings) live in tessera/_statistical.py;
// these private entry points take positional arguments only.
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

}  // namespace

void init_reduction(py::module_& m) {
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

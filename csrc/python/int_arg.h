// An integer argument (axis, k, count) read from Python with a TypeError that names the op and
// the parameter, instead of pybind11's generic cast failure.
#pragma once
#include <algorithm>
#include <string>

#include "core/error.h"
#include "python/convert.h"
#include "python/input_arg.h"  // type_name

namespace ts::python {

// The one parser of integer arguments (issue 17): index_value reads an int argument that passed
// PyIndex_Check (an exact int directly, with no __index__ lookup and call, anything else
// through its __index__); int_arg also refuses bools and non-integers. TypeError and
// ValueError (past int64) name the op and the parameter.
inline int64_t index_value(py::handle h, const char* op, const char* name) {
  if (PyLong_CheckExact(h.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (!overflow) return v;
  }
  py::object v = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
  if (!v) throw py::error_already_set();
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow)
    throw ValueError(str(op, ": integer argument out of range for a 64-bit integer (", name, "=",
                         py::str(v).cast<std::string>(), ")"));
  if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
  return n;
}

inline int64_t int_arg(py::handle h, const char* op, const char* name) {
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr()))
    throw TypeError(str(op, ": ", name, " must be an int, got ",
                        py::type::handle_of(h).attr("__name__").cast<std::string>()));
  return index_value(h, op, name);
}

// A diagonal offset of a rows x cols matrix (eye's k): any Python int. Every offset at or past
// cols (or at or before -rows) selects no element, so it is clamped to [-rows, cols], and an
// int beyond int64 saturates there too (the standard's k is an int; eye(3, k=2**63) is zeros).
inline int64_t diagonal_offset_arg(py::handle h, const char* op, const char* name, int64_t rows,
                                   int64_t cols) {
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr())) return int_arg(h, op, name);  // raises
  py::object v = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
  if (!v) throw py::error_already_set();
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  const int64_t lo = -std::max<int64_t>(rows, 0), hi = std::max<int64_t>(cols, 0);
  if (overflow) return overflow > 0 ? hi : lo;
  if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
  return std::clamp<int64_t>(n, lo, hi);
}

// A dim in [-n, n) with n = max(ndim, 1) (a 0-d tensor takes 0 and -1, as in PyTorch).
inline int64_t dim_index(py::handle dim, const char* op, int64_t ndim) {
  if (PyBool_Check(dim.ptr()) || !PyIndex_Check(dim.ptr()))
    throw py::type_error(std::string(op) + ": dim must be an int, got " +
                         py::type::handle_of(dim).attr("__name__").cast<std::string>());
  const int64_t d = index_value(dim, op, "dim");
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (d < -n || d >= n)
    throw IndexError(str(op, ": dimension out of range (expected to be in range of [", -n, ", ",
                         n - 1, "], but got ", d, ")"));
  return d < 0 ? d + n : d;
}

// A real-number argument: an int, a float, or anything with __float__ that is not a tensor;
// TypeError naming the op and the parameter otherwise (not pybind11's cast failure).
inline double real_arg(py::handle h, const char* op, const char* name) {
  if (PyFloat_Check(h.ptr()) || PyLong_Check(h.ptr())) return py::cast<double>(h);
  if (py::isinstance<Tensor>(h) || !py::hasattr(h, "__float__"))
    throw TypeError(std::string(op) + ": expected a number, got " + type_name(h) + " for " + name);
  return py::cast<double>(py::float_(py::reinterpret_borrow<py::object>(h)));
}

}  // namespace ts::python

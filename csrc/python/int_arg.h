// An integer argument (axis, k, count) read from Python with a TypeError that names the op and
// the parameter, instead of pybind11's generic cast failure.
#pragma once
#include <algorithm>
#include <string>

#include "core/error.h"
#include "python/convert.h"

namespace ts::python {

// The value of an int argument that passed PyIndex_Check: an exact int read directly (no
// __index__ lookup and call per argument), anything else through its __index__.
inline int64_t index_value(py::handle h) {
  if (PyLong_CheckExact(h.ptr())) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
    if (!overflow) return v;
  }
  return py::cast<int64_t>(h.attr("__index__")());
}

inline int64_t int_arg(py::handle h, const char* op, const char* name) {
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr()))
    throw py::type_error(std::string(op) + ": " + name + " must be an int, got " +
                         py::type::handle_of(h).attr("__name__").cast<std::string>());
  return index_value(h);
}

// A dim in [-n, n) with n = max(ndim, 1) (a 0-d tensor takes 0 and -1, as in PyTorch).
inline int64_t dim_index(py::handle dim, const char* op, int64_t ndim) {
  if (PyBool_Check(dim.ptr()) || !PyIndex_Check(dim.ptr()))
    throw py::type_error(std::string(op) + ": dim must be an int, got " +
                         py::type::handle_of(dim).attr("__name__").cast<std::string>());
  const int64_t d = index_value(dim);
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (d < -n || d >= n)
    throw IndexError(str(op, ": dimension out of range (expected to be in range of [", -n, ", ",
                         n - 1, "], but got ", d, ")"));
  return d < 0 ? d + n : d;
}

}  // namespace ts::python

// An integer argument (axis, k, count) read from Python with a TypeError that names the op and
// the parameter, instead of pybind11's generic cast failure.
#pragma once
#include "python/convert.h"

namespace ts::python {

inline int64_t int_arg(py::handle h, const char* op, const char* name) {
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr()))
    throw py::type_error(std::string(op) + ": " + name + " must be an int, got " +
                         py::type::handle_of(h).attr("__name__").cast<std::string>());
  return py::cast<int64_t>(h.attr("__index__")());
}

}  // namespace ts::python

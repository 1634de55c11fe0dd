// A namespace function that is also a Tensor method, as one object (ts.add and x.add).
#pragma once
#include "python/convert.h"

namespace ts::python {

// Note [One function, two spellings]: the class holds a descriptor wrapping the function `fn`
// (a pybind11 function whose first parameter is the tensor): `Tensor.add` is `fn` itself (the
// class lookup returns it, so `Tensor.add is ts.add`), `x.add(y)` calls `fn(x, y)` without
// making a bound method (Py_TPFLAGS_METHOD_DESCRIPTOR and vectorcall) and `x.add` alone is
// a bound method of `fn` (inspect.signature drops the first parameter). Overloads added to
// `fn` later (install_arg_errors) reach the method too: the descriptor holds the object.
py::object function_method(py::handle fn);

// The same descriptor for a Tensor method's own pybind11 function (first parameter self), in
// place of PyInstanceMethod: Tensor.op is the function, x.op a bound method of it, and
// x.op(...) makes no bound method (issue 17). A type of its own: function_method means
// "Tensor.op is ts.op".
py::object method_descriptor(py::handle fn);

// The function a descriptor made by function_method or method_descriptor holds; nullptr for
// any other object.
PyObject* descriptor_function(PyObject* descr);

// cls.name = function_method(m.name) for each name.
void bind_functions_as_methods(py::module_& m, std::initializer_list<const char*> names);

}  // namespace ts::python

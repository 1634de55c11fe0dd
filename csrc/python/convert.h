// Python <-> C++ conversions shared by every bindings file.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "core/scalar.h"
#include "core/tensor.h"
#include "ops/memory_format.h"

namespace py = pybind11;

namespace ts::python {

// A Python int/float/complex/bool as a Scalar; false when `h` is none of these.
bool to_scalar(py::handle h, Scalar& out);
// An operand of an elementwise op: a Tensor, or a Python number (wrapped, weak), or anything
// asarray accepts (NumPy arrays, nested lists). Returns false when `h` cannot be an operand.
bool to_operand(py::handle h, Tensor& out);
Tensor operand_or_throw(py::handle h, const char* op);
// `h` as the Tensor it holds (a reference into the Python object); a TypeError naming `op` and
// `what` otherwise, never pybind11's "Unable to cast ... to C++ type".
const Tensor& tensor_or_throw(py::handle h, const char* op, const char* what);

Shape to_shape(py::handle h, const char* what);  // int or sequence of ints
DType to_dtype(py::handle h);                    // a tessera dtype, NumPy dtype, or a name
py::object dtype_object(DType d);                // the singleton Python dtype object
Device to_device(py::handle h);                  // None/"cpu"/"cuda:N"/Device
// ts.set_default_device: where creation functions put tensors when device=None.
Device& default_device();
inline Device creation_device(py::handle h) {
  return h.is_none() ? default_device() : to_device(h);
}

// A tessera (torch-style) memory format object (ts.channels_last, ...) or its name.
MemoryFormat memory_format_of(py::handle fmt, const char* op);

// torch.return_types.<name>: the named tuple class (values, indices) -- (min, max) for
// aminmax -- made once per name (bind_reduction.cpp).
py::object return_type(const char* name);

// tessera.errors.IntRangeError: an int no dtype or parameter holds (module.cpp).
PyObject* int_range_error();

// NumPy interop (zero-copy where possible).
// copy: 1 always, 0 never (ValueError when impossible), -1 when needed. `op` names the caller
// in errors (Note [Foreign memory]: memory a foreign object lends is checked first).
Tensor from_numpy(py::array arr, int copy, const char* op = "asarray");
py::array to_numpy(py::handle self_obj, const Tensor& t);
py::dtype numpy_dtype(DType d);
DType from_numpy_dtype(const py::dtype& dt);

}  // namespace ts::python

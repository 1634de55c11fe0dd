// The Python buffer protocol (PEP 3118) on tessera.Tensor: memoryview(t), np.asarray(t).
#pragma once
#include <pybind11/pybind11.h>

#include "core/dtype.h"

namespace py = pybind11;

namespace ts::python {

// Installs getbuffer/releasebuffer on the Tensor type (created with py::buffer_protocol()).
void install_buffer_protocol(py::handle tensor_type);

// The struct-module format of a dtype ("e" float16, "Zf" complex64, "?" bool, ...); nullptr
// for bfloat16, which PEP 3118 cannot describe.
const char* buffer_format(DType dtype);

}  // namespace ts::python

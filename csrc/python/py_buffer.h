// The Python buffer protocol (PEP 3118) on tessera.Tensor: memoryview(t), np.asarray(t).
#pragma once
#include <pybind11/pybind11.h>

#include "core/dtype.h"

namespace py = pybind11;

namespace ts::python {

// Note [Exported storage]: memory handed to another library (np.asarray / t.numpy(), a
// memoryview, a DLPack capsule) is owned by that export through a reference to the Storage,
// never to the tensor: t.set_(), t.data = ... and resize_ give the tensor other memory, and
// the exporter must keep reading the old one (it did read freed memory before). An exported
// storage is marked not resizable, so resize_ beyond its size raises PyTorch's "Trying to
// resize storage that is not resizable" (PyTorch marks storages shared with NumPy so too);
// memory imported from NumPy or DLPack is borrowed and never resizable either.

// Installs getbuffer/releasebuffer on the Tensor type (created with py::buffer_protocol()).
void install_buffer_protocol(py::handle tensor_type);

// The struct-module format of a dtype ("e" float16, "Zf" complex64, "?" bool, ...); nullptr
// for bfloat16, which PEP 3118 cannot describe.
const char* buffer_format(DType dtype);

}  // namespace ts::python

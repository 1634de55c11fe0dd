// DLPack PyCapsules: the Python half of the exchange protocol (naming, ownership hand-off).
#pragma once
#include <pybind11/pybind11.h>

#include "core/tensor.h"

namespace py = pybind11;

namespace ts::dlpack {

// A "dltensor_versioned" (DLPack 1.x) or legacy "dltensor" capsule over `t` (no copy).
// The capsule's destructor deletes the managed tensor unless a consumer renamed the capsule.
py::capsule to_capsule(const Tensor& t, bool versioned, uint64_t flags);

// Takes ownership of the managed tensor in an unconsumed capsule (renaming it "used_...") and
// returns a tensor viewing it; the producer's deleter runs once, when the last view dies.
// copy: 1 always (unless the producer already copied), 0 never, -1 only when needed.
Tensor from_capsule(py::handle capsule, int copy);

}  // namespace ts::dlpack

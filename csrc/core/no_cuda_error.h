// CUDA asked of a build without the CUDA backend: Python's tessera.errors.CudaNotCompiledError,
// an AssertionError (PyTorch's "Torch not compiled with CUDA enabled") that is also a
// RuntimeError (what tessera raised before, and what a built backend with no GPU raises).
#pragma once

#include "core/error.h"

namespace ts {

struct CudaNotCompiledError : RuntimeError {
  using RuntimeError::RuntimeError;
};

}  // namespace ts

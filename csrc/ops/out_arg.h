// PyTorch's out= arguments: one set of rules (shape, dtype, device, overlap, autograd) for
// every op that writes its result into a caller's tensor, and the resize they rely on.
#pragma once
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace ts {

// PyTorch's canCast, the rule of in-place results and out=: no complex into a real dtype, no
// floating into an integral one, nothing but bool into bool.
bool torch_can_cast(DType from, DType to);

// How out's dtype must relate to the result's (Note [out= rules]).
enum class OutDtype : uint8_t {
  Cast,   // the result casts to out's dtype under PyTorch's canCast (elementwise ops, cat)
  Exact,  // out has the result's dtype (matmul, linalg, gather, index_select, ...)
};

// Note [resize_]: PyTorch's Tensor.resize_: x keeps its identity and takes `shape` with
// contiguous strides; a size that fits x's storage (from x's offset) keeps the storage, a
// larger one gives x new memory holding its first elements (row-major; new ones
// uninitialized) or raises for a storage shared with NumPy / a memoryview / DLPack. `op`
// names it in errors.
void resize_(const Tensor& x, const Shape& shape, const char* op = "resize_");

// PyTorch's resize_output: out resized to `shape` when it differs (returns true then), with
// PyTorch's deprecation UserWarning unless out had no elements.
bool resize_output(const char* op, const Tensor& out, const Shape& shape);

// The checks every out= makes before anything is computed into out: nothing records through
// out= (RuntimeError, as PyTorch's "functions with out=... arguments don't support automatic
// differentiation"), out is on `device`.
void check_out(const char* op, const Tensor& out, Device device,
               const std::vector<const Tensor*>& inputs = {});

// The dtype a reduction that takes dtype= (sum, prod, mean, cumsum, ...) computes in when given
// out: out's (PyTorch's rule); a dtype= other than out's is a RuntimeError.
DType out_compute_dtype(const char* op, std::optional<DType> dtype, const Tensor& out);

// out= of PyTorch's functions: r written into `out` (which keeps its identity): the checks of
// check_out, out's dtype against r's by `rule`, out resized to r's shape (resize_output),
// written through out's strides; an out with overlapping elements, or one that partly
// overlaps one of `inputs`, raises PyTorch's "unsupported operation" (out being an input
// itself is fine). Returns true when out was resized (its shape changed).
bool write_out(const char* op, const Tensor& out, const Tensor& r, OutDtype rule,
               const std::vector<const Tensor*>& inputs = {});

}  // namespace ts

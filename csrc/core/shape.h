// Shapes, strides (in elements), broadcasting and contiguity; int64 everywhere.
#pragma once
#include <cstdint>
#include <string>

#include "core/checked_math.h"
#include "core/small_vec.h"

namespace ts {

using Shape = SmallVec<int64_t, 6>;
using Strides = SmallVec<int64_t, 6>;

int64_t numel_of(const Shape& s);            // checks for int64 overflow
Strides contiguous_strides(const Shape& s);  // checks for int64 overflow (also of empty shapes)
// Row-major strides on every dim of size > 1; any empty tensor counts (as in PyTorch).
bool is_contiguous(const Shape& shape, const Strides& strides);
std::string shape_str(const Shape& s);  // "(2, 3)" like Python tuples

// The lowest and highest element offsets (relative to the storage start) that a geometry
// reaches, without overflow: false when some product or sum leaves int64. numel must be > 0.
bool strided_extent(const Shape& shape, const Strides& strides, int64_t offset, int64_t* lo,
                    int64_t* hi);
// Throws RuntimeError (PyTorch's setStorage text) unless every element of the geometry lies
// inside a storage of `storage_nbytes` bytes: the one bounds check of user-chosen geometry
// (as_strided, set_, DLPack and buffer imports, Tensor::view_of).
void check_in_storage(const Shape& shape, const Strides& strides, int64_t offset, int64_t itemsize,
                      int64_t storage_nbytes, const char* op);

// Broadcast two shapes by NumPy rules; throws ValueError naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Normalizes an axis into [0, ndim); throws IndexError naming op, axis and ndim.
int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op);

}  // namespace ts

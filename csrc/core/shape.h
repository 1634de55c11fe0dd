// Shapes, strides (in elements), broadcasting and contiguity; int64 everywhere.
#pragma once
#include <cstdint>
#include <string>

#include "core/small_vec.h"

namespace ts {

using Shape = SmallVec<int64_t, 6>;
using Strides = SmallVec<int64_t, 6>;

int64_t numel_of(const Shape& s);  // checks for int64 overflow
Strides contiguous_strides(const Shape& s);
bool is_contiguous(const Shape& shape, const Strides& strides);
std::string shape_str(const Shape& s);  // "(2, 3)" like Python tuples

// Broadcast two shapes by NumPy rules; throws ValueError naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Normalizes an axis into [0, ndim); throws IndexError naming op, axis and ndim.
int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op);

}  // namespace ts

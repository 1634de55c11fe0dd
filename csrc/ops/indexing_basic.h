// Basic indexing: ints, slices, ellipsis and new axes; the result is always a view.
#pragma once
#include "core/small_vec.h"
#include "core/tensor.h"

namespace ts {

struct IndexItem {
  enum Kind : uint8_t { Int, Slice, Ellipsis, NewAxis };
  Kind kind = Int;
  // Int: start is the index. Slice: Python's unpacked slice (PySlice_Unpack), where an
  // omitted start/stop is INT64_MAX/INT64_MIN in the direction of the step.
  int64_t start = 0, stop = 0, step = 1;
};
using IndexKey = SmallVec<IndexItem, 8>;

// x[key] as a view (NumPy's clamping rules for slices; IndexError for out-of-range ints,
// too many indices, or more than one ellipsis).
Tensor index_basic(const Tensor& x, const IndexKey& key);
// x[key] = value: value broadcast to the selection and cast to x's dtype.
void index_put_basic(const Tensor& x, const IndexKey& key, const Tensor& value);

}  // namespace ts

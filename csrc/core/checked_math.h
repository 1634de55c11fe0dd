// Note [Checked size arithmetic]: every size computation that can see a user-chosen number
// (shape x strides, element counts, byte counts, offsets, extents) goes through these helpers,
// so that a hostile shape or stride raises instead of wrapping around (signed overflow is also
// undefined behaviour). Once a tensor exists its geometry has been checked against its storage
// (Tensor::view_of / Tensor::empty), so kernels that walk a valid tensor need no checks.
#pragma once
#include <cstdint>

#include "core/error.h"

namespace ts {

// a * b and a + b, or a ValueError "<what>: ... is too large (size arithmetic overflows int64
// ...)" naming the operands (ValueError, as numel_of raises for any shape too large).
inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw ValueError(str(what, ": the tensor is too large (size arithmetic overflows int64: ", a,
                          " * ", b, ")"));
  return r;
}
inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw ValueError(str(what, ": the tensor is too large (size arithmetic overflows int64: ", a,
                          " + ", b, ")"));
  return r;
}
// Non-throwing forms for callers that build their own message: false on overflow.
inline bool mul_ok(int64_t a, int64_t b, int64_t* r) { return !__builtin_mul_overflow(a, b, r); }
inline bool add_ok(int64_t a, int64_t b, int64_t* r) { return !__builtin_add_overflow(a, b, r); }

}  // namespace ts

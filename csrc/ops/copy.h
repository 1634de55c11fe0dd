// Copies and dtype casts: the one strided, broadcasting, converting copy everything builds on.
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/dispatch.h"
#include "iter/tensor_iter.h"
#include "ops/memory_format.h"

namespace ts {

using CopyKernel = void (*)(const ElementwiseIter&, DType dst, DType src);
using FillKernel = void (*)(const Tensor& dst, const Scalar& value);
TS_DECLARE_STUB(CopyKernel, copy_stub);
TS_DECLARE_STUB(FillKernel, fill_stub);

// dst[...] = src broadcast to dst's shape, converted to dst's dtype. Respects dst's strides
// (writes through views) and handles src overlapping dst.
void copy_(const Tensor& dst, const Tensor& src);
void fill_(const Tensor& dst, const Scalar& value);
// Like copy_, across devices too; non_blocking skips the wait for a device-to-host copy into
// pinned memory (the caller synchronizes before reading).
void copy_(const Tensor& dst, const Tensor& src, bool non_blocking);
// x on `device` (x itself when already there); non_blocking as for copy_ (a device-to-host
// copy then lands in pinned memory).
Tensor to_device(const Tensor& x, Device device, bool non_blocking = false);
// A contiguous copy of x in page-locked host memory (x must be on the CPU).
Tensor pin_memory(const Tensor& x);
bool is_pinned(const Tensor& x);
Tensor astype(const Tensor& x, DType dtype, bool copy = true);
Tensor contiguous(const Tensor& x);  // x itself when already contiguous
Tensor clone(const Tensor& x);       // always a fresh contiguous copy
// True when the bytes of a and b may intersect (by address).
bool may_overlap(const Tensor& a, const Tensor& b);
// PyTorch's has_internal_overlap "YES" case: a dim of size > 1 with stride 0 (an expanded
// tensor), so several elements share one memory location.
bool has_internal_overlap(const Tensor& t);
// Raises PyTorch's RuntimeError ("unsupported operation: more than one element of the
// written-to tensor refers to a single memory location") naming `op` when t has internal
// overlap: the check of every in-place write of computed values (x.add_, x.copy_, x.uniform_,
// out=). fill_/zero_ (one value everywhere) and internal writes do not call it.
void check_no_internal_overlap(const Tensor& t, const char* op);
// index_put_ / masked_fill_ / index_fill_ on an expanded self: PyTorch's deprecation
// UserWarning (the write still happens).
void warn_expanded_write(const Tensor& t, const char* op);
// a and b start at the same byte and step alike in every dim of size > 1.
bool same_layout(const Tensor& a, const Tensor& b);
// The user-facing forms, recorded by autograd (the plain ones above are for op internals).
Tensor clone_op(const Tensor& x);  // contiguous, as clone
// x.clone(memory_format=fmt): preserve_format keeps x's strides when x is dense (a transpose,
// a permutation, channels-last) as PyTorch does (Note in ops/memory_format.h).
Tensor clone_op(const Tensor& x, MemoryFormat fmt);
Tensor contiguous_op(const Tensor& x);
// x.to(dtype) / x.astype(dtype): the result is laid out as fmt asks (preserve_format: x's
// layout; a channels-last fmt needs a 4-D / 5-D x).
Tensor astype_op(const Tensor& x, DType dtype, bool copy,
                 MemoryFormat fmt = MemoryFormat::Preserve);

// A Python number as a 0-d tensor that is weak in promotion (Note [Type promotion]).
Tensor wrap_scalar(const Scalar& s);
// A 0-d tensor of `dtype` holding `s` (not weak).
Tensor scalar_tensor(const Scalar& s, DType dtype);
Scalar item(const Tensor& x);

}  // namespace ts

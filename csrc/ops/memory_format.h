// PyTorch's memory formats (torch.contiguous_format / channels_last / channels_last_3d /
// preserve_format) over tessera's strided tensors. A channels-last tensor keeps its logical
// (N, C, *spatial) shape with the strides of a row-major (N, *spatial, C) array.
#pragma once
#include <string>

#include "core/tensor.h"

namespace ts {

enum class MemoryFormat { Contiguous, ChannelsLast, ChannelsLast3d, Preserve };
// From the format's name ("contiguous_format", "channels_last", ...); ValueError otherwise.
MemoryFormat memory_format_from_name(const std::string& name, const char* op);

// ValueError naming `op` unless x has the rank channels_last (4) / channels_last_3d (5) asks.
void check_channels_last_rank(const Tensor& x, MemoryFormat fmt, const char* op);
// Whether x's strides are exactly those of `fmt` (size-1 dims' strides ignored, as PyTorch).
// ChannelsLast needs a 4-D tensor, ChannelsLast3d a 5-D one (false otherwise).
bool is_contiguous_as(const Tensor& x, MemoryFormat fmt);
// Channels-last strides and not also plain contiguous: the layout ops should keep.
bool is_channels_last(const Tensor& x);
// x copied to the channels-last strides of its rank (4-D or 5-D; differentiable; x itself
// when already so, or of another rank).
Tensor to_channels_last(const Tensor& x);
// An uninitialized (N, C, *spatial) tensor with channels-last strides (4-D or 5-D shapes;
// other ranks come contiguous).
Tensor empty_channels_last(const Shape& shape, DType dtype, Device device);
// PyTorch's is_non_overlapping_and_dense: x's elements fill exactly numel() consecutive slots
// from its data pointer in some dim order (contiguous, channels-last, any permutation of a
// contiguous array; size-1 dims' strides ignored).
bool is_non_overlapping_and_dense(const Tensor& x);
// Whether a and b have one shape and the same strides on every dim of size > 1: their elements
// sit at the same offsets, so a kernel may walk both as flat arrays when one is dense.
bool same_strides(const Tensor& a, const Tensor& b);
// An uninitialized tensor of like's shape and dtype, with like's strides when like is
// non-overlapping and dense, else contiguous.
Tensor empty_in_layout_of(const Tensor& like);
// PyTorch's preserve_format strides for a new tensor made like x (empty_like, clone, x.to):
// x's own strides when x is non-overlapping and dense (an empty tensor counts as dense, as in
// PyTorch), else dense strides in x's stride order (ATen's infer_dense_strides, by |stride|:
// a flipped view comes back row-major); empty (meaning row-major) when those are x's shape's
// row-major strides.
Strides preserved_strides(const Tensor& x);
// An uninitialized tensor of like's shape laid out as preserve_format asks (preserved_strides),
// of `dtype` on `device`.
Tensor empty_preserving_layout(const Tensor& like, DType dtype, Device device);
// The strides of a new tensor made like `like` as `fmt` asks: preserved_strides (row-major
// ones when that is empty), row-major, or channels-last (like must be 4-D, or 5-D for
// channels_last_3d: a ValueError naming `op` otherwise). Always dense.
Strides strides_in_format(const Tensor& like, MemoryFormat fmt, const char* op);
// An uninitialized tensor of like's shape, of `dtype` on `device`, laid out as `fmt` asks:
// preserve_format (empty_preserving_layout), contiguous_format, or channels-last (then like
// must be 4-D, or 5-D for channels_last_3d: a ValueError naming `op` otherwise).
Tensor empty_in_format(const Tensor& like, DType dtype, Device device, MemoryFormat fmt,
                       const char* op);
// A fresh (not a view) tensor over `flat`'s storage with the dense `strides` (flat holds
// exactly the elements they reach, as row-major strides would need).
Tensor fresh_strided(const Tensor& flat, const Shape& shape, const Strides& strides);
// A fresh copy of x with like's strides when like is non-overlapping and dense (x's shape must
// be like's), else contiguous; x itself when it is already so (`copy` false).
Tensor copy_in_layout_of(const Tensor& x, const Tensor& like, bool copy);
// x laid out as `fmt` asks (x itself when already so, or for Preserve); `op` names errors.
Tensor to_memory_format(const Tensor& x, MemoryFormat fmt, const char* op);

}  // namespace ts

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
// x laid out as `fmt` asks (x itself when already so, or for Preserve); `op` names errors.
Tensor to_memory_format(const Tensor& x, MemoryFormat fmt, const char* op);

}  // namespace ts

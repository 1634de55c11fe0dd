// Manipulation ops that build new tensors from pieces: concat, stack, roll, repeat, tile, and
// the view-returning unstack / broadcast_arrays.
#pragma once
#include <vector>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

// out (contiguous) = src (contiguous) with element i along `axis` written counts[i] times.
using RepeatKernel = void (*)(const Tensor& out, const Tensor& src, int64_t axis,
                              const int64_t* counts);
TS_DECLARE_STUB(RepeatKernel, repeat_stub);
// out (contiguous) seen as `outer` rows, each row the next block of every input in turn: row o
// is xs[0]'s o-th block, then xs[1]'s, ... (block i = xs[i].nbytes() / outer). The inputs are
// contiguous, of out's dtype, and on its device. concat along axis a has outer = the product
// of the dims before a; stack along a has the same outer with each input's block its dims
// from a on.
using JoinKernel = void (*)(const Tensor& out, const std::vector<Tensor>& xs, int64_t outer);
TS_DECLARE_STUB(JoinKernel, join_stub);

// One allocation of the promoted dtype; each input is copy_'d into its slice of the output.
// axis_is_none flattens every input first (the standard's axis=None).
Tensor concat(const std::vector<Tensor>& xs, int64_t axis, bool axis_is_none = false);
Tensor stack(const std::vector<Tensor>& xs, int64_t axis);
std::vector<Tensor> unstack(const Tensor& x, int64_t axis);           // views
std::vector<Tensor> broadcast_arrays(const std::vector<Tensor>& xs);  // views

// shifts and axes pair up; empty axes means "flattened" (then exactly one shift).
Tensor roll(const Tensor& x, const Shape& shifts, const Shape& axes, bool flat);
// Each element repeated `repeats` times along axis (flattened first when flat).
Tensor repeat(const Tensor& x, int64_t repeats, int64_t axis, bool flat);
// Element i along axis repeated repeats[i] times; repeats is a 1-D integer tensor.
Tensor repeat(const Tensor& x, const Tensor& repeats, int64_t axis, bool flat);
Tensor tile(const Tensor& x, const Shape& reps);

}  // namespace ts

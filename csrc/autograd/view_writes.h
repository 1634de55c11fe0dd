// In-place writes into views of tensors in the autograd graph (Note [Writes into views]).
#pragma once
#include "autograd/meta.h"

namespace ts::autograd {

// After a recorded op made `view` from `source` (sharing its storage): remember the root base.
void track_view(const Tensor& view, const Tensor& source);

// Records as_strided's gradient for any input layout (Note [as_strided's gradient]).
void record_as_strided(const Tensor& x, const Tensor& out);

// Re-derives a tracked view's grad_fn when its base's history changed since (cheap no-op
// otherwise). Called wherever a view's history is read.
void refresh_view_history(const Tensor& view, AutogradMeta& m);

// The new value of `x` (all of it) now comes from `new_value`: a tracked view rebases its
// base's history (CopySlices); any other tensor takes `new_value` as its history.
void commit_write(const Tensor& x, const Edge& new_value);

// Throws for writes autograd can't follow: into a view of a leaf that requires grad, or into
// a view it doesn't track (made under no_grad, or by as_strided) when the written value
// requires grad.
void check_view_write(const Tensor& x, bool value_requires_grad, const char* op);

}  // namespace ts::autograd

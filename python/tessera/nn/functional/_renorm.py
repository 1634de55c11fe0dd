"""embedding_renorm_ (the in-place row clipping behind Embedding(max_norm=...)) and the
gradient scaling behind Embedding(scale_grad_by_freq=True)."""
from __future__ import annotations

from typing import Any

from ... import _C
from ..._C import Tensor


def _ts() -> Any:
    import tessera
    return tessera


def embedding_renorm_(weight: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float = 2.0) -> Tensor:
    """Scales, in place and without autograd, every row of `weight` named in `indices`
    whose norm_type-norm exceeds max_norm by max_norm / (norm + 1e-7) (PyTorch's rule)."""
    t = _ts()
    with t.no_grad():
        num = weight.shape[0]
        rows = t.unique_values(t.remainder(t.reshape(indices, (-1,)).astype(t.int64), num))
        if rows.size == 0:
            return weight
        sel = t.take(weight, rows, axis=0)
        a = t.abs(sel)
        if norm_type == float("inf"):
            norm = t.max(a, axis=1)
        else:
            norm = t.sum(a ** norm_type, axis=1) ** (1.0 / norm_type)
        scale = t.where(norm > max_norm, max_norm / (norm + 1e-7), 1.0).astype(weight.dtype)
        weight[rows] = sel * t.expand_dims(scale, axis=1)
    return weight


def scale_grad_by_freq(rows: Tensor, flat_idx: Tensor) -> Tensor:
    """rows (M, dim) looked up at flat_idx (M,): the same values, with each row's gradient
    divided by how often its index occurs in the batch (Embedding(scale_grad_by_freq=True))."""
    t = _ts()
    inverse = t.unique_inverse(flat_idx).inverse_indices
    counts = t.unique_counts(flat_idx).counts
    per_row = t.take(counts, t.reshape(inverse, (-1,)), axis=0)
    scale = t.expand_dims(1.0 / per_row.astype(rows.dtype), axis=1)
    return _C._scale_grad(rows, scale)  # the C++ op csrc/ops/nn/similarity.h

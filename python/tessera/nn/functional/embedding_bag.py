"""embedding_bag: sums, means or maxima of bags of embedding rows (PyTorch's offsets,
per_sample_weights, include_last_offset and padding_idx rules).

Bags are laid out densely: a (B, Lmax) table of positions into the looked-up rows plus a
validity mask, so each mode is one masked reduction over axis 1 and the weight gradient
comes from the embedding lookup's scatter-add."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ..._C import Tensor
from .misc import embedding

_MODES = ("sum", "mean", "max")


def _ts() -> Any:
    import tessera
    return tessera


def _bags(input: Tensor, offsets: Optional[Tensor],
          include_last_offset: bool) -> Tuple[Any, Any, int]:
    """Flat indices (NumPy) and the bag of every position."""
    idx = np.asarray(input.numpy()).astype(np.int64)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: offsets must be None when input is 2-D (each row "
                             "is a bag)")
        b, n = idx.shape
        return idx.reshape(-1), np.repeat(np.arange(b), n), b
    if input.ndim != 1:
        raise ValueError(f"embedding_bag: input must be 1-D (with offsets) or 2-D, got shape "
                         f"{tuple(input.shape)}")
    if offsets is None:
        raise ValueError("embedding_bag: offsets are required for a 1-D input")
    off = np.asarray(offsets.numpy()).astype(np.int64).reshape(-1)
    if offsets.ndim != 1:
        raise ValueError(f"embedding_bag: offsets must be 1-D, got shape {tuple(offsets.shape)}")
    if off.size and (off[0] != 0 or np.any(np.diff(off) < 0) or off[-1] > idx.size):
        raise ValueError(f"embedding_bag: offsets must start at 0, be non-decreasing and stay "
                         f"within the {idx.size} indices, got {off.tolist()}")
    if include_last_offset:
        if off.size == 0:
            raise ValueError("embedding_bag: include_last_offset needs at least one offset")
        starts, ends = off[:-1], off[1:]
    else:
        starts, ends = off, np.append(off[1:], idx.size)
    bag = np.full(idx.size, -1, dtype=np.int64)
    for i, (s, e) in enumerate(zip(starts, ends)):
        bag[s:e] = i
    return idx, bag, len(starts)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Optional[Tensor] = None,
                  max_norm: Optional[float] = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Optional[Tensor] = None, include_last_offset: bool = False,
                  padding_idx: Optional[int] = None) -> Tensor:
    """(B, dim): the sum / mean / max of each bag's embedding rows. Bags are the rows of a
    2-D input, or the spans of a 1-D input that start at `offsets`. Empty bags give zeros;
    padding_idx entries are left out (and not counted by the mean)."""
    t = _ts()
    if mode not in _MODES:
        raise ValueError(f"embedding_bag: mode must be one of {', '.join(_MODES)}, got {mode!r}")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported")
    if not t.isdtype(input.dtype, "integral"):
        raise TypeError(f"embedding_bag: indices must be integers, got {input.dtype}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights is only supported "
                                      f"for mode='sum', got mode={mode!r}")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: per_sample_weights of shape "
                             f"{tuple(per_sample_weights.shape)} must match input shape "
                             f"{tuple(input.shape)}")
    num, dim = weight.shape
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise ValueError(f"embedding_bag: padding_idx {padding_idx} is out of range for "
                             f"{num} embeddings")
        padding_idx %= num
    idx, bag, nbags = _bags(input, offsets, include_last_offset)
    valid = bag >= 0
    if padding_idx is not None:
        valid &= idx != padding_idx
    counts = np.bincount(bag[valid], minlength=nbags) if nbags else np.zeros(0, np.int64)
    lmax = max(int(counts.max()) if counts.size else 0, 1)
    # (B, Lmax) table of positions into idx; invalid slots point at position 0 and are masked.
    pos = np.zeros((nbags, lmax), dtype=np.int64)
    mask = np.zeros((nbags, lmax), dtype=bool)
    vj = np.nonzero(valid)[0]
    vb = bag[vj]  # non-decreasing: bags are consecutive spans
    rank = np.arange(vb.size) - np.searchsorted(vb, vb, side="left")
    pos[vb, rank] = vj
    mask[vb, rank] = True
    dev = weight.device
    rows = embedding(t.asarray(idx, device=dev), weight, max_norm=max_norm,
                     norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq)  # (M, dim)
    if per_sample_weights is not None:
        rows = rows * t.reshape(per_sample_weights, (-1, 1)).astype(rows.dtype)
    if idx.size == 0:
        return t.zeros((nbags, dim), dtype=weight.dtype, device=dev)
    table = t.reshape(t.take(rows, t.asarray(pos.reshape(-1), device=dev), axis=0),
                      (nbags, lmax, dim))
    m = t.asarray(mask[:, :, None], device=dev)
    if mode == "max":
        best = t.max(t.where(m, table, -np.inf), axis=1)
        return t.where(t.asarray(counts[:, None] > 0, device=dev), best, 0.0)
    total = t.sum(t.where(m, table, 0.0), axis=1)
    if mode == "sum":
        return total
    return total / t.asarray(np.maximum(counts, 1)[:, None], device=dev).astype(total.dtype)

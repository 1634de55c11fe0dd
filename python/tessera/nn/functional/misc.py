"""linear, dropout, one_hot, embedding, scaled_dot_product_attention, flatten helpers."""
from __future__ import annotations

import math
from typing import Any, Optional

from ..._C import Tensor
from ...amp import _policy as _amp
from . import _fused
from ._fused import fusable
from .. import _rng
from .activation import softmax


def _ts() -> Any:
    import tessera
    return tessera


def linear(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """x @ weight.T + bias, weight of shape (out_features, in_features)."""
    x, weight, bias = _amp.cast(_amp.LOWER, x, weight, bias)
    if x.ndim >= 1 and weight.ndim == 2 and (bias is None or bias.ndim == 1) \
            and fusable(x, weight, bias):
        return _fused.Linear.apply(x, weight, bias)
    y = _ts().matmul(x, weight.mT)
    return y + bias if bias is not None else y


@_amp.op(_amp.PROMOTE_CUDA)
def bilinear(x1: Tensor, x2: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """y_k = x1 W_k x2 + b_k, weight (out, in1, in2)."""
    t = _ts()
    rows = t.matmul(t.expand_dims(x1, axis=(-2, -3)), weight)[..., 0, :]  # (..., out, in2)
    y = t.sum(rows * t.expand_dims(x2, axis=-2), axis=-1)
    return y + bias if bias is not None else y


def dropout(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes each element with probability p and scales the rest by 1/(1-p) (training only)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0
    # The counter-based generator runs on the host; the mask moves to x's device.
    keep = (_rng.uniform(0.0, 1.0, x.shape, dtype=x.dtype) >= p).to(x.device)
    return x * (keep.astype(x.dtype) * (1.0 / (1.0 - p)))


def dropout2d(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels (N, C, H, W) with probability p."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout2d: probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return x
    shape = tuple(x.shape[:-2]) + (1, 1)
    keep = (_rng.uniform(0.0, 1.0, shape, dtype=x.dtype) >= p).to(x.device)
    return x * (keep.astype(x.dtype) * (1.0 / (1.0 - p)))


def one_hot(x: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last axis (classes compared against arange)."""
    t = _ts()
    if not t.isdtype(x.dtype, "integral"):
        raise TypeError(f"one_hot: expected an integer tensor of class indices, got {x.dtype}")
    if num_classes < 0:
        num_classes = int(t.max(x).item()) + 1 if x.size else 0
    if x.size and (int(t.min(x).item()) < 0 or int(t.max(x).item()) >= num_classes):
        raise ValueError(f"one_hot: class values must be in [0, {num_classes})")
    return (t.expand_dims(x, axis=-1) == t.arange(num_classes, dtype=x.dtype)).astype(t.int64)


def embedding(x: Tensor, weight: Tensor, padding_idx: Optional[int] = None,
              max_norm: Optional[float] = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of `weight` picked by integer `x` (shape x.shape + (dim,)); the weight gradient is
    a scatter-add into the picked rows, and the padding row gets none."""
    t = _ts()
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported")
    if not t.isdtype(x.dtype, "integral"):
        raise TypeError(f"embedding: indices must be integers, got {x.dtype}")
    num = weight.shape[0]
    if x.size and (int(t.min(x).item()) < -num or int(t.max(x).item()) >= num):
        raise IndexError(f"embedding: index out of range for {num} embeddings")
    x = t.where(x < 0, x + num, x)
    rows = t.take(weight, t.reshape(x, (-1,)), axis=0)  # its gradient is a scatter-add
    out = t.reshape(rows, tuple(x.shape) + (weight.shape[1],))
    if padding_idx is not None:
        # The padding row's value still appears in the output (PyTorch returns it) but gets
        # no gradient.
        pidx = padding_idx % num
        is_pad = t.expand_dims((x == pidx).astype(weight.dtype), axis=-1)
        out = out * (1.0 - is_pad) + is_pad * weight.detach()[pidx]
    return out


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Optional[Tensor] = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: Optional[float] = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v over (..., L, E) x (..., S, E) x (..., S, Ev).
    A bool mask keeps True positions; a float mask is added to the scores."""
    query, key, value, attn_mask = _amp.cast(_amp.LOWER, query, key, value, attn_mask)
    t = _ts()
    L, S = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = t.repeat(key, rep, axis=-3)
        value = t.repeat(value, rep, axis=-3)
    scores = t.matmul(query, key.mT) * scale
    if is_causal:
        if attn_mask is not None:
            raise ValueError("scaled_dot_product_attention: pass either attn_mask or is_causal")
        causal = t.tril(t.ones((L, S), dtype=t.bool)).to(scores.device)  # built on the host
        scores = t.where(causal, scores, -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == t.bool:
            scores = t.where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
    attn = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return t.matmul(attn, value)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    t = _ts()
    d = t.abs(x1 - x2 + eps)
    return t.sum(d ** p, axis=-1, keepdims=keepdim) ** (1.0 / p)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    x1, x2 = _amp.cast(_amp.FP32_CUDA, x1, x2)
    t = _ts()
    n1 = t.sqrt(t.sum(x1 * x1, axis=dim))
    n2 = t.sqrt(t.sum(x2 * x2, axis=dim))
    return t.sum(x1 * x2, axis=dim) / (t.maximum(n1, eps) * t.maximum(n2, eps))

"""scaled_dot_product_attention: matmul, one fused (scaled, optionally causal) softmax kernel,
matmul when there is no mask tensor and no dropout; the composite path otherwise."""
from __future__ import annotations

import math
from typing import Any, Optional

from ..._C import Tensor
from ...amp import _policy as _amp
from ._fused import AttentionSoftmax, fusable
from .activation import softmax


def _ts() -> Any:
    import tessera
    return tessera


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Optional[Tensor] = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: Optional[float] = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v over (..., L, E) x (..., S, E) x (..., S, Ev) -> (..., L, Ev).

    A bool mask keeps True positions; a float mask is added to the scores. is_causal lets
    query i attend to keys j <= i (PyTorch's top-left aligned tril(ones(L, S))). scale
    defaults to 1/sqrt(E); enable_gqa repeats key/value heads to match the query's.
    """
    query, key, value, attn_mask = _amp.cast(_amp.LOWER, query, key, value, attn_mask)
    t = _ts()
    if is_causal and attn_mask is not None:
        raise ValueError("scaled_dot_product_attention: pass either attn_mask or is_causal")
    L, S = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = t.repeat(key, rep, axis=-3)
        value = t.repeat(value, rep, axis=-3)
    scores = t.matmul(query, key.mT)
    if attn_mask is None and dropout_p == 0.0 and fusable(scores):
        return t.matmul(AttentionSoftmax.apply(scores, float(scale), bool(is_causal)), value)
    scores = scores * scale
    if is_causal:
        causal = t.tril(t.ones((L, S), dtype=t.bool)).to(scores.device)  # built on the host
        scores = t.where(causal, scores, -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == t.bool:
            scores = t.where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
    attn = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        from .misc import dropout
        attn = dropout(attn, dropout_p, True)
    return t.matmul(attn, value)

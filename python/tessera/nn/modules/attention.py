"""MultiheadAttention with PyTorch's parameters (in_proj_weight/in_proj_bias packed as
(3E, E)/(3E,), or q/k/v_proj_weight when kdim/vdim differ; out_proj Linear; bias_k/bias_v)
and mask conventions (True in a bool mask = NOT allowed)."""
from __future__ import annotations

import math
from typing import Any, Optional, Tuple

from ..._C import Tensor
from .. import functional as F
from ..functional.attention import _safe_softmax
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module


def _ts() -> Any:
    import tessera
    return tessera


def _additive(mask: Optional[Tensor], dtype: Any) -> Optional[Tensor]:
    """A bool mask (True = masked out) or float mask as an additive float mask."""
    t = _ts()
    if mask is None:
        return None
    if mask.dtype == t.bool:
        return t.where(mask, -math.inf, 0.0).astype(dtype)
    return mask.astype(dtype)


class NonDynamicallyQuantizableLinear(Linear):
    """The class of MultiheadAttention.out_proj in PyTorch (a Linear; the name shows in reprs)."""


class MultiheadAttention(Module):
    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: Optional[int] = None,
                 vdim: Optional[int] = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by "
                             f"num_heads ({num_heads})")
        t = _ts()
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        # PyTorch's layouts: one packed (3E, E) projection, or separate q/k/v weights when the
        # key or value width differs from embed_dim.
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(t.empty((3 * embed_dim, embed_dim), dtype=dtype))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(t.empty((embed_dim, embed_dim), dtype=dtype))
            self.k_proj_weight = Parameter(t.empty((embed_dim, self.kdim), dtype=dtype))
            self.v_proj_weight = Parameter(t.empty((embed_dim, self.vdim), dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(t.zeros((3 * embed_dim,), dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(t.empty((1, 1, embed_dim), dtype=dtype))
            self.bias_v = Parameter(t.empty((1, 1, embed_dim), dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if w is not None:
                init.xavier_uniform_(w)
        if bias:
            init.zeros_(self.out_proj.bias)
        if add_bias_kv:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Optional[Tensor] = None, need_weights: bool = True,
                attn_mask: Optional[Tensor] = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> Tuple[Tensor, Optional[Tensor]]:
        """(L, N, E) inputs (or (N, L, E) with batch_first, or unbatched (L, E)) ->
        (output, attention weights averaged over heads or None)."""
        t = _ts()
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = (t.expand_dims(x, axis=0) for x in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = t.expand_dims(key_padding_mask, axis=0)
        elif not self.batch_first:
            query, key, value = (t.permute_dims(x, (1, 0, 2)) for x in (query, key, value))
        n, L, E = query.shape
        S = key.shape[1]
        H, hd = self.num_heads, self.head_dim
        W, b = self.in_proj_weight, self.in_proj_bias
        wq, wk, wv = (W[:E], W[E:2 * E], W[2 * E:]) if W is not None else \
            (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        q = F.linear(query, wq, None if b is None else b[:E])
        k = F.linear(key, wk, None if b is None else b[E:2 * E])
        v = F.linear(value, wv, None if b is None else b[2 * E:])
        # Extra key/value positions (PyTorch's order: bias_k/bias_v, then a zero position);
        # the masks get matching allowed columns below.
        extra = []
        if self.bias_k is not None:
            extra.append((t.broadcast_to(self.bias_k, (n, 1, E)),
                          t.broadcast_to(self.bias_v, (n, 1, E))))
        if self.add_zero_attn:
            z = t.zeros((n, 1, E), dtype=k.dtype, device=k.device)
            extra.append((z, z))
        if extra:
            k = t.concat([k] + [ek for ek, _ in extra], axis=1)
            v = t.concat([v] + [ev for _, ev in extra], axis=1)
        q, k, v = (t.permute_dims(t.reshape(x, (n, x.shape[1], H, hd)), (0, 2, 1, 3)) for x in (q, k, v))
        mask = _additive(attn_mask, q.dtype)
        if mask is None and is_causal:
            mask = _additive(t.logical_not(t.tril(t.ones((L, S), dtype=t.bool))), q.dtype)
        if mask is not None and mask.ndim == 3:  # (N*H, L, S)
            mask = t.reshape(mask, (n, H, L, S))
        kpm = _additive(key_padding_mask, q.dtype)
        if kpm is not None:
            kpm = t.reshape(kpm, (n, 1, 1, S))
            mask = kpm if mask is None else mask + kpm
        if mask is not None and extra:
            mask = F.pad(mask, (0, len(extra)))
        scores = t.matmul(q, k.mT) * (1.0 / math.sqrt(hd))
        if mask is not None:
            scores = scores + mask
        # As PyTorch: without weights it runs scaled_dot_product_attention, whose softmax gives
        # 0 (not NaN) for rows the masks hide entirely.
        attn = F.softmax(scores, dim=-1) if need_weights or mask is None else \
            _safe_softmax(scores)
        attn_d = F.dropout(attn, self.dropout, self.training) if self.dropout > 0 else attn
        out = t.reshape(t.permute_dims(t.matmul(attn_d, v), (0, 2, 1, 3)), (n, L, E))
        out = self.out_proj(out)
        if unbatched:
            out = out[0]
        elif not self.batch_first:
            out = t.permute_dims(out, (1, 0, 2))
        if not need_weights:
            return out, None
        # PyTorch returns the weights after dropout.
        weights = t.mean(attn_d, axis=1) if average_attn_weights else attn_d
        return out, (weights[0] if unbatched else weights)

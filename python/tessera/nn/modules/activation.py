"""Activation layers (torch.nn.modules.activation): thin wrappers over nn.functional, and
MultiheadAttention (which torch keeps here too)."""
from __future__ import annotations

import math as _math
import typing as _t
import warnings as _warnings

if _t.TYPE_CHECKING:
    from typing import Any, Optional, Tuple


from ..._C import Tensor
from .. import functional as F
from .module import Module
from .. import init
from ..parameter import Parameter
from ..functional.attention import _safe_softmax
from .linear import NonDynamicallyQuantizableLinear


class _Simple(Module):
    """An activation with no state: forward is `_fn(x)`."""

    _fn: Any = None

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, inplace=True) if self.inplace else type(self)._fn(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace and self._repr_inplace else ""

    _repr_inplace = True


class ReLU(_Simple):
    """ReLU(x) = max(0, x), elementwise; any shape (inplace=True writes into the input)."""
    _fn = staticmethod(F.relu)


class SiLU(_Simple):
    """SiLU(x) = x * sigmoid(x) (swish), elementwise; any shape."""
    _fn = staticmethod(F.silu)


class Mish(_Simple):
    """Mish(x) = x * tanh(softplus(x)), elementwise; any shape."""
    _fn = staticmethod(F.mish)


class Hardswish(_Simple):
    """Hardswish(x) = x * clip(x + 3, 0, 6) / 6, elementwise; any shape."""
    _fn = staticmethod(F.hardswish)
    _repr_inplace = False


class Hardsigmoid(_Simple):
    """Hardsigmoid(x) = clip(x / 6 + 1 / 2, 0, 1), elementwise; any shape."""
    _fn = staticmethod(F.hardsigmoid)
    _repr_inplace = False


class SELU(_Simple):
    """SELU(x) = scale * (max(0, x) + min(0, alpha (exp(x) - 1))) with PyTorch's constants,
    elementwise; any shape."""
    _fn = staticmethod(F.selu)


class Sigmoid(_Simple):
    """Sigmoid(x) = 1 / (1 + exp(-x)), elementwise; any shape."""
    _fn = staticmethod(F.sigmoid)


class LogSigmoid(_Simple):
    """LogSigmoid(x) = log(1 / (1 + exp(-x))), computed stably; any shape."""
    _fn = staticmethod(F.logsigmoid)


class Tanh(_Simple):
    """Tanh(x), elementwise; any shape."""
    _fn = staticmethod(F.tanh)


class Softsign(_Simple):
    """Softsign(x) = x / (1 + |x|), elementwise; any shape."""
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Simple):
    """Tanhshrink(x) = x - tanh(x), elementwise; any shape."""
    _fn = staticmethod(F.tanhshrink)


class GELU(Module):
    """GELU(x) = x Phi(x) (approximate='tanh': the tanh approximation), elementwise; any
    shape."""
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class ELU(Module):
    """ELU(x) = x if x > 0 else alpha (exp(x) - 1), elementwise; any shape."""
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """CELU(x) = max(0, x) + min(0, alpha (exp(x / alpha) - 1)), elementwise; any shape."""
    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class LeakyReLU(Module):
    """LeakyReLU(x) = x if x >= 0 else negative_slope * x, elementwise; any shape."""
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Hardtanh(Module):
    """Hardtanh(x) = clip(x, min_val, max_val), elementwise; any shape."""
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: Optional[float] = None, max_value: Optional[float] = None) -> None:
        super().__init__()
        if min_value is not None:
            _warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            _warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) cannot be greater than max_val "
                             f"({max_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return (f"min_val={self.min_val}, max_val={self.max_val}"
                + (", inplace=True" if self.inplace else ""))


class ReLU6(Hardtanh):
    """min(max(0, x), 6): torch's Hardtanh(0, 6) subclass (min_val, max_val, inplace)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softplus(Module):
    """Softplus(x) = log(1 + exp(beta x)) / beta, linear above `threshold`; any shape."""
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class _DimActivation(Module):
    _fn: Any = None

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_DimActivation):
    """exp(x) / sum(exp(x)) along `dim`, computed stably; shape unchanged."""
    _fn = staticmethod(F.softmax)


class LogSoftmax(_DimActivation):
    """log(softmax(x)) along `dim`, computed in one stable pass; shape unchanged."""
    _fn = staticmethod(F.log_softmax)


class Softmin(_DimActivation):
    """softmax(-x) along `dim`; shape unchanged."""
    _fn = staticmethod(F.softmin)


class GLU(Module):
    """Gated linear unit: splits `dim` into halves a, b and returns a * sigmoid(b); that dim
    halves."""
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


def _ts() -> Any:
    import tessera
    return tessera


def _inplace_str(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class PReLU(Module):
    """x where x > 0, else a * x with a learnable slope (one, or one per channel),
    initialized to `init`."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_ts().empty((num_parameters,), dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Threshold(Module):
    """x where x > threshold, else value."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + _inplace_str(self.inplace)


class Hardshrink(Module):
    """Hardshrink(x) = x if |x| > lambd else 0, elementwise; any shape."""
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """Softshrink(x) = x - lambd if x > lambd, x + lambd if x < -lambd, else 0; any shape."""
    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class Softmax2d(Module):
    """Softmax over the channel dimension of (N, C, H, W) or (C, H, W)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax2d(input)


class RReLU(Module):
    """Randomized leaky ReLU: slopes U(lower, upper) per element in training, their mean in
    eval."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + _inplace_str(self.inplace)


def _additive(mask: Optional[Tensor], dtype: Any, name: str = "attn_mask") -> Optional[Tensor]:
    """A bool mask (True = masked out) or float mask as an additive float mask; any other
    dtype is refused as PyTorch's _canonical_mask does (an integer 0/1 mask added as is would
    silently hide nothing)."""
    t = _ts()
    if mask is None:
        return None
    if mask.dtype != t.bool and not mask.dtype.is_floating_point:
        raise AssertionError(f"MultiheadAttention: only bool and floating types of {name} are "
                             f"supported, got {mask.dtype}; pass mask.bool() (True = masked "
                             "out) or an additive float mask")
    if mask.dtype == t.bool:
        return t.where(mask, -_math.inf, 0.0).astype(dtype)
    return mask.astype(dtype)


class MultiheadAttention(Module):
    """Multi-head attention (Vaswani et al.): query (L, N, E) and key/value (S, N, E) (N first
    with batch_first=True, or unbatched (L, E)) -> (output (L, N, E), weights (N, L, S) averaged
    over heads, or per head with average_attn_weights=False); key_padding_mask (N, S),
    attn_mask (L, S) or (N * num_heads, L, S), is_causal."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: Optional[int] = None,
                 vdim: Optional[int] = None, batch_first: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:  # was a ZeroDivisionError, or accepted (-2)
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be greater than "
                             f"0, got embed_dim={embed_dim} and num_heads={num_heads} instead")
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
        if key_padding_mask is not None and attn_mask is not None and \
                key_padding_mask.dtype != attn_mask.dtype:
            _warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. "
                          "Use same type for both instead.", stacklevel=2)
        mask = _additive(attn_mask, q.dtype)
        if mask is None and is_causal:
            mask = _additive(t.logical_not(t.tril(t.ones((L, S), dtype=t.bool))), q.dtype)
        if mask is not None and mask.ndim == 3:  # (N*H, L, S)
            mask = t.reshape(mask, (n, H, L, S))
        kpm = _additive(key_padding_mask, q.dtype, "key_padding_mask")
        if kpm is not None:
            kpm = t.reshape(kpm, (n, 1, 1, S))
            mask = kpm if mask is None else mask + kpm
        if mask is not None and extra:
            mask = F.pad(mask, (0, len(extra)))
        scores = t.matmul(q, k.mT) * (1.0 / _math.sqrt(hd))
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

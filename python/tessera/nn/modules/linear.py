"""Identity, Linear, Flatten, Unflatten, Embedding."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from ..._C import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _ts() -> Any:
    import tessera
    return tessera


class Identity(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


def _make_weight_bias(mod: Module, weight_shape: tuple, bias: bool, dtype: Any,
                      bias_size: Optional[int] = None) -> None:
    """Registers an uninitialized weight and (optionally) bias of bias_size (default
    weight_shape[0]) entries, then runs the default PyTorch initialization."""
    mod.weight = Parameter(_ts().empty(weight_shape, dtype=dtype))
    if bias:
        n = weight_shape[0] if bias_size is None else bias_size
        mod.bias = Parameter(_ts().empty((n,), dtype=dtype))
    else:
        mod.register_parameter("bias", None)
    _reset_weight_bias(mod)


def _reset_weight_bias(mod: Module) -> None:
    """PyTorch's default for Linear and ConvNd: kaiming_uniform(a=sqrt(5)) for the weight,
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
    init.kaiming_uniform_(mod.weight, a=math.sqrt(5))
    if mod.bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(mod.weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(mod.bias, -bound, bound)


class Linear(Module):
    """y = x W^T + b with W of shape (out_features, in_features); PyTorch's initialization
    (kaiming_uniform(a=sqrt(5)) for W, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for b)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _make_weight_bias(self, (out_features, in_features), bias, dtype)

    def reset_parameters(self) -> None:
        _reset_weight_bias(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim == 0:
            return _ts().reshape(input, (1,))
        s = self.start_dim % input.ndim
        e = self.end_dim % input.ndim
        shape = (tuple(input.shape[:s]) + (math.prod(input.shape[s:e + 1]),)
                 + tuple(input.shape[e + 1:]))
        return _ts().reshape(input, shape)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension `dim` into `unflattened_size`."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        d = self.dim % input.ndim
        sizes = list(self.unflattened_size)
        if -1 in sizes:
            known = math.prod(s for s in sizes if s != -1)
            sizes[sizes.index(-1)] = input.shape[d] // known if known else 0
        if math.prod(sizes) != input.shape[d]:
            raise ValueError(f"Unflatten: unflattened_size {self.unflattened_size} does not "
                             f"match dimension {self.dim} of size {input.shape[d]}")
        return _ts().reshape(input, tuple(input.shape[:d]) + tuple(sizes)
                             + tuple(input.shape[d + 1:]))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`, initialized
    N(0, 1) with the padding row zeroed."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None,
                 max_norm: Optional[float] = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Optional[Tensor] = None, _freeze: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("Embedding: padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        # Kept (and passed to F.embedding, which rejects sparse gradients) rather than
        # silently training densely.
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(_ts().empty((num_embeddings, embedding_dim), dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with _ts().no_grad():
                self.weight[self.padding_idx] = 0

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "Embedding":
        """An Embedding whose weight is `embeddings` (2-D), frozen unless freeze=False; the
        other options are the constructor's (torch's signature)."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=embeddings,
                   _freeze=freeze)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        if self.sparse:
            s += ", sparse=True"
        return s

"""Flatten and Unflatten (torch.nn.modules.flatten)."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Sequence

from ..._C import Tensor
from .module import Module


def _ts() -> Any:
    import tessera
    return tessera


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
        shape = (tuple(input.shape[:s]) + (_math.prod(input.shape[s:e + 1]),)
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
            known = _math.prod(s for s in sizes if s != -1)
            sizes[sizes.index(-1)] = input.shape[d] // known if known else 0
        if _math.prod(sizes) != input.shape[d]:
            raise ValueError(f"Unflatten: unflattened_size {self.unflattened_size} does not "
                             f"match dimension {self.dim} of size {input.shape[d]}")
        return _ts().reshape(input, tuple(input.shape[:d]) + tuple(sizes)
                             + tuple(input.shape[d + 1:]))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"

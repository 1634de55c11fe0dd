"""Flatten and Unflatten (torch.nn.modules.flatten)."""
from __future__ import annotations

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
        # Tensor.flatten checks the dims (they wrapped modulo ndim here: Flatten(5, 9) left a
        # 1-D input as it was, Flatten(1, 0) inserted a dim of 1; torch raises for both)
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"

class Unflatten(Module):
    """Splits dimension `dim` into `unflattened_size`."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        # Tensor.unflatten checks the dim and the sizes (the dim wrapped modulo ndim here, a
        # 0-d input divided by zero, a str dim failed in %-formatting)
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"

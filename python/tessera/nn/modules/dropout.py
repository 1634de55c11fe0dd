"""Dropout layers (torch.nn.modules.dropout): Dropout, Dropout1d/2d/3d, AlphaDropout,
FeatureAlphaDropout."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any

from ..._C import Tensor
from .. import functional as F
from .module import Module


class Dropout(Module):
    """Zeroes elements with probability p in training mode; identity in eval mode."""

    _fn: Any = staticmethod(F.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{type(self).__name__}: dropout probability has to be between 0 "
                             f"and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"

class Dropout2d(Dropout):
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) with probability p in training,
    scaling the rest by 1 / (1 - p)."""
    _fn = staticmethod(F.dropout2d)


class Dropout1d(Dropout):
    """Zeroes whole channels of (N, C, L) or (C, L) input in training."""
    _fn = staticmethod(F.dropout1d)

class Dropout3d(Dropout):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input in training."""
    _fn = staticmethod(F.dropout3d)

class AlphaDropout(Dropout):
    """SELU-preserving dropout in training; identity in eval."""
    _fn = staticmethod(F.alpha_dropout)

class FeatureAlphaDropout(Dropout):
    """SELU-preserving dropout of whole channels in training; identity in eval."""
    _fn = staticmethod(F.feature_alpha_dropout)

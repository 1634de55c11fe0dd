"""Activation and dropout layers: thin wrappers over nn.functional."""
from __future__ import annotations

import warnings
from typing import Any, Optional

from ..._C import Tensor
from .. import functional as F
from .module import Module


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
    _fn = staticmethod(F.relu)


class SiLU(_Simple):
    _fn = staticmethod(F.silu)


class Mish(_Simple):
    _fn = staticmethod(F.mish)


class Hardswish(_Simple):
    _fn = staticmethod(F.hardswish)
    _repr_inplace = False


class Hardsigmoid(_Simple):
    _fn = staticmethod(F.hardsigmoid)
    _repr_inplace = False


class SELU(_Simple):
    _fn = staticmethod(F.selu)


class Sigmoid(_Simple):
    _fn = staticmethod(F.sigmoid)


class LogSigmoid(_Simple):
    _fn = staticmethod(F.logsigmoid)


class Tanh(_Simple):
    _fn = staticmethod(F.tanh)


class Softsign(_Simple):
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Simple):
    _fn = staticmethod(F.tanhshrink)


class GELU(Module):
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: Optional[float] = None, max_value: Optional[float] = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
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
    _fn = staticmethod(F.softmax)


class LogSoftmax(_DimActivation):
    _fn = staticmethod(F.log_softmax)


class Softmin(_DimActivation):
    _fn = staticmethod(F.softmin)


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


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
    _fn = staticmethod(F.dropout2d)

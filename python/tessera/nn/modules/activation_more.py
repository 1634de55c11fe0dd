"""PReLU, Threshold, Hardshrink, Softshrink, Softmax2d, RReLU (PyTorch's arguments, reprs
and PReLU's weight layout)."""
from __future__ import annotations

from typing import Any

from ..._C import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


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
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
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

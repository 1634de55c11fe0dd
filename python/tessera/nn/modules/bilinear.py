"""Bilinear: y = x1^T A x2 + b (PyTorch's weight (out, in1, in2) and initialization)."""
from __future__ import annotations

import math
from typing import Any

from ..._C import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _ts() -> Any:
    import tessera
    return tessera


class Bilinear(Module):
    """y_k = x1 W_k x2 + b_k over (..., in1) and (..., in2) inputs -> (..., out); weight and
    bias are drawn U(-1/sqrt(in1), 1/sqrt(in1)) like PyTorch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        t = _ts()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(t.empty((out_features, in1_features, in2_features), dtype=dtype))
        if bias:
            self.bias = Parameter(t.empty((out_features,), dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        x1, x2 = input1, input2
        if (x1.ndim == 0 or x1.ndim != x2.ndim or x1.shape[-1] != self.in1_features
                or x2.shape[-1] != self.in2_features
                or tuple(x1.shape[:-1]) != tuple(x2.shape[:-1])):
            raise ValueError(f"Bilinear: expected inputs (..., {self.in1_features}) and "
                             f"(..., {self.in2_features}) with the same leading shape, got "
                             f"{tuple(x1.shape)} and {tuple(x2.shape)}")
        return F.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")

"""Linear layers (torch.nn.modules.linear): Identity, Linear, Bilinear, LazyLinear and
NonDynamicallyQuantizableLinear (MultiheadAttention.out_proj's class)."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

from ..._C import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .._uninitialized import UninitializedParameter
from .lazy import LazyModuleMixin, _no_grad


def _ts() -> Any:
    import tessera
    return tessera


class Identity(Module):
    """Returns its input unchanged (arguments to the constructor are ignored, as PyTorch's)."""
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
    init.kaiming_uniform_(mod.weight, a=_math.sqrt(5))
    if mod.bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(mod.weight)
        bound = 1 / _math.sqrt(fan_in) if fan_in > 0 else 0
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


class NonDynamicallyQuantizableLinear(Linear):
    """The class of MultiheadAttention.out_proj in PyTorch (a Linear; the name shows in reprs)."""


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
        bound = 1 / _math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0.0
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


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is inferred from the first input's last dimension."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if self.has_uninitialized_params():
            with _no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()

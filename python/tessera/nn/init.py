"""Parameter initialization (PyTorch's formulas and algorithms). Every function fills its
tensor in place under no_grad, on its device, from `generator` (default: the generator
ts.manual_seed seeds), and returns it."""
from __future__ import annotations

import inspect as _inspect
import math as _math
import typing as _t
import warnings as _warnings

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Tuple

from .._C import Tensor


def _ts() -> Any:
    import tessera
    return tessera


def _fill(tensor: Tensor, values: Any) -> Tensor:
    t = _ts()
    with t.no_grad():
        tensor[...] = values
    return tensor


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended gain for an activation (PyTorch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return _math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return _math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> Tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive = _math.prod(tensor.shape[2:]) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    with _ts().no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    with _ts().no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """Normal(mean, std) restricted to [a, b], by inverse transform sampling as torch: uniform
    in [2 cdf(a) - 1, 2 cdf(b) - 1], erfinv, scaled and shifted, clamped to [a, b]."""
    def norm_cdf(x: float) -> float:
        return (1.0 + _math.erf(x / _math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        _warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
    with _ts().no_grad():
        tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        tensor.erfinv_()
        tensor.mul_(std * _math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
    return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _fill(tensor, val)


def ones_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 1)


def zeros_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 0)


def eye_(tensor: Tensor) -> Tensor:
    if tensor.ndim != 2:
        raise ValueError("eye_: only 2-D tensors are supported")
    return _fill(tensor, _ts().eye(*tensor.shape, dtype=tensor.dtype))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = gain * _math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * _math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    bound = _math.sqrt(3.0) * calculate_gain(nonlinearity, a) / _math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / _math.sqrt(fan))


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a normal one, the signs of R's
    diagonal moved into Q (torch's algorithm); dimensions past the first are flattened."""
    ts = _ts()
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    dtype = tensor.dtype if tensor.dtype in (ts.float32, ts.float64) else ts.float32
    with ts.no_grad():
        flat = ts.empty((rows, cols), dtype=dtype, device=tensor.device)
        flat.normal_(0.0, 1.0, generator=generator)
        if rows < cols:
            flat = flat.mT
        q, r = ts.linalg.qr(flat)
        q = q * ts.diagonal(r).sign()
        if rows < cols:
            q = q.mT
        tensor[...] = (q * gain).reshape(tensor.shape)
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fills a 3/4/5-D conv weight with the Dirac delta (identity convolution per group)."""
    ts = _ts()
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per = tensor.shape[0] // groups
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    n = min(out_per, tensor.shape[1])
    with ts.no_grad():
        tensor[...] = 0
        centre = tuple(k // 2 for k in tensor.shape[2:])
        for g in range(groups):
            for d in range(n):
                tensor[(g * out_per + d, d) + centre] = 1
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """Fills a 2-D tensor with N(0, std) values and zeros ceil(sparsity * rows) entries of
    each column."""
    ts = _ts()
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = int(_math.ceil(sparsity * rows))
    with ts.no_grad():
        tensor.normal_(0.0, std, generator=generator)
        for c in range(cols):
            tensor[ts.randperm(rows, generator=generator, device=tensor.device)[:zeros], c] = 0
    return tensor


def _deprecated_init(name: str) -> Callable[..., Any]:
    def fn(*args: Any, **kwargs: Any) -> Any:
        _warnings.warn(f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.",
                      FutureWarning, stacklevel=2)
        return globals()[name + "_"](*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Deprecated: nn.init.{name}_."
    fn.__signature__ = _inspect.signature(globals()[name + "_"])  # what it forwards to
    return fn


(uniform, normal, constant, xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal,
 orthogonal, eye, dirac, sparse) = (_deprecated_init(n) for n in (
    "uniform", "normal", "constant", "xavier_uniform", "xavier_normal", "kaiming_uniform",
    "kaiming_normal", "orthogonal", "eye", "dirac", "sparse"))

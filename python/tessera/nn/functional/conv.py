"""The convolution modules' helpers (nn/modules/conv.py, pooling.py): window-size
arguments, ConvTranspose's output_size rule, and the padding_mode forward (F.pad, then the
C++ convolution). F.pad and F.conv* themselves are C++ bindings (csrc/python/bind_conv.cpp)."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

from ... import _C
from ..._C import Tensor, pad

IntOrTuple = Union[int, Sequence[int]]


def _int(v: Any, name: str) -> int:
    """An int window argument; TypeError (as torch's) for floats, strings, None and the like."""
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{name}: expected ints for the window sizes, got {type(v).__name__} "
                        f"({v!r})")
    return v.__index__()


def _ntuple(v: IntOrTuple, n: int, name: str) -> Tuple[int, ...]:
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,) * n
    if not isinstance(v, (tuple, list)):
        return (_int(v, name),) * n
    v = tuple(_int(a, name) for a in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"{name}: expected {n} values, got {v}")
    return v


def _output_padding(x: Tensor, output_size: Optional[Sequence[int]], stride: Tuple[int, ...],
                    padding: Tuple[int, ...], kernel: Tuple[int, ...],
                    dilation: Tuple[int, ...], nsp: int, op: str) -> Tuple[int, ...]:
    """PyTorch's ConvTranspose output_size= rule: the output_padding that reaches it."""
    size = [int(v) for v in output_size]
    if len(size) == nsp + 2 or (len(size) == nsp + 1 and x.ndim == nsp + 1):
        size = size[-nsp:]
    if len(size) != nsp:
        raise ValueError(f"{op}: output_size must have {nsp} or {nsp + 2} elements, got {size}")
    ins = x.shape[x.ndim - nsp:]
    res = []
    for i in range(nsp):
        lo = (ins[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + 1
        if not lo <= size[i] < lo + stride[i]:
            raise ValueError(f"{op}: requested an output size of {size}, but valid sizes range "
                             f"from {lo} to {lo + stride[i] - 1} in dimension {i}")
        res.append(size[i] - lo)
    return tuple(res)


def _same_pads(kernel: Tuple[int, ...], dilation: Tuple[int, ...]) -> List[int]:
    """F.pad's list (last dim first) of PyTorch's 'same' padding: the extra one on the right."""
    flat: List[int] = []
    for k, d in zip(reversed(kernel), reversed(dilation)):
        total = d * (k - 1)
        flat += [total // 2, total - total // 2]
    return flat


def _convnd(input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Tuple[int, ...],
            padding: Any, dilation: Tuple[int, ...], groups: int, nsp: int, op: str,
            padding_mode: str = "zeros") -> Tensor:
    """The ConvNd modules' forward: zeros padding inside the op; reflect/replicate/circular
    padding (PyTorch's padding_mode) applied with F.pad first, then an unpadded convolution."""
    if padding_mode == "zeros":
        return _C._conv(input, weight, bias, stride, padding, dilation, groups, nsp, op)
    if isinstance(padding, str):
        flat = [0] * (2 * nsp) if padding == "valid" else \
            _same_pads(tuple(weight.shape[2:]), dilation)
    else:
        flat = [v for p in reversed(_ntuple(padding, nsp, op)) for v in (p, p)]
    return _C._conv(pad(input, flat, mode=padding_mode), weight, bias, stride, 0, dilation,
                    groups, nsp, op)


def _conv_transposend(input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Any,
                      padding: Any, output_padding: Any, groups: int, dilation: Any, nsp: int,
                      op: str) -> Tensor:
    """The ConvTransposeNd modules' forward (output_padding already resolved from
    output_size): the C++ transposed-convolution op."""
    return _C._conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, nsp, op)

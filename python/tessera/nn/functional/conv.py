"""pad, convolutions and pooling (C++ ops: csrc/ops/conv.h, csrc/ops/pool.h), and the
window stacking the remaining Python pools use.

Note [Convolution by shifted strided slices]
For each kernel offset (i, j) the strided slice
x_padded[..., i*d : i*d + s*(Ho-1) + 1 : s, j*d : ... : s] is the (Ho, Wo) grid of input
values that offset touches; stacking the kh*kw slices gives (N, C, kh*kw, Ho, Wo) windows.
Integer max pooling, lp pooling and unfold reduce or reshape them; every op used is
differentiable.
"""
from __future__ import annotations

import numpy as np

from typing import Any, List, Optional, Sequence, Tuple, Union

from ... import _C
from ..._C import Tensor

IntOrTuple = Union[int, Sequence[int]]


def _ts() -> Any:
    import tessera
    return tessera


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


# ------------------------------------------------------------------ padding
class PadError(ValueError, RuntimeError):
    """Padding that does not fit the input: ValueError for the bad argument, RuntimeError as
    PyTorch raises."""


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: Optional[float] = None) -> Tensor:
    """PyTorch's F.pad: `pad` lists (left, right) pairs starting from the LAST dimension.
    Modes: constant, reflect, replicate, circular; negative pads crop."""
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: padding length {len(pad)} must be even and at most 2*ndim "
                         f"({2 * input.ndim})")
    out = input
    for k in range(len(pad) // 2):
        axis = input.ndim - 1 - k
        out = _pad_axis(out, axis, int(pad[2 * k]), int(pad[2 * k + 1]), mode,
                        0.0 if value is None else value)
    return out


def _take(x: Tensor, axis: int, sl: slice) -> Tensor:
    return x[(slice(None),) * axis + (sl,)]


def _pad_by_index(x: Tensor, axis: int, left: int, right: int, mode: str) -> Tensor:
    """reflect/replicate with a negative pad on a side: output position i reads the input at
    i - left reflected (or clamped) into [0, n), as PyTorch maps them (the reflection is of
    the whole input, not of what the crop leaves)."""
    t = _ts()
    n = x.shape[axis]
    size = n + left + right
    if size < 0 or (mode == "reflect" and (left >= n or right >= n)) or n == 0:
        raise PadError(f"pad: {mode} padding ({left}, {right}) does not fit the dimension size {n}")
    pos = np.arange(size) - left
    if mode == "reflect":
        period = 2 * (n - 1) if n > 1 else 1
        pos = np.abs(pos) % period
        pos = np.where(pos >= n, period - pos, pos)
    else:
        pos = np.clip(pos, 0, n - 1)
    return _take(x, axis, t.asarray(pos.astype(np.int64), device=x.device))


def _pad_axis(x: Tensor, axis: int, left: int, right: int, mode: str, value: float) -> Tensor:
    t = _ts()
    n = x.shape[axis]
    if (left < 0 or right < 0) and mode in ("reflect", "replicate"):
        return _pad_by_index(x, axis, left, right, mode)
    if left < 0 or right < 0:
        # Negative pads crop first; the positive side then pads the cropped tensor
        # (PyTorch's semantics for constant, and for circular: it wraps what is left).
        if n - max(-left, 0) - max(-right, 0) < 0:
            raise PadError(f"pad: negative padding ({left}, {right}) crops more than the "
                           f"dimension size {n}")
        x = _take(x, axis, slice(max(-left, 0), n - max(-right, 0)))
        left, right = max(left, 0), max(right, 0)
        n = x.shape[axis]
    if left == 0 and right == 0:
        return x
    parts: List[Tensor] = []
    if mode == "constant":
        def block(k: int) -> Tensor:
            shape = list(x.shape)
            shape[axis] = k
            return t.full(tuple(shape), value, dtype=x.dtype)
        lo, hi = block(left), block(right)
    elif mode == "reflect":
        if left >= n or right >= n:
            raise PadError(f"pad: reflect padding ({left}, {right}) must be smaller than the "
                             f"dimension size {n}")
        lo = t.flip(_take(x, axis, slice(1, left + 1)), axis=axis)
        hi = t.flip(_take(x, axis, slice(n - 1 - right, n - 1)), axis=axis)
    elif mode == "replicate":
        if n == 0:
            raise PadError("pad: replicate padding of an empty dimension")
        edge_shape = list(x.shape)
        edge_shape[axis] = left
        lo = t.broadcast_to(_take(x, axis, slice(0, 1)), tuple(edge_shape))
        edge_shape[axis] = right
        hi = t.broadcast_to(_take(x, axis, slice(n - 1, n)), tuple(edge_shape))
    elif mode == "circular":
        if left > n or right > n:
            raise PadError(f"pad: circular padding ({left}, {right}) exceeds size {n}")
        lo = _take(x, axis, slice(n - left, n))
        hi = _take(x, axis, slice(0, right))
    else:
        raise ValueError(f"pad: unknown mode {mode!r} (constant, reflect, replicate, circular)")
    if left:
        parts.append(lo)
    parts.append(x)
    if right:
        parts.append(hi)
    return t.concat(parts, axis=axis)


# ------------------------------------------------------------------ convolution
# The convolutions are C++ ops (csrc/ops/conv.h, Note [Convolution as three ops]): argument
# checks, 'same'/'valid' padding, autocast (lower precision) and gradients of every order live
# there; these functions only forward PyTorch's signatures.
def conv1d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrTuple = 1,
           padding: Any = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """(N, C, L) or (C, L) with weight (O, C/groups, k) -> (N, O, L_out); padding: ints,
    'same' or 'valid'."""
    return _C._conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrTuple = 1,
           padding: Any = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """(N, C, H, W) or (C, H, W) with weight (O, C/groups, kh, kw) -> (N, O, H_out, W_out);
    the output keeps a channels-last input's memory format."""
    return _C._conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrTuple = 1,
           padding: Any = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """(N, C, D, H, W) or (C, D, H, W) with weight (O, C/groups, kd, kh, kw) ->
    (N, O, D_out, H_out, W_out)."""
    return _C._conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                     stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     output_padding: IntOrTuple = 0, groups: int = 1,
                     dilation: IntOrTuple = 1) -> Tensor:
    """(N, C_in, L) with weight (C_in, C_out/groups, k) -> (N, C_out, L_out),
    L_out = (L-1) stride - 2 padding + dilation (k-1) + output_padding + 1."""
    return _C._conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, 1, "conv_transpose1d")


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                     stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     output_padding: IntOrTuple = 0, groups: int = 1,
                     dilation: IntOrTuple = 1) -> Tensor:
    """(N, C_in, H, W) with weight (C_in, C_out/groups, kh, kw) -> (N, C_out, H_out, W_out):
    the gradient of conv2d with respect to its input (a "deconvolution")."""
    return _C._conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, 2, "conv_transpose2d")


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                     stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     output_padding: IntOrTuple = 0, groups: int = 1,
                     dilation: IntOrTuple = 1) -> Tensor:
    """(N, C_in, D, H, W) with weight (C_in, C_out/groups, kd, kh, kw) ->
    (N, C_out, D_out, H_out, W_out)."""
    return _C._conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                              dilation, 3, "conv_transpose3d")


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

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

import math
from typing import Any, List, Optional, Sequence, Tuple, Union

from ... import _C
from ..._C import Tensor
from . import _fused
from ._fused import fusable_windows as fusable

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


def _check_window(op: str, k: Tuple[int, ...], s: Tuple[int, ...], d: Tuple[int, ...]) -> None:
    """Zero or negative strides, kernels and dilations: PyTorch's RuntimeErrors (raised as
    tessera.errors.ValueError, which is both), before any size is divided by them."""
    from ... import errors
    if any(v <= 0 for v in k):
        raise errors.ValueError(f"{op}: kernel size should be greater than zero, got "
                                f"kernel_size {k}")
    if any(v == 0 for v in s):
        raise errors.ValueError(f"{op}: stride should not be zero, got stride {s}")
    if any(v < 0 for v in s):
        raise errors.ValueError(f"{op}: stride should be greater than zero, got stride {s}")
    if any(v <= 0 for v in d):
        raise errors.ValueError(f"{op}: dilation should be greater than zero, got "
                                f"dilation {d}")


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


# ------------------------------------------------------------------ windows
def _out_size(n: int, k: int, s: int, d: int, ceil_mode: bool = False) -> int:
    span = d * (k - 1) + 1
    if ceil_mode:
        return max(0, -(-(n - span) // s) + 1)
    return max(0, (n - span) // s + 1)


def _windows(xp: Tensor, kernel: Tuple[int, ...], stride: Tuple[int, ...],
             dilation: Tuple[int, ...], out: Tuple[int, ...]) -> Tensor:
    """Stacks the shifted strided slices of the padded input over the last len(kernel)
    axes: (N, C, *spatial) -> (N, C, prod(kernel), *out)."""
    t = _ts()
    nsp = len(kernel)
    lead = (slice(None),) * (xp.ndim - nsp)
    slices = []
    for offs in _offsets(kernel):
        idx = tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                    for o, d, s, m in zip(offs, dilation, stride, out))
        slices.append(xp[lead + idx])
    return t.stack(slices, axis=xp.ndim - nsp)


def _offsets(kernel: Tuple[int, ...]) -> List[Tuple[int, ...]]:
    offs: List[Tuple[int, ...]] = [()]
    for k in kernel:
        offs = [o + (i,) for o in offs for i in range(k)]
    return offs


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


# ------------------------------------------------------------------ pooling
def _pool_setup(x: Tensor, kernel_size: IntOrTuple, stride: Optional[IntOrTuple],
                padding: IntOrTuple, dilation: IntOrTuple, ceil_mode: bool, nsp: int,
                op: str) -> Tuple[Tuple[int, ...], ...]:
    k = _ntuple(kernel_size, nsp, op)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _ntuple(stride, nsp, op)
    p = _ntuple(padding, nsp, op)
    d = _ntuple(dilation, nsp, op)
    if any(pi * 2 > ki for pi, ki in zip(p, k)):
        raise ValueError(f"{op}: padding {p} should be at most half of kernel size {k}")
    if x.ndim not in (nsp + 1, nsp + 2):
        raise ValueError(f"{op}: expected a {nsp + 1}-D or {nsp + 2}-D input, got shape "
                         f"{tuple(x.shape)}")
    out = []
    for i in range(nsp):
        n = x.shape[x.ndim - nsp + i]
        o = _out_size(n + 2 * p[i], k[i], s[i], d[i], ceil_mode)
        # PyTorch: the last window must start inside the input or left padding.
        if ceil_mode and (o - 1) * s[i] >= n + p[i]:
            o -= 1
        out.append(o)
    if any(o <= 0 for o in out):
        # PyTorch's check; it also keeps a kernel far larger than the input from building its
        # window offsets.
        raise ValueError(f"{op}: given input size {tuple(x.shape)}, the calculated output size "
                         f"{tuple(out)} is too small (kernel_size {k}, stride {s}, padding {p}, "
                         f"dilation {d})")
    return k, s, p, d, tuple(out)


def _check_adaptive_sizes(x: Tensor, sizes: Tuple[int, ...], nsp: int, op: str) -> None:
    """PyTorch's output_size check, plus a bound so that an absurd size fails at once instead
    of building one window per output element."""
    if len(sizes) != nsp:
        raise ValueError(f"{op}: output_size {sizes} must have {nsp} elements")
    if any(m < 0 for m in sizes):
        raise ValueError(f"{op}: elements of output_size must be greater than or equal to 0, "
                         f"got {sizes}")
    shape = tuple(x.shape[:x.ndim - nsp]) + sizes
    if math.prod(shape) >= 2 ** 63:
        raise ValueError(f"{op}: output of shape {shape} has 2^63 or more elements")
    # An output too large for memory raises MemoryError here, before any window is built.
    try:
        _ts().empty(shape, dtype=x.dtype, device=x.device)
    except MemoryError as e:
        raise MemoryError(f"{op}: output of shape {shape}: {e}") from None


def _pool_pad(x: Tensor, p: Tuple[int, ...], k: Tuple[int, ...], s: Tuple[int, ...],
              d: Tuple[int, ...], out: Tuple[int, ...], value: float) -> Tensor:
    """Pads left by p and right by whatever the last window needs (ceil_mode)."""
    nsp = len(p)
    flat: List[int] = []
    for i in reversed(range(nsp)):
        n = x.shape[x.ndim - nsp + i]
        need = (out[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1
        flat += [p[i], max(need - n - p[i], 0)]
    return pad(x, flat, value=value) if any(flat) else x


def _max_pool(x: Tensor, kernel_size: IntOrTuple, stride: Optional[IntOrTuple],
              padding: IntOrTuple, dilation: IntOrTuple, ceil_mode: bool, nsp: int,
              op: str, return_indices: bool = False) -> Any:
    """Floating input: the C++ op (values and flat per-plane indices, gradients in C++);
    integer input (no indices): the maximum of the stacked windows."""
    t = _ts()
    if isinstance(x, Tensor) and t.isdtype(x.dtype, "real floating"):
        y, idx = _C._max_pool(x, kernel_size, None if stride is None or stride == [] else stride,
                              padding, dilation, ceil_mode, nsp, op)
        return (y, idx) if return_indices else y
    if return_indices:
        raise TypeError(f"{op}: return_indices=True needs a floating-point input, got {x.dtype}")
    k, s, p, d, out = _pool_setup(x, kernel_size, stride, padding, dilation, ceil_mode, nsp, op)
    xp = _pool_pad(x, p, k, s, d, out, -math.inf)
    return t.max(_windows(xp, k, s, d, out), axis=x.ndim - nsp)


def max_pool1d(input: Tensor, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None,
               padding: IntOrTuple = 0, dilation: IntOrTuple = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """Max over kernel windows of (N, C, L) or (C, L); with return_indices also the int64
    position of each maximum within its row (PyTorch's indices)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1, "max_pool1d",
                     return_indices)


def max_pool2d(input: Tensor, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None,
               padding: IntOrTuple = 0, dilation: IntOrTuple = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """Max over kernel windows of (N, C, H, W) or (C, H, W) (-inf padding); with
    return_indices also the int64 flat index h * W + w of each maximum in its (H, W) plane
    (PyTorch's indices, as max_unpool2d takes them)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2, "max_pool2d",
                     return_indices)


def _avg_pool(x: Tensor, kernel_size: IntOrTuple, stride: Optional[IntOrTuple],
              padding: IntOrTuple, ceil_mode: bool, count_include_pad: bool,
              divisor_override: Optional[int], nsp: int, op: str) -> Tensor:
    """The C++ op (PyTorch's divisor rules, gradients in C++)."""
    return _C._avg_pool(x, kernel_size, None if stride is None or stride == [] else stride,
                        padding, ceil_mode, count_include_pad, divisor_override, nsp, op)


def avg_pool1d(input: Tensor, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None,
               padding: IntOrTuple = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1,
                     "avg_pool1d")


def avg_pool2d(input: Tensor, kernel_size: IntOrTuple, stride: Optional[IntOrTuple] = None,
               padding: IntOrTuple = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Optional[int] = None) -> Tensor:
    """Mean over kernel windows of (N, C, H, W) or (C, H, W)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2, "avg_pool2d")


def _adaptive_bounds(n: int, m: int) -> List[Tuple[int, int]]:
    return [((i * n) // m, -(-((i + 1) * n) // m)) for i in range(m)]


def _adaptive_pool(x: Tensor, output_size: Any, nsp: int, reduce: str, op: str) -> Tensor:
    t = _ts()
    if x.ndim not in (nsp + 1, nsp + 2):
        raise ValueError(f"{op}: expected a {nsp + 1}-D or {nsp + 2}-D input, got shape "
                         f"{tuple(x.shape)}")
    sizes = (output_size,) * nsp if isinstance(output_size, int) or output_size is None \
        else tuple(output_size)
    if len(sizes) != nsp:
        raise ValueError(f"{op}: output_size {output_size} must have {nsp} elements")
    in_sp = tuple(x.shape[x.ndim - nsp:])
    sizes = tuple(in_sp[i] if sizes[i] is None else int(sizes[i]) for i in range(nsp))
    _check_adaptive_sizes(x, sizes, nsp, op)
    if reduce == "mean" and t.isdtype(x.dtype, "real floating"):
        return _C._adaptive_pool(x, sizes, False, nsp, op)  # the C++ op (csrc/ops/pool.h)
    fn = t.mean if reduce == "mean" else t.max
    lead = (slice(None),) * (x.ndim - nsp)
    if all(n % m == 0 for n, m in zip(in_sp, sizes)):
        # Uniform windows: one reshape and one reduction.
        shape = tuple(x.shape[:x.ndim - nsp])
        for n, m in zip(in_sp, sizes):
            shape += (m, n // m)
        axes = tuple(x.ndim - nsp + 2 * i + 1 for i in range(nsp))
        return fn(t.reshape(x, shape), axis=axes)
    if nsp == 1:
        parts = [fn(x[lead + (slice(a, b),)], axis=-1) for a, b in _adaptive_bounds(in_sp[0], sizes[0])]
        return t.stack(parts, axis=-1)
    rows = []
    for a, b in _adaptive_bounds(in_sp[0], sizes[0]):
        cols = [fn(x[lead + (slice(a, b), slice(c, e))], axis=(-2, -1))
                for c, e in _adaptive_bounds(in_sp[1], sizes[1])]
        rows.append(t.stack(cols, axis=-1))
    return t.stack(rows, axis=-2)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    return _adaptive_pool(input, output_size, 1, "mean", "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Averages over PyTorch's adaptive windows [floor(i*H/h), ceil((i+1)*H/h))."""
    return _adaptive_pool(input, output_size, 2, "mean", "adaptive_avg_pool2d")


def adaptive_max_pool2d(x: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Delegates to pooling_more's version (the one F exports), which supports
    return_indices and, like PyTorch, sends each output's gradient to the window's first
    maximum; a max over both window axes here would split it across ties."""
    from .pooling_more import adaptive_max_pool2d as _impl  # lazy: pooling_more imports conv
    return _impl(x, output_size, return_indices)

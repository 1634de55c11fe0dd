"""conv3d and conv_transpose3d as sums of 2-D convolutions over the depth taps.

Note [3-D convolution by depth taps]
For depth tap kd, the input depth slices that tap reads form the strided slice
x[:, :, kd*dil : kd*dil + s*(D_out-1) + 1 : s]; folding that depth into the batch turns
them into one conv2d with the weight's kd-th (kh, kw) plane. The 3-D output is the sum of
the kd results. The transposed convolution runs the same decomposition backwards: each
kd plane's conv_transpose2d of all input depth slices lands on output depths
i*s + kd*dil, placed by zero insertion and padding, then summed and cropped. Every piece
is a differentiable tessera op (conv2d/conv_transpose2d take their fast paths), so memory
stays at one 2-D column buffer instead of a k^3-times input copy.
"""
from __future__ import annotations

from typing import Any, Optional

from ..._C import Tensor
from ... import errors as _errors
from ...amp import _policy as _amp
from .conv import (IntOrTuple, _batched, _conv_padding, _ntuple, _out_size, conv2d,
                   conv_transpose2d, pad)


def _ts() -> Any:
    import tessera
    return tessera


def _fold_depth(x: Tensor) -> Tensor:
    """(N, C, D, H, W) -> (N*D, C, H, W)."""
    t = _ts()
    n, c, d, h, w = x.shape
    return t.reshape(t.permute_dims(x, (0, 2, 1, 3, 4)), (n * d, c, h, w))


def _unfold_depth(y: Tensor, n: int) -> Tensor:
    """(N*D, C, H, W) -> (N, C, D, H, W)."""
    t = _ts()
    nd, c, h, w = y.shape
    return t.permute_dims(t.reshape(y, (n, nd // n, c, h, w)), (0, 2, 1, 3, 4))


def _conv3d(x: Tensor, weight: Tensor, bias: Optional[Tensor], stride: IntOrTuple, padding: Any,
            dilation: IntOrTuple, groups: int, padding_mode: str, op: str) -> Tensor:
    t = _ts()
    x, unbatched = _batched(x, weight, 3, op)
    c, o, cg = x.shape[1], weight.shape[0], weight.shape[1]
    kernel = tuple(weight.shape[2:])
    if groups < 1 or c % groups or o % groups or cg * groups != c:
        raise ValueError(f"{op}: input with {c} channels, weight {tuple(weight.shape)} and "
                         f"groups={groups} do not match (expected {cg * groups} input channels)")
    st, dl = _ntuple(stride, 3, op), _ntuple(dilation, 3, op)
    if any(v <= 0 for v in st):
        raise _errors.ValueError(f"{op}: non-positive stride is not supported, got stride {st}")
    pads = _conv_padding(padding, kernel, dl, st, op)
    flat = [v for pr in reversed(pads) for v in pr]
    if any(flat):
        x = pad(x, flat, mode={"zeros": "constant"}.get(padding_mode, padding_mode))
    span = tuple(x.shape[2:])
    if any(span[i] < dl[i] * (kernel[i] - 1) + 1 for i in range(3)):
        raise ValueError(f"{op}: kernel size {kernel} (dilation {dl}) is larger than the padded "
                         f"input {span}")
    d_out = _out_size(span[0], kernel[0], st[0], dl[0])
    n = x.shape[0]
    y = None
    for kd in range(kernel[0]):
        lo = kd * dl[0]
        xs = x[:, :, lo:lo + st[0] * (d_out - 1) + 1:st[0]]
        part = conv2d(_fold_depth(xs), weight[:, :, kd], None, st[1:], 0, dl[1:], groups)
        y = part if y is None else y + part
    y = _unfold_depth(y, n)
    if bias is not None:
        y = y + t.reshape(bias, (1, o, 1, 1, 1))
    return y[0] if unbatched else y


def conv3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrTuple = 1,
           padding: Any = 0, dilation: IntOrTuple = 1, groups: int = 1) -> Tensor:
    """(N, C, D, H, W) * (O, C/groups, kd, kh, kw) -> (N, O, D_out, H_out, W_out)
    (Note [3-D convolution by depth taps])."""
    input, weight, bias = _amp.cast(_amp.LOWER, input, weight, bias)
    return _conv3d(input, weight, bias, stride, padding, dilation, groups, "zeros", "conv3d")


def _insert_zeros(y: Tensor, axis: int, s: int) -> Tensor:
    """Places y's entries along `axis` s apart, zeros between (length (n-1)*s + 1)."""
    t = _ts()
    if s == 1:
        return y
    n = y.shape[axis]
    z = t.zeros_like(y)
    inter = t.stack([y] + [z] * (s - 1), axis=axis + 1)
    shape = tuple(y.shape[:axis]) + (n * s,) + tuple(y.shape[axis + 1:])
    full = t.reshape(inter, shape)
    return full[(slice(None),) * axis + (slice(0, (n - 1) * s + 1),)]


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                     stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     output_padding: IntOrTuple = 0, groups: int = 1,
                     dilation: IntOrTuple = 1) -> Tensor:
    """(N, C_in, D, H, W) with weight (C_in, C_out/groups, kd, kh, kw) ->
    (N, C_out, D_out, H_out, W_out), D_out = (D-1) stride - 2 padding + dilation (kd-1) +
    output_padding + 1 (Note [3-D convolution by depth taps])."""
    input, weight, bias = _amp.cast(_amp.LOWER, input, weight, bias)
    t = _ts()
    op = "conv_transpose3d"
    input, unbatched = _batched(input, weight, 3, op)
    n, cin = input.shape[0], input.shape[1]
    if groups < 1 or weight.shape[0] != cin or cin % groups:
        raise ValueError(f"{op}: input with {cin} channels does not match weight "
                         f"{tuple(weight.shape)} (expected weight.shape[0] == {cin}) with "
                         f"groups={groups} (which must divide it)")
    st, pd = _ntuple(stride, 3, op), _ntuple(padding, 3, op)
    opd, dl = _ntuple(output_padding, 3, op), _ntuple(dilation, 3, op)
    if any(v < 0 for v in pd + opd) or any(v < 1 for v in st + dl):
        raise _errors.ValueError(f"{op}: stride {st} and dilation {dl} must be positive, "
                                 f"padding {pd} and output_padding {opd} non-negative")
    if any(opd[i] >= st[i] and opd[i] >= dl[i] for i in range(3)):
        raise ValueError(f"{op}: output_padding {opd} must be smaller than either stride {st} "
                         f"or dilation {dl}")
    kernel = tuple(weight.shape[2:])
    d_in = input.shape[2]
    d_out = (d_in - 1) * st[0] - 2 * pd[0] + dl[0] * (kernel[0] - 1) + opd[0] + 1
    if d_out <= 0:
        raise ValueError(f"{op}: input {tuple(input.shape[2:])} with kernel {kernel}, stride {st}, "
                         f"padding {pd} and dilation {dl} gives a non-positive output depth")
    full = (d_in - 1) * st[0] + dl[0] * (kernel[0] - 1) + 1 + opd[0]  # before cropping padding
    folded = _fold_depth(input)
    y = None
    for kd in range(kernel[0]):
        part = conv_transpose2d(folded, weight[:, :, kd], None, st[1:], pd[1:], opd[1:], groups,
                                dl[1:])
        part = _insert_zeros(_unfold_depth(part, n), 2, st[0])
        lo = kd * dl[0]
        part = pad(part, [0, 0, 0, 0, lo, full - lo - part.shape[2]])
        y = part if y is None else y + part
    y = y[:, :, pd[0]:pd[0] + d_out]
    if bias is not None:
        y = y + t.reshape(bias, (1, y.shape[1], 1, 1, 1))
    return y[0] if unbatched else y

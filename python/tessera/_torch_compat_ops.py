"""More of torch's top-level functions: the generic ``convolution``, ``grid_sampler`` and
``affine_grid_generator`` (torch's integer-coded arguments), the RNN cells (``lstm_cell``,
``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell``), ``triangular_solve``, ``binomial``,
``empty_permuted``, the eager control flow ``cond`` / ``while_loop``, ``set_anomaly_enabled``,
and the functions torch removed in 1.9 (``solve``, ``lstsq``, ``eig``, ``symeig``), which raise
torch's RuntimeError pointing at their linalg replacements.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Tuple

from ._C import Tensor

__all__ = ["convolution", "grid_sampler", "affine_grid_generator", "lstm_cell", "gru_cell",
           "rnn_tanh_cell", "rnn_relu_cell", "triangular_solve", "binomial", "empty_permuted",
           "cond", "while_loop", "set_anomaly_enabled", "solve", "lstsq", "eig", "symeig",
           "init_num_threads"]


def _ts() -> Any:
    import tessera
    return tessera


def _F() -> Any:
    from .nn import functional
    return functional


def convolution(input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Any,
                padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                groups: int) -> Tensor:
    """torch.convolution: conv{1,2,3}d or conv_transpose{1,2,3}d by the weight's rank."""
    n = weight.ndim - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, got {weight.ndim}-D")
    F = _F()
    if transposed:
        return getattr(F, f"conv_transpose{n}d")(input, weight, bias, stride, padding,
                                                 output_padding, groups, dilation)
    return getattr(F, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)


_INTERP = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """nn.functional.grid_sample with torch's integer codes (0 bilinear, 1 nearest,
    2 bicubic; 0 zeros, 1 border, 2 reflection)."""
    if interpolation_mode not in _INTERP or padding_mode not in _PADDING:
        raise RuntimeError(f"grid_sampler: unknown interpolation_mode {interpolation_mode} or "
                           f"padding_mode {padding_mode}")
    return _F().grid_sample(input, grid, mode=_INTERP[interpolation_mode],
                            padding_mode=_PADDING[padding_mode], align_corners=align_corners)


def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    return _F().affine_grid(theta, list(size), align_corners=align_corners)


def _linear(x: Tensor, w: Tensor, b: Optional[Tensor]) -> Tensor:
    y = _ts().matmul(x, w.mT)
    return y if b is None else y + b


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Optional[Tensor] = None, b_hh: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    """One LSTM step: gates i, f, g, o from input and h; returns (h', c')."""
    ts = _ts()
    h, c = hx
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c_new = ts.sigmoid(f) * c + ts.sigmoid(i) * ts.tanh(g)
    return ts.sigmoid(o) * ts.tanh(c_new), c_new


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
             b_ih: Optional[Tensor] = None, b_hh: Optional[Tensor] = None) -> Tensor:
    """One GRU step (torch's gate order r, z, n)."""
    ts = _ts()
    gi = _linear(input, w_ih, b_ih).chunk(3, -1)
    gh = _linear(hx, w_hh, b_hh).chunk(3, -1)
    r = ts.sigmoid(gi[0] + gh[0])
    z = ts.sigmoid(gi[1] + gh[1])
    n = ts.tanh(gi[2] + r * gh[2])
    return (1 - z) * n + z * hx


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Optional[Tensor] = None, b_hh: Optional[Tensor] = None) -> Tensor:
    return _ts().tanh(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh))


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Optional[Tensor] = None, b_hh: Optional[Tensor] = None) -> Tensor:
    return _ts().clip(_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh), min=0)


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Tuple[Tensor, Tensor]:
    """Deprecated torch.triangular_solve: (X with op(A) X = b, a copy of A), op(A) = A or A^T."""
    from collections import namedtuple
    ts = _ts()
    T = A.mT if transpose else A
    x = ts.linalg.solve_triangular(T, b, upper=upper != transpose, unitriangular=unitriangular)
    return namedtuple("triangular_solve", ["solution", "cloned_coefficient"])(x, A.clone())


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Samples Binomial(count, prob) elementwise (float result like count)."""
    import numpy as np
    ts = _ts()
    n = count.detach().cpu().numpy()
    p = prob.detach().cpu().numpy()
    if (p < 0).any() or (p > 1).any() or (n < 0).any():
        raise RuntimeError("binomial: expected 0 <= prob <= 1 and count >= 0")
    draw = ts.randint(0, 2 ** 31 - 1, (1,), generator=generator) if generator is not None \
        else ts.randint(0, 2 ** 31 - 1, (1,))
    vals = np.random.default_rng(int(draw.item())).binomial(n.astype(np.int64), p)
    return ts.asarray(vals.astype(n.dtype), device=count.device)


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype: Any = None,
                   device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """An uninitialized tensor of `size` (tessera allocates row-major whatever the layout)."""
    ts = _ts()
    size, layout = tuple(size), tuple(physical_layout)
    if sorted(layout) != list(range(len(size))):
        raise RuntimeError(f"empty_permuted: physical_layout must be a permutation of the "
                           f"dims, got {list(layout)} for size {list(size)}")
    out = ts.empty(size, dtype=dtype, device=device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         operands: Sequence[Any] = ()) -> Any:
    """Eager torch.cond: true_fn(*operands) if pred else false_fn(*operands)."""
    flag = bool(pred.item()) if isinstance(pred, Tensor) else bool(pred)
    return true_fn(*operands) if flag else false_fn(*operands)


def while_loop(cond_fn: Callable[..., Any], body_fn: Callable[..., Any],
               carried_inputs: Sequence[Any]) -> Any:
    """Eager torch.while_loop: repeats carried = body_fn(*carried) while cond_fn(*carried)."""
    carried = tuple(carried_inputs)
    while bool(cond_fn(*carried)):
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return carried


def set_anomaly_enabled(mode: bool, check_nan: bool = True) -> None:
    """Turns autograd's anomaly detection on or off (torch.set_anomaly_enabled)."""
    from . import _C
    if not isinstance(mode, bool):
        raise TypeError(f"set_anomaly_enabled(): argument 'enabled' must be bool, not "
                        f"{type(mode).__name__}")
    _C._set_anomaly_enabled(mode)


def init_num_threads() -> None:
    """A no-op: tessera's thread pool needs no per-thread initialization."""


def _removed_error(name: str, hint: str) -> RuntimeError:
    return RuntimeError(f"This function was deprecated since version 1.9 and is now removed. "
                        f"`torch.{name}` is deprecated in favor of {hint}.")


def solve(input: Tensor, A: Tensor) -> Any:
    """Removed from torch in 1.9: use linalg.solve."""
    raise _removed_error("solve", "`torch.linalg.solve`")


def lstsq(input: Tensor, A: Tensor) -> Any:
    """Removed from torch in 1.9: use linalg.lstsq."""
    raise _removed_error("lstsq", "`torch.linalg.lstsq`")


def eig(input: Tensor, eigenvectors: bool = False) -> Any:
    """Removed from torch in 1.9: use linalg.eig."""
    raise _removed_error("eig", "`torch.linalg.eig`")


def symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True) -> Any:
    """Removed from torch in 1.9: use linalg.eigh."""
    raise _removed_error("symeig", "`torch.linalg.eigh`")

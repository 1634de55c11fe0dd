"""The array API fft extension (2024.12): ``ts.fft.fft``, ``rfft``, ``fftn``, ...

Transforms run on tessera's own FFT engine (mixed-radix Stockham for lengths with small prime
factors, Bluestein for the rest: every length is O(n log n)). float16/bfloat16/float32 and
complex64 inputs compute in complex64, float64 and complex128 in complex128; integer and bool
inputs raise TypeError. ``norm`` is "backward" (default: no scaling forward, 1/n inverse),
"ortho" (1/sqrt(n) both ways) or "forward" (1/n forward). As in PyTorch, ``dim=`` is accepted
for ``axis=``/``axes=``, and ``norm=None`` means "backward".
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from . import _C
from ._C import Tensor

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_F = _C._fft
_Norm = Optional[str]
_Axes = Optional[Sequence[int]]


def _norm(norm: _Norm) -> str:
    return "backward" if norm is None else norm


def _pick(axis: Any, dim: Any, default: Any) -> Any:
    if dim is not None:
        if axis is not None:
            raise TypeError("fft: pass either axis/axes= or dim=, not both")
        return dim
    return default if axis is None else axis


def _axes_arg(axes: Union[int, Sequence[int], None]) -> Any:
    return (axes,) if isinstance(axes, int) else axes


# ---- autograd for the complex transforms: the adjoint of a DFT with norm ν is the inverse DFT
# with the "opposite" norm, then the forward's crop/zero-pad undone along each axis.
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _fit_axis(t: Tensor, axis: int, length: int) -> Tensor:
    """t cropped or zero-padded to `length` along `axis`."""
    m = t.shape[axis]
    if m == length:
        return t
    if m > length:
        key = [slice(None)] * t.ndim
        key[axis] = slice(0, length)
        return t[tuple(key)]
    from ._creation import zeros
    from ._manipulation import concat
    pad_shape = list(t.shape)
    pad_shape[axis] = length - m
    return concat([t, zeros(tuple(pad_shape), dtype=t.dtype)], axis=axis)


def _resolve_axes(ndim: int, s: Any, axes: Any) -> list:
    if axes is None:
        return list(range(ndim - len(s), ndim)) if s is not None else list(range(ndim))
    return [a % ndim for a in ((axes,) if isinstance(axes, int) else axes)]


def _c2c(x: Tensor, s: Any, axes: Any, norm: str, inverse: bool, nd: bool) -> Tensor:
    """Runs a complex transform; records it for autograd when x requires grad."""
    f = (_F.ifftn if inverse else _F.fftn) if nd else (_F.ifft if inverse else _F.fft)
    if not (x.requires_grad and _C.is_grad_enabled()):
        return f(x, s, axes, norm)
    from .autograd.function import Function

    class _DFT(Function):
        @staticmethod
        def forward(ctx, t):
            return f(t, s, axes, norm)

        @staticmethod
        def backward(ctx, g):
            adj = (_F.fftn if inverse else _F.ifftn) if nd else (_F.fft if inverse else _F.ifft)
            gx = adj(g, None, axes, _SWAP[norm])
            ax_list = _resolve_axes(x.ndim, s if nd else None, axes if nd else [axes])
            for a in ax_list:
                gx = _fit_axis(gx, a, x.shape[a])
            return gx

    return _DFT.apply(x)


def _real_transform(name: str, f: Any, x: Tensor, *args: Any) -> Tensor:
    """Real-input/-output transforms have no backward formula yet: when x requires grad the
    result still joins the graph, and backward raises instead of silently dropping the path."""
    if not (x.requires_grad and _C.is_grad_enabled()):
        return f(x, *args)
    from .autograd.function import Function

    class _Missing(Function):
        @staticmethod
        def forward(ctx, t):
            return f(t, *args)

        @staticmethod
        def backward(ctx, g):
            raise NotImplementedError(f"backward: the derivative of fft.{name} is not implemented yet "
                                      f"(fft/ifft/fftn/ifftn are differentiable)")

    _Missing.__name__ = name.capitalize()
    return _Missing.apply(x)


def fft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
        dim: Optional[int] = None) -> Tensor:
    """1-D discrete Fourier transform along `axis`: X[k] = sum_j x[j] exp(-2 pi i jk/n).

    x (..., m, ...) -> complex (..., n, ...); `n` crops or zero-pads the input (default m).
    """
    return _c2c(x, n, _pick(None if axis == -1 else axis, dim, -1), _norm(norm), False, False)


def ifft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
         dim: Optional[int] = None) -> Tensor:
    """1-D inverse transform: x[j] = (1/n) sum_k X[k] exp(2 pi i jk/n) (norm="backward")."""
    return _c2c(x, n, _pick(None if axis == -1 else axis, dim, -1), _norm(norm), True, False)


def fftn(x: Tensor, /, *, s: Optional[Sequence[int]] = None, axes: _Axes = None,
         norm: _Norm = "backward", dim: _Axes = None) -> Tensor:
    """n-D transform over `axes` (default: all, or the last len(s)); s[i] (or -1 to keep the
    input's) is the length along axes[i]."""
    return _c2c(x, s, _axes_arg(_pick(axes, dim, None)), _norm(norm), False, True)


def ifftn(x: Tensor, /, *, s: Optional[Sequence[int]] = None, axes: _Axes = None,
          norm: _Norm = "backward", dim: _Axes = None) -> Tensor:
    """n-D inverse transform over `axes` (see fftn)."""
    return _c2c(x, s, _axes_arg(_pick(axes, dim, None)), _norm(norm), True, True)


def rfft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
         dim: Optional[int] = None) -> Tensor:
    """Transform of a real input: the n//2 + 1 non-negative frequency bins.

    real (..., m, ...) -> complex (..., n//2 + 1, ...); complex input raises TypeError.
    """
    return _real_transform("rfft", _F.rfft, x, n, _pick(None if axis == -1 else axis, dim, -1), _norm(norm))


def irfft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
          dim: Optional[int] = None) -> Tensor:
    """Inverse of rfft: complex (..., m, ...) -> real (..., n, ...), n defaults to 2*(m-1).

    The imaginary parts of bin 0 (and of bin n/2 for even n) are ignored, as in NumPy.
    """
    return _real_transform("irfft", _F.irfft, x, n, _pick(None if axis == -1 else axis, dim, -1), _norm(norm))


def rfftn(x: Tensor, /, *, s: Optional[Sequence[int]] = None, axes: _Axes = None,
          norm: _Norm = "backward", dim: _Axes = None) -> Tensor:
    """n-D transform of a real input: rfft over the last of `axes`, then fft over the others;
    the last transformed axis has s[-1]//2 + 1 entries."""
    return _real_transform("rfftn", _F.rfftn, x, s, _axes_arg(_pick(axes, dim, None)), _norm(norm))


def irfftn(x: Tensor, /, *, s: Optional[Sequence[int]] = None, axes: _Axes = None,
           norm: _Norm = "backward", dim: _Axes = None) -> Tensor:
    """Inverse of rfftn; the last transformed axis gets s[-1] entries (default 2*(m-1))."""
    return _real_transform("irfftn", _F.irfftn, x, s, _axes_arg(_pick(axes, dim, None)), _norm(norm))


def hfft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
         dim: Optional[int] = None) -> Tensor:
    """Transform of a Hermitian-symmetric signal given by its first half: a real output of
    length n (default 2*(m-1)); hfft(x, n) == irfft(conj(x), n) * n for norm="backward"."""
    return _real_transform("hfft", _F.hfft, x, n, _pick(None if axis == -1 else axis, dim, -1), _norm(norm))


def ihfft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
          dim: Optional[int] = None) -> Tensor:
    """Inverse of hfft: real (..., m, ...) -> complex (..., n//2 + 1, ...)."""
    return _real_transform("ihfft", _F.ihfft, x, n, _pick(None if axis == -1 else axis, dim, -1), _norm(norm))


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    """Sample frequencies [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d*n), shape (n,).

    dtype defaults to the default real floating dtype (float32)."""
    return _F.fftfreq(n, float(d), "float32" if dtype is None else dtype, device)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    """Sample frequencies [0, 1, ..., n//2] / (d*n) of rfft, shape (n//2 + 1,)."""
    return _F.rfftfreq(n, float(d), "float32" if dtype is None else dtype, device)


def fftshift(x: Tensor, /, *, axes: Union[int, Sequence[int], None] = None,
             dim: Union[int, Sequence[int], None] = None) -> Tensor:
    """Moves the zero-frequency bin to the centre: a roll by n//2 along `axes` (default all)."""
    return _F.fftshift(x, _axes_arg(_pick(axes, dim, None)))


def ifftshift(x: Tensor, /, *, axes: Union[int, Sequence[int], None] = None,
              dim: Union[int, Sequence[int], None] = None) -> Tensor:
    """Inverse of fftshift: a roll by -(n//2) along `axes` (default all)."""
    return _F.ifftshift(x, _axes_arg(_pick(axes, dim, None)))

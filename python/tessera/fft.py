"""The array API fft extension (2024.12): ``ts.fft.fft``, ``rfft``, ``fftn``, ...

Transforms run on tessera's own FFT engine (mixed-radix Stockham for lengths with small prime
factors, Bluestein for the rest: every length is O(n log n)). float16/bfloat16/float32 and
complex64 inputs compute in complex64, float64 and complex128 in complex128; integer and bool
inputs (which the standard leaves unspecified) are promoted to the default floating dtype, as
in PyTorch. ``norm`` is "backward" (default: no scaling forward, 1/n inverse),
"ortho" (1/sqrt(n) both ways) or "forward" (1/n forward). As in PyTorch, ``dim=`` is accepted
for ``axis=``/``axes=``, and ``norm=None`` means "backward"; so are torch's call forms
(Note [fft torch forms]): ``input=``, positional ``n``/``s``, ``dim`` and ``norm``
(``fft(x, 8, 0, "ortho")``), ``fftshift(x, dim)``, ``fftfreq(n, d, dtype=, requires_grad=)``.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

from . import _C
from ._C import Tensor

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift", "fft2", "ifft2", "rfft2", "irfft2"]

_F = _C._fft
_Norm = Optional[str]
_Axes = Optional[Sequence[int]]


def _pick(axis: Any, dim: Any, default: Any) -> Any:
    if dim is not None:
        if axis is not None:
            raise TypeError("fft: pass either axis/axes= or dim=, not both")
        return dim
    return default if axis is None else axis


def _axes_arg(axes: Union[int, Sequence[int], None]) -> Any:
    return (axes,) if isinstance(axes, int) else axes


# Gradients (and the promotion of integer and bool inputs to the default floating dtype) are
# the C++ ops' own: csrc/autograd/formulas_fft.cpp (Note [FFT backward]).


def fft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
        dim: Optional[int] = None) -> Tensor:
    """1-D discrete Fourier transform along `axis`: X[k] = sum_j x[j] exp(-2 pi i jk/n).

    x (..., m, ...) -> complex (..., n, ...); `n` crops or zero-pads the input (default m).
    """
    return _F.fft(x, n, _pick(None if axis == -1 else axis, dim, -1), norm)


def ifft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
         dim: Optional[int] = None) -> Tensor:
    """1-D inverse transform: x[j] = (1/n) sum_k X[k] exp(2 pi i jk/n) (norm="backward")."""
    return _F.ifft(x, n, _pick(None if axis == -1 else axis, dim, -1), norm)


def fftn(x: Tensor, /, *, s: Optional[Sequence[int]] = None, axes: _Axes = None,
         norm: _Norm = "backward", dim: _Axes = None) -> Tensor:
    """n-D transform over `axes` (default: all, or the last len(s)); s[i] (or -1 to keep the
    input's) is the length along axes[i]."""
    return _F.fftn(x, s, _axes_arg(_pick(axes, dim, None)), norm)


def ifftn(x: Tensor, /, *, s: Optional[Sequence[int]] = None, axes: _Axes = None,
          norm: _Norm = "backward", dim: _Axes = None) -> Tensor:
    """n-D inverse transform over `axes` (see fftn)."""
    return _F.ifftn(x, s, _axes_arg(_pick(axes, dim, None)), norm)


def rfft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
         dim: Optional[int] = None) -> Tensor:
    """Transform of a real input: the n//2 + 1 non-negative frequency bins.

    real (..., m, ...) -> complex (..., n//2 + 1, ...); complex input raises TypeError.
    """
    return _F.rfft(x, n, _pick(None if axis == -1 else axis, dim, -1), norm)


def irfft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
          dim: Optional[int] = None) -> Tensor:
    """Inverse of rfft: complex (..., m, ...) -> real (..., n, ...), n defaults to 2*(m-1).

    The imaginary parts of bin 0 (and of bin n/2 for even n) are ignored, as in NumPy.
    """
    return _F.irfft(x, n, _pick(None if axis == -1 else axis, dim, -1), norm)


def rfftn(x: Tensor, /, *, s: Optional[Sequence[int]] = None, axes: _Axes = None,
          norm: _Norm = "backward", dim: _Axes = None) -> Tensor:
    """n-D transform of a real input: rfft over the last of `axes`, then fft over the others;
    the last transformed axis has s[-1]//2 + 1 entries."""
    return _F.rfftn(x, s, _axes_arg(_pick(axes, dim, None)), norm)


def irfftn(x: Tensor, /, *, s: Optional[Sequence[int]] = None, axes: _Axes = None,
           norm: _Norm = "backward", dim: _Axes = None) -> Tensor:
    """Inverse of rfftn; the last transformed axis gets s[-1] entries (default 2*(m-1))."""
    return _F.irfftn(x, s, _axes_arg(_pick(axes, dim, None)), norm)


def hfft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
         dim: Optional[int] = None) -> Tensor:
    """Transform of a Hermitian-symmetric signal given by its first half: a real output of
    length n (default 2*(m-1)); hfft(x, n) == irfft(conj(x), n) * n for norm="backward"."""
    return _F.hfft(x, n, _pick(None if axis == -1 else axis, dim, -1), norm)


def ihfft(x: Tensor, /, *, n: Optional[int] = None, axis: int = -1, norm: _Norm = "backward",
          dim: Optional[int] = None) -> Tensor:
    """Inverse of hfft: real (..., m, ...) -> complex (..., n//2 + 1, ...)."""
    return _F.ihfft(x, n, _pick(None if axis == -1 else axis, dim, -1), norm)


def _freq_dtype(dtype: Any) -> Any:
    if dtype is not None:
        return dtype
    from ._dtypes import get_default_dtype
    return get_default_dtype()


def _freq(f: Any, n: int, d: Any, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    if n == 0 and not isinstance(n, bool):  # torch's (the C++ asks n >= 1): fftfreq is
        from ._creation import full      # empty, rfftfreq [0 / 0] = [nan]
        out = full((0,) if f is _F.fftfreq else (1,), math.nan, dtype=_freq_dtype(dtype),
                   device=device)
    else:
        out = f(n, float(d), _freq_dtype(dtype), device)
    return out.requires_grad_(True) if requires_grad else out


def fftfreq(n: int, /, d: float = 1.0, *, dtype: Any = None, device: Any = None,
            requires_grad: bool = False, layout: Any = None) -> Tensor:
    """Sample frequencies [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d*n), shape (n,).

    dtype defaults to the default real floating dtype (float32, or ts.set_default_dtype's);
    torch's positional d, requires_grad= and layout= are accepted."""
    return _freq(_F.fftfreq, n, d, dtype, device, requires_grad)


def rfftfreq(n: int, /, d: float = 1.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, layout: Any = None) -> Tensor:
    """Sample frequencies [0, 1, ..., n//2] / (d*n) of rfft, shape (n//2 + 1,)."""
    return _freq(_F.rfftfreq, n, d, dtype, device, requires_grad)


def fftshift(x: Tensor, /, *, axes: Union[int, Sequence[int], None] = None,
             dim: Union[int, Sequence[int], None] = None) -> Tensor:
    """Moves the zero-frequency bin to the centre: a roll by n//2 along `axes` (default all)."""
    return _F.fftshift(x, _axes_arg(_pick(axes, dim, None)))


def ifftshift(x: Tensor, /, *, axes: Union[int, Sequence[int], None] = None,
              dim: Union[int, Sequence[int], None] = None) -> Tensor:
    """Inverse of fftshift: a roll by -(n//2) along `axes` (default all)."""
    return _F.ifftshift(x, _axes_arg(_pick(axes, dim, None)))


# Note [fft torch forms]: torch's signatures put n/s, dim and norm positionally after the input
# (fft(input, n=None, dim=-1, norm=None)) and name the input `input`; the standard's take x
# positionally and the rest by keyword only. A call that fits the standard signature goes to
# the standard function unchanged; any other call (more positional arguments, input=) can only
# be torch-style and gets torch's meaning. inspect.signature still shows the standard one.
_MISSING: Any = object()


def _dispatch(std: Any, torch_call: Any) -> Any:
    """The standard function for the standard's call (x plus keywords), else torch_call."""
    import functools

    @functools.wraps(std)
    def fn(*args: Any, **kwargs: Any) -> Tensor:
        if len(args) == 1 and "input" not in kwargs:
            return std(*args, **kwargs)
        return torch_call(*args, **kwargs)
    return fn


def _torch_form(std: Any, second: str, third: str) -> Any:
    def torch_call(input: Any = _MISSING, a: Any = _MISSING, dim: Any = _MISSING,
                   norm: Any = _MISSING, **kw: Any) -> Tensor:
        if input is _MISSING:
            raise TypeError(f"{std.__name__}() missing required argument 'input' (pos 1)")
        if a is not _MISSING:
            if second in kw:
                raise TypeError(f"{std.__name__}() got multiple values for argument '{second}'")
            kw[second] = a
        if dim is not _MISSING:
            if dim is not None and (third in kw or "dim" in kw):
                raise TypeError(f"{std.__name__}() got multiple values for argument 'dim'")
            if dim is not None:
                kw["dim"] = dim
        if norm is not _MISSING:
            if "norm" in kw:
                raise TypeError(f"{std.__name__}() got multiple values for argument 'norm'")
            kw["norm"] = norm
        if "out" in kw and kw.pop("out") is not None:
            raise TypeError(f"{std.__name__}: out= is not supported")
        return std(input, **kw)

    return _dispatch(std, torch_call)


def _torch_shift(std: Any) -> Any:
    def torch_call(input: Any = _MISSING, dim: Any = _MISSING, **kw: Any) -> Tensor:
        if input is _MISSING:
            raise TypeError(f"{std.__name__}() missing required argument 'input' (pos 1)")
        if dim is not _MISSING:
            if "axes" in kw or "dim" in kw:
                raise TypeError(f"{std.__name__}() got multiple values for argument 'dim'")
            kw["dim"] = dim
        return std(input, **kw)

    return _dispatch(std, torch_call)


for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    globals()[_name] = _torch_form(globals()[_name], "n", "axis")
for _name in ("fftn", "ifftn", "rfftn", "irfftn"):
    globals()[_name] = _torch_form(globals()[_name], "s", "axes")
for _name in ("fftshift", "ifftshift"):
    globals()[_name] = _torch_shift(globals()[_name])
del _name


def _two_dim(name: str) -> Any:
    nd = globals()[name + "n"]

    def fn(input: Tensor, s: Optional[Sequence[int]] = None, dim: Sequence[int] = (-2, -1),
           norm: Optional[str] = None) -> Tensor:
        return nd(input, s=s, axes=tuple(dim), norm=norm)
    fn.__name__ = fn.__qualname__ = name + "2"
    fn.__doc__ = f"{name}n over the two dims `dim` (default the last two), as torch.fft.{name}2."
    return fn


fft2, ifft2, rfft2, irfft2 = (_two_dim(n) for n in ("fft", "ifft", "rfft", "irfft"))


from ._arg_errors import guarded as _guarded  # noqa: E402

globals().update(_guarded(globals()))  # non-tensor arguments raise TypeError naming the op

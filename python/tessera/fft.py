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
from ._dtypes import isdtype as _isdtype

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift", "fft2", "ifft2", "rfft2", "irfft2"]

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
    return concat([t, zeros(tuple(pad_shape), dtype=t.dtype, device=t.device)], axis=axis)


def _resolve_axes(ndim: int, s: Any, axes: Any) -> list:
    if axes is None:
        return list(range(ndim - len(s), ndim)) if s is not None else list(range(ndim))
    return [a % ndim for a in ((axes,) if isinstance(axes, int) else axes)]


def _promote(x: Any) -> Any:
    """Integer and bool inputs as the default floating dtype (torch's promotion; the standard
    leaves them unspecified)."""
    if isinstance(x, Tensor) and not _isdtype(x.dtype, ("real floating", "complex floating")):
        from ._dtypes import get_default_dtype
        return x.astype(get_default_dtype())
    return x


def _c2c(x: Tensor, s: Any, axes: Any, norm: str, inverse: bool, nd: bool) -> Tensor:
    """Runs a complex transform; records it for autograd when x requires grad."""
    x = _promote(x)
    f = (_F.ifftn if inverse else _F.fftn) if nd else (_F.ifft if inverse else _F.fft)
    if not (x.requires_grad and _C.is_grad_enabled()):
        return f(x, s, axes, norm)

    def backward(g: Tensor) -> Tensor:
        # The public transforms, so that create_graph=True records the backward too.
        if nd:
            gx = (fftn if inverse else ifftn)(g, axes=_resolve_axes(x.ndim, s, axes),
                                              norm=_SWAP[norm])
        else:
            gx = (fft if inverse else ifft)(g, axis=axes, norm=_SWAP[norm])
        for a in _resolve_axes(x.ndim, s if nd else None, axes if nd else [axes]):
            gx = _fit_axis(gx, a, x.shape[a])
        return gx

    return _record("Fft" if not inverse else "Ifft", lambda t: f(t, s, axes, norm), backward, x)


def _record(name: str, forward: Any, backward: Any, x: Tensor) -> Tensor:
    """forward(x) as one autograd node whose backward maps the output's gradient to x's."""
    from .autograd.function import Function

    class _Node(Function):
        @staticmethod
        def forward(ctx, t):
            return forward(t)

        @staticmethod
        def backward(ctx, g):
            return backward(g)

    _Node.__name__ = name
    return _Node.apply(x)


# Note [Real FFT backward] (PyTorch's fft_r2c_backward / fft_c2r_backward):
# - rfft keeps bins 0..n//2 of the full transform of a real signal: its adjoint zero-pads the
#   gradient back to n bins, applies the adjoint complex transform and keeps the real part.
# - irfft fills the missing bins by conjugate symmetry: its adjoint is the real transform of
#   the gradient with the bins that stand for two (1 .. n - (n//2 + 1)) doubled.
# - hfft(x, n, norm) = irfft(conj(x), n, swapped norm) and ihfft(x, n, norm) =
#   conj(rfft(x, n, swapped norm)), so their adjoints follow by the chain rule.
# In every case the gradient is finally cropped or zero-padded to the input's own length (the
# adjoint of the forward's n= padding/truncation).
def _doubled(g: Tensor, axis: int, n: int) -> Tensor:
    """g (the rfft of a gradient, n//2 + 1 bins along axis) with bins 1..n-(n//2+1) doubled."""
    d = n - (n // 2 + 1)
    if d <= 0:
        return g
    from ._creation import ones
    from ._dtypes import complex64, float32, float64
    w = ones(n // 2 + 1, dtype=float32 if g.dtype == complex64 else float64,
             device=g.device)
    w[1:1 + d] = 2.0
    shape = [1] * g.ndim
    shape[axis] = n // 2 + 1
    return g * w.reshape(tuple(shape))


def _full_lengths(x: Tensor, s: Any, axes: list, last_half: bool) -> list:
    """The transform length along each of `axes` (s or the input's; for the c2r transforms the
    last one defaults to 2*(m-1))."""
    out = []
    for i, a in enumerate(axes):
        given = None if s is None else s[i]
        if given is not None and given != -1:
            out.append(given)
        elif last_half and i == len(axes) - 1:
            out.append(2 * (x.shape[a] - 1))
        else:
            out.append(x.shape[a])
    return out


def _fit_all(g: Tensor, x: Tensor, axes: list) -> Tensor:
    for a in axes:
        g = _fit_axis(g, a, x.shape[a])
    return g


def _real_transform(name: str, f: Any, x: Tensor, *args: Any) -> Tensor:
    """Runs a real-input or real-output transform; records its backward (Note [Real FFT
    backward]) when x requires grad."""
    x = _promote(x)
    if not (x.requires_grad and _C.is_grad_enabled()):
        return f(x, *args)
    from ._elementwise import conj, real
    norm = args[-1]
    nd = name.endswith("n")
    # The axes and transform lengths, as the forward (which validates them) resolves them.
    out = f(x.detach(), *args)
    if nd:
        axes = _resolve_axes(x.ndim, args[0], args[1])
        sizes = _full_lengths(x, args[0], axes, name == "irfftn")
    else:
        axes = [args[1] % x.ndim]
        sizes = _full_lengths(x, None if args[0] is None else [args[0]], axes,
                              name in ("irfft", "hfft"))
    last, n_last = axes[-1], sizes[-1]

    def r2c_adjoint(g: Tensor, nrm: str) -> Tensor:  # of rfft/rfftn with norm nrm
        gfull = _fit_axis(g, last, n_last)
        t = ifftn(gfull, axes=axes, norm=_SWAP[nrm]) if nd else ifft(gfull, axis=last, norm=_SWAP[nrm])
        return real(t)

    def c2r_adjoint(g: Tensor, nrm: str) -> Tensor:  # of irfft/irfftn with norm nrm
        if nd:
            t = rfftn(g, axes=axes, norm=_SWAP[nrm])
        else:
            t = rfft(g, axis=last, norm=_SWAP[nrm])
        return _doubled(t, last, n_last)

    def backward(g: Tensor) -> Tensor:
        if name in ("rfft", "rfftn"):
            gx = r2c_adjoint(g, norm)
        elif name == "ihfft":
            gx = r2c_adjoint(conj(g), _SWAP[norm])
        elif name in ("irfft", "irfftn"):
            gx = c2r_adjoint(g, norm)
        else:  # hfft
            gx = conj(c2r_adjoint(g, _SWAP[norm]))
        return _fit_all(gx, x, axes)

    return _record(name.capitalize(), lambda t: out, backward, x)


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
        return nd(input, s=s, axes=tuple(dim), norm="backward" if norm is None else norm)
    fn.__name__ = fn.__qualname__ = name + "2"
    fn.__doc__ = f"{name}n over the two dims `dim` (default the last two), as torch.fft.{name}2."
    return fn


fft2, ifft2, rfft2, irfft2 = (_two_dim(n) for n in ("fft", "ifft", "rfft", "irfft"))


from ._arg_errors import guarded as _guarded  # noqa: E402

globals().update(_guarded(globals()))  # non-tensor arguments raise TypeError naming the op

"""torch top-level functions that training and test code calls and tessera lacked: in-place
and ``*_copy`` twins of Tensor methods, combinations / trapezoid / vander / unravel_index /
polar / complex / view_as_real / gradient, legacy linalg (svd, qr, cholesky, slogdet), the
nn.functional ops torch also exposes at top level (with torch's top-level signatures), and
global switches (deterministic algorithms, matmul precision, print options, compile, vmap).
"""
from __future__ import annotations

import builtins
import math
import sys
import warnings
from collections import namedtuple
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

from ._C import Tensor

# ----------------------------------------------------------------------------- method twins
# torch.<name>_(x, ...) is x.<name>_(...); tessera defines each one whose method exists.
_INPLACE_FUNCTIONS = (
    "abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ "
    "atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ detach_ erf_ "
    "erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ gcd_ index_put_ lcm_ ldexp_ log10_ log1p_ "
    "log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ "
    "sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_ selu_ celu_ "
    "threshold_ resize_as_ conj_physical_ as_strided_").split()

# torch.<name>(x, ...) is x.<name>(...) for these queries / conversions.
_METHOD_FUNCTIONS = ("adjoint is_same_size is_signed is_conj is_neg is_inference resolve_conj "
                     "resolve_neg get_device conj_physical as_strided_scatter index_reduce").split()

# torch.<name>_copy(x, ...) is x.<name>(...) with fresh storage (no view).
_COPY_FUNCTIONS = ("alias as_strided detach diagonal expand permute select squeeze t transpose "
                   "unbind unfold unsqueeze view view_as_real view_as_complex split "
                   "split_with_sizes").split()


def _method_function(name: str) -> Callable[..., Any]:
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}(input, ...)``: the same as ``input.{name}(...)``."
    return fn


def _copy_function(name: str) -> Callable[..., Any]:
    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}_copy(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        if name in ("alias", "view_as_real", "view_as_complex"):
            if args or kwargs:
                raise TypeError(f"{name}_copy() takes 1 positional argument (input), got "
                                f"{1 + len(args)} and keywords {sorted(kwargs)}")
            out = input.clone() if name == "alias" else globals()[name](input)
        else:
            out = getattr(input, name)(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(o.clone() for o in out) if isinstance(out, tuple) else \
                [o.clone() for o in out]
        return out if name == "alias" else out.clone()
    fn.__name__ = fn.__qualname__ = name + "_copy"
    fn.__doc__ = f"``torch.{name}_copy``: ``input.{name}(...)`` copied into new memory."
    return fn


def _ts() -> Any:
    import tessera
    return tessera


def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor like `input` filled with `value` (torch.fill)."""
    return _ts().full_like(input, value)


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> Tuple[Tensor, ...]:
    """Splits `input` along `dim` into pieces of `split_sizes` (which must sum to its size)."""
    if builtins.sum(split_sizes) != input.shape[dim]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{input.shape[dim]} (input tensor's size at dimension {dim}), but "
                           f"got split_sizes={list(split_sizes)}")
    return tuple(input.split(list(split_sizes), dim))


# ----------------------------------------------------------------------------- math helpers
def _combination_rows(n: int, r: int, with_replacement: bool) -> Any:
    """The (count, r) int64 index rows of the r-combinations of range(n), in itertools order,
    built column by column; only prefixes that extend to a full row are kept, so no
    intermediate outgrows the output."""
    import numpy as np
    first_max = n - 1 if with_replacement else n - r
    rows = np.arange(first_max + 1, dtype=np.int64)[:, None]
    for k in builtins.range(1, r):
        last = rows[:, -1]
        lo = last if with_replacement else last + 1
        hi = n - 1 if with_replacement else n - r + k           # inclusive bound of column k
        counts = np.maximum(hi - lo + 1, 0)
        total = int(counts.sum())
        starts = np.repeat(lo, counts)
        offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        rows = np.concatenate([np.repeat(rows, counts, axis=0), (starts + offsets)[:, None]],
                              axis=1)
    return rows


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-`r` combinations of a 1-D tensor's elements, as rows of a (count, r) tensor
    (itertools.combinations order; torch.combinations). RuntimeError when the count overflows
    int64, MemoryError when it cannot be allocated, both before any row is built."""
    ts = _ts()
    from ._arg_errors import check_output_size, int_arg
    r = int_arg("combinations", "r", r)
    if not isinstance(input, Tensor):
        raise TypeError(f"combinations: argument 'input' must be a tensor, not "
                        f"{type(input).__name__}")
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return ts.empty((0,), dtype=input.dtype, device=input.device)
    n = input.shape[0]
    count = math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)
    check_output_size("combinations", (count, r), input.dtype, input.device)
    if count == 0:
        return ts.empty((0, r), dtype=input.dtype, device=input.device)
    index = ts.asarray(_combination_rows(n, r, with_replacement), device=input.device)
    return input[index.reshape(-1)].reshape(count, r)


def _trapezoid_parts(y: Tensor, x: Optional[Tensor], dx: Optional[float], dim: int,
                     name: str) -> Tuple[Tensor, Any]:
    """(pairwise averages of y along dim, the spacing: a scalar or the diffs of x)."""
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: x and dx "
                        f"cannot both be given")
    ts = _ts()
    dim = dim % y.ndim if y.ndim else 0
    n = y.shape[dim]
    lo = y.narrow(dim, 0, builtins.max(n - 1, 0))
    hi = y.narrow(dim, 1, builtins.max(n - 1, 0)) if n > 0 else lo
    avg = (lo + hi) / 2
    if x is None:
        return avg, 1.0 if dx is None else dx
    if not isinstance(x, Tensor):
        x = ts.asarray(x)
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        d = ts.diff(x)
        shape = [1] * y.ndim
        shape[dim] = builtins.max(n - 1, 0)
        return avg, d.reshape(tuple(shape))
    return avg, ts.diff(x, axis=dim)


def trapezoid(y: Tensor, x: Optional[Tensor] = None, *, dx: Optional[float] = None,
              dim: int = -1) -> Tensor:
    """The trapezoidal rule along `dim`: with sample points `x` or constant spacing `dx`
    (default 1); integers give a float result (torch.trapezoid)."""
    if y.ndim == 0:
        raise IndexError("trapezoid: Dimension specified as -1 but tensor has no dimensions")
    avg, spacing = _trapezoid_parts(y, x, dx, dim, "trapezoid")
    return (avg * spacing).sum(dim)


def trapz(y: Tensor, x: Optional[Tensor] = None, *, dx: Optional[float] = None,
          dim: int = -1) -> Tensor:
    """Alias of trapezoid."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Optional[Tensor] = None, *, dx: Optional[float] = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal integral along `dim` (one fewer element than y there)."""
    if y.ndim == 0:
        raise IndexError("cumulative_trapezoid: Dimension specified as -1 but tensor has no "
                         "dimensions")
    avg, spacing = _trapezoid_parts(y, x, dx, dim, "cumulative_trapezoid")
    return (avg * spacing).cumsum(dim)


def vander(x: Tensor, N: Optional[int] = None, increasing: bool = False) -> Tensor:
    """The (len(x), N) Vandermonde matrix of a 1-D tensor: columns x**(N-1) ... x**0 (or
    increasing), by a cumulative product; integer and bool inputs give int64 (torch.vander).
    The output size is checked before anything is allocated."""
    ts = _ts()
    from ._arg_errors import check_output_size, int_arg
    if not isinstance(x, Tensor):
        raise TypeError(f"vander: argument 'x' must be a tensor, not {type(x).__name__}")
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else int_arg("vander", "N", N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x.dtype == ts.bool or ts.isdtype(x.dtype, "integral"):
        x = x.astype(ts.int64)
    check_output_size("vander", (x.shape[0], n), x.dtype, x.device)
    if n == 0:
        return ts.empty((x.shape[0], 0), dtype=x.dtype, device=x.device)
    ones = ts.ones((x.shape[0], 1), dtype=x.dtype, device=x.device)
    if n == 1:
        out = ones
    else:
        powers = ts.cumprod(ts.broadcast_to(x[:, None], (x.shape[0], n - 1)), dim=1)
        out = ts.concat([ones, powers], axis=1)
    return out if increasing else ts.flip(out, axis=1)


def unravel_index(indices: Any, shape: Union[int, Sequence[int]]) -> Tuple[Tensor, ...]:
    """The coordinate tensors of flat `indices` into an array of `shape` (torch.unravel_index:
    flat indices outside [0, prod(shape)) wrap around as torch's do)."""
    ts = _ts()
    if not isinstance(indices, Tensor):
        indices = ts.asarray(indices)
    if ts.isdtype(indices.dtype, ("real floating", "complex floating")) or indices.dtype == ts.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    # As torch: out-of-range and negative flat indices wrap (floor division and modulo).
    idx = indices.astype(ts.int64)
    out = []
    for s in reversed(shape):
        out.append(idx % s if s else idx)
        idx = idx // s if s else idx
    return tuple(reversed(out))


def complex(real: Tensor, imag: Tensor) -> Tensor:
    """real + 1j * imag from two float tensors of the same dtype (torch.complex)."""
    ts = _ts()
    if real.dtype != imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {real.dtype} but got scalar type "
                           f"{imag.dtype} for second argument")
    if real.dtype not in (ts.float32, ts.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real.dtype} and {imag.dtype}")
    cdt = ts.complex64 if real.dtype == ts.float32 else ts.complex128
    return real.astype(cdt) + imag.astype(cdt) * 1j


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """abs * (cos(angle) + 1j sin(angle)) (torch.polar)."""
    ts = _ts()
    return complex(abs * ts.cos(angle), abs * ts.sin(angle))


def _view_functions() -> Tuple[type, type]:
    """The differentiable forms of view_as_real / view_as_complex (made on first use: the
    autograd package imports this module's namespace)."""
    global _VIEW_FUNCTIONS
    if _VIEW_FUNCTIONS is None:
        from . import _C
        from .autograd import Function

        class ViewAsReal(Function):
            @staticmethod
            def forward(ctx: Any, x: Tensor) -> Tensor:  # type: ignore[override]
                return _C._view_as_real(x)

            @staticmethod
            def backward(ctx: Any, g: Tensor) -> Tensor:  # type: ignore[override]
                return view_as_complex(g.contiguous())

        class ViewAsComplex(Function):
            @staticmethod
            def forward(ctx: Any, x: Tensor) -> Tensor:  # type: ignore[override]
                return _C._view_as_complex(x)

            @staticmethod
            def backward(ctx: Any, g: Tensor) -> Tensor:  # type: ignore[override]
                return view_as_real(g.contiguous())

        _VIEW_FUNCTIONS = (ViewAsReal, ViewAsComplex)
    return _VIEW_FUNCTIONS


_VIEW_FUNCTIONS: Optional[Tuple[type, type]] = None


def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor's values as (..., 2) floats (real, imag): a view, like torch, so
    writes reach `input`. Shapes: (...) complex -> (..., 2) real."""
    from . import _C
    if input.requires_grad and _C.is_grad_enabled():
        return _view_functions()[0].apply(input)
    return _C._view_as_real(input)


def view_as_complex(input: Tensor) -> Tensor:
    """A (..., 2) float32/float64 tensor's pairs as complex values: a view, like torch (the
    last dim must have stride 1, the other strides and the offset must be even)."""
    from . import _C
    if input.requires_grad and _C.is_grad_enabled():
        return _view_functions()[1].apply(input)
    return _C._view_as_complex(input)


def promote_types(type1: Any, type2: Any) -> Any:
    """The dtype both promote to (torch.promote_types: no weak scalars)."""
    return _ts().result_type(type1, type2)


_TYPENAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
              "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
              "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
              "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
              "complex128": "ComplexDoubleTensor"}


def typename(obj: Any) -> str:
    """'tessera.FloatTensor' style names for tensors, else the object's qualified type."""
    if isinstance(obj, Tensor):
        return "tessera." + _TYPENAMES.get(str(obj.dtype).rsplit(".", 1)[-1], "Tensor")
    module, qual = "", ""
    if hasattr(obj, "__module__"):
        module = obj.__module__ + "."
    if hasattr(obj, "__qualname__"):
        qual = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qual = obj.__name__
    else:
        module = obj.__class__.__module__ + "."
        qual = obj.__class__.__qualname__
    if module in ("", "builtins."):
        module = ""
    return module + qual


def range(start: Any, end: Any, step: Any = 1, *, dtype: Any = None,
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """Deprecated torch.range: like arange but *including* `end`, float by default."""
    ts = _ts()
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dt = ts.get_default_dtype() if dtype is None else dtype
    out = (ts.arange(n, dtype=ts.float64) * step + start).astype(dt)
    if device is not None:
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                  layout: Any = None, device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor of `size` with element `stride`s over fresh storage."""
    ts = _ts()
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    extent = 0 if 0 in size else 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride))
    dt = ts.get_default_dtype() if dtype is None else dtype
    base = ts.empty((extent,), dtype=dt, device=device)
    out = base.as_strided(size, stride)
    if requires_grad:
        out = out.detach().requires_grad_(True)
    return out


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over an object exposing the buffer protocol (`count` items of `dtype`
    from byte `offset`). tessera copies the bytes (torch shares them)."""
    import numpy as np
    ts = _ts()
    np_dt = np.dtype(str(dtype).rsplit(".", 1)[-1]) if str(dtype) != "bfloat16" else None
    if np_dt is None:
        raise TypeError("frombuffer: bfloat16 is not supported")
    nbytes = memoryview(buffer).nbytes
    if offset < 0 or offset > nbytes - (1 if nbytes else 0):
        raise ValueError(f"both buffer length ({nbytes}) and offset ({offset}) must be "
                         "non-negative and offset must be less than the buffer length")
    if count == 0 or (count < 0 and (nbytes - offset) % np_dt.itemsize):
        raise ValueError(f"buffer length ({nbytes - offset} after offset) must be a multiple of "
                         f"element size ({np_dt.itemsize})")
    arr = np.frombuffer(buffer, dtype=np_dt, count=count, offset=offset)
    out = ts.asarray(arr.copy())
    if requires_grad:
        out.requires_grad_(True)
    return out


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Samples Poisson(rate) for each element of the rate tensor `input` (torch.poisson)."""
    import numpy as np
    ts = _ts()
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' must be a tensor, not {type(input).__name__}")
    rates = input.detach().cpu().numpy()
    if (rates < 0).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    seed = int(ts.randint(0, 2 ** 31 - 1, (1,), generator=generator).item()) \
        if generator is not None else int(ts.randint(0, 2 ** 31 - 1, (1,)).item())
    vals = np.asarray(np.random.default_rng(seed).poisson(rates)).astype(rates.dtype)
    return ts.asarray(vals, device=input.device)


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None,
             edge_order: int = 1) -> Tuple[Tensor, ...]:
    """Central differences inside, one-sided (first or second order) at the edges, along
    each dim in `dim` (default all); `spacing` is a scalar, one scalar per dim, or one
    coordinate tensor per dim (torch.gradient, NumPy's np.gradient)."""
    ts = _ts()
    dims = list(builtins.range(input.ndim)) if dim is None else \
        ([dim] if isinstance(dim, int) else list(dim))
    dims = [d % input.ndim for d in dims]
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if isinstance(spacing, (int, float)) or isinstance(spacing, Tensor) and spacing.ndim == 0:
        spacing = [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's "
                           f"spacing and dim arguments to have the same length, but got a "
                           f"spacing argument of length {len(spacing)} and a dim argument of "
                           f"length {len(dims)}.")
    x = input if ts.isdtype(input.dtype, ("real floating", "complex floating")) \
        else input.astype(ts.get_default_dtype())
    outs = []
    for d, h in zip(dims, spacing):
        n = x.shape[d]
        if n < edge_order + 1:
            raise RuntimeError(f"torch.gradient expected each dimension size to be at least "
                               f"edge_order+1")
        outs.append(_gradient_1d(x, d, h, edge_order, n))
    return tuple(outs)


def _gradient_1d(x: Tensor, d: int, h: Any, edge_order: int, n: int) -> Tensor:
    ts = _ts()

    def sl(a: int, b: int) -> Tensor:
        return x.narrow(d, a, b - a)

    if isinstance(h, Tensor) and h.ndim == 1:
        coords = h.astype(x.dtype)
        shape = [1] * x.ndim
        dxs = ts.diff(coords)
        shape[d] = n - 1
        dxs = dxs.reshape(tuple(shape))
        h1, h2 = dxs.narrow(d, 0, n - 2), dxs.narrow(d, 1, n - 2)
        a = -h2 / (h1 * (h1 + h2))
        b = (h2 - h1) / (h1 * h2)
        c = h1 / (h2 * (h1 + h2))
        mid = a * sl(0, n - 2) + b * sl(1, n - 1) + c * sl(2, n)
        first_h, last_h = dxs.narrow(d, 0, 1), dxs.narrow(d, n - 2, 1)
        if edge_order == 1:
            first = (sl(1, 2) - sl(0, 1)) / first_h
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / last_h
        else:
            g1, g2 = dxs.narrow(d, 0, 1), dxs.narrow(d, 1, 1)
            first = (-(2 * g1 + g2) / (g1 * (g1 + g2)) * sl(0, 1)
                     + (g1 + g2) / (g1 * g2) * sl(1, 2) - g1 / (g2 * (g1 + g2)) * sl(2, 3))
            g1, g2 = dxs.narrow(d, n - 3, 1), dxs.narrow(d, n - 2, 1)
            last = (g2 / (g1 * (g1 + g2)) * sl(n - 3, n - 2)
                    - (g2 + g1) / (g1 * g2) * sl(n - 2, n - 1)
                    + (2 * g2 + g1) / (g2 * (g1 + g2)) * sl(n - 1, n))
    else:
        h = float(h.item()) if isinstance(h, Tensor) else h
        mid = (sl(2, n) - sl(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (sl(1, 2) - sl(0, 1)) / h
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / h
        else:
            first = (-1.5 * sl(0, 1) + 2 * sl(1, 2) - 0.5 * sl(2, 3)) / h
            last = (0.5 * sl(n - 3, n - 2) - 2 * sl(n - 2, n - 1) + 1.5 * sl(n - 1, n)) / h
    return ts.concat([first, mid, last], axis=d)


# ----------------------------------------------------------------------------- legacy linalg
_SVD = namedtuple("svd", ["U", "S", "V"])
_QR = namedtuple("qr", ["Q", "R"])
_SLOGDET = namedtuple("slogdet", ["sign", "logabsdet"])


def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Tuple[Tensor, Tensor, Tensor]:
    """Deprecated torch.svd: (U, S, V) with V (not V^H); `some` gives the reduced form;
    without `compute_uv`, U (m, m) and V (n, n) are zeros whatever `some` (as torch)."""
    ts = _ts()
    if not compute_uv:
        s = ts.linalg.svdvals(input)
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        u = ts.zeros(batch + (m, m), dtype=input.dtype, device=input.device)
        v = ts.zeros(batch + (n, n), dtype=input.dtype, device=input.device)
        return _SVD(u, s, v)
    u, s, vh = ts.linalg.svd(input, full_matrices=not some)
    return _SVD(u, s, vh.mH)


def qr(input: Tensor, some: bool = True) -> Tuple[Tensor, Tensor]:
    """torch.qr: linalg.qr with mode 'reduced' (`some`) or 'complete'."""
    q, r = _ts().linalg.qr(input, mode="reduced" if some else "complete")
    return _QR(q, r)


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """torch.cholesky: the lower (or `upper`) Cholesky factor."""
    return _ts().linalg.cholesky(input, upper=upper)


def slogdet(A: Tensor) -> Tuple[Tensor, Tensor]:
    """(sign, log|det|) of square matrices (torch.slogdet = linalg.slogdet)."""
    sign, logabsdet = _ts().linalg.slogdet(A)
    return _SLOGDET(sign, logabsdet)


# ----------------------------------------------------------------------------- nn functional
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(r: Any) -> str:
    """torch's reduction enum (0 none, 1 mean, 2 sum) or a reduction name."""
    if isinstance(r, int) and not isinstance(r, bool):
        if r not in _REDUCTIONS:
            raise ValueError(f"{r} is not a valid value for reduction (0 'none', 1 'mean', "
                             "2 'sum')")
        return _REDUCTIONS[r]
    return r


def _F() -> Any:
    from .nn import functional
    return functional


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """torch.dropout(input, p, train): nn.functional.dropout with positional arguments."""
    return _F().dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().feature_alpha_dropout(input, p, train)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Channel dropout (zeroes whole channels of a (N, C, ...) input)."""
    F = _F()
    return F.dropout1d(input, p, train) if input.ndim in (2, 3) else \
        F.dropout2d(input, p, train) if input.ndim == 4 else F.dropout3d(input, p, train)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """torch.embedding(weight, indices): the rows of weight (note the argument order)."""
    return _F().embedding(indices, weight, padding_idx=None if padding_idx < 0 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq)


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    return _F().group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
               running_mean: Optional[Tensor], running_var: Optional[Tensor], training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """torch.batch_norm (note: weight and bias come before the running statistics)."""
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                           eps)


def instance_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
                  running_mean: Optional[Tensor], running_var: Optional[Tensor],
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                              momentum, eps)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor] = None,
             eps: Optional[float] = None) -> Tensor:
    return _F().rms_norm(input, normalized_shape, weight, eps)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Optional[Tensor] = None,
                                     pos_weight: Optional[Tensor] = None,
                                     reduction: Any = 1) -> Tensor:
    """`reduction` is torch's enum here: 0 none, 1 mean, 2 sum (strings also accepted)."""
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def kl_div(input: Tensor, target: Tensor, reduction: Any = 1, log_target: bool = False) -> Tensor:
    return _F().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: Any = 1) -> Tensor:
    return _F().margin_ranking_loss(input1, input2, target, margin=margin,
                                    reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: Any = 1) -> Tensor:
    return _F().hinge_embedding_loss(input, target, margin=margin,
                                     reduction=_reduction(reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: Any = 1) -> Tensor:
    return _F().cosine_embedding_loss(input1, input2, target, margin=margin,
                                      reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        reduction: Any = 1) -> Tensor:
    return _F().triplet_margin_loss(anchor, positive, negative, margin=margin, p=p, eps=eps,
                                    swap=swap, reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: Any) -> Tensor:
    return _F().poisson_nll_loss(input, target, log_input=log_input, full=full, eps=eps,
                                 reduction=_reduction(reduction))


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    return _F().max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    return _F().max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    return _F().max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False) -> Tuple[Tensor, Tensor]:
    return _F().max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode,
                           return_indices=True)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> Tuple[Tensor, Tensor]:
    """torch.adaptive_max_pool1d returns (values, indices)."""
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, generator: Any = None) -> Tensor:
    return _F().rrelu(input, lower, upper, training)


def _functional_alias(name: str) -> Callable[..., Any]:
    def fn(*args: Any, **kwargs: Any) -> Any:
        return getattr(_F(), name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.{name}``: nn.functional.{name} (same arguments)."
    return fn


# Same signature at top level and in nn.functional.
_FUNCTIONAL_ALIASES = ("conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d "
                       "selu celu cosine_similarity pairwise_distance pdist pixel_shuffle "
                       "pixel_unshuffle channel_shuffle native_channel_shuffle avg_pool1d "
                       "adaptive_avg_pool1d bilinear ctc_loss").split()


# ----------------------------------------------------------------------------- global switches
_STATE: Dict[str, Any] = {"deterministic": False, "warn_only": False, "matmul": "highest",
                          "warn_always": False, "interop": 1}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Records the flag (tessera's CPU kernels are deterministic already)."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"use_deterministic_algorithms expects a bool, but got "
                           f"{type(mode).__name__}")
    _STATE["deterministic"], _STATE["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _STATE["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _STATE["warn_only"]


def set_deterministic_debug_mode(debug_mode: Union[int, str]) -> None:
    """0/'default', 1/'warn', 2/'error' as torch."""
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _STATE["deterministic"]:
        return 0
    return 1 if _STATE["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium' (recorded; tessera's CPU matmul is full float32)."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    _STATE["matmul"] = precision


def get_float32_matmul_precision() -> str:
    return _STATE["matmul"]


def _expect_bool(value: Any, what: str) -> None:
    if not isinstance(value, bool):
        raise RuntimeError(f"{what} expects a bool, but got {type(value).__name__}")


def set_warn_always(b: bool) -> None:
    """Records whether warnings that torch shows once should always show."""
    _expect_bool(b, "set_warn_always")
    _STATE["warn_always"] = b


def is_warn_always_enabled() -> bool:
    return _STATE["warn_always"]


def set_num_interop_threads(num: int) -> None:
    if num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _STATE["interop"] = num


def get_num_interop_threads() -> int:
    return _STATE["interop"]


def set_flush_denormal(mode: bool) -> bool:
    """Not supported by tessera's kernels: returns False (torch's answer where unsupported)."""
    _expect_bool(mode, "flush_denormal")
    return False


def is_storage(obj: Any) -> bool:
    return False


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: Any = None,
            backend: Any = "inductor", mode: Any = None, options: Any = None,
            disable: bool = False) -> Any:
    """tessera has no compiler: returns `model` unchanged (or a decorator doing that)."""
    if model is None:
        return lambda fn: fn
    return model


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: Optional[int] = None) -> Callable[..., Any]:
    """Vectorizes `func` over dimension `in_dims` of its tensor arguments by calling it once
    per slice and stacking the results along `out_dims` (torch.vmap's semantics, computed as
    a loop)."""
    def wrapped(*args: Any) -> Any:
        ts = _ts()
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap(...)(<inputs>): in_dims is not compatible with the structure "
                             f"of `inputs`. in_dims has structure {len(dims)} but inputs has "
                             f"structure {len(args)}.")
        sizes = {a.shape[d] for a, d in zip(args, dims) if isinstance(a, Tensor) and d is not None}
        if not sizes:
            raise ValueError("vmap(...): at least one input must be a Tensor mapped over a dim")
        if len(sizes) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sorted(sizes)} for the mapped dimension")
        n = sizes.pop()
        results = []
        for i in builtins.range(n):
            call = [a.select(d, i) if isinstance(a, Tensor) and d is not None else a
                    for a, d in zip(args, dims)]
            results.append(func(*call))
        first = results[0]
        if isinstance(first, tuple):
            od = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(first)
            return tuple(ts.stack([r[k] for r in results], axis=od[k])
                         for k in builtins.range(len(first)))
        return ts.stack([r if isinstance(r, Tensor) else ts.asarray(r) for r in results],
                        axis=out_dims)
    return wrapped


_PRINT = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(precision: Optional[int] = None, threshold: Optional[float] = None,
                     edgeitems: Optional[int] = None, linewidth: Optional[int] = None,
                     profile: Optional[str] = None, sci_mode: Optional[bool] = None) -> None:
    """torch.set_printoptions: profiles 'default', 'short', 'full' and the individual options
    (applied through NumPy's print options, which tessera's repr uses)."""
    import numpy as np
    if profile == "default":
        _PRINT.update(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    elif profile == "short":
        _PRINT.update(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        _PRINT.update(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            _PRINT[k] = v
    _PRINT["sci_mode"] = sci_mode
    np.set_printoptions(precision=_PRINT["precision"],
                        threshold=sys.maxsize if _PRINT["threshold"] == math.inf
                        else int(_PRINT["threshold"]),
                        edgeitems=_PRINT["edgeitems"], linewidth=_PRINT["linewidth"],
                        suppress=sci_mode is False)


def get_printoptions() -> Dict[str, Any]:
    """The options set_printoptions manages."""
    return dict(_PRINT)


def method_functions() -> Dict[str, Callable[..., Any]]:
    """The method twins (torch.abs_, torch.permute_copy...) and nn.functional aliases; called
    by _torch_compat once the Tensor methods are installed."""
    out: Dict[str, Callable[..., Any]] = {}
    for name in _INPLACE_FUNCTIONS + _METHOD_FUNCTIONS:
        if hasattr(Tensor, name):
            out[name] = _method_function(name)
    for name in _COPY_FUNCTIONS:
        out[name + "_copy"] = _copy_function(name)
    for name in _FUNCTIONAL_ALIASES:
        out[name] = _functional_alias(name)
    return out


__all__ = sorted({
    "fill", "split_with_sizes", "combinations", "trapezoid", "trapz",
    "cumulative_trapezoid", "vander", "unravel_index", "polar", "view_as_real",
    "view_as_complex", "promote_types", "typename", "empty_strided", "frombuffer",
    "poisson", "gradient", "svd", "qr", "cholesky", "slogdet", "dropout", "alpha_dropout",
    "feature_alpha_dropout", "feature_dropout", "embedding", "layer_norm", "group_norm",
    "batch_norm", "instance_norm", "rms_norm", "binary_cross_entropy_with_logits", "kl_div",
    "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
    "triplet_margin_loss", "poisson_nll_loss", "max_pool1d", "max_pool2d", "max_pool3d",
    "max_pool1d_with_indices", "adaptive_max_pool1d", "rrelu",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
    "get_deterministic_debug_mode", "set_float32_matmul_precision",
    "get_float32_matmul_precision", "set_warn_always", "is_warn_always_enabled",
    "set_num_interop_threads", "get_num_interop_threads", "set_flush_denormal", "is_storage",
    "vmap", "set_printoptions"})

# Served by the package's __getattr__ so that `from tessera import *` keeps Python's builtins.
LAZY = {"range": range, "complex": complex, "compile": compile}

"""Statistical, searching and utility functions of the array API 2024.12 (sum, prod, mean,
var, std, max, min, cumulative_sum, cumulative_prod, all, any, diff, argmax, argmin,
count_nonzero, where) and the matching Tensor methods.

Conventions shared by the reductions:

* ``axis`` is None (all axes), an int or a tuple of ints; negative axes count from the end.
  PyTorch's ``dim=`` is accepted as an alias of ``axis=`` and ``keepdim=`` of ``keepdims=``.
  An out-of-range axis raises IndexError, a repeated axis ValueError.
* Result shape: ``x.shape`` without the reduced axes, or with them as size 1 when
  ``keepdims=True``. Reducing a 0-d tensor over ``axis=None`` gives a 0-d tensor.
* Float reductions are pairwise over fixed blocks: float32 sums stay accurate over millions
  of elements, and results are bit-identical for any thread count. float16/bfloat16
  accumulate in float32.
* The reductions themselves, with every argument form (the standard's and PyTorch's), are
  C++ bindings (csrc/python/bind_reduction.cpp; median/kthvalue in csrc/ops/order_stats.cpp):
  ``ts.max(x, axis=1)`` returns values as the standard specifies, ``ts.max(x, 1)`` and
  ``x.max(1)`` PyTorch's (values, indices). So are diff, logsumexp, cummax/cummin, mode,
  quantile/nanquantile, var_mean/std_mean, logcumsumexp, msort, bucketize, bincount, histc,
  cov, corrcoef, trapezoid/trapz and cumulative_trapezoid
  (csrc/ops/statistics.cpp), each Tensor method
  the namespace function itself. This module holds the rest of the family.
"""
from __future__ import annotations

import builtins
import math
from typing import Any, Optional, Sequence, Tuple, Union

from . import _C
from ._C import Tensor, where
from ._dtypes import bool as bool_, complex64, complex128, float16, bfloat16, float32, float64
from ._tensor import _dim_index

__all__ = ["sum", "prod", "mean", "var", "std", "max", "min", "all", "any", "count_nonzero",
           "argmax", "argmin", "cumulative_sum", "cumulative_prod", "diff", "where"]

Axis = Optional[Union[int, Tuple[int, ...]]]
_UNSET: Any = object()


def _axis(name: str, axis: Any, dim: Any) -> Any:
    if dim is _UNSET:
        return axis
    if axis is not None:
        raise TypeError(f"{name}: got both axis= and its alias dim=; pass one")
    return dim


def _keep(name: str, keepdims: builtins.bool, keepdim: Any) -> builtins.bool:
    if keepdim is _UNSET:
        return keepdims
    if keepdims:
        raise TypeError(f"{name}: got both keepdims= and its alias keepdim=; pass one")
    return builtins.bool(keepdim)


# The reductions parse every argument form in their bindings (csrc/python/bind_reduction.cpp),
# for the namespace function and the Tensor method alike: the standard's axis=/keepdims=/
# correction= and PyTorch's positional dim, keepdim, dim=, unbiased=, dtype=, and its
# (values, indices) named tuples (Note [torch reductions vs the standard] below).
from ._C import (sum, prod, mean, var, std, max, min, all, any, count_nonzero,  # noqa: E402,A004
                 argmax, argmin, cumulative_sum, cumulative_prod, cumsum, cumprod, amax, amin,
                 aminmax, median, nanmedian, kthvalue, nansum, nanmean, diff)
# (ops/statistics.h, bound in the same file, Tensor methods the same objects)
from ._C import (logsumexp, cummax, cummin, mode, quantile, nanquantile,  # noqa: E402
                 var_mean, std_mean, logcumsumexp, msort, bucketize, bincount, histc, cov,
                 corrcoef, trapezoid, trapz, cumulative_trapezoid)
# ts.softmax is F.softmax: the C++ op (csrc/python/bind_nn.cpp), which also reads torch.softmax's
# positional dtype
from ._C import softmax, log_softmax  # noqa: E402


# ---- PyTorch's reductions
# PyTorch-style reductions: x.max(dim)/x.min(dim) -> (values, indices), amax/amin,
# aminmax, median/nanmedian, mode, kthvalue, nanmean, nansum, quantile/nanquantile, logsumexp,
# logcumsumexp, cummax/cummin, torch-default var/std methods (unbiased), var_mean/std_mean,
# norm, dist, softmax/log_softmax, bincount, histc, bucketize.
#
# Note [torch reductions vs the standard]: the namespace functions ts.max / ts.min / ts.var /
# ts.std keep the array API semantics (values only; correction=0). The Tensor *methods* follow
# torch, whose behaviour differs: x.max(dim) returns (values, indices) and x.var() is unbiased
# (correction=1) unless told otherwise. Values that come with indices are gathered from the
# input at those indices, so they are differentiable.
_TORCH_NAMES = ["amax", "amin", "aminmax", "median", "nanmedian", "mode", "kthvalue", "nanmean",
                "nansum", "quantile", "nanquantile", "logsumexp", "logcumsumexp", "cummax", "cummin",
                "var_mean", "std_mean", "norm", "dist", "softmax", "log_softmax", "bincount", "histc",
                "bucketize", "cumsum", "cumprod", "msort", "cov", "corrcoef",
                "renorm", "histogram"]  # PyTorch's (the standard's are above)
__all__ += _TORCH_NAMES

_FLOATS = (float16, bfloat16, float32, float64)
_COMPLEX = (complex64, complex128)

def _ts() -> Any:
    import tessera
    return tessera


def _dims(op: str, dim: Any, ndim: int) -> Any:
    """None (all dims) or a tuple of normalized dims; () means all dims as in torch's amax."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        dims = tuple(_dim_index(op, d, ndim) for d in dim)
    else:
        dims = (_dim_index(op, dim, ndim),)
    return None if ndim == 0 else dims  # a 0-d tensor accepts dim 0 / -1: all (no) dims


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: builtins.bool = False,
         dtype: Any = None) -> Tensor:
    """torch.norm: the p-norm of the elements over `dim` (all elements when None), 'fro' (the
    2-norm of the elements) or 'nuc' (nuclear norm of the matrices in two dims)."""
    if input.dtype not in _FLOATS + _COMPLEX:
        raise RuntimeError(f"norm: input dtype should be either floating point or complex, got "
                           f"{input.dtype}")
    x = input if dtype is None else input.astype(dtype)
    if p == "nuc":
        dims = _dims("norm", dim, x.ndim) or (0, 1)
        if len(dims) != 2:
            raise RuntimeError("norm: the nuclear norm needs exactly two dims")
        m = _C._moveaxis(x, dims, (-2, -1))
        out = _ts().linalg.matrix_norm(m, ord="nuc", keepdims=keepdim)
        return _C._moveaxis(out, (-2, -1), dims) if keepdim else out
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        raise RuntimeError(f"norm: invalid norm type {p!r}")
    axes = _dims("norm", dim, x.ndim)
    if p in (math.inf, -math.inf):
        # torch: max/min have no identity, so an empty reduced dim raises (NumPy's
        # vector_norm, which ts.linalg follows, returns 0 for ord=inf instead).
        for d in (range(x.ndim) if axes is None else axes):
            if x.shape[d] == 0:
                raise RuntimeError(f"norm: cannot compute the {p} norm over dimension {d} of "
                                   f"shape {tuple(x.shape)}: it is empty and max/min have no "
                                   "identity")
    return _ts().linalg.vector_norm(x, ord=p, axis=axes, keepdims=keepdim)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of input - other (broadcast); both must be tensors, as torch.dist."""
    for pos, (name, v) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(v, Tensor):
            raise TypeError(f"dist(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(v).__name__}")
    return norm(input - other, p)


METHODS = {
    "norm": norm, "dist": dist,
}


# ---- x.sum_to_size
def _sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """Sums self down to `size` (which self must broadcast to ... from)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    lead = self.ndim - len(size)
    if lead < 0:
        raise RuntimeError(f"sum_to_size: size {tuple(size)} is not expandable to size "
                           f"{tuple(self.shape)}")
    axes = list(range(lead))
    for i, n in enumerate(size):
        s = self.shape[lead + i]
        if n == 1 and s != 1:
            axes.append(lead + i)
        elif n != s:
            raise RuntimeError(f"sum_to_size: size {tuple(size)} is not expandable to size "
                               f"{tuple(self.shape)}")
    out = sum(self, axis=tuple(axes), keepdims=True) if axes else self
    return _C._reshape(out, tuple(size), -1)


# ---- renorm, histogram
def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along `dim` whose p-norm exceeds maxnorm scaled down to norm maxnorm."""
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive norm not supported, got p={p}")
    d = _dim_index("renorm", dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    norms = _ts().linalg.vector_norm(input, ord=p, axis=others, keepdims=True)
    factor = _C.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * factor


def histogram(input: Tensor, bins: Any = 100, *, range: Optional[Sequence[float]] = None,
              weight: Optional[Tensor] = None, density: builtins.bool = False) -> Any:
    """(hist, bin_edges) like torch.histogram (NumPy's histogram semantics)."""
    import numpy as np
    from collections import namedtuple
    if input.dtype not in _FLOATS:
        raise RuntimeError(f"histogram: input tensor and bins tensors should have the same "
                           f"floating-point dtype, got {input.dtype}")
    a = np.asarray(input.detach().cpu()).ravel()
    b = np.asarray(bins.cpu()) if isinstance(bins, Tensor) else bins
    w = None if weight is None else np.asarray(weight.detach().cpu()).ravel()
    hist, edges = np.histogram(a, bins=b, range=range, weights=w, density=density)
    res = namedtuple("histogram", ["hist", "bin_edges"])
    return res(_ts().asarray(hist, dtype=input.dtype, device=input.device),
               _ts().asarray(edges, dtype=input.dtype, device=input.device))


# ---- combinations, the trapezoidal rule, gradient
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
    from ._arg_checks import check_output_size, int_arg
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


_TORCH_NAMES += ["combinations", "trapezoid", "trapz", "cumulative_trapezoid", "gradient"]
__all__ += ["combinations", "trapezoid", "trapz", "cumulative_trapezoid", "gradient"]

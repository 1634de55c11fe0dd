"""More torch Tensor methods built on tessera ops: as_strided, put, the *_scatter family
(select/slice/diagonal), hardshrink, prelu, renorm, mvlgamma, polygamma, matrix_exp,
cholesky_inverse/cholesky_solve, histogram, nonzero_static, narrow_copy, the unsafe_* split
aliases and small queries (dim_order, is_set_to, const_data_ptr)."""
from __future__ import annotations

import builtins
import math
from typing import Any, Optional, Sequence

from . import _C
from ._C import Tensor
from ._dtypes import float16, bfloat16, float32, float64
from ._tensor import _dim_index
from .autograd.function import Function, FunctionCtx

__all__ = ["as_strided", "select_scatter", "slice_scatter", "diagonal_scatter", "hardshrink",
           "prelu", "renorm", "mvlgamma", "polygamma", "matrix_exp", "cholesky_inverse",
           "cholesky_solve", "histogram", "narrow_copy", "put"]

_FLOATS = (float16, bfloat16, float32, float64)


def _ts() -> Any:
    import tessera
    return tessera


class _AsStrided(Function):
    """as_strided of a contiguous tensor; the gradient scatter-adds back to the elements read."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor, size: tuple, stride: tuple, offset: int) -> Tensor:  # type: ignore[override]
        ctx.shape, ctx.size, ctx.stride, ctx.rel = tuple(x.shape), size, stride, offset - x._offset
        return _C._as_strided(x, size, stride, offset)

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        t = _ts()
        pos = t.zeros(ctx.size, dtype=_C.int64) + ctx.rel
        for d, (n, s) in enumerate(zip(ctx.size, ctx.stride)):
            shape = [1] * len(ctx.size)
            shape[d] = n
            pos = pos + _C._reshape(t.arange(n) * s, tuple(shape), -1)
        flat = t.zeros((math.prod(ctx.shape),), dtype=g.dtype, device=g.device)
        flat = t.index_add(flat, 0, _C._reshape(pos, (-1,), -1), _C._reshape(g, (-1,), -1))
        return _C._reshape(flat, ctx.shape, -1), None, None, None


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: Optional[int] = None) -> Tensor:
    """A view of input's storage with the given size, strides (in elements) and offset
    (input's own offset when None). Differentiable for contiguous inputs."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided: mismatch in length of strides and shape ({len(stride)} "
                           f"vs {len(size)})")
    if builtins.any(s < 0 for s in stride) or builtins.any(n < 0 for n in size):
        raise RuntimeError("as_strided: negative sizes or strides are not supported")
    offset = input._offset if storage_offset is None else int(storage_offset)
    if input.requires_grad and _C.is_grad_enabled():
        if not input.is_contiguous():
            raise NotImplementedError("as_strided: the gradient needs a contiguous input; hint: "
                                      "call .contiguous() first")
        return _AsStrided.apply(input, size, stride, offset)
    return _C._as_strided(input, size, stride, offset)


def _scatter_into(input: Tensor, key: Any, src: Tensor, op: str, expect: tuple) -> Tensor:
    if tuple(src.shape) != expect:
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self, src "
                           f"size = {tuple(src.shape)}, slice size = {expect}")
    out = input.clone()
    out[key] = _C._astype(src, input.dtype, False)
    return out


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """input with input.select(dim, index) replaced by src."""
    d = _dim_index("select_scatter", dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select_scatter: index {index} out of range for dimension {dim} of size {n}")
    key = (slice(None),) * d + (index,)
    return _scatter_into(input, key, src, "select_scatter", tuple(input[key].shape))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: Optional[int] = None,
                  end: Optional[int] = None, step: int = 1) -> Tensor:
    """input with input[..., start:end:step, ...] (at dim) replaced by src."""
    d = _dim_index("slice_scatter", dim, input.ndim)
    key = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into(input, key, src, "slice_scatter", tuple(input[key].shape))


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """input with its diagonal (offset, dim1, dim2) replaced by src."""
    from ._manipulation import diagonal
    out = input.clone()
    view = diagonal(out, offset, dim1, dim2)
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(f"diagonal_scatter: expected src to have a size equal to the diagonal "
                           f"of self, src size = {tuple(src.shape)}, diagonal size = "
                           f"{tuple(view.shape)}")
    view[...] = _C._astype(src, input.dtype, False)
    return out


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: builtins.bool = False) -> Tensor:
    """input (seen flattened) with input.flatten()[index] = source (or += with accumulate)."""
    from ._indexing import index_put
    if index.size != source.size:
        raise RuntimeError(f"put: expected source and index to have the same number of elements, "
                           f"but got {source.size} and {index.size}")
    if input.size == 0 and index.size:
        raise IndexError("put: cannot put into an empty tensor")
    n = input.size
    flat_idx = _C._reshape(index, (-1,), -1)
    if flat_idx.size and (builtins.bool(_ts().any(flat_idx >= n)) or builtins.bool(_ts().any(flat_idx < -n))):
        raise IndexError(f"put: index out of range for a tensor of {n} elements")
    flat = index_put(_C._reshape(input, (-1,), -1), (flat_idx,), _C._reshape(source, (-1,), -1),
                     accumulate)
    return _C._reshape(flat, tuple(input.shape), -1)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """input where |input| > lambd, else 0."""
    return _C.where(_C.abs(input) > lambd, input, 0)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x), weight per channel (dim 1) or one value."""
    w = weight
    if weight.size > 1:
        if input.ndim < 2 or input.shape[1] != weight.size:
            raise RuntimeError(f"prelu: mismatch of parameter numbers and input channel size: "
                               f"{weight.size} weights for input {tuple(input.shape)}")
        w = _C._reshape(weight, (1, weight.size) + (1,) * (input.ndim - 2), -1)
    return _C.where(input >= 0, input, w * input)


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


_MVLGAMMA_MAX_P = 1 << 16


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma of dimension p: sum_i lgamma(x - i/2) + p(p-1)/4 log(pi)
    (defined for x > (p - 1) / 2; elsewhere the formula's value, as torch gives)."""
    from .special import lgamma
    if isinstance(p, bool) or not hasattr(p, "__index__"):
        raise TypeError(f"mvlgamma: p must be an int, got {type(p).__name__}")
    p = p.__index__()
    if p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    if p > _MVLGAMMA_MAX_P:  # one lgamma pass per term: a huge p would run for ages
        raise ValueError(f"mvlgamma: p={p} is too large (at most {_MVLGAMMA_MAX_P} terms)")
    out = lgamma(input)
    for i in range(1, p):
        out = out + lgamma(input - i / 2)
    return out + p * (p - 1) / 4 * math.log(math.pi)


_BERNOULLI_2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


_POLYGAMMA_MAX_N = 170  # the largest n whose n! is a finite float64


def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of digamma: (-1)**(n+1) n! zeta(n + 1, x) for n >= 1 (float64
    series: the recurrence shifts x by 12, then Euler-Maclaurin)."""
    from .special import _as_float64, digamma
    from ._arg_errors import int_arg
    n = int_arg("polygamma", "n", n)
    if n < 0:
        raise RuntimeError(f"polygamma: does not support negative n, got {n}")
    if n == 0:
        return digamma(input)
    x, dt = _as_float64(input)
    if n > _POLYGAMMA_MAX_N:  # n! overflows float64: +-inf everywhere, as torch gives
        inf = math.inf if n % 2 else -math.inf
        return _C._astype(_C.where(x == x, inf, x), dt, True)
    s = n + 1
    shift = 12
    acc = x * 0
    for k in range(shift):
        acc = acc + _C.pow(x + k, -float(s))
    z = x + shift
    tail = _C.pow(z, 1.0 - s) / (s - 1) + 0.5 * _C.pow(z, -float(s))
    rising = float(s)  # (s)_(2k-1): s (s+1) ... (s + 2k - 2)
    fact = 2.0         # (2k)!
    for k, b in enumerate(_BERNOULLI_2K, start=1):
        tail = tail + b / fact * rising * _C.pow(z, -float(s + 2 * k - 1))
        rising *= (s + 2 * k - 1) * (s + 2 * k)
        fact *= (2 * k + 1) * (2 * k + 2)
    out = (acc + tail) * ((-1.0) ** (n + 1) * math.factorial(n))
    pole = (x <= 0) & (_C.floor(x) == x)
    return _C._astype(_C.where(pole, -math.inf if n % 2 == 0 else math.inf, out), dt, True)


from .linalg import matrix_exp  # noqa: E402  (torch.matrix_exp is linalg's)


def cholesky_inverse(input: Tensor, upper: builtins.bool = False) -> Tensor:
    """The inverse of A = L L^H (or U^H U with upper=True) from its Cholesky factor."""
    a = _C.matmul(_C.conj(input).mT, input) if upper else _C.matmul(input, _C.conj(input).mT)
    return _ts().linalg.inv(a)


def cholesky_solve(input: Tensor, input2: Tensor, upper: builtins.bool = False) -> Tensor:
    """X with A X = input where A = L L^H (L = input2; U^H U with upper=True)."""
    u = input2
    a = _C.matmul(_C.conj(u).mT, u) if upper else _C.matmul(u, _C.conj(u).mT)
    return _ts().linalg.solve(a, input)


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


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A copy of input.narrow(dim, start, length)."""
    from ._manipulation import narrow
    return narrow(input, dim, start, length).clone()


def _nonzero_static(self: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """nonzero() as (size, ndim) int64: truncated or padded with fill_value."""
    nz = _ts().argwhere(self)
    k = nz.shape[0]
    if k >= size:
        return nz[:size]
    pad = _ts().full((size - k, self.ndim), fill_value, dtype=_C.int64, device=self.device)
    return _ts().concat([nz, pad], axis=0)


def _dim_order(self: Tensor) -> tuple:
    """The dims from outermost to innermost in memory (by decreasing stride, stable)."""
    st = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda d: -st[d]))


def _is_set_to(self: Tensor, other: Tensor) -> builtins.bool:
    """Same storage, offset, shape and strides."""
    return (self._storage_ptr() == other._storage_ptr() and self._offset == other._offset and
            tuple(self.shape) == tuple(other.shape) and self.stride() == other.stride())


def _unsafe(fn_name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, fn_name)(*args, **kwargs)
    method.__name__ = "unsafe_" + fn_name
    method.__doc__ = f"Same as {fn_name} (tessera's pieces are ordinary views)."
    return method


METHODS = {
    "as_strided": as_strided, "select_scatter": select_scatter, "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter, "put": put, "hardshrink": hardshrink, "prelu": prelu,
    "renorm": renorm, "mvlgamma": mvlgamma, "polygamma": lambda self, n: polygamma(n, self),
    "matrix_exp": matrix_exp, "cholesky_inverse": cholesky_inverse,
    "cholesky_solve": cholesky_solve, "histogram": histogram, "narrow_copy": narrow_copy,
    "nonzero_static": _nonzero_static, "dim_order": _dim_order, "is_set_to": _is_set_to,
    "const_data_ptr": lambda self: self.data_ptr(), "is_distributed": lambda self: False,
    "unsafe_split": _unsafe("split"), "unsafe_chunk": _unsafe("chunk"),
    "unsafe_split_with_sizes": _unsafe("split_with_sizes"),
}
INPLACE = ["put", "renorm", "mvlgamma", "polygamma"]

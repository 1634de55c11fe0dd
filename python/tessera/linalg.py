"""The array API linear algebra extension (``ts.linalg``), NumPy-compatible results.

Factorizations (cholesky, det, slogdet, eigh, eigvalsh, inv, solve, qr, svd, svdvals) run
LAPACK in C++ (csrc/ops/linalg_ext.cpp); the other functions are compositions of
differentiable tessera ops. Inputs are (..., M, N) stacks of matrices; floating and complex
dtypes only (float16/bfloat16 compute in float32). Singular or non-positive-definite inputs
raise :class:`LinAlgError`, a ``ValueError`` and ``RuntimeError`` subclass.
"""
from __future__ import annotations

import builtins
import math
from typing import Any, NamedTuple, Optional, Tuple, Union

from . import _C
from ._C import Tensor, matmul
from ._linalg_core import matrix_transpose, tensordot, vecdot
from ._statistical import _UNSET, _axis, _keep
from .amp import _policy as _amp
from .autograd.function import Function, FunctionCtx

__all__ = ["LinAlgError", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm"]

LinAlgError = _C.LinAlgError
LinAlgError.__module__ = "tessera.linalg"
LinAlgError.__doc__ = ("Singular, not positive-definite or non-converging input (a ValueError "
                       "as NumPy's, and a RuntimeError as torch's).")


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


def _ns() -> Any:
    """The tessera namespace (imported lazily: this module is loaded while it is built)."""
    import sys
    return sys.modules[__package__]


def _arr(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    from ._creation import asarray
    return asarray(x)


def _inexact(x: Any, op: str) -> Tensor:
    x = _arr(x)
    from ._dtypes import isdtype
    if not isdtype(x.dtype, ("real floating", "complex floating")):
        raise TypeError(f"{op}: expected a floating-point or complex input, got {x.dtype}; "
                        "hint: cast first, e.g. x.astype(ts.float64)")
    return x


def _matrices(x: Tensor, op: str) -> None:
    if x.ndim < 2:
        raise ValueError(f"{op}: expected a (stack of) matrices with at least 2 dims, "
                         f"got shape {tuple(x.shape)}")


def cholesky(x: Tensor, /, *, upper: bool = False) -> Tensor:
    """Cholesky factor of Hermitian positive-definite (..., M, M) matrices: lower L with
    x = L @ L^H, or upper U with x = U^H @ U. LinAlgError when not positive-definite."""
    return _C._linalg_cholesky(_arr(x), upper)


def det(x: Tensor, /) -> Tensor:
    """Determinants of (..., M, M) matrices -> shape (...)."""
    return _C._linalg_det(_arr(x))


def slogdet(x: Tensor, /) -> SlogdetResult:
    """(sign, logabsdet) of (..., M, M) matrices; sign 0 and logabsdet -inf when singular.
    For complex input sign has modulus 1 (or 0)."""
    return SlogdetResult(*_C._linalg_slogdet(_arr(x)))


def eigh(x: Tensor, /) -> EighResult:
    """Eigenvalues (ascending, real) and eigenvectors (columns) of Hermitian (..., M, M)
    matrices; only the lower triangle is read."""
    return EighResult(*_C._linalg_eigh(_arr(x)))


def eigvalsh(x: Tensor, /) -> Tensor:
    """Eigenvalues (ascending, real) of Hermitian (..., M, M) matrices -> (..., M)."""
    return _C._linalg_eigvalsh(_arr(x))


def inv(x: Tensor, /) -> Tensor:
    """Inverses of (..., M, M) matrices; LinAlgError when singular."""
    return _C._linalg_inv(_arr(x))


def solve(x1: Tensor, x2: Tensor, /) -> Tensor:
    """Solves x1 @ out = x2. x1: (..., M, M); x2: (..., M, K) stacks (batch dims broadcast),
    or a vector (M,) only when x2 is 1-D (the 2024.12 standard's rule).

    PyTorch's batch of vectors, x2 of shape x1.shape[:-1], is taken where the standard's
    reading of x2 as (..., M, K) matrices cannot hold (x2.shape[-2] != M)."""
    x1, x2 = _arr(x1), _arr(x2)
    if (x2.ndim >= 2 and x1.ndim == x2.ndim + 1 and tuple(x2.shape) == tuple(x1.shape[:-1])
            and x2.shape[-2] != x1.shape[-1]):
        return _C._linalg_solve(x1, _ns().expand_dims(x2, axis=-1))[..., 0]
    return _C._linalg_solve(x1, x2)


def qr(x: Tensor, /, *, mode: str = "reduced") -> QRResult:
    """QR of (..., M, N): 'reduced' gives Q (..., M, K), R (..., K, N) with K = min(M, N);
    'complete' gives Q (..., M, M), R (..., M, N)."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*_C._linalg_qr(_arr(x), mode == "complete"))


def svd(x: Tensor, /, *, full_matrices: bool = True) -> SVDResult:
    """x = U @ diag(S) @ Vh for (..., M, N): S (..., K) descending, K = min(M, N); U is
    (..., M, M) and Vh (..., N, N) when full_matrices, else (..., M, K) and (..., K, N)."""
    return SVDResult(*_C._linalg_svd(_arr(x), full_matrices))


def svdvals(x: Tensor, /) -> Tensor:
    """Singular values (descending) of (..., M, N) -> (..., min(M, N))."""
    return _C._linalg_svdvals(_arr(x))


def diagonal(x: Tensor, /, *, offset: int = 0) -> Tensor:
    """The offset-th diagonal of each matrix of (..., M, N) as a view of shape (..., K)."""
    x = _arr(x)
    _matrices(x, "diagonal")
    return _C._diagonal(x, offset, -2, -1)


def trace(x: Tensor, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    """Sum of the offset-th diagonal of each matrix of (..., M, N) -> (...)."""
    F = _ns()
    return F.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def outer(x1: Tensor, x2: Tensor, /) -> Tensor:
    """Outer product of 1-D x1 (M,) and x2 (N,) -> (M, N)."""
    x1, x2 = _arr(x1), _arr(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer: expected 1-D inputs, got shapes {tuple(x1.shape)} and "
                         f"{tuple(x2.shape)}")
    F = _ns()
    return F.multiply(F.expand_dims(x1, axis=1), F.expand_dims(x2, axis=0))


def cross(x1: Tensor, x2: Tensor, /, *, axis: int = -1, dim: Any = _UNSET) -> Tensor:
    """Cross product of 3-element vectors along `axis` (PyTorch: `dim`); other dims
    broadcast."""
    if dim is not _UNSET:
        axis = dim
    x1, x2 = _arr(x1), _arr(x2)
    F = _ns()
    nd = builtins.max(x1.ndim, x2.ndim)
    if not -nd <= axis < nd:
        raise IndexError(f"cross: axis {axis} is out of range for shapes {tuple(x1.shape)} "
                         f"and {tuple(x2.shape)}")
    ax = axis if axis < 0 else axis - nd  # counted from the end, as broadcasting aligns
    for x in (x1, x2):
        if x.ndim < -ax or x.shape[ax] != 3:
            raise ValueError(f"cross: expected size 3 along axis {axis}, got shapes "
                             f"{tuple(x1.shape)} and {tuple(x2.shape)}")
    a = F.moveaxis(x1, ax, -1)
    b = F.moveaxis(x2, ax, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    c = F.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return F.moveaxis(c, -1, ax)


def matrix_power(x: Tensor, n: int, /) -> Tensor:
    """x @ x @ ... (n times) for square (..., M, M); n = 0 gives identities and n < 0 powers
    of the inverse."""
    x = _arr(x)
    F = _ns()
    if isinstance(n, builtins.bool) or not hasattr(n, "__index__"):
        raise TypeError(f"matrix_power: n must be an integer, got {type(n).__name__}")
    n = n.__index__()
    _matrices(x, "matrix_power")
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"matrix_power: expected square matrices, got shape {tuple(x.shape)}")
    if n == 0:
        eye = F.eye(x.shape[-1], dtype=x.dtype)
        return F.broadcast_to(eye, tuple(x.shape)).astype(x.dtype, copy=True)
    if n < 0:
        x, n = inv(x), -n
    result = None
    base = x
    while n:  # binary exponentiation: O(log n) products
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def _real_dtype(x: Tensor) -> Any:
    from ._dtypes import complex64, complex128, float32, float64
    return {complex64: float32, complex128: float64}.get(x.dtype, x.dtype)


def _svals_tol(s: Tensor, x: Tensor, rtol: Any, op: str) -> Tensor:
    """rtol * largest singular value, per matrix, shaped (..., 1) to compare with s."""
    F = _ns()
    if rtol is None:
        rtol = builtins.max(x.shape[-2], x.shape[-1]) * F.finfo(_real_dtype(x)).eps
    smax = F.max(s, axis=-1, keepdims=True) if s.shape[-1] > 0 else F.zeros_like(s[..., :1])
    rt = _arr(rtol)
    if rt.ndim > 0:
        rt = F.expand_dims(rt, axis=-1)
    return smax * rt


def matrix_rank(x: Tensor, /, *, rtol: Optional[Union[float, Tensor]] = None) -> Tensor:
    """Number of singular values above rtol * max singular value (default rtol:
    max(M, N) * eps) for each matrix of (..., M, N) -> int64 (...)."""
    x = _inexact(x, "matrix_rank")
    _matrices(x, "matrix_rank")
    F = _ns()
    s = svdvals(x)
    return F.count_nonzero(s > _svals_tol(s, x, rtol, "matrix_rank"), axis=-1)


def pinv(x: Tensor, /, *, rtol: Optional[Union[float, Tensor]] = None) -> Tensor:
    """Moore-Penrose pseudo-inverse of (..., M, N) -> (..., N, M) via the SVD, dropping
    singular values at or below rtol * max singular value (default rtol: max(M, N) * eps).

    Differentiable with PyTorch's formula (Note [pinv backward]), which holds where the rank
    is locally constant; rank-deficient inputs are fine, unlike differentiating through svd."""
    x = _inexact(x, "pinv")
    _matrices(x, "pinv")
    if not (x.requires_grad and _C.is_grad_enabled()):
        return _pinv_plain(x, rtol)
    from .autograd.function import Function

    class Pinv(Function):
        @staticmethod
        def forward(ctx: Any, a: Tensor) -> Tensor:
            p = _pinv_plain(a, rtol)
            ctx.save_for_backward(a, p)
            return p

        @staticmethod
        def backward(ctx: Any, g: Tensor) -> Tensor:
            a, p = ctx.saved_tensors
            return _pinv_grad(g, p, a)

    return Pinv.apply(x)


def _pinv_plain(x: Tensor, rtol: Any) -> Tensor:
    F = _ns()
    u, s, vh = svd(x, full_matrices=False)
    keep = s > _svals_tol(s, x, rtol, "pinv")
    s_inv = F.where(keep, 1 / F.where(keep, s, F.ones_like(s)), F.zeros_like(s))
    uh = F.conj(matrix_transpose(u))
    v = F.conj(matrix_transpose(vh))
    return matmul(v * F.expand_dims(s_inv.astype(x.dtype), axis=-2), uh)


def _mh(t: Tensor) -> Tensor:
    return _ns().conj(matrix_transpose(t))


# Note [pinv backward]: PyTorch's pinv_backward (Golub & Pereyra's derivative of the
# pseudo-inverse for constant rank), arranged so the largest intermediate is min(M, N) square.
def _pinv_grad(g: Tensor, p: Tensor, a: Tensor) -> Tensor:
    m, n = a.shape[-2], a.shape[-1]
    ph, gh = _mh(p), _mh(g)
    if m <= n:
        k = matmul(gh, p)
        kph = matmul(k, ph)
        return (-_mh(matmul(p, k)) + kph - matmul(matmul(a, p), kph)
                + matmul(matmul(ph, p), gh - matmul(k, a)))
    k = matmul(p, gh)
    phk = matmul(ph, k)
    return (-_mh(matmul(k, p)) + matmul(matmul(gh - matmul(a, k), p), ph) + phk
            - matmul(matmul(phk, p), a))


def _axes_tuple(axis: Any) -> Optional[Tuple[int, ...]]:
    if axis is None:
        return None
    if isinstance(axis, int):
        return (axis,)
    return tuple(axis)


def _nonneg_max(a: Tensor, axis: Any, keepdims: bool) -> Tensor:
    """max of non-negative values that is 0 over an empty reduction (NumPy's norms: the
    largest of no magnitudes is 0), instead of max's error."""
    F = _ns()
    axes = range(a.ndim) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    if builtins.any(a.shape[ax] == 0 for ax in axes):
        return F.sum(F.zeros_like(a), axis=axis, keepdims=keepdims)
    return F.max(a, axis=axis, keepdims=keepdims)


def vector_norm(x: Tensor, /, *, axis: Optional[Union[int, Tuple[int, ...]]] = None,
                keepdims: bool = False, ord: Union[int, float] = 2, dim: Any = _UNSET,
                keepdim: Any = _UNSET) -> Tensor:
    """p-norm over `axis` (all axes when None): ord 2 (default), 1, inf (max |x|), -inf
    (min |x|), 0 (count of nonzeros), or any p (sum |x|^p)^(1/p). Real dtype out. PyTorch's
    dim=/keepdim= are accepted as aliases."""
    x = _amp.cast(_amp.FP32_CUDA, x)
    x = _inexact(x, "vector_norm")
    F = _ns()
    axes = _axes_tuple(_axis("vector_norm", axis, dim))
    keepdims = _keep("vector_norm", keepdims, keepdim)
    a = F.abs(x)
    if ord in (math.inf, -math.inf):
        if x.dtype in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
            return _InfNorm.apply(x, axes, keepdims, ord > 0)
        if ord == math.inf:
            return _nonneg_max(a, axes, keepdims)
        return F.min(a, axis=axes, keepdims=keepdims)
    if ord == 0:
        return F.count_nonzero(a, axis=axes, keepdims=keepdims).astype(a.dtype)
    if ord == 1:
        return F.sum(a, axis=axes, keepdims=keepdims)
    # Note [norm gradient at 0]: torch's norm_backward gives 0 (not 0 * inf = NaN) where the
    # norm is 0, and for p < 1 where an element is 0. The root (and for p < 1 the power) is
    # taken of a where-guarded argument and the exact result is selected by a where, so those
    # points get zero first and second derivatives while the values stay bit-identical.
    if ord == 2:
        s = F.sum(a * a, axis=axes, keepdims=keepdims)
        zero = s == 0
        return F.where(zero, 0, F.sqrt(F.where(zero, 1, s)))
    if isinstance(ord, builtins.bool) or not isinstance(ord, (int, float)):
        raise ValueError(f"vector_norm: ord must be a number, got {ord!r}")
    if ord < 1:  # a ** ord has an infinite slope (ord > 0) or a pole (ord < 0) at a == 0
        nil = a == 0
        ap = F.where(nil, 0 if ord > 0 else math.inf, F.where(nil, 1, a) ** ord)
    else:
        ap = a ** ord
    s = F.sum(ap, axis=axes, keepdims=keepdims)
    if ord < 0:  # s is never 0 (bar empty reductions); 0 ** (1/ord) would be inf anyway
        return s ** (1.0 / ord)
    zero = s == 0
    return F.where(zero, 0, F.where(zero, 1, s) ** (1.0 / ord))


def _restore_dims(t: Tensor, axes: Optional[Tuple[int, ...]], ndim: int, keepdims: bool) -> Tensor:
    """A reduction's result with its reduced axes put back as size 1 (keepdims shape)."""
    if keepdims or axes is None:
        return t  # (a 0-d result broadcasts as it is)
    for ax in sorted(ax % ndim for ax in axes):
        t = _ns().expand_dims(t, axis=ax)
    return t


class _InfNorm(Function):
    """max (inf) / min (-inf) of |x| over axes; torch's norm_backward for p = +-inf: the
    gradient is shared evenly by the elements whose |x| equals the norm (or is NaN), times
    sgn(x)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor, axes: Any, keepdims: bool,  # type: ignore[override]
                largest: bool) -> Tensor:
        F = _ns()
        a = F.abs(x)
        out = _nonneg_max(a, axes, keepdims) if largest else F.min(a, axis=axes, keepdims=keepdims)
        ctx.save_for_backward(x, out)
        ctx.axes, ctx.keepdims = axes, keepdims
        return out

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Tensor:  # type: ignore[override]
        F = _ns()
        x, out = ctx.saved_tensors
        out = _restore_dims(out, ctx.axes, x.ndim, ctx.keepdims)
        g = _restore_dims(g, ctx.axes, x.ndim, ctx.keepdims)
        a = F.abs(x)
        mask = ((a == out) | F.isnan(a)).astype(g.dtype)
        count = F.sum(mask, axis=ctx.axes, keepdims=True)
        sgn = F.where(F.isnan(x), 0, F.sign(x))  # torch's sgn: 0 at NaN
        return sgn * ((g / count) * mask), None, None, None


def matrix_norm(x: Tensor, /, *, keepdims: bool = False,
                ord: Optional[Union[int, float, str]] = "fro") -> Tensor:
    """Norms of the matrices of (..., M, N): 'fro', 'nuc' (sum of singular values), 2 / -2
    (largest / smallest singular value), 1 / -1 (max / min column abs sum), inf / -inf (max /
    min row abs sum). Real dtype out, shape (...) or (..., 1, 1) with keepdims."""
    x = _amp.cast(_amp.FP32_CUDA, x)
    x = _inexact(x, "matrix_norm")
    _matrices(x, "matrix_norm")
    F = _ns()
    if ord is None or ord == "fro":
        r = vector_norm(x, axis=(-2, -1))
    elif ord == "nuc":
        r = F.sum(svdvals(x), axis=-1)
    elif ord in (2, -2):
        s = svdvals(x)
        r = _nonneg_max(s, -1, False) if ord == 2 else F.min(s, axis=-1)
    elif ord in (1, -1, math.inf, -math.inf):
        sums = F.sum(F.abs(x), axis=-2 if ord in (1, -1) else -1)
        r = _nonneg_max(sums, -1, False) if ord > 0 else F.min(sums, axis=-1)
    else:
        raise ValueError(f"matrix_norm: invalid ord {ord!r}; expected 'fro', 'nuc', 1, -1, 2, "
                         "-2, inf or -inf")
    if keepdims:
        r = F.expand_dims(F.expand_dims(r, axis=-1), axis=-1)
    return r

"""The array API linear algebra extension (``ts.linalg``), NumPy-compatible results.

Factorizations (cholesky, det, slogdet, eigh, eigvalsh, inv, solve, qr, svd, svdvals) run
LAPACK in C++ (csrc/ops/linalg_ext.cpp); the other functions are compositions of
differentiable tessera ops. Inputs are (..., M, N) stacks of matrices; floating and complex
dtypes only (float16/bfloat16 compute in float32). Singular or non-positive-definite inputs
raise :class:`LinAlgError`, a ``ValueError`` and ``RuntimeError`` subclass.
"""
from __future__ import annotations

import functools
import math
import sys
from collections import namedtuple
from typing import Any, Callable, Tuple

from . import _C
from ._C import Tensor, matmul
from ._C._linalg import (EighResult, QRResult, SlogdetResult, SVDResult, cholesky,
                         cholesky_ex, cross, det, diagonal, eigh, eigvalsh, inv, inv_ex, lstsq,
                         matrix_exp, matrix_norm, matrix_power, matrix_rank, multi_dot, norm,
                         outer, pinv, qr, slogdet, solve, solve_ex, svd, svdvals, tensorinv,
                         tensorsolve, trace, vander, vector_norm)
from ._linalg_core import matrix_transpose, tensordot, vecdot

__all__ = ["LinAlgError", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm", "norm", "lstsq", "inv_ex", "cholesky_ex", "solve_ex", "multi_dot",
           "tensorinv", "tensorsolve", "matrix_exp", "vander"]

LinAlgError = _C.LinAlgError
LinAlgError.__module__ = "tessera.linalg"
LinAlgError.__doc__ = ("Singular, not positive-definite or non-converging input (a ValueError "
                       "as NumPy's, and a RuntimeError as torch's).")


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


# ---- torch.linalg beyond the standard (Note [linalg torch forms] below)
def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """Solves A X = B (or X A = B when not `left`) reading only A's upper / lower triangle
    (its diagonal taken as ones when `unitriangular`)."""
    ts = _ns()
    if A.ndim < 2 or B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor A must have at least 2 "
                           "dimensions.")
    T = ts.triu(A) if upper else ts.tril(A)
    if unitriangular:
        n = A.shape[-1]
        eye = ts.eye(n, dtype=A.dtype, device=A.device)
        T = T * (1 - eye) + eye
    if not left:
        return solve_triangular(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    try:
        return ts.linalg.solve(T, B)
    except ts.linalg.LinAlgError:  # a zero on the diagonal: substitution gives torch's inf/nan
        return _substitute(T, B, upper)


def _substitute(T: Tensor, B: Tensor, upper: bool) -> Tensor:
    """X with T X = B by forward / back substitution (no singularity check, as BLAS trsm:
    a zero pivot gives inf / nan); differentiable."""
    ts = _ns()
    n = T.shape[-1]
    xs: list = [None] * n
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        acc = B[..., i, :]
        for j in (range(i + 1, n) if upper else range(i)):
            acc = acc - T[..., i, j:j + 1] * xs[j]
        xs[i] = acc / T[..., i, i:i + 1]
    if n == 0:
        return ts.linalg.solve(T, B)
    return ts.stack(xs, axis=-2)


def _real_of(dtype: Any) -> Any:
    ts = _ns()
    return {ts.complex64: ts.float32, ts.complex128: ts.float64}.get(dtype, dtype)


def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number: sigma_max / sigma_min for p in (None, 2, -2 inverted), else
    norm(A, p) * norm(inv(A), p)."""
    ts = _ns()
    if A.ndim < 2:
        raise RuntimeError(f"linalg.cond: The input tensor A must have at least 2 dimensions.")
    empty = A.shape[-1] == 0 or A.shape[-2] == 0
    if p in (None, 2, -2):
        if empty:
            return ts.zeros(tuple(A.shape[:-2]), dtype=_real_of(A.dtype), device=A.device)
        s = ts.linalg.svdvals(A)
        hi, lo = s[..., 0], s[..., -1]
        return hi / lo if p != -2 else lo / hi
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but "
                           f"they are {A.shape[-2]} by {A.shape[-1]} matrices")
    if empty:
        return ts.zeros(tuple(A.shape[:-2]), dtype=_real_of(A.dtype), device=A.device)
    inverse, info = inv_ex(A)
    bad = info != 0
    if not bool(ts.any(bad)):
        return matrix_norm(A, p) * matrix_norm(inverse, p)
    # singular matrices have an infinite condition number (their inverse taken as identities)
    inverse = ts.where(bad[..., None, None], ts.eye(A.shape[-1], dtype=A.dtype, device=A.device),
                       inverse)
    na = matrix_norm(A, p)
    r = na * matrix_norm(inverse, p)
    # torch fills the failed inverses with inf: its nuclear norm of 0 * that is NaN
    worst = ts.where(na == 0, math.nan, math.inf) if p == "nuc" else math.inf
    return ts.where(bad, worst, r)


# ----------------------------------------------------------------------------- LU
_LUFactor = namedtuple("lu_factor", ["LU", "pivots"])
_LUFactorEx = namedtuple("lu_factor_ex", ["LU", "pivots", "info"])
_PLU = namedtuple("lu", ["P", "L", "U"])


def _getrf(a: Any) -> Tuple[Any, Any, Any]:
    """LAPACK getrf (partial pivoting) on a (B, m, n) NumPy array: (LU, 1-based pivots
    int32 (B, k), info int32 (B,))."""
    import numpy as np
    A = np.array(a, copy=True)
    nb, m, n = A.shape
    k = min(m, n)
    piv = np.zeros((nb, k), np.int32)
    info = np.zeros(nb, np.int32)
    rows = np.arange(nb)
    for j in range(k):
        p = j + np.argmax(np.abs(A[:, j:, j]), axis=1)
        piv[:, j] = p + 1
        top = A[rows, j, :].copy()
        A[rows, j, :] = A[rows, p, :]
        A[rows, p, :] = top
        d = A[:, j, j]
        zero = d == 0
        info = np.where(zero & (info == 0), j + 1, info).astype(np.int32)
        safe = np.where(zero, 1, d)
        A[:, j + 1:, j] = np.where(zero[:, None], A[:, j + 1:, j], A[:, j + 1:, j] / safe[:, None])
        A[:, j + 1:, j + 1:] -= A[:, j + 1:, j:j + 1] * A[:, j:j + 1, j + 1:]
    return A, piv, info


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> Any:
    """(LU, pivots, info) of (..., m, n) matrices with partial pivoting, LAPACK's layout:
    L (unit diagonal) below and U on/above the diagonal of LU, 1-based int32 pivots. Values
    only (not differentiable in tessera)."""
    ts = _ns()
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU.")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.lu_factor: The input tensor A must have at least 2 "
                           f"dimensions.")
    batch = tuple(A.shape[:-2])
    m, n = A.shape[-2], A.shape[-1]
    lu, piv, info = _getrf(A.detach().cpu().numpy().reshape((math.prod(batch), m, n)))
    out = ts.asarray(lu.reshape(batch + (m, n)), device=A.device)
    pv = ts.asarray(piv.reshape(batch + (min(m, n),)), device=A.device)
    inf = ts.asarray(info.reshape(batch), device=A.device)
    if check_errors and bool((inf != 0).any()):
        i = int(info.max())
        raise ts.linalg.LinAlgError(f"linalg.lu_factor_ex: U[{i},{i}] is zero, singular U.")
    return _LUFactorEx(out, pv, inf)


def lu_factor(A: Tensor, *, pivot: bool = True) -> Any:
    """(LU, pivots) of lu_factor_ex; raises for singular input as torch does."""
    ts = _ns()
    r = lu_factor_ex(A, pivot=pivot)
    if bool((r.info != 0).any()):
        i = int(r.info.max())
        raise ts.linalg.LinAlgError(f"torch.linalg.lu_factor: U[{i},{i}] is zero and using it "
                                    f"on lu_solve would result in a division by zero.")
    return _LUFactor(r.LU, r.pivots)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> Any:
    """(P, L, U) with A = P @ L @ U from lu_factor's output."""
    import numpy as np
    ts = _ns()
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    L = U = P = ts.empty((0,), dtype=LU_data.dtype)
    if unpack_data:
        eye = ts.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        L = ts.tril(LU_data[..., :, :k], k=-1) + eye
        U = ts.triu(LU_data[..., :k, :])
    if unpack_pivots:
        piv = LU_pivots.cpu().numpy().reshape((math.prod(tuple(LU_pivots.shape[:-1])),
                                               LU_pivots.shape[-1])).astype(np.int64) - 1
        perms = np.tile(np.arange(m), (piv.shape[0], 1))
        for j in range(piv.shape[1]):
            rows = np.arange(piv.shape[0])
            a, b = perms[rows, j].copy(), perms[rows, piv[:, j]].copy()
            perms[rows, j], perms[rows, piv[:, j]] = b, a
        mats = np.zeros((piv.shape[0], m, m))
        for r in range(piv.shape[0]):
            mats[r, perms[r], np.arange(m)] = 1
        P = ts.asarray(mats.reshape(tuple(LU_pivots.shape[:-1]) + (m, m)),
                       dtype=LU_data.dtype, device=LU_data.device)
    return _PLU(P, L, U)


def linalg_lu(A: Tensor, *, pivot: bool = True) -> Any:
    """(P, L, U) with A = P @ L @ U (singular A included, as torch)."""
    r = lu_factor_ex(A, pivot=pivot)
    return lu_unpack(r.LU, r.pivots)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False) -> Tensor:
    """Solves A X = B (X A = B when not `left`; with A^H when `adjoint`) from A's LU factors
    (differentiable in B)."""
    ts = _ns()
    P, L, U = lu_unpack(LU, pivots)
    A = ts.matmul(ts.matmul(P, L), U)
    if adjoint:
        A = A.mH
    if left:
        return ts.linalg.solve(A, B)
    return ts.linalg.solve(A.mT, B.mT).mT


def _tensor_lu(self: Tensor, pivot: bool = True, get_infos: bool = False) -> Any:
    r = lu_factor_ex(self, pivot=pivot)
    return (r.LU, r.pivots, r.info) if get_infos else (r.LU, r.pivots)


def _legacy_lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """Deprecated torch.lu_solve(b, LU_data, LU_pivots)."""
    return lu_solve(LU_data, LU_pivots, b)


# ----------------------------------------------------------------------------- linalg torch forms
# Note [linalg torch forms]: ts.linalg's functions are the array API standard's, whose
# signatures take the matrices positionally only and a few options by keyword. torch's
# linalg names its arguments (A=, B=, input=, x=, y=, other=) and takes more options, some
# positionally (vector_norm(x, ord, dim, keepdim), pinv(A, rcond, hermitian), qr(A, mode),
# eigh(A, UPLO), svd(A, full_matrices)). Both forms are parsed once, by one signature per
# function in the C++ bindings (csrc/python/bind_linalg.cpp, bind_linalg_decomp.cpp): the
# standard's positional-only matrices and keywords keep their meaning, torch's names and
# options are added beside them. The functions still written here take torch's keyword aliases
# through _aliases.

def _aliases(fn: Callable[..., Any], names: dict) -> Callable[..., Any]:
    """fn that also takes torch's other keyword names of its arguments (input= for A=...)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for alias, name in names.items():
            if alias in kwargs:
                if name in kwargs:
                    raise TypeError(f"{fn.__name__}() got multiple values for argument "
                                    f"'{name}'")
                kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    return wrapper


def _torch_linalg() -> None:
    """Gives the standard functions torch's call forms and adds torch's other functions (with
    its keyword aliases) to this module's namespace."""
    g = globals()
    a_in, ab = {"input": "A"}, {"input": "A", "b": "B", "other": "B"}
    extras = {"solve_triangular": solve_triangular, "cond": cond,
              "lu_factor": lu_factor,
              "lu_factor_ex": lu_factor_ex, "lu": linalg_lu, "lu_solve": lu_solve}
    for name, names in (("cond", a_in),
                        ("solve_triangular", ab),
                        ("lu_factor", a_in), ("lu_factor_ex", a_in), ("lu", a_in)):
        extras[name] = _aliases(extras[name], names)
    g.update(extras)
    __all__.extend(n for n in extras if n not in __all__)


_torch_linalg()


from ._arg_errors import guarded as _guarded  # noqa: E402

globals().update(_guarded(globals()))  # non-tensor arguments raise TypeError naming the op

"""The linear algebra core of the namespace: the array API's matmul, tensordot, vecdot,
matrix_transpose, PyTorch's matrix products (mm, bmm, mv, dot, vdot, inner, outer/ger, addmm,
addmv, addr, baddbmm, addbmm, kron, cdist, chain_matmul) and its spellings over the linalg ops
(det, logdet, inverse, pinverse, matrix_power, cholesky*, the legacy svd/qr/slogdet). Those are
C++ bindings (csrc/python/bind_matmul.cpp), named here once; x.mm, x.det, ... are the same
functions. cross, vander and triangular_solve are still Python."""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Optional, Tuple

from . import _C
from ._C import Tensor

__all__ = ["tensordot", "vecdot", "matrix_transpose"]
_TORCH_NAMES = ["mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr",
                "baddbmm", "addbmm", "kron", "cdist", "chain_matmul", "det", "logdet", "inverse",
                "pinverse", "matrix_power", "cross", "cholesky_inverse", "cholesky_solve"]  # PyTorch's (the standard's are above)
__all__ += _TORCH_NAMES


# The matrix products are C++ bindings with every argument form (csrc/python/bind_matmul.cpp);
# x.mm, x.addmm, ... are the same functions (Note [One function, two spellings]).
tensordot, vecdot, matrix_transpose = _C.tensordot, _C.vecdot, _C.matrix_transpose
mm, bmm, mv, dot, vdot, inner, outer, ger = _C.mm, _C.bmm, _C.mv, _C.dot, _C.vdot, _C.inner, \
    _C.outer, _C.ger
addmm, addmv, addr, baddbmm, addbmm = _C.addmm, _C.addmv, _C.addr, _C.baddbmm, _C.addbmm
kron, cdist, chain_matmul = _C.kron, _C.cdist, _C.chain_matmul


# PyTorch's spellings over the linalg ops, bound in C++ too (def_torch_linalg there).
det, logdet, inverse, slogdet, pinverse = _C.det, _C.logdet, _C.inverse, _C.slogdet, _C.pinverse
matrix_power, cholesky, cholesky_inverse, cholesky_solve = _C.matrix_power, _C.cholesky, \
    _C.cholesky_inverse, _C.cholesky_solve
svd, qr = _C.svd, _C.qr


def _ts() -> Any:
    import tessera
    return tessera


def cross(input: Tensor, other: Tensor, dim: Any = None) -> Tensor:
    """Cross product of 3-vectors along `dim` (the first dim of size 3 when None)."""
    if dim is None:
        dims = [i for i, n in enumerate(input.shape) if n == 3]
        if not dims:
            raise RuntimeError(f"cross: no dimension of size 3 in input {tuple(input.shape)}")
        dim = dims[0]
    return _ts().linalg.cross(input, other, axis=dim)


METHODS = {
    "matmul": _C.matmul, "cross": cross,
    "triangular_solve": lambda self, A, upper=True, transpose=False, unitriangular=False: (
        _ts().triangular_solve(self, A, upper, transpose, unitriangular)),
}
# in-place twins of these are generated too (addmm_, baddbmm_, ...)
INPLACE = ["addmm", "addmv", "addr", "baddbmm", "addbmm"]


# ---- torch.vander and the deprecated triangular_solve
def vander(x: Tensor, N: Optional[int] = None, increasing: bool = False) -> Tensor:
    """The (len(x), N) Vandermonde matrix of a 1-D tensor: columns x**(N-1) ... x**0 (or
    increasing), by a cumulative product; integer and bool inputs give int64 (torch.vander).
    The output size is checked before anything is allocated."""
    ts = _ts()
    from ._arg_checks import check_output_size, int_arg
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


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Tuple[Tensor, Tensor]:
    """Deprecated torch.triangular_solve: (X with op(A) X = b, a copy of A), op(A) = A or A^T."""
    ts = _ts()
    T = A.mT if transpose else A
    x = ts.linalg.solve_triangular(T, b, upper=upper != transpose, unitriangular=unitriangular)
    return namedtuple("triangular_solve", ["solution", "cloned_coefficient"])(x, A.clone())


_TORCH_NAMES += ["vander", "svd", "qr", "cholesky", "slogdet", "triangular_solve"]
__all__ += ["vander", "svd", "qr", "cholesky", "slogdet", "triangular_solve"]

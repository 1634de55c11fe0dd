"""The linear algebra core of the namespace: the array API's matmul, tensordot, vecdot,
matrix_transpose, PyTorch's matrix products (mm, bmm, mv, dot, vdot, inner, outer/ger, addmm,
addmv, addr, baddbmm, addbmm, kron, cdist, chain_matmul) and its spellings over the linalg ops
(det, logdet, inverse, pinverse, matrix_power, cholesky*, the legacy svd/qr/slogdet). Those are
C++ bindings (csrc/python/bind_matmul.cpp), named here once; x.mm, x.det, ... are the same
functions (vander too), as are the LU family's legacy lu, lu_solve, lu_unpack and
triangular_solve (csrc/python/bind_linalg_lu.cpp), and torch.cross (x.cross;
csrc/python/bind_sets.cpp)."""
from __future__ import annotations

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
svd, qr, vander = _C.svd, _C.qr, _C.vander


cross = _C.cross  # torch's dim=None form (linalg.cross defaults to the last dim)


# torch's legacy LU spellings and triangular_solve (x.lu, x.lu_solve, x.triangular_solve too)
lu, lu_solve, lu_unpack, triangular_solve = _C.lu, _C.lu_solve, _C.lu_unpack, _C.triangular_solve


def _matmul_method(self: Tensor, other: Tensor) -> Tensor:
    """Matrix product self @ other (torch.Tensor.matmul; see ts.matmul)."""
    return _C.matmul(self, other)


METHODS = {"matmul": _matmul_method}


_TORCH_NAMES += ["vander", "svd", "qr", "cholesky", "slogdet", "triangular_solve", "lu",
                 "lu_solve", "lu_unpack"]
__all__ += ["vander", "svd", "qr", "cholesky", "slogdet", "triangular_solve", "lu", "lu_solve",
            "lu_unpack"]

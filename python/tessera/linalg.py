"""The array API linear algebra extension (``ts.linalg``), NumPy-compatible results, with
torch.linalg's functions and argument forms.

Every function is a C++ binding (csrc/python/bind_linalg*.cpp; factorizations run LAPACK in
csrc/ops/linalg_ext.cpp and linalg_lu.cpp), named here once. Inputs are (..., M, N) stacks of
matrices; floating and complex dtypes only (float16/bfloat16 compute in float32). Singular or
non-positive-definite inputs raise :class:`LinAlgError`, a ``ValueError`` and ``RuntimeError``
subclass.
"""
from __future__ import annotations

import typing as _t

from . import _C
from ._C import matmul
from ._C._linalg import (EighResult, QRResult, SlogdetResult, SVDResult, cholesky,
                         cholesky_ex, cond, cross, det, diagonal, eigh, eigvalsh, inv, inv_ex,
                         householder_product, lstsq, lu, lu_factor, lu_factor_ex, lu_solve,
                         matrix_exp, matrix_norm,
                         matrix_power, matrix_rank, multi_dot, norm, outer, pinv, qr, slogdet,
                         solve, solve_ex, solve_triangular, svd, svdvals, tensorinv, tensorsolve,
                         trace, vander, vector_norm)
from ._linalg_core import matrix_transpose, tensordot, vecdot

if _t.TYPE_CHECKING:
    from ._C import Tensor

__all__ = ["LinAlgError", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm", "norm", "lstsq", "inv_ex", "cholesky_ex", "solve_ex", "multi_dot",
           "tensorinv", "tensorsolve", "matrix_exp", "vander", "solve_triangular", "cond",
           "lu_factor", "lu_factor_ex", "lu", "lu_solve", "householder_product"]

LinAlgError = _C.LinAlgError
LinAlgError.__module__ = "tessera.linalg"
LinAlgError.__doc__ = ("Singular, not positive-definite or non-converging input (a ValueError "
                       "as NumPy's, and a RuntimeError as torch's).")


# Note [linalg torch forms]: ts.linalg's functions are the array API standard's, whose
# signatures take the matrices positionally only and a few options by keyword. torch's
# linalg names its arguments (A=, B=, input=, x=, y=, other=) and takes more options, some
# positionally (vector_norm(x, ord, dim, keepdim), pinv(A, rcond, hermitian), qr(A, mode),
# eigh(A, UPLO), svd(A, full_matrices)). Both forms are parsed once, by one signature per
# function in the C++ bindings (csrc/python/bind_linalg.cpp, bind_linalg_decomp.cpp): the
# standard's positional-only matrices and keywords keep their meaning, torch's names and
# options are added beside them (the LU family and solve_triangular: bind_linalg_lu.cpp).

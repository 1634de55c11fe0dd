"""The linear algebra core of the namespace: the array API's matmul, tensordot, vecdot,
matrix_transpose, and PyTorch's matrix products and methods (mm, bmm, mv, dot, vdot, inner,
outer/ger, addmm, addmv, addr, baddbmm, addbmm, kron, cdist, and x.det()/x.inverse()/...
over tessera.linalg). Like torch, mm/bmm/mv/dot check ranks strictly (no broadcasting) and
require both operands to have the same dtype."""
from __future__ import annotations

import builtins
from collections import namedtuple
from typing import Any, Optional, Sequence, Tuple, Union

from . import _C
from ._C import Tensor

__all__ = ["tensordot", "vecdot", "matrix_transpose"]
_TORCH_NAMES = ["mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr",
                "baddbmm", "addbmm", "kron", "cdist", "chain_matmul", "det", "logdet", "inverse",
                "pinverse", "matrix_power", "cross", "cholesky_inverse", "cholesky_solve"]  # PyTorch's (the standard's are above)
__all__ += _TORCH_NAMES


def tensordot(x1: Tensor, x2: Tensor, /, dims: Any = None, *, axes: Any = None) -> Tensor:
    """Contracts `axes` of x1 with those of x2: an int n (last n of x1 with first n of x2) or
    a pair of axis sequences (default 2). PyTorch's ``dims`` (positional or keyword, an int,
    a pair of sequences or a tensor) is the same argument."""
    if dims is not None:
        if axes is not None:
            raise TypeError("tensordot: give the contracted dims once (dims or axes)")
        axes = dims
    if axes is None:
        axes = 2
    if isinstance(axes, Tensor):
        axes = int(axes) if axes.ndim == 0 else axes.tolist()
    if isinstance(axes, int):
        return _C._tensordot_n(x1, x2, axes)
    xa, xb = axes
    if isinstance(xa, int):
        xa, xb = [xa], [xb]
    return _C._tensordot_axes(x1, x2, list(xa), list(xb))


_UNSET: Any = object()


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1, dim: Any = _UNSET) -> Tensor:
    """sum(conj(x1) * x2, axis) with broadcasting over the other dims. PyTorch's `dim=` is
    accepted too, counted in the broadcast shape (so a non-negative dim also works)."""
    if dim is not _UNSET:
        if axis != -1:
            raise TypeError("vecdot: pass either axis= or dim=, not both")
        nd = max(getattr(x1, "ndim", 0), getattr(x2, "ndim", 0))
        axis = dim - nd if isinstance(dim, int) and 0 <= dim < nd else dim
    return _C._vecdot(x1, x2, axis)


def matrix_transpose(x: Tensor, /) -> Tensor:
    """Swaps the last two axes (a view): (..., m, n) -> (..., n, m)."""
    return _C._matrix_transpose(x)


# ---- PyTorch's matrix products

def _ts() -> Any:
    import tessera
    return tessera


def _same_dtype(op: str, a: Tensor, b: Tensor) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(f"{op}: expected both operands to have the same dtype, but got "
                           f"{a.dtype} != {b.dtype}")


def _rank(op: str, x: Any, nd: int, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    if x.ndim != nd:
        raise RuntimeError(f"{op}: {name} must be a {nd}D tensor, got {x.ndim}D")


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """(n, m) @ (m, p) -> (n, p)."""
    _rank("mm", input, 2, "self"), _rank("mm", mat2, 2, "mat2")
    _same_dtype("mm", input, mat2)
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mm: mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x"
                           f"{input.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    return _C.matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """(b, n, m) @ (b, m, p) -> (b, n, p); no broadcasting of the batch."""
    _rank("bmm", input, 3, "batch1"), _rank("bmm", mat2, 3, "batch2")
    _same_dtype("bmm", input, mat2)
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"bmm: batch1 {tuple(input.shape)} and batch2 {tuple(mat2.shape)} "
                           "must agree in batch size and inner dimension")
    return _C.matmul(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """(n, m) @ (m,) -> (n,)."""
    _rank("mv", input, 2, "self"), _rank("mv", vec, 1, "vec")
    _same_dtype("mv", input, vec)
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"mv: size mismatch, got input ({input.shape[0]}x{input.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    return _C.matmul(input, vec)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """Inner product of two 1-D tensors of the same length and dtype (0-d result)."""
    _rank("dot", input, 1, "self"), _rank("dot", tensor, 1, "tensor")
    _same_dtype("dot", input, tensor)
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(f"dot: inconsistent tensor size, expected tensor [{input.shape[0]}] "
                           f"and src [{tensor.shape[0]}] to have the same number of elements")
    return _C.matmul(input, tensor)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """dot(conj(input), other) of 1-D tensors."""
    _rank("vdot", input, 1, "self"), _rank("vdot", other, 1, "other")
    return dot(_C.conj(input) if input.dtype in (_C.complex64, _C.complex128) else input, other)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum over the last dims of input and other (scalars multiply); shape
    input.shape[:-1] + other.shape[:-1]."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner: input and other last dims must match, got {input.shape[-1]} "
                           f"and {other.shape[-1]}")
    return _ts().tensordot(input, other, axes=((input.ndim - 1,), (other.ndim - 1,)))


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """(n,) x (m,) -> (n, m) with out[i, j] = input[i] * vec2[j]."""
    _rank("outer", input, 1, "self"), _rank("outer", vec2, 1, "vec2")
    return _C._reshape(input, (-1, 1), -1) * vec2


ger = outer


def _scaled(beta: Any, x: Tensor, alpha: Any, prod: Tensor) -> Tensor:
    """beta * x + alpha * prod, where beta == 0 ignores x entirely (NaN included), as in torch."""
    p = prod if alpha == 1 else alpha * prod
    if beta == 0:  # x's values (NaN included) are ignored; its gradient is zero
        return p + _C.where(False, x, 0) if isinstance(x, Tensor) and x.requires_grad else p
    return (x if beta == 1 else beta * x) + p


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2); input broadcasts to the product's shape."""
    out = _scaled(beta, input, alpha, mm(mat1, mat2))
    _check_out_shape("addmm", out, mat1.shape[0], mat2.shape[1])
    return out


def _check_out_shape(op: str, out: Tensor, *shape: int) -> None:
    if tuple(out.shape) != shape:
        raise RuntimeError(f"{op}: input of shape {tuple(out.shape)} does not broadcast to the "
                           f"product's shape {shape}")


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    out = _scaled(beta, input, alpha, mv(mat, vec))
    _check_out_shape("addmv", out, mat.shape[0])
    return out


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2)."""
    out = _scaled(beta, input, alpha, outer(vec1, vec2))
    _check_out_shape("addr", out, vec1.shape[0], vec2.shape[0])
    return out


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:
    """beta * input + alpha * bmm(batch1, batch2)."""
    out = _scaled(beta, input, alpha, bmm(batch1, batch2))
    _check_out_shape("baddbmm", out, batch1.shape[0], batch1.shape[1], batch2.shape[2])
    return out


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Tensor:
    """beta * input + alpha * sum_b (batch1[b] @ batch2[b])."""
    prods = bmm(batch1, batch2)
    integral = not _ts().isdtype(prods.dtype, ("real floating", "complex floating"))
    # an integer batch sum keeps its dtype (int32 stays int32, as in torch)
    out = _scaled(beta, input, alpha, _ts().sum(prods, axis=0, dtype=prods.dtype if integral else None))
    _check_out_shape("addbmm", out, batch1.shape[1], batch2.shape[2])
    return out


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product (ranks padded with leading 1s to match)."""
    nd = builtins.max(input.ndim, other.ndim)
    a = _C._reshape(input, (1,) * (nd - input.ndim) + tuple(input.shape), -1)
    b = _C._reshape(other, (1,) * (nd - other.ndim) + tuple(other.shape), -1)
    # a[i0, 1, i1, 1, ...] * b[1, j0, 1, j1, ...] -> merge (i_k, j_k) pairs
    ash = [s for n in a.shape for s in (n, 1)]
    bsh = [s for n in b.shape for s in (1, n)]
    prod = _C._reshape(a, tuple(ash), -1) * _C._reshape(b, tuple(bsh), -1)
    return _C._reshape(prod, tuple(m * n for m, n in zip(a.shape, b.shape)), -1)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"
          ) -> Tensor:
    """Pairwise p-norm distances between the rows of x1 (.., P, M) and x2 (.., R, M) -> (.., P, R)."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist: only supports at least 2D tensors, X1 got: {x1.ndim}D, "
                           f"X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist: only supports non-negative p values, got {p}")
    diff = _C._expand_dims(x1, -2) - _C._expand_dims(x2, -3)
    return _ts().linalg.vector_norm(diff, ord=p, axis=-1)


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of 2-D matrices, left to right."""
    if not matrices:
        raise RuntimeError("chain_matmul: expected one or more matrices")
    for i, m in enumerate(matrices):
        if not isinstance(m, Tensor) or m.ndim != 2:
            what = f"{m.ndim}-D tensor" if isinstance(m, Tensor) else type(m).__name__
            raise (ValueError if isinstance(m, Tensor) else TypeError)(
                f"chain_matmul: matrix {i} must be a 2-D tensor, got {what}")
    out = matrices[0]
    for m in matrices[1:]:
        out = mm(out, m)
    return out


def det(input: Tensor) -> Tensor:
    return _ts().linalg.det(input)


def logdet(input: Tensor) -> Tensor:
    """log(det(input)); for real input NaN where det < 0, -inf where det == 0; for complex
    input the complex log (log|det| + i arg(det); -inf + nan*i where det == 0, as torch)."""
    ts = _ts()
    sign, logabs = ts.linalg.slogdet(input)
    if ts.isdtype(sign.dtype, "complex floating"):
        out = logabs.astype(sign.dtype) + 1j * ts.angle(sign).astype(sign.dtype)
        return _C.where(sign == 0, complex(float("-inf"), float("nan")), out)
    return _C.where(sign < 0, float("nan"), _C.where(sign == 0, float("-inf"), logabs))


def inverse(input: Tensor) -> Tensor:
    return _ts().linalg.inv(input)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    return _ts().linalg.pinv(input, rtol=rcond)


def matrix_power(input: Tensor, n: int) -> Tensor:
    return _ts().linalg.matrix_power(input, n)


def cross(input: Tensor, other: Tensor, dim: Any = None) -> Tensor:
    """Cross product of 3-vectors along `dim` (the first dim of size 3 when None)."""
    if dim is None:
        dims = [i for i, n in enumerate(input.shape) if n == 3]
        if not dims:
            raise RuntimeError(f"cross: no dimension of size 3 in input {tuple(input.shape)}")
        dim = dims[0]
    return _ts().linalg.cross(input, other, axis=dim)


METHODS = {
    "matmul": _C.matmul, "mm": mm, "bmm": bmm, "mv": mv, "dot": dot, "vdot": vdot,
    "inner": inner, "outer": outer, "ger": ger, "addmm": addmm, "addmv": addmv, "addr": addr,
    "baddbmm": baddbmm, "addbmm": addbmm, "kron": kron, "det": det, "logdet": logdet,
    "inverse": inverse, "pinverse": pinverse, "matrix_power": matrix_power, "cross": cross,
    "slogdet": lambda self: _ts().linalg.slogdet(self),
    "cholesky": lambda self, upper=False: (_ts().linalg.cholesky(self, upper=upper)),
    "triangular_solve": lambda self, A, upper=True, transpose=False, unitriangular=False: (
        _ts().triangular_solve(self, A, upper, transpose, unitriangular)),
}
# in-place twins of these are generated too (addmm_, baddbmm_, ...)
INPLACE = ["addmm", "addmv", "addr", "baddbmm", "addbmm"]


# ---- x.svd (torch's deprecated form)
def _svd_method(self: Tensor, some: builtins.bool = True, compute_uv: builtins.bool = True) -> Any:
    """torch.svd (deprecated form): (U, S, V) with V (not V^H); some=True is the reduced SVD."""
    return svd(self, some, compute_uv)  # the named tuple (U, S, V) of torch.return_types.svd


def _qr_method(self: Tensor, some: builtins.bool = True) -> Any:
    """torch.Tensor.qr: (Q, R), reduced unless some=False."""
    return _ts().linalg.qr(self, mode="reduced" if some else "complete")


# ---- cholesky_inverse, cholesky_solve
def cholesky_inverse(input: Tensor, upper: builtins.bool = False) -> Tensor:
    """The inverse of A = L L^H (or U^H U with upper=True) from its Cholesky factor."""
    a = _C.matmul(_C.conj(input).mT, input) if upper else _C.matmul(input, _C.conj(input).mT)
    return _ts().linalg.inv(a)


def cholesky_solve(input: Tensor, input2: Tensor, upper: builtins.bool = False) -> Tensor:
    """X with A X = input where A = L L^H (L = input2; U^H U with upper=True)."""
    u = input2
    a = _C.matmul(_C.conj(u).mT, u) if upper else _C.matmul(u, _C.conj(u).mT)
    return _ts().linalg.solve(a, input)


# ---- torch.vander and the deprecated linalg spellings (svd, qr, cholesky, slogdet, triangular_solve)
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


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Tuple[Tensor, Tensor]:
    """Deprecated torch.triangular_solve: (X with op(A) X = b, a copy of A), op(A) = A or A^T."""
    from collections import namedtuple
    ts = _ts()
    T = A.mT if transpose else A
    x = ts.linalg.solve_triangular(T, b, upper=upper != transpose, unitriangular=unitriangular)
    return namedtuple("triangular_solve", ["solution", "cloned_coefficient"])(x, A.clone())


_TORCH_NAMES += ["vander", "svd", "qr", "cholesky", "slogdet", "triangular_solve"]
__all__ += ["vander", "svd", "qr", "cholesky", "slogdet", "triangular_solve"]

"""torch functions of submodules that tessera's lacked, attached at import (the last step of
``tessera/__init__``): linalg (norm, multi_dot, vander, matrix_exp (= tessera.matrix_exp), solve_triangular, cond,
lstsq, the *_ex variants, tensorinv/tensorsolve), fft (the 2-D transforms), nn.init (dirac_,
sparse_, the deprecated non-underscore names), nn.utils (get_total_norm,
clip_grads_with_norm_, clip_grad_norm, skip_init), testing.make_tensor, autograd.Variable.
Built from tessera's own differentiable ops, so autograd flows through them.
"""
from __future__ import annotations

import math
from collections import namedtuple
from typing import Any, Callable, Iterable, Optional, Sequence, Tuple, Union

from ._C import Tensor
from ._torch_compat_parity import TRANSIENT_ATTRS


def _ts() -> Any:
    import tessera
    return tessera


# ----------------------------------------------------------------------------- linalg
def _axes2(dim: Any) -> Tuple[int, int]:
    d = tuple(dim)
    if len(d) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {d}")
    return d  # type: ignore[return-value]


def matrix_norm_dim(A: Tensor, ord: Any = "fro", dim: Sequence[int] = (-2, -1),
                    keepdim: bool = False) -> Tensor:
    """linalg.matrix_norm over the two dims `dim` (moved last for the standard function)."""
    ts = _ts()
    d = _axes2(dim)
    nd = A.ndim
    d = tuple(x % nd for x in d)
    x = ts.moveaxis(A, d, (-2, -1))
    out = ts.linalg.matrix_norm(x, ord=ord, keepdims=keepdim)
    if keepdim:
        out = ts.moveaxis(out, (-2, -1), d)
    return out


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """torch.linalg.norm: the vector norm over one dim (or the flattened tensor when ord and
    dim are None), the matrix norm over two dims (or a 2-D input with ord given)."""
    ts = _ts()
    if dtype is not None:
        A = A.astype(dtype)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or dim is None and ord is not None and A.ndim == 2:
        return matrix_norm_dim(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim,
                               keepdim)
    if ord is not None and dim is None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.ndim}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord {ord!r} is a matrix norm; give two dims")
    return ts.linalg.vector_norm(A, ord=2 if ord is None else ord,
                                 axis=None if dim is None else tuple(dim), keepdims=keepdim)


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """A @ B @ ... with a 1-D first (row) / last (column) argument allowed, as torch."""
    ts = _ts()
    if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"linalg_multi_dot(): argument 'tensors' (position 1) must be tuple of "
                        f"Tensors, not {type(tensors).__name__}")
    ts_list = list(tensors)
    if len(ts_list) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts_list)}")
    first_1d, last_1d = ts_list[0].ndim == 1, ts_list[-1].ndim == 1
    if first_1d:
        ts_list[0] = ts_list[0][None, :]
    if last_1d:
        ts_list[-1] = ts_list[-1][:, None]
    for i, t in enumerate(ts_list):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    out = ts_list[0]
    for t in ts_list[1:]:
        out = ts.matmul(out, t)
    if first_1d:
        out = out[0]
    if last_1d:
        out = out[..., 0]
    return out


def linalg_vander(x: Tensor, *, N: Optional[int] = None) -> Tensor:
    """torch.linalg.vander: increasing powers x^0 ... x^(N-1) along a new last dim."""
    ts = _ts()
    if x.ndim == 0:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n <= 1 and N is not None and N < 1:
        raise RuntimeError("linalg.vander: N must be greater than 1.")
    if x.dtype == ts.bool:
        x = x.astype(ts.int64)
    cols = [ts.ones_like(x)]
    for _ in range(1, n):
        cols.append(cols[-1] * x)
    return ts.stack(cols, axis=-1)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """Solves A X = B (or X A = B when not `left`) reading only A's upper / lower triangle
    (its diagonal taken as ones when `unitriangular`)."""
    ts = _ts()
    if A.ndim < 2 or B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor A must have at least 2 "
                           "dimensions.")
    T = ts.triu(A) if upper else ts.tril(A)
    if unitriangular:
        n = A.shape[-1]
        eye = ts.eye(n, dtype=A.dtype, device=A.device)
        T = T * (1 - eye) + eye
    if left:
        return ts.linalg.solve(T, B)
    return ts.linalg.solve(T.mT, B.mT).mT


def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number: sigma_max / sigma_min for p in (None, 2, -2 inverted), else
    norm(A, p) * norm(inv(A), p)."""
    ts = _ts()
    if p in (None, 2, -2):
        s = ts.linalg.svdvals(A)
        hi, lo = s[..., 0], s[..., -1]
        return hi / lo if p != -2 else lo / hi
    return matrix_norm_dim(A, p) * matrix_norm_dim(ts.linalg.inv(A), p)


_Lstsq = namedtuple("lstsq", ["solution", "residuals", "rank", "singular_values"])


def lstsq(A: Tensor, B: Tensor, rcond: Optional[float] = None, *,
          driver: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Least squares min ||A X - B|| through the pseudo-inverse. As torch's default CPU driver
    ('gelsy'): residuals and singular_values are empty; rank is computed."""
    ts = _ts()
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           f"gelsy, gelsd, gelss), but got {driver}")
    vec = B.ndim == A.ndim - 1
    Bm = B[..., None] if vec else B
    X = ts.matmul(ts.linalg.pinv(A), Bm)
    if vec:
        X = X[..., 0]
    empty = ts.empty((0,), dtype=A.dtype, device=A.device)
    rank = ts.linalg.matrix_rank(A) if driver != "gels" else ts.empty((0,), dtype=ts.int64)
    sv = ts.linalg.svdvals(A) if driver in ("gelsd", "gelss") else empty
    return _Lstsq(X, empty, rank, sv)


def _with_info(name: str, fn: Callable[..., Any], fields: Tuple[str, str]) -> Callable[..., Any]:
    result = namedtuple(name, fields)

    def ex(A: Tensor, *args: Any, check_errors: bool = False, **kwargs: Any) -> Any:
        ts = _ts()
        batch = tuple(A.shape[:-2])
        try:
            out = fn(A, *args, **kwargs)
            info = ts.zeros(batch, dtype=ts.int32, device=A.device)
        except ts.linalg.LinAlgError:
            if check_errors:
                raise
            out = ts.full(tuple(A.shape) if name != "solve_ex" else tuple(args[0].shape),
                          math.nan, dtype=A.dtype, device=A.device)
            info = ts.ones(batch, dtype=ts.int32, device=A.device)
        return result(out, info)
    ex.__name__ = ex.__qualname__ = name
    ex.__doc__ = f"(result, info) of linalg.{name[:-3]}: info is 0 where it succeeded " \
                 f"(check_errors=True raises instead of reporting)."
    return ex


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of A seen as a matrix of its first `ind` dims by the rest."""
    ts = _ts()
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    m = math.prod(rows)
    if m != math.prod(cols):
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           "prod(self.shape[:ind])")
    return ts.linalg.inv(A.reshape(m, m)).reshape(cols + rows)


def tensorsolve(A: Tensor, B: Tensor, dims: Optional[Sequence[int]] = None) -> Tensor:
    """X with tensordot(A, X, X.ndim) == B."""
    ts = _ts()
    if dims is not None:
        A = ts.moveaxis(A, tuple(dims), tuple(range(A.ndim - len(dims), A.ndim)))
    rest = tuple(A.shape[B.ndim:])
    n = math.prod(rest)
    x = ts.linalg.solve(A.reshape(-1, n), B.reshape(-1, 1) if B.ndim else B.reshape(1, 1))
    return x.reshape(rest)


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
    ts = _ts()
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU.")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.lu_factor: The input tensor A must have at least 2 "
                           f"dimensions.")
    batch = tuple(A.shape[:-2])
    m, n = A.shape[-2], A.shape[-1]
    lu, piv, info = _getrf(A.detach().cpu().numpy().reshape((-1, m, n)))
    out = ts.asarray(lu.reshape(batch + (m, n)), device=A.device)
    pv = ts.asarray(piv.reshape(batch + (min(m, n),)), device=A.device)
    inf = ts.asarray(info.reshape(batch), device=A.device)
    if check_errors and bool((inf != 0).any()):
        i = int(info.max())
        raise ts.linalg.LinAlgError(f"linalg.lu_factor_ex: U[{i},{i}] is zero, singular U.")
    return _LUFactorEx(out, pv, inf)


def lu_factor(A: Tensor, *, pivot: bool = True) -> Any:
    """(LU, pivots) of lu_factor_ex; raises for singular input as torch does."""
    ts = _ts()
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
    ts = _ts()
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    L = U = P = ts.empty((0,), dtype=LU_data.dtype)
    if unpack_data:
        eye = ts.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        L = ts.tril(LU_data[..., :, :k], k=-1) + eye
        U = ts.triu(LU_data[..., :k, :])
    if unpack_pivots:
        piv = LU_pivots.cpu().numpy().reshape((-1, LU_pivots.shape[-1])).astype(np.int64) - 1
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
    """(P, L, U) with A = P @ L @ U."""
    LU, piv = lu_factor(A, pivot=pivot)
    return lu_unpack(LU, piv)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False) -> Tensor:
    """Solves A X = B (X A = B when not `left`; with A^H when `adjoint`) from A's LU factors
    (differentiable in B)."""
    ts = _ts()
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


# ----------------------------------------------------------------------------- fft
def _fft2(name: str) -> Callable[..., Tensor]:
    def fn(input: Tensor, s: Optional[Sequence[int]] = None, dim: Sequence[int] = (-2, -1),
           norm: Optional[str] = None) -> Tensor:
        base = getattr(_ts().fft, name + "n")
        return base(input, s=s, axes=tuple(dim), norm="backward" if norm is None else norm)
    fn.__name__ = fn.__qualname__ = name + "2"
    fn.__doc__ = f"fft.{name}n over the two dims `dim` (default the last two)."
    return fn


# ----------------------------------------------------------------------------- nn.init
def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fills a 3/4/5-D conv weight with the Dirac delta (identity convolution per group)."""
    ts = _ts()
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per = tensor.shape[0] // groups
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    n = min(out_per, tensor.shape[1])
    with ts.no_grad():
        tensor[...] = 0
        centre = tuple(k // 2 for k in tensor.shape[2:])
        for g in range(groups):
            for d in range(n):
                tensor[(g * out_per + d, d) + centre] = 1
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """Fills a 2-D tensor with N(0, std) values and zeros ceil(sparsity * rows) entries of
    each column."""
    ts = _ts()
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    with ts.no_grad():
        ts.nn.init.normal_(tensor, 0, std, generator=generator)
        for c in range(cols):
            idx = ts.randperm(rows, generator=generator)[:zeros] if generator is not None \
                else ts.randperm(rows)[:zeros]
            for r in idx.tolist():
                tensor[r, c] = 0
    return tensor


def _deprecated_init(name: str) -> Callable[..., Any]:
    def fn(*args: Any, **kwargs: Any) -> Any:
        import warnings
        warnings.warn(f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.",
                      FutureWarning, stacklevel=2)
        return getattr(_ts().nn.init, name + "_")(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Deprecated: nn.init.{name}_."
    return fn


# ----------------------------------------------------------------------------- nn.utils
def get_total_norm(tensors: Union[Tensor, Iterable[Tensor]], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """The norm of the norms of `tensors` (as if concatenated)."""
    ts = _ts()
    ts_list = [tensors] if isinstance(tensors, Tensor) else [t for t in tensors if t is not None]
    if not ts_list:
        return ts.asarray(0.0)
    norms = ts.stack([ts.linalg.vector_norm(t, ord=norm_type) for t in ts_list])
    total = ts.linalg.vector_norm(norms, ord=norm_type)
    if error_if_nonfinite and not bool(ts.isfinite(total)):
        raise RuntimeError(f"The total norm of order {float(norm_type)} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable this "
                           "error and scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Union[Tensor, Iterable[Tensor]], max_norm: float,
                          total_norm: Tensor, foreach: Any = None) -> None:
    """Scales every .grad by min(1, max_norm / (total_norm + 1e-6)) in place."""
    ts = _ts()
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    coef = ts.clip(max_norm / (total_norm + 1e-6), max=1.0)
    with ts.no_grad():
        for p in params:
            if p.grad is not None:
                g = p.grad
                g[...] = g * coef.astype(g.dtype)


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """Deprecated alias of clip_grad_norm_."""
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return _ts().nn.utils.clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """Builds module_cls(*args, **kwargs) (tessera cannot skip the initialization, so the
    parameters are initialized as usual)."""
    from .nn import Module
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    kwargs.pop("device", None)
    return module_cls(*args, **kwargs)


# ----------------------------------------------------------------------------- testing
def make_tensor(*shape: Any, dtype: Any, device: Any, low: Optional[float] = None,
                high: Optional[float] = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A random tensor of `shape` and `dtype` with values in [low, high): torch's defaults
    are [-9, 9] (floats and signed ints), [0, 10) for uint8, and {False, True} for bool."""
    ts = _ts()
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if low is not None and high is not None and low > high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    name = str(dtype).rsplit(".", 1)[-1]
    if name == "bool":
        out = ts.rand(shape) > 0.5
    elif ts.isdtype(dtype, "integral"):
        lo = (0 if name.startswith("uint") else -9) if low is None else math.ceil(low)
        hi = (10 if name.startswith("uint") else 10) if high is None else math.ceil(high)
        out = ts.randint(lo, max(hi, lo + 1), shape, dtype=dtype)
    else:
        lo = -9.0 if low is None else low
        hi = 9.0 if high is None else high
        real = ts.float64 if ts.isdtype(dtype, "complex floating") else dtype
        out = (ts.rand(shape, dtype=ts.float64) * (hi - lo) + lo).astype(real)
        if ts.isdtype(dtype, "complex floating"):
            im = (ts.rand(shape, dtype=ts.float64) * (hi - lo) + lo)
            out = (out + 1j * im).astype(dtype)
    if exclude_zero:
        tiny = 1 if ts.isdtype(dtype, "integral") else ts.finfo(dtype).tiny
        out = ts.where(out == 0, ts.asarray(tiny, dtype=out.dtype), out) if name != "bool" \
            else ts.ones_like(out)
    if noncontiguous and out.size > 1:
        wide = ts.repeat_interleave(out.reshape(-1), 2).reshape(tuple(shape[:-1]) + (-1,)) \
            if len(shape) else out
        out = wide[..., ::2] if len(shape) else out
    if device is not None:
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


# ----------------------------------------------------------------------------- autograd
class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated torch.autograd.Variable: Variable(t, requires_grad=False) is t (as a leaf
    sharing its memory with the flag set); isinstance(x, Variable) holds for every tensor."""

    def __new__(cls, data: Tensor, requires_grad: bool = False,  # type: ignore[misc]
                volatile: bool = False) -> Tensor:
        t = data.detach() if data.requires_grad and not requires_grad else data
        if requires_grad:
            t = t.detach().requires_grad_(True)
        return t


# ----------------------------------------------------------------------------- utils
def swap_tensors(t1: Tensor, t2: Tensor) -> None:
    """Exchanges everything two tensors hold (data, shape, dtype, requires_grad, .grad and
    Python attributes such as the Parameter marker) while both keep their identity
    (torch.utils.swap_tensors). Tensors with autograd history cannot be swapped."""
    if not isinstance(t1, Tensor) or not isinstance(t2, Tensor):
        raise TypeError(f"swap_tensors: expected two tensors, got {type(t1).__name__} and "
                        f"{type(t2).__name__}")
    if t1 is t2:
        return
    if t1.grad_fn is not None or t2.grad_fn is not None:
        raise RuntimeError("swap_tensors: cannot swap tensors that have autograd history "
                           "(grad_fn); detach them first")
    g1, g2 = t1.grad, t2.grad
    r1, r2 = t1.requires_grad, t2.requires_grad
    d1, d2 = dict(t1.__dict__), dict(t2.__dict__)
    t1.grad = None
    t2.grad = None
    data1 = t1.detach()
    t1._set_data(t2.detach())
    t2._set_data(data1)
    t1.requires_grad_(r2)
    t2.requires_grad_(r1)
    t1.__dict__.clear()
    t1.__dict__.update({k: v for k, v in d2.items() if k not in TRANSIENT_ATTRS})
    t2.__dict__.clear()
    t2.__dict__.update({k: v for k, v in d1.items() if k not in TRANSIENT_ATTRS})
    t1.grad, t2.grad = g2, g1


# ----------------------------------------------------------------------------- random
def _generator_seed(self: Any) -> int:
    """Seeds this generator non-deterministically and returns the seed (torch's
    Generator.seed)."""
    import numpy as np
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    self.manual_seed(s)
    return s


def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Any:
    """A context manager that restores the default generator's state on exit (torch.random.
    fork_rng); with enabled=False it does nothing."""
    import contextlib
    if devices is not None and (isinstance(devices, (str, bytes))
                                or not hasattr(devices, "__iter__")):
        raise TypeError(f"fork_rng: devices must be None or a list of devices, got "
                        f"{type(devices).__name__}")

    @contextlib.contextmanager
    def ctx() -> Any:
        if not enabled:
            yield
            return
        g = _ts().random.default_generator
        state = g.get_state()
        try:
            yield
        finally:
            g.set_state(state)
    return ctx()


def _inplace_of(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """x.<name>(...) writes fn(x, ...) into x (its dtype must hold the result)."""
    from ._torch_compat_inplace import InplaceCastError

    def method(self: Tensor, *args: Any) -> Tensor:
        from .autograd import no_grad
        out = fn(self, *args)
        if out.dtype != self.dtype and not _ts().can_cast(out.dtype, self.dtype):
            raise InplaceCastError(f"{name}: result type {out.dtype} can't be cast to the "
                                   f"desired output type {self.dtype}")
        with no_grad():
            self[...] = out
        return self
    method.__name__ = method.__qualname__ = name
    return method


def _i0_(input: Tensor) -> Tensor:
    """In-place i0."""
    from .special import i0
    return _inplace_of(i0, "i0_")(input)


def install() -> None:
    """Attaches the functions above to tessera's submodules (keeping any that exist)."""
    ts = _ts()
    from . import special
    if not hasattr(ts, "i0"):
        ts.i0 = special.i0
        Tensor.i0 = special.i0
        Tensor.i0_ = _i0_
        ts.i0_ = _i0_
    for name, fn in (("igamma", special.gammainc), ("igammac", special.gammaincc)):
        if not hasattr(ts, name):
            setattr(ts, name, fn)
            setattr(Tensor, name, fn)
            setattr(Tensor, name + "_", _inplace_of(fn, name + "_"))
    if not hasattr(ts, "lu_unpack"):
        ts.lu_unpack = lu_unpack
        ts.lu_solve = _legacy_lu_solve
        ts.lu = _tensor_lu
        Tensor.lu = _tensor_lu
        Tensor.lu_solve = _legacy_lu_solve
    if not hasattr(ts, "stft"):
        from ._stft import istft, stft
        ts.stft, ts.istft = stft, istft
        Tensor.stft, Tensor.istft = stft, istft
    if not hasattr(Tensor, "resize"):
        Tensor.resize = lambda self, *sizes: self.clone().resize_(*sizes)
        Tensor.resize_as = lambda self, other: self.clone().resize_as_(other)
        Tensor.volatile = property(lambda self: False,
                                   doc="Removed in torch (always False); kept for old code.")
    ts.linalg.tensordot = ts.tensordot  # the standard's alias, with torch's dims= (kwargs)
    if not hasattr(ts.random.Generator, "seed"):
        ts.random.Generator.seed = _generator_seed
    if not hasattr(ts, "default_generator"):
        ts.default_generator = ts.random.default_generator
    extras = {
        ts.linalg: {"norm": norm, "multi_dot": multi_dot, "vander": linalg_vander,
                    "matrix_exp": ts.matrix_exp, "solve_triangular": solve_triangular,
                    "cond": cond, "lstsq": lstsq, "tensorinv": tensorinv,
                    "tensorsolve": tensorsolve, "lu_factor": lu_factor,
                    "lu_factor_ex": lu_factor_ex, "lu": linalg_lu, "lu_solve": lu_solve,
                    "inv_ex": _with_info("inv_ex", ts.linalg.inv, ("inverse", "info")),
                    "cholesky_ex": _with_info("cholesky_ex", ts.linalg.cholesky, ("L", "info")),
                    "solve_ex": _with_info("solve_ex", ts.linalg.solve, ("result", "info"))},
        ts.fft: {n + "2": _fft2(n) for n in ("fft", "ifft", "rfft", "irfft")},
        ts.nn.init: {"dirac_": dirac_, "sparse_": sparse_,
                     **{n: _deprecated_init(n) for n in (
                         "uniform", "normal", "constant", "xavier_uniform", "xavier_normal",
                         "kaiming_uniform", "kaiming_normal", "orthogonal", "eye", "dirac",
                         "sparse")}},
        ts.nn.utils: {"get_total_norm": get_total_norm,
                      "clip_grads_with_norm_": clip_grads_with_norm_,
                      "clip_grad_norm": clip_grad_norm, "skip_init": skip_init},
        ts.testing: {"make_tensor": make_tensor},
        ts.random: {"get_rng_state": ts.get_rng_state, "set_rng_state": ts.set_rng_state,
                    "initial_seed": ts.initial_seed, "fork_rng": fork_rng},
        ts.autograd: {"Variable": Variable},
        ts.utils: {"swap_tensors": swap_tensors},
    }
    for mod, fns in extras.items():
        for name, fn in fns.items():
            if not hasattr(mod, name):
                setattr(mod, name, fn)
                if isinstance(getattr(mod, "__all__", None), list) and name not in mod.__all__:
                    mod.__all__.append(name)

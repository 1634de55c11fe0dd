"""Less common torch Tensor methods and functions: tile/diff/argwhere/unique methods, the
random in-place fills (bernoulli_, random_, exponential_, ...), fill_diagonal_, cov/corrcoef,
sum_to_size, qr/svd methods, frexp, and the always-False layout queries (is_sparse, ...)."""
from __future__ import annotations

import builtins
import math
from collections import namedtuple
from typing import Any, Optional, Sequence

import numpy as np

from . import _C
from ._C import Tensor
from ._dtypes import bool as bool_, float16, bfloat16, float32, float64
from ._tensor import _dim_index

__all__ = ["unique", "unique_consecutive", "cov", "corrcoef", "frexp", "bernoulli",
           "multinomial", "normal", "initial_seed", "seed", "get_rng_state", "set_rng_state",
           "Generator"]

_FLOATS = (float16, bfloat16, float32, float64)

from .random import Generator as _RandomGenerator  # noqa: E402


class Generator(_RandomGenerator):
    """torch.Generator: ``ts.Generator(device="cpu").manual_seed(0)``, usable wherever a
    ``generator=`` is taken (ts.rand, DataLoader, random_split, ...). Same engine as
    ``ts.random.Generator(seed)``, the NumPy-style spelling; a fresh one starts from
    PyTorch's default seed."""

    def __init__(self, device: Any = "cpu") -> None:
        if isinstance(device, (int, builtins.bool)) and not isinstance(device, builtins.bool):
            raise TypeError("Generator: the argument is a device (torch.Generator(device)); "
                            "seed it with .manual_seed(n) or use ts.random.Generator(seed)")
        super().__init__(67280421310721)
        self.device = _C.Device(device) if isinstance(device, str) else device


def _ts() -> Any:
    import tessera
    return tessera


def _to_np(x: Tensor) -> np.ndarray:
    return np.asarray(x.detach().cpu().float() if x.dtype == bfloat16 else x.detach().cpu())


def _unique_result(input: Tensor, vals: np.ndarray, inv: np.ndarray, cnt: np.ndarray,
                   return_inverse: builtins.bool, return_counts: builtins.bool) -> Any:
    dev = input.device
    out = _ts().asarray(vals, dtype=input.dtype, device=dev)
    extra = []
    if return_inverse:
        extra.append(_ts().asarray(inv.astype(np.int64), device=dev))
    if return_counts:
        extra.append(_ts().asarray(cnt.astype(np.int64), device=dev))
    return (out, *extra) if extra else out


def unique(input: Tensor, sorted: builtins.bool = True, return_inverse: builtins.bool = False,
           return_counts: builtins.bool = False, dim: Optional[int] = None) -> Any:
    """torch.unique: the sorted distinct values (of the flattened input, or distinct slices
    along `dim`), plus the inverse indices and/or counts when asked."""
    a = _to_np(input)
    if dim is None:
        # equal_nan=False: every NaN is its own value, as torch keeps them
        vals, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, equal_nan=False)
        inv = inv.reshape(a.shape)
    else:
        d = _dim_index("unique", dim, input.ndim)
        vals, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, axis=d)
        inv = inv.reshape(-1)
    return _unique_result(input, vals, inv, cnt, return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: builtins.bool = False,
                       return_counts: builtins.bool = False, dim: Optional[int] = None) -> Any:
    """Collapses runs of equal consecutive values (of the flattened input, or slices along
    `dim`), plus inverse indices and/or run lengths when asked."""
    a = _to_np(input)
    if dim is None:
        flat = a.reshape(-1)
        change = np.ones(flat.shape[0], dtype=bool)
        if flat.size:
            change[1:] = flat[1:] != flat[:-1]
        vals = flat[change]
        inv = (np.cumsum(change) - 1).reshape(a.shape)
    else:
        d = _dim_index("unique_consecutive", dim, input.ndim)
        m = np.moveaxis(a, d, 0)
        change = np.ones(m.shape[0], dtype=bool)
        if m.shape[0]:
            per_slice = builtins.int(np.prod(m.shape[1:], dtype=np.int64))
            change[1:] = np.any((m[1:] != m[:-1]).reshape(m.shape[0] - 1, per_slice), axis=1)
        vals = np.moveaxis(m[change], 0, d)
        inv = np.cumsum(change) - 1
    starts = np.flatnonzero(change)
    n = change.shape[0]
    cnt = np.diff(np.append(starts, n))
    return _unique_result(input, vals, inv, cnt, return_inverse, return_counts)


def cov(input: Tensor, *, correction: int = 1, fweights: Optional[Tensor] = None,
        aweights: Optional[Tensor] = None) -> Tensor:
    """Covariance of the rows (variables) of a 1-D or 2-D input whose columns are
    observations (differentiable; fweights/aweights weight the observations)."""
    if input.ndim > 2:
        raise RuntimeError(f"cov: expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    x = input if input.ndim == 2 else _C._reshape(input, (1, -1), -1)
    if x.dtype not in _FLOATS:
        x = _C._astype(x, float32, True)
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _C._astype(fweights, x.dtype, True)
    if aweights is not None:
        aw = _C._astype(aweights, x.dtype, True)
        w = aw if w is None else w * aw
    if w is None:
        avg = _ts().mean(x, axis=1, keepdims=True)
        norm = n - correction
        xm = x - avg
        c = _C.matmul(xm, _C.conj(xm).mT) / builtins.max(norm, 0)
    else:
        wsum = _ts().sum(w)
        avg = _ts().sum(x * w, axis=1, keepdims=True) / wsum
        if correction == 0:
            norm = wsum
        elif aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * _ts().sum(w * _C._astype(aweights, x.dtype, True)) / wsum
        xm = x - avg
        c = _C.matmul(xm * w, _C.conj(xm).mT) / _C.clamp(norm, 0, None)
    return _C._reshape(c, (), -1) if input.ndim < 2 else c


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows of input (clipped to [-1, 1])."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = _ts().linalg.diagonal(c)
    sd = _C.sqrt(d)
    c = c / _C._reshape(sd, (-1, 1), -1) / _C._reshape(sd, (1, -1), -1)
    return _C.clamp(c, -1, 1)


FrexpResult = namedtuple("frexp", ["mantissa", "exponent"])  # torch.return_types.frexp


def frexp(input: Tensor) -> Any:
    """(mantissa, exponent) with input == mantissa * 2**exponent, |mantissa| in [0.5, 1);
    a named tuple with fields mantissa and exponent like torch.return_types.frexp."""
    if input.dtype not in _FLOATS:
        raise RuntimeError(f"frexp: only supports floating-point dtypes, got {input.dtype}")
    mant, exp = np.frexp(_to_np(input))
    dev = input.device
    return FrexpResult(_ts().asarray(mant, dtype=input.dtype, device=dev),
                       _ts().asarray(exp.astype(np.int32), device=dev))


# ---- random
def bernoulli(input: Tensor, p: Optional[float] = None, *, generator: Any = None) -> Tensor:
    """0/1 draws with probability `input` elementwise (or the scalar p), in input's dtype."""
    probs = input if p is None else _ts().full(tuple(input.shape), p, dtype=float32)
    out = _ts().random.bernoulli(probs.detach(), generator=generator)
    return _C._astype(out, input.dtype, True)


def multinomial(input: Tensor, num_samples: int, replacement: builtins.bool = False, *,
                generator: Any = None) -> Tensor:
    """int64 indices drawn from the rows of `input` (non-negative weights)."""
    return _ts().random.multinomial(input.detach(), num_samples, replacement, generator=generator)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Any = None,
           dtype: Any = None, device: Any = None) -> Tensor:
    """Normal draws with the given mean and std (tensors broadcast; or size= with numbers)."""
    return _ts().random.normal(mean, std, size, dtype=dtype, device=device, generator=generator)


from .random import get_rng_state, initial_seed, set_rng_state  # noqa: E402,F401


def seed() -> int:
    """Seeds the default generator non-deterministically; returns the seed."""
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    _ts().manual_seed(s)
    return s


def _fill_random(self: Tensor, values: Tensor, op: str) -> Tensor:
    from ._inplace import check_leaf
    check_leaf(self, op)
    with _ts().no_grad():
        _C._copy_(self, _C._astype(values, self.dtype, True))
    return self


def _bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """Fills self with 0/1 draws of probability p (a number or a tensor)."""
    probs = p if isinstance(p, Tensor) else _ts().full(tuple(self.shape), float(p), dtype=float32)
    probs = _C._broadcast_to(probs.detach(), tuple(self.shape))
    return _fill_random(self, _ts().random.bernoulli(probs, generator=generator), "bernoulli_")


def _mantissa_bits(dt: Any) -> int:
    """Explicit mantissa bits of a float dtype (23 for float32): eps is 2**-bits."""
    return round(-math.log2(_ts().finfo(dt).eps))


def _random_(self: Tensor, from_: int = 0, to: Optional[int] = None, *, generator: Any = None) -> Tensor:
    """Fills self with integers uniform in [from, to) (one bound: [0, from); none: [0, 2**mantissa])."""
    if to is None:
        if from_ == 0:
            to = 2 ** (_mantissa_bits(self.dtype) + 1) if self.dtype in _FLOATS else \
                int(_ts().iinfo(self.dtype).max) + 1 if self.dtype != bool_ else 2
        else:
            from_, to = 0, from_
    if from_ >= to:
        raise RuntimeError(f"random_: expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    vals = _ts().random.randint(from_, to, tuple(self.shape), generator=generator)
    return _fill_random(self, vals, "random_")


def _exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fills self with exponential draws of rate lambd."""
    if lambd <= 0:
        raise RuntimeError(f"exponential_: expects lambda > 0.0, but found lambda={lambd}")
    vals = _ts().random.exponential(size=tuple(self.shape), lambd=lambd, generator=generator)
    return _fill_random(self, vals, "exponential_")


def _geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fills self with the number of Bernoulli(p) trials up to the first success (>= 1)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_: expects p to be in (0, 1), but got p={p}")
    u = _ts().random.rand(*self.shape, dtype=float64, generator=generator)
    vals = _C.ceil(_C.log1p(-u) / math.log1p(-p))
    return _fill_random(self, _C.clamp(vals, 1, None), "geometric_")


def _cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fills self with Cauchy draws."""
    u = _ts().random.rand(*self.shape, dtype=float64, generator=generator)
    return _fill_random(self, median + sigma * _C.tan(math.pi * (u - 0.5)), "cauchy_")


def _log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
    """Fills self with exp(N(mean, std)) draws."""
    n = _ts().random.randn(*self.shape, dtype=float64, generator=generator)
    return _fill_random(self, _C.exp(mean + std * n), "log_normal_")


# ---- other methods
def _fill_diagonal_(self: Tensor, fill_value: Any, wrap: builtins.bool = False) -> Tensor:
    """Fills the main diagonal (all dims equal for ndim > 2) with fill_value; wrap=True
    continues below a tall matrix every ncols + 1 rows, like torch/NumPy."""
    from ._inplace import check_leaf, write
    check_leaf(self, "fill_diagonal_")
    if self.ndim < 2:
        raise RuntimeError("fill_diagonal_: dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("fill_diagonal_: all dimensions of input must be of equal length")
    n = builtins.min(self.shape)
    if self.ndim == 2:
        rows = list(range(n))
        if wrap and self.shape[0] > self.shape[1]:
            step = self.shape[1] + 1
            rows = []
            r = 0
            while r < self.shape[0]:
                rows += list(range(r, builtins.min(r + self.shape[1], self.shape[0])))
                r += step
        cols = [r % (self.shape[1] + 1) if wrap else r for r in rows]
        idx = (_ts().asarray(rows, dtype=_C.int64), _ts().asarray(cols, dtype=_C.int64))
    else:
        idx = tuple(_ts().arange(n) for _ in range(self.ndim))
    out = self.clone()
    if idx[0].shape[0]:
        out[idx] = _C._astype(_ts().asarray(fill_value), self.dtype, True)
    return write(self, out, "fill_diagonal_")


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
    out = _ts().sum(self, axis=tuple(axes), keepdims=True) if axes else self
    return _C._reshape(out, tuple(size), -1)


def _diff_method(self: Tensor, n: int = 1, dim: int = -1, prepend: Any = None,
                 append: Any = None) -> Tensor:
    """torch.Tensor.diff: n-th forward difference along dim."""
    return _ts().diff(self, axis=dim, n=n, prepend=prepend, append=append)


def _tile_method(self: Tensor, *reps: Any, dims: Any = None) -> Tensor:
    """NumPy's tile (torch.Tensor.tile): fewer reps than dims are padded with leading 1s."""
    if dims is not None:  # torch's keyword form x.tile(dims=...)
        if reps:
            raise TypeError("tile() got multiple values for argument 'dims'")
        reps = (dims,)
    dims = reps
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    from ._arg_errors import int_arg
    return _C._tile(self, tuple(int_arg("tile", "reps", d) for d in dims))


def _svd_method(self: Tensor, some: builtins.bool = True, compute_uv: builtins.bool = True) -> Any:
    """torch.svd (deprecated form): (U, S, V) with V (not V^H); some=True is the reduced SVD."""
    from ._torch_compat_functions import svd
    return svd(self, some, compute_uv)  # the named tuple (U, S, V) of torch.return_types.svd


def _apply_(self: Tensor, callable: Any) -> Tensor:
    """Applies a Python function to each element in place (CPU, slow; as torch)."""
    a = _to_np(self).copy()
    flat = a.reshape(-1)
    for i in range(flat.shape[0]):
        flat[i] = callable(flat[i].item())
    from ._inplace import write
    return write(self, _ts().asarray(a, dtype=self.dtype), "apply_")


METHODS = {
    "unique": unique, "unique_consecutive": unique_consecutive, "cov": cov, "corrcoef": corrcoef,
    "frexp": frexp, "bernoulli": bernoulli, "multinomial": multinomial,
    "bernoulli_": _bernoulli_, "random_": _random_, "exponential_": _exponential_,
    "geometric_": _geometric_, "cauchy_": _cauchy_, "log_normal_": _log_normal_,
    "fill_diagonal_": _fill_diagonal_, "sum_to_size": _sum_to_size, "diff": _diff_method,
    "tile": _tile_method, "svd": _svd_method, "apply_": _apply_,
    "argwhere": lambda self: _ts().argwhere(self),
    "qr": lambda self, some=True: _ts().linalg.qr(self, mode="reduced" if some else "complete"),
    "share_memory_": lambda self: self, "is_shared": lambda self: False,
}
FALSE_PROPERTIES = ["is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_mkldnn",
                    "is_mps", "is_xla", "is_xpu", "is_vulkan", "is_ipu", "is_nested", "is_mtia",
                    "is_maia"]

"""PyTorch-style creation: varargs sizes for zeros/ones/empty (``ts.zeros(2, 3)`` beside the
standard ``ts.zeros((2, 3))``), x.new_zeros/new_ones/new_full/new_empty/new_tensor,
rand_like/randn_like/randint_like, from_numpy, as_tensor, is_tensor, numel,
tril_indices/triu_indices, logspace."""
from __future__ import annotations

import builtins
import functools
import inspect
import operator
from typing import Any, Callable, Optional

import numpy as np

from . import _C, _creation
from ._C import Tensor
from ._dtypes import _as_dtype, float32, int64

__all__ = ["zeros", "ones", "empty", "rand_like", "randn_like", "randint_like", "from_numpy",
           "as_tensor", "is_tensor", "is_floating_point", "is_complex", "numel", "tril_indices",
           "triu_indices", "logspace", "scalar_tensor", "is_nonzero"]


def _size_args(op: str, size: tuple, kw_size: Any) -> Any:
    """The shape from torch-style arguments: ints as varargs, one sequence, or size=."""
    if kw_size is not None:
        if size:
            raise TypeError(f"{op}: got the size both positionally and as size=")
        return kw_size
    if len(size) == 1:
        return size[0]
    if not size:
        raise TypeError(f"{op}: missing the size (e.g. {op}(2, 3) or {op}((2, 3)))")
    for s in size:
        if isinstance(s, builtins.bool) or not hasattr(s, "__index__"):
            raise TypeError(f"{op}: sizes must be ints, got {type(s).__name__}")
    return tuple(operator.index(s) for s in size)


def _varargs_creation(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """`fn(shape, *, ...)` that also takes torch's `fn(*sizes, ...)` and `fn(size=...)`.
    The standard signature is kept for introspection (``__signature__``)."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*size: Any, shape: Any = None, dtype: Any = None, device: Any = None,
                requires_grad: builtins.bool = False, **kwargs: Any) -> Tensor:
        if kwargs.pop("layout", None) is not None or kwargs.pop("pin_memory", False):
            raise NotImplementedError(f"{name}: layout= and pin_memory=True are not supported")
        kwargs.pop("memory_format", None)
        if kwargs.get("out") is not None:
            raise NotImplementedError(f"{name}: out= is not supported")
        kwargs.pop("out", None)
        kw_size = kwargs.pop("size", shape)
        if kwargs:
            raise TypeError(f"{name}: unexpected keyword arguments {sorted(kwargs)}")
        return fn(_size_args(name, size, kw_size), dtype=dtype, device=device,
                  requires_grad=requires_grad)

    wrapper.__signature__ = inspect.signature(fn)
    return wrapper


zeros = _varargs_creation(_creation.zeros)
ones = _varargs_creation(_creation.ones)
empty = _varargs_creation(_creation.empty)


# ---- x.new_*
def _new_args(self: Tensor, dtype: Any, device: Any) -> dict:
    return {"dtype": self.dtype if dtype is None else _as_dtype(dtype),
            "device": self.device if device is None else device}


def _new_zeros(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
               requires_grad: builtins.bool = False, **kw: Any) -> Tensor:
    """A zero tensor of `size` with this tensor's dtype and device (unless given)."""
    return zeros(*size, requires_grad=requires_grad, **_new_args(self, dtype, device), **kw)


def _new_ones(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
              requires_grad: builtins.bool = False, **kw: Any) -> Tensor:
    """A tensor of ones of `size` with this tensor's dtype and device (unless given)."""
    return ones(*size, requires_grad=requires_grad, **_new_args(self, dtype, device), **kw)


def _new_empty(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
               requires_grad: builtins.bool = False, **kw: Any) -> Tensor:
    """An uninitialized tensor of `size` with this tensor's dtype and device (unless given)."""
    return empty(*size, requires_grad=requires_grad, **_new_args(self, dtype, device), **kw)


def _new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: builtins.bool = False) -> Tensor:
    """A tensor of `size` filled with `fill_value`, with this tensor's dtype and device."""
    return _creation.full(size, fill_value, requires_grad=requires_grad,
                          **_new_args(self, dtype, device))


def _new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
                requires_grad: builtins.bool = False) -> Tensor:
    """A copy of `data` as a new leaf tensor with this tensor's dtype and device (unless given)."""
    if isinstance(data, Tensor):
        data = data.detach()
    return _creation.asarray(data, copy=True, requires_grad=requires_grad,
                             **_new_args(self, dtype, device))


# ---- *_like with random values
def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: builtins.bool = False) -> Tensor:
    """Uniform [0, 1) values with input's shape, dtype and device (unless given)."""
    from . import random
    a = _new_args(input, dtype, device)
    return _creation._rg(_creation._like_layout(input, lambda shape: random.rand(*shape, **a)),
                         requires_grad)


def randn_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: builtins.bool = False) -> Tensor:
    """Standard normal values with input's shape, dtype and device (unless given)."""
    from . import random
    a = _new_args(input, dtype, device)
    return _creation._rg(_creation._like_layout(input, lambda shape: random.randn(*shape, **a)),
                         requires_grad)


def randint_like(input: Tensor, low: int = 0, high: Optional[int] = None, *, dtype: Any = None,
                 device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """Random integers in [low, high) (one bound given: [0, low)) with input's shape, dtype
    and device (unless given)."""
    from . import random
    if high is None:
        low, high = 0, low
    a = _new_args(input, dtype, device)
    return _creation._rg(random.randint(low, high, tuple(input.shape), **a), requires_grad)


# ---- interop and queries
def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing `ndarray`'s memory (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray, got {type(ndarray).__name__}")
    return _creation.asarray(ndarray, copy=False)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """`data` as a tensor, sharing memory when dtype and device allow (torch.as_tensor)."""
    if isinstance(data, Tensor):
        out = data
        if device is not None and _C.Device(device) != data.device:
            out = out.to(device)
        return out if dtype is None else out.to(_as_dtype(dtype))
    return _creation.asarray(data, dtype=dtype, device=device)


def is_tensor(obj: Any) -> builtins.bool:
    """True when `obj` is a tessera Tensor."""
    return isinstance(obj, Tensor)


def _tensor_arg(op: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


def is_floating_point(input: Tensor) -> builtins.bool:
    return _tensor_arg("is_floating_point", input).is_floating_point()


def is_complex(input: Tensor) -> builtins.bool:
    return _tensor_arg("is_complex", input).is_complex()


def is_nonzero(input: Tensor) -> builtins.bool:
    return _tensor_arg("is_nonzero", input).is_nonzero()


def numel(input: Tensor) -> int:
    """The number of elements of `input`."""
    return int(_tensor_arg("numel", input).size)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: builtins.bool = False) -> Tensor:
    """A 0-d tensor holding `s` (float32 unless dtype is given, like torch)."""
    return _creation.asarray(s, dtype=float32 if dtype is None else dtype, device=device,
                             copy=True, requires_grad=requires_grad)


def _tri_indices(op: str, row: int, col: int, offset: int, upper: builtins.bool, dtype: Any,
                 device: Any) -> Tensor:
    """Row i of the triangle holds clip(i + offset + 1, 0, col) columns from 0 (lower) or
    clip(col - i - offset, 0, col) columns ending at col - 1 (upper): the count is summed in
    closed form and checked (check_output_size) before any index is built, and only rows that
    hold an entry are enumerated, so the work is O(output)."""
    from ._arg_errors import check_output_size, int_arg
    row, col = int_arg(op, "row", row), int_arg(op, "col", col)
    offset = int_arg(op, "offset", offset)
    for n, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{op}: {n} must be non-negative, got {v}")
    # rows lo..hi (inclusive) hold entries; row i holds clip(a + i, 0, col) (lower) or
    # clip(a - i, 0, col) (upper) of them
    if upper:
        a = col - offset
        lo, hi = 0, builtins.min(row - 1, a - 1)
    else:
        a = offset + 1
        lo, hi = builtins.max(0, 1 - a), row - 1
    if hi < lo or col == 0:
        total = 0
    else:
        # rows where the count is not clipped at col: a linear run
        sign = -1 if upper else 1
        full_lo, full_hi = (lo, builtins.min(hi, a - col)) if upper else \
            (builtins.max(lo, col - a), hi)
        full = builtins.max(0, full_hi - full_lo + 1)
        lin_lo, lin_hi = (builtins.max(lo, a - col + 1), hi) if upper else \
            (lo, builtins.min(hi, col - a - 1))
        nlin = builtins.max(0, lin_hi - lin_lo + 1)
        total = full * col
        if nlin:  # an arithmetic series: nlin terms from a + sign*lin_lo to a + sign*lin_hi
            total += (nlin * (2 * a + sign * (lin_lo + lin_hi))) // 2
    out_dtype = int64 if dtype is None else _as_dtype(dtype)
    check_output_size(op, (2, total), out_dtype, device)
    if total == 0:
        return _creation.asarray(np.zeros((2, 0), dtype=np.int64), dtype=out_dtype, device=device)
    rows = np.arange(lo, hi + 1, dtype=np.int64)
    counts = np.clip(a - rows if upper else a + rows, 0, col)
    starts = col - counts if upper else np.zeros_like(counts)
    r = np.repeat(rows, counts)
    c = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts - starts, counts)
    return _creation.asarray(np.stack([r, c]), dtype=out_dtype, device=device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    """2 x N int64 (row, col) indices of the lower triangle of a row x col matrix (on and
    below diagonal `offset`), in row-major order."""
    return _tri_indices("tril_indices", row, col, offset, False, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    """2 x N int64 (row, col) indices of the upper triangle (on and above diagonal `offset`)."""
    return _tri_indices("triu_indices", row, col, offset, True, dtype, device)


def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """`steps` values base**linspace(start, end, steps) (float32 unless dtype is given)."""
    if steps < 0:
        raise RuntimeError(f"logspace: number of steps must be non-negative, got {steps}")
    exps = np.linspace(start, end, steps, dtype=np.float64)
    vals = np.power(np.float64(base), exps)
    d = float32 if dtype is None else _as_dtype(dtype)
    return _creation.asarray(vals, dtype=d, device=device, copy=True, requires_grad=requires_grad)

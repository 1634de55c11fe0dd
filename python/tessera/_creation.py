"""Creation functions: the array API's (asarray, zeros, ones, empty, full, arange, linspace,
eye, *_like, ...) in every form PyTorch also accepts (``ts.zeros(2, 3)``, ``size=``,
``requires_grad=``, ``memory_format=``, the default dtype of Note [default dtype] in
_dtypes.py), and torch's others: x.new_*, rand_like/randn_like/randint_like, from_numpy,
as_tensor, scalar_tensor, is_tensor/numel and friends, tril_indices/triu_indices, logspace."""
from __future__ import annotations

import builtins
import warnings
import math
from typing import Any, Sequence, Union

from . import _C
from ._C import Tensor
from ._dtypes import _as_dtype

__all__ = ["asarray", "tensor", "empty", "zeros", "ones", "full", "empty_like", "zeros_like",
           "ones_like", "full_like", "arange", "linspace", "eye", "tril", "triu", "meshgrid",
           "set_default_device", "get_default_device", "rand_like", "randn_like",
           "randint_like", "from_numpy", "as_tensor", "is_tensor", "is_floating_point",
           "is_complex", "numel", "tril_indices", "triu_indices", "logspace", "scalar_tensor",
           "is_nonzero"]

ShapeLike = Union[int, Sequence[int]]


def set_default_device(device: Any) -> None:
    """Where creation functions (zeros, ones, arange, asarray of Python sequences, ...) put
    tensors when called without ``device=`` (PyTorch's torch.set_default_device; None resets
    to the CPU). Objects that already live somewhere (NumPy arrays, tensors) stay there."""
    _C._set_default_device("cpu" if device is None else device)


def get_default_device() -> Any:
    """The device creation functions use when called without ``device=``."""
    return _C._get_default_device()


# asarray / tensor / as_tensor / from_numpy / frombuffer: the C++ bindings (csrc/python/bind_asarray.cpp,
# Note [Nested sequence conversion]).
from ._C import asarray, tensor, as_tensor, from_numpy, frombuffer  # noqa: E402

# zeros/ones/empty, full, the *_like functions (random ones too), arange, linspace,
# logspace, eye, tril/triu, tril_indices/triu_indices, meshgrid,
# scalar_tensor, empty_strided/empty_permuted, fill and the tensor queries in every argument
# form (torch's varargs sizes, size=, n=/m=, diagonal=, layout/pin_memory/memory_format/out):
# the C++ bindings themselves (csrc/python/bind_creation.cpp).
from ._C import (empty, zeros, ones, full, empty_like, zeros_like, ones_like,  # noqa: E402
                 full_like, eye, tril, triu, rand_like, randn_like, randint_like, scalar_tensor,
                 is_tensor, is_floating_point, is_complex, is_nonzero, numel, fill,
                 empty_strided, empty_permuted, arange, linspace, logspace, meshgrid,
                 tril_indices, triu_indices)


# ---- x.new_*
def _new_args(self: Tensor, dtype: Any, device: Any) -> dict:
    return {"dtype": self.dtype if dtype is None else _as_dtype(dtype),
            "device": self.device if device is None else device}


def _new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
                requires_grad: builtins.bool = False) -> Tensor:
    """A copy of `data` as a new leaf tensor with this tensor's dtype and device (unless given)."""
    if isinstance(data, Tensor):
        data = data.detach()
    return asarray(data, copy=True, requires_grad=requires_grad, **_new_args(self, dtype, device))


def _range(start: Any, end: Any, step: Any = 1, *, dtype: Any = None,
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """Deprecated torch.range: like arange but *including* `end`, float by default."""
    ts = _ns()
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dt = ts.get_default_dtype() if dtype is None else dtype
    out = (ts.arange(n, dtype=ts.float64) * step + start).astype(dt)
    if device is not None:
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


_range.__name__ = _range.__qualname__ = "range"  # ts.range (served lazily: Python's builtin name)


def _ns() -> Any:
    import tessera
    return tessera


__all__ += ["fill", "empty_strided", "frombuffer", "empty_permuted"]

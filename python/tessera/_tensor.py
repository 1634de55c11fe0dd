"""Tensor's methods that stay Python: printing (__repr__ / __str__, as PyTorch's are Python), the
array API's __array_namespace__ / to_device, the storage objects (UntypedStorage /
TypedStorage, as PyTorch's) and the lazy modules' materialize. The operators are
bound in C++ (csrc/python/bind_tensor.cpp); PyTorch's conversions and queries (x.to, x.type,
x.stride(dim), resize_, set_, new, the in-place metadata ops t_() / squeeze_() ...) in
csrc/python/bind_tensor_methods.cpp; the callable x.size, x.real / x.imag, NumPy interop
(numpy, __array__, tolist, __iter__), __contains__ / __format__, apply_ / map_ / map2_,
clone(memory_format=), astype, module_load and torch's constant queries (layout, is_conj, ...) in
csrc/python/bind_tensor_protocols.cpp.
"""
from __future__ import annotations

import builtins
from typing import Any, Optional, Tuple

import numpy as np

from . import _C
from ._C import Tensor
from ._dtypes import bfloat16, float32

_API_VERSION = "2024.12"


_PRINT_THRESHOLD, _PRINT_EDGE = 1000, 3


def _numpy_for_print(t: Tensor) -> Tuple[np.ndarray, int]:
    """The values to print and the threshold to print them with. A tensor past the threshold
    prints only its corners: each dim longer than 2 * edge + 1 keeps its first and last `edge`
    entries around one middle one (which NumPy replaces by '...', threshold 0), so an expanded
    (2**31, 2**31) view prints without NumPy holding 2**62 elements (it refuses), and a large
    tensor leaves the device without all of it."""
    if t.numel() == 0 and any(d > 2**31 for d in t.shape):
        # NumPy refuses shapes whose product ignoring the zeros overflows ((0, 2**62), which a
        # tensor may have): printed as [] (the repr shows the shape)
        return np.empty((0,), np.float32), _PRINT_THRESHOLD
    threshold, keep = _PRINT_THRESHOLD, 2 * _PRINT_EDGE + 1
    if t.numel() > threshold and any(n > keep for n in t.shape):
        index = []  # an open mesh (np.ix_): one gather of the corners, nothing larger made
        for d, n in enumerate(t.shape):
            rows = [*range(_PRINT_EDGE), n // 2, *range(n - _PRINT_EDGE, n)] if n > keep \
                else list(range(n))
            index.append(_C.tensor(rows, device=t.device).reshape(
                [len(rows) if k == d else 1 for k in range(t.ndim)]))
        t = t[tuple(index)]
        threshold = 0
    a = _C._to_numpy(_C._to_device(t, "cpu", False)) if t.device.type != "cpu" else t.numpy()
    if t.dtype == bfloat16:
        a = a.astype(np.float32)
    return a, threshold


def _values_repr(self: Tensor) -> str:
    a, threshold = _numpy_for_print(self)
    body = np.array2string(a, separator=", ", prefix="tensor(", threshold=threshold,
                           edgeitems=_PRINT_EDGE)
    extra = ""
    if self.size == 0 and self.ndim != 1:
        extra = f", shape={self.shape}"
    if self.dtype not in (float32, _C.int64, _C.bool) or self.size == 0:
        extra += f", dtype={self.dtype.name}"
    if not self.device == "cpu":
        extra += f", device='{self.device}'"
    if self.grad_fn is not None:
        extra += f", grad_fn=<{self.grad_fn.name()}>"
    elif self.requires_grad:
        extra += ", requires_grad=True"
    return f"tensor({body}{extra})"


def _marked(self: Tensor, values: Any) -> str:
    """torch's reprs of nn.Parameter ('Parameter containing:' before the values) and of the
    lazy modules' placeholders ('<UninitializedParameter>', nn/_uninitialized.py), read from
    the markers those set in the tensor's __dict__."""
    d = self.__dict__
    if d.get("_is_lazy", False):
        return "<UninitializedParameter>" if d.get("_is_param", False) else "<UninitializedBuffer>"
    if d.get("_is_param", False):
        return "Parameter containing:\n" + _values_repr(self)
    return values(self)


def _repr(self: Tensor) -> str:
    return _marked(self, _values_repr) if self.__dict__ else _values_repr(self)


def _str(self: Tensor) -> str:
    if self.__dict__:
        return _marked(self, _str_values)
    return _str_values(self)


def _str_values(self: Tensor) -> str:
    a, threshold = _numpy_for_print(self)
    return np.array2string(a, threshold=threshold, edgeitems=_PRINT_EDGE)


def _materialize_attr(self: Tensor) -> Any:
    """x.materialize(shape, device=None, dtype=None) of an nn.UninitializedParameter /
    UninitializedBuffer; other tensors have no such attribute (as in torch)."""
    if self.__dict__.get("_is_lazy", False) is not True:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'materialize'")
    from .nn._uninitialized import _materialize
    return lambda shape, device=None, dtype=None: _materialize(self, shape, device, dtype)


def _array_namespace(self: Tensor, /, *, api_version: Optional[str] = None):
    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError(f"__array_namespace__: unsupported api_version {api_version!r}")
    import tessera
    return tessera


def _to_device(self: Tensor, device: Any, /, *, stream: Any = None) -> Tensor:
    """The array API's to_device: this tensor on `device` (itself when already there).

    `stream` (a ts.cuda.Stream or None) queues the copy on that stream.
    """
    if stream is not None:
        from . import cuda
        with cuda.stream(stream):
            return self.to(device)
    return self.to(device)


# ---- PyTorch's conversions and queries


def _dim_index(op: str, dim: Any, ndim: int) -> int:
    """`dim` normalized into [0, ndim) (a 0-d tensor accepts -1 and 0, like torch)."""
    if isinstance(dim, builtins.bool) or not hasattr(dim, "__index__"):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    dim = dim.__index__()
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim % n


# What the Python layer caches in a tensor's __dict__ (autograd's .grad identity, the callable
# size object of Note [callable size], csrc/python/bind_tensor_protocols.cpp): never saved.
TRANSIENT_ATTRS = frozenset({"_grad_ref", "_ts_size"})


def check_restored_attrs(attrs: Any, op: str) -> None:
    """The instance attributes a file restores on a tensor (a checkpoint's tensor state, a
    pickled tensor's attributes): a dict of names of the tensor's own data. A name of
    Tensor's methods or properties (``add``, ``data``, ``grad``, ``shape``), a dunder or one
    of TRANSIENT_ATTRS would replace what every tensor has (``t.add = set`` makes
    ``t.add(1)`` return ``set()``): ValueError naming it (a malformed or malicious file)."""
    if not isinstance(attrs, dict):
        raise ValueError(f"{op}: a tensor's saved attributes must be a dict, got "
                         f"{type(attrs).__name__}")
    for k in attrs:
        if type(k) is not str or k.startswith("__") or k in TRANSIENT_ATTRS \
                or hasattr(Tensor, k):
            raise ValueError(f"{op}: a tensor's saved attribute {k!r} names a method, property "
                             f"or cache every tensor has; a file may only restore attributes "
                             f"the user set (a malformed or malicious file)")


class UntypedStorage:
    """The memory block a tensor views (torch's UntypedStorage, read-only facts): data_ptr,
    nbytes / size / len in bytes, device; tensors sharing memory report the same data_ptr."""

    def __init__(self, tensor: Tensor) -> None:
        self._tensor = tensor

    def data_ptr(self) -> int:
        return self._tensor._storage_ptr()

    def nbytes(self) -> int:
        return self._tensor._storage_nbytes()

    size = nbytes
    __len__ = nbytes

    def element_size(self) -> int:
        return 1

    @property
    def device(self) -> Any:
        return self._tensor.device

    def __repr__(self) -> str:
        return f"UntypedStorage(nbytes={self.nbytes()}, device={self.device})"


class TypedStorage(UntypedStorage):
    """torch's (deprecated) TypedStorage: the storage counted in elements of the dtype."""

    @property
    def dtype(self) -> Any:
        return self._tensor.dtype

    def element_size(self) -> int:
        return self._tensor.itemsize

    def size(self) -> int:  # type: ignore[override]
        return self.nbytes() // self.element_size()

    __len__ = size  # type: ignore[assignment]

    def tolist(self) -> list:
        """The storage's elements (the whole block, from its start)."""
        base = self._tensor.as_strided((self.size(),), (1,), 0)
        return base.tolist()

    def __repr__(self) -> str:
        return f"TypedStorage(size={self.size()}, dtype={self.dtype}, device={self.device})"


def _untyped_storage(self: Tensor) -> UntypedStorage:
    return UntypedStorage(self)


def _storage(self: Tensor) -> TypedStorage:
    return TypedStorage(self)


# (kept for _arg_forms.py's import; the functions are C++: csrc/python/bind_tensor_protocols.cpp)
from ._C import _apply_memory_format, clone  # noqa: E402,F401

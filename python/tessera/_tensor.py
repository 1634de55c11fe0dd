"""Python-level Tensor methods: printing, NumPy interop, the callable ``size``, the writable
x.real / x.imag views, storages and the element-wise Python callbacks (apply_, map_). The
operators are bound in C++ (csrc/python/bind_tensor.cpp); PyTorch's conversions and queries
(x.to, x.type, x.float(), x.stride(dim), x.element_size(), resize_, set_, new, ...) are C++
methods too (csrc/python/bind_tensor_methods.cpp).

Note [callable size]: the array API makes ``x.size`` an int property (the element count),
PyTorch makes it a method ``x.size(dim=None)``. ``x.size`` here is an int subclass that is
also callable: ``x.size == 6`` and ``isinstance(x.size, int)`` hold, ``x.size()`` returns the
shape tuple and ``x.size(1)`` / ``x.size(-1)`` one extent.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import _C
from ._C import Tensor
from ._dtypes import _as_dtype, bfloat16, complex64, complex128, float32, float64

_API_VERSION = "2024.12"


def _numpy_for_print(t: Tensor) -> np.ndarray:
    a = _C._to_numpy(_C._to_device(t, "cpu", False)) if t.device.type != "cpu" else t.numpy()
    if t.dtype == bfloat16:
        a = a.astype(np.float32)
    return a


def _values_repr(self: Tensor) -> str:
    a = _numpy_for_print(self)
    body = np.array2string(a, separator=", ", prefix="tensor(", threshold=1000, edgeitems=3)
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
    return np.array2string(_numpy_for_print(self), threshold=1000, edgeitems=3)


def _materialize_attr(self: Tensor) -> Any:
    """x.materialize(shape, device=None, dtype=None) of an nn.UninitializedParameter /
    UninitializedBuffer; other tensors have no such attribute (as in torch)."""
    if self.__dict__.get("_is_lazy", False) is not True:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'materialize'")
    from .nn._uninitialized import _materialize
    return lambda shape, device=None, dtype=None: _materialize(self, shape, device, dtype)


def _numpy(self: Tensor, *, force: builtins.bool = False) -> np.ndarray:
    """A NumPy array sharing this tensor's memory (CPU only); force=True returns a copy
    (PyTorch's spelling). bfloat16 needs the ml_dtypes package."""
    if force and self.device.type != "cpu":
        return _C._to_numpy(_C._to_device(self, "cpu", False))
    a = _C._to_numpy(self)
    return a.copy() if force else a


def _array(self: Tensor, dtype: Any = None, copy: Optional[builtins.bool] = None) -> np.ndarray:
    """NumPy 2's ``__array__`` protocol: an ndarray sharing this CPU tensor's memory.

    dtype: convert to this NumPy dtype (a copy when it differs). copy: None copies only when
    needed, True always copies, False never copies and raises ValueError when it would have to.
    """
    if dtype is not None:
        want = np.dtype(dtype)
        try:
            target = _as_dtype(want)
        except TypeError:
            target = None  # a NumPy-only dtype (e.g. float128): NumPy converts
        if target != self.dtype:
            if copy is False:
                raise ValueError(f"__array__: copy=False but converting {self.dtype} to {want} needs a copy")
            if target is not None:  # convert in tessera: needs no NumPy bfloat16 (ml_dtypes)
                return _C._to_numpy(_C._astype(self, target, True))
            return _C._to_numpy(self).astype(want)
    a = _C._to_numpy(self)
    return a.copy() if copy else a


def _tolist(self: Tensor) -> Any:
    a = _numpy_for_print(self) if self.dtype == bfloat16 or self.device.type != "cpu" else self.numpy()
    return a.tolist()


def _iter(self: Tensor):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


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


def _pin_memory(self: Tensor) -> Tensor:
    """A copy of this CPU tensor in page-locked memory (fast, asynchronous copies to the GPU)."""
    return _C._pin_memory(self)


def _record_stream(self: Tensor, stream: Any) -> None:
    """Marks this tensor's memory as used by `stream` too: the allocator will not reuse it
    until that stream's queued work is done."""
    if isinstance(stream, Tensor):
        raise TypeError("record_stream: argument 1 cannot be a tensor; expected a "
                        "ts.cuda.Stream")
    if not hasattr(stream, "cuda_stream"):
        raise TypeError(f"record_stream: argument 1 has an unsupported type "
                        f"{type(stream).__name__}; expected a ts.cuda.Stream")
    _C._cuda.record_stream(self, stream.cuda_stream)


def _astype_method(self: Tensor, dtype: Any, /, *, copy: builtins.bool = True) -> Tensor:
    return _C._astype(self, _as_dtype(dtype), copy)


def _is_pinned(self: Tensor) -> builtins.bool:
    return _C._is_pinned(self)


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


_TORCH_SIZE: Any = None


def _torch_size_class() -> Any:
    global _TORCH_SIZE
    if _TORCH_SIZE is None:
        from ._torch_legacy import Size
        _TORCH_SIZE = Size
    return _TORCH_SIZE


class _Size(int):
    """The element count (an int) that can also be called like torch's ``Tensor.size``."""

    def __call__(self, dim: Optional[int] = None) -> Any:
        """size() -> the shape tuple; size(dim) -> the extent of `dim` (negative counts back)."""
        if dim is None:  # torch.Size (a tuple with numel()), made once per size object
            sz = self.__dict__.get("_torch_size")
            if sz is None:
                sz = self._torch_size = _torch_size_class()(self._shape)
            return sz
        if len(self._shape) == 0:
            raise IndexError(f"size: dimension specified as {dim} but tensor has no dimensions")
        return self._shape[_dim_index("size", dim, len(self._shape))]

    def __reduce__(self) -> Any:  # pickles as a plain int
        return (int, (int(self),))


_c_size = Tensor.size  # the C++ property (element count)
_new_int = int.__new__


def _size_get(self: Tensor) -> Any:
    # Made once and kept in the instance dict (Tensor._set_data, which changes the shape, drops it).
    d = self.__dict__
    s = d.get("_ts_size")
    if s is None:
        n = _c_size.__get__(self)
        if n is None:
            return None
        s = _new_int(_Size, n)
        s._shape = self.shape
        d["_ts_size"] = s
    return s


_size_property = property(_size_get, doc="Number of elements (array API), callable like torch: "
                                         "x.size() is the shape, x.size(d) one extent.")


def _no_grad() -> Any:
    from .autograd import no_grad
    return no_grad()


# ---- Python protocols torch defines on Tensor
def _format(self: Tensor, spec: str) -> str:
    """f"{loss:.4f}": a 0-d tensor formats as its Python value (torch's rule); others only
    with an empty spec (their str)."""
    if self.ndim == 0:
        return format(self.item(), spec)
    return object.__format__(self, spec)


def _contains(self: Tensor, element: Any) -> builtins.bool:
    """`v in x`: whether any element of x equals v (a number or a tensor broadcast against x),
    torch's (and NumPy's) rule."""
    if not isinstance(element, (Tensor, builtins.int, builtins.float, builtins.complex,
                                builtins.bool)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you "
                           f"passed in a {type(element).__name__}.")
    return builtins.bool((self == element).any())


# ---- x.real / x.imag: views of a complex tensor's parts, writable (torch's and NumPy's)
def _real_get(self: Tensor) -> Tensor:
    if _C.is_complex(self):
        from ._elementwise import view_as_real
        return view_as_real(self)[..., 0]
    return self


def _imag_get(self: Tensor) -> Tensor:
    if _C.is_complex(self):
        from ._elementwise import view_as_real
        return view_as_real(self)[..., 1]
    return _C.imag(self)


def _real_set(self: Tensor, value: Any) -> None:
    _real_get(self)[...] = value


def _imag_set(self: Tensor, value: Any) -> None:
    if not _C.is_complex(self):
        raise RuntimeError(f"imag is not implemented for tensors with non-complex dtypes "
                           f"({self.dtype})")
    _imag_get(self)[...] = value


def _dtype_to_complex(self: Any) -> Any:
    """torch.dtype.to_complex(): the complex dtype of this float dtype's precision."""
    table = {float32: complex64, float64: complex128, complex64: complex64,
             complex128: complex128}
    if self not in table:
        raise RuntimeError(f"to_complex: no complex counterpart of {self}")
    return table[self]


def _dtype_to_real(self: Any) -> Any:
    """torch.dtype.to_real(): the real dtype of this complex dtype's precision."""
    return {complex64: float32, complex128: float64}.get(self, self)


def _false(self: Tensor) -> builtins.bool:
    return False


def _itself(self: Tensor) -> Tensor:
    return self


def _apply_(self: Tensor, callable: Any) -> Tensor:
    """Applies a Python function to each element in place (CPU, slow; as torch)."""
    a = np.array(_numpy_for_print(self.detach()))
    flat = a.reshape(-1)
    for i in range(flat.shape[0]):
        flat[i] = callable(flat[i].item())
    from ._inplace import write
    return write(self, _asarray(a, dtype=self.dtype), "apply_")


def _asarray(*args: Any, **kwargs: Any) -> Tensor:
    from ._creation import asarray
    return asarray(*args, **kwargs)


# ---- PyTorch's details of the Tensor object: resize_/set_/new, in-place metadata ops,
# truth value and item() errors, storages
TRANSIENT_ATTRS = frozenset({"_grad_ref", "_ts_size"})


_cpp_set_data = Tensor._set_data


def _set_data(self: Tensor, src: Tensor) -> None:
    """Tensor._set_data plus dropping what the Python layer cached about the old geometry
    (the callable ``size`` object of _tensor.py)."""
    _cpp_set_data(self, src)
    self.__dict__.pop("_ts_size", None)


def _rebind(self: Tensor, new: Tensor, name: str) -> Tensor:
    """Makes `self` take `new`'s data (for metadata-only in-place ops such as t_())."""
    from ._C import is_grad_enabled
    if self.requires_grad and is_grad_enabled():
        if self.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        raise RuntimeError(f"{name}: tessera cannot change the shape of a tensor with autograd "
                           f"history in place; use the out-of-place {name[:-1]}()")
    self._set_data(new)
    return self


def _metadata_inplace(name: str) -> Callable[..., Tensor]:
    base = name[:-1]

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return _rebind(self, getattr(self, base)(*args, **kwargs), name)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place {base}: this tensor becomes ``self.{base}(...)`` (a view of " \
                     f"the same memory)."
    return method


def _volatile(self: Tensor) -> bool:
    """Removed in torch (always False); kept for old code."""
    return False


def _new_empty_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], *,
                       dtype: Any = None, device: Any = None, requires_grad: bool = False,
                       layout: Any = None, pin_memory: bool = False) -> Tensor:
    return _ns().empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                               device=self.device if device is None else device,
                               requires_grad=requires_grad)


def _map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """self[i] = callable(self[i], tensor[i]) for each element (tensor broadcasts; CPU)."""
    ts = _ns()
    other = ts.broadcast_to(ts.asarray(tensor), tuple(self.shape)).numpy()
    mine = self.numpy()
    vals = [callable(a, b) for a, b in zip(mine.reshape(-1).tolist(), other.reshape(-1).tolist())]
    with _no_grad():
        self[...] = ts.asarray(vals, dtype=self.dtype).reshape(tuple(self.shape))
    return self


def _map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable[..., Any]) -> Tensor:
    """self[i] = callable(self[i], x[i], y[i]) for each element (CPU)."""
    ts = _ns()
    shape = tuple(self.shape)
    xs = ts.broadcast_to(ts.asarray(x), shape).numpy().reshape(-1).tolist()
    ys = ts.broadcast_to(ts.asarray(y), shape).numpy().reshape(-1).tolist()
    vals = [callable(a, b, c) for a, b, c in zip(self.numpy().reshape(-1).tolist(), xs, ys)]
    with _no_grad():
        self[...] = ts.asarray(vals, dtype=self.dtype).reshape(shape)
    return self


def _as_strided_scatter(self: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int],
                        storage_offset: Optional[int] = None) -> Tensor:
    """A copy of self (made contiguous) with ``src`` written into its as_strided view."""
    out = self.contiguous().clone()
    with _no_grad():
        out.as_strided(tuple(size), tuple(stride), storage_offset)[...] = src
    return out




def _conj_physical_(self: Tensor) -> Tensor:
    with _no_grad():
        self[...] = _ns().conj(self)
    return self


def _module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """How load_state_dict turns `other` into this tensor's new value: other detached
    (`assign`) or copied into self (torch.Tensor.module_load)."""
    if assign:
        return other.detach()
    with _no_grad():
        self[...] = other
    return self.detach()


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


def _layout(self: Tensor) -> Any:
    """Always tessera.strided."""
    from ._torch_legacy import strided
    return strided


def _name(self: Tensor) -> None:
    """None (tessera has no named tensors)."""
    return None


def _dense_dim(self: Tensor) -> int:
    return self.ndim


def _sparse_dim(self: Tensor) -> int:
    return 0


def _to_dense(self: Tensor, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
    return self if dtype is None else self.astype(dtype)


def _untyped_storage(self: Tensor) -> UntypedStorage:
    return UntypedStorage(self)


def _storage(self: Tensor) -> TypedStorage:
    return TypedStorage(self)


def _ns() -> Any:
    import tessera
    return tessera


# ---- torch's memory_format= (x.clone, x.contiguous, ts.clone, the *_like functions)
def _apply_memory_format(op: str, t: Tensor, fmt: Any) -> Tensor:
    """t laid out as torch's memory format `fmt` asks (the values unchanged)."""
    from ._torch_legacy import memory_format, channels_last, channels_last_3d, \
        contiguous_format, preserve_format
    if fmt is None or fmt is preserve_format:
        return t
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{op}(): memory_format must be a tessera memory format "
                        f"(ts.preserve_format, ts.contiguous_format, ts.channels_last...), "
                        f"got {type(fmt).__name__}")
    if fmt is contiguous_format:
        return t if t.is_contiguous() else t.contiguous()
    rank = 4 if fmt is channels_last else 5
    if t.ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use "
                           f"{'channels_last' if rank == 4 else 'channels_last_3d'} format")
    last = tuple(range(2, rank)) + (1,)  # N, spatial..., C
    back = (0, rank - 1) + tuple(range(1, rank - 1))
    return _C._permute_dims(_C._permute_dims(t, (0,) + last).contiguous(), back)


def _memory_format_method(std: Callable[..., Any], op: str) -> Callable[..., Any]:
    """The C++ method `std` (x.clone, x.contiguous) that also takes torch's memory_format=."""
    def method(self: Tensor, *args: Any, memory_format: Any = None, **kwargs: Any) -> Any:
        out = std(self, *args, **kwargs)
        return out if memory_format is None else _apply_memory_format(op, out, memory_format)
    method.__name__ = method.__qualname__ = op
    method.__doc__ = std.__doc__
    return method


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy of input (differentiable), laid out as memory_format asks (torch)."""
    return _apply_memory_format("clone", input.clone(), memory_format)


def detach(input: Tensor) -> Tensor:
    """input without autograd history (shares memory; torch.detach)."""
    return input.detach()

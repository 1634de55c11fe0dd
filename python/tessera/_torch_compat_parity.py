"""PyTorch parity details of the Tensor object itself.

Note [grad identity]
The C++ ``grad`` getter wraps the stored gradient in a new Python object on each read, so
``p.grad is p.grad`` was False, unlike torch (where optimizers, ``zero_grad(set_to_none=False)``
and ``model.double()`` keep the very same ``.grad`` object). The getter below remembers the last
wrapper it handed out (weakly, so it never keeps a replaced gradient alive) and returns it again
while it still wraps the stored TensorImpl (``_impl_id``).
"""
from __future__ import annotations

import math
import types
from typing import Any, Callable, Optional, Sequence

from . import _C
from ._C import Tensor

# Per-object caches of the Python layer: never copied, pickled or swapped with a tensor.
TRANSIENT_ATTRS = frozenset({"_grad_ref", "_ts_size"})

_cpp_set_data = Tensor._set_data


def _set_data(self: Tensor, src: Tensor) -> None:
    """Tensor._set_data plus dropping what the Python layer cached about the old geometry
    (the callable ``size`` object of _tensor.py)."""
    _cpp_set_data(self, src)
    self.__dict__.pop("_ts_size", None)


def _ts() -> Any:
    import tessera
    return tessera


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


def _sizes(args: Sequence[Any]) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Gives the tensor shape `sizes` (contiguous); the first elements (in row-major order)
    are kept, new ones are uninitialized (torch.Tensor.resize_). As in PyTorch, a size that
    fits the storage (from the tensor's offset) keeps the storage; a larger one raises for a
    storage shared with NumPy, a memoryview or DLPack ("not resizable", Note [Exported
    storage]) and otherwise moves the tensor to new memory."""
    ts = _ts()
    shape = _sizes(sizes)
    if any((not isinstance(n, int)) or n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    n = math.prod(shape)
    if (self._offset + n) * self.itemsize <= self._storage_nbytes():
        new = _C._as_strided(self, shape, _contiguous_strides(shape), self._offset)
        return _rebind(self, new, "resize_")
    if not self._storage_resizable():
        raise RuntimeError("Trying to resize storage that is not resizable")
    new = ts.empty(shape, dtype=self.dtype, device=self.device)
    keep = min(n, int(self.size))
    if keep:
        with _no_grad():
            new.reshape(-1)[:keep] = self.reshape(-1)[:keep]
    return _rebind(self, new, "resize_")


def _resize_as_(self: Tensor, other: Tensor, memory_format: Any = None) -> Tensor:
    return _resize_(self, tuple(other.shape))


def _resize(self: Tensor, *sizes: Any) -> Tensor:
    return self.clone().resize_(*sizes)


def _resize_as(self: Tensor, other: Tensor) -> Tensor:
    return self.clone().resize_as_(other)


def _volatile(self: Tensor) -> bool:
    """Removed in torch (always False); kept for old code."""
    return False


def _set_(self: Tensor, source: Optional[Tensor] = None, storage_offset: Optional[int] = None,
          size: Optional[Sequence[int]] = None, stride: Optional[Sequence[int]] = None) -> Tensor:
    """``set_()`` empties the tensor; ``set_(source)`` makes it share source's memory and
    geometry; ``set_(source, storage_offset, size, stride)`` a strided view of source."""
    ts = _ts()
    if source is None:
        new = ts.empty((0,), dtype=self.dtype, device=self.device)
    elif not isinstance(source, Tensor):
        raise TypeError(f"set_(): argument 'source' must be Tensor, not {type(source).__name__}")
    elif size is not None:
        new = source.as_strided(tuple(size), tuple(stride) if stride is not None else
                                _contiguous_strides(tuple(size)), storage_offset)
    else:
        new = source
    if source is not None and source.dtype != self.dtype:
        raise RuntimeError(f"Expected object of scalar type {self.dtype} but got scalar type "
                           f"{source.dtype} for argument 'source'")
    return _rebind(self, new, "set_")


def _contiguous_strides(shape: tuple) -> tuple:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def _new(self: Tensor, *args: Any, device: Any = None) -> Tensor:
    """Legacy ``x.new(*sizes)`` (uninitialized) / ``x.new(data)`` / ``x.new()`` with x's
    dtype and device."""
    ts = _ts()
    dev = self.device if device is None else device
    if not args:
        return ts.empty((0,), dtype=self.dtype, device=dev)
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, tuple) and type(data).__name__ == "Size":
            return ts.empty(tuple(data), dtype=self.dtype, device=dev)
        return ts.asarray(data, dtype=self.dtype, device=dev)
    return ts.empty(_sizes(args), dtype=self.dtype, device=dev)


def _new_empty_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], *,
                       dtype: Any = None, device: Any = None, requires_grad: bool = False,
                       layout: Any = None, pin_memory: bool = False) -> Tensor:
    return _ts().empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                               device=self.device if device is None else device,
                               requires_grad=requires_grad)


def _index_reduce(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """Reduces the slices of `source` along `dim` into self's slices ``index[i]`` with
    'prod', 'mean', 'amax' or 'amin' (torch.Tensor.index_reduce)."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    d = dim % max(self.ndim, 1)
    shape = [1] * source.ndim
    shape[d] = index.shape[0]
    full = _ts().broadcast_to(index.reshape(tuple(shape)), tuple(source.shape))
    return self.scatter_reduce(d, full, source, reduce, include_self=include_self)


def _index_reduce_(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    out = _index_reduce(self, *args, **kwargs)
    with _no_grad():
        self[...] = out
    return self


def _map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """self[i] = callable(self[i], tensor[i]) for each element (tensor broadcasts; CPU)."""
    ts = _ts()
    other = ts.broadcast_to(ts.asarray(tensor), tuple(self.shape)).numpy()
    mine = self.numpy()
    vals = [callable(a, b) for a, b in zip(mine.reshape(-1).tolist(), other.reshape(-1).tolist())]
    with _no_grad():
        self[...] = ts.asarray(vals, dtype=self.dtype).reshape(tuple(self.shape))
    return self


def _map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable[..., Any]) -> Tensor:
    """self[i] = callable(self[i], x[i], y[i]) for each element (CPU)."""
    ts = _ts()
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


def _no_grad() -> Any:
    from .autograd import no_grad
    return no_grad()


def _conj_physical(self: Tensor) -> Tensor:
    return _ts().conj(self).clone()


def _conj_physical_(self: Tensor) -> Tensor:
    with _no_grad():
        self[...] = _ts().conj(self)
    return self


def _module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """How load_state_dict turns `other` into this tensor's new value: other detached
    (`assign`) or copied into self (torch.Tensor.module_load)."""
    if assign:
        return other.detach()
    with _no_grad():
        self[...] = other
    return self.detach()


class AmbiguousTruthError(ValueError, RuntimeError):
    """bool() of a tensor with several elements: NumPy raises ValueError, torch RuntimeError;
    this is both, so code written for either catches it."""


_cpp_bool = Tensor.__bool__


def _bool(self: Tensor) -> bool:
    try:
        return _cpp_bool(self)
    except ValueError as e:
        raise AmbiguousTruthError(str(e)) from None


class ItemConversionError(ValueError, RuntimeError):
    """item() of a tensor without exactly one element (ValueError for NumPy users,
    RuntimeError as torch raises)."""


def _dual_item(item: Callable[[Tensor], Any]) -> Callable[[Tensor], Any]:
    def method(self: Tensor) -> Any:
        try:
            return item(self)
        except ValueError as e:
            raise ItemConversionError(str(e)) from None
    method.__name__ = method.__qualname__ = "item"
    method.__doc__ = item.__doc__
    method.__wrapped_by_arg_errors__ = True  # type: ignore[attr-defined]  (C++ names itself)
    return method


def _accept_memory_format(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """`fn` that also takes torch's memory_format=<a tessera memory format> (tessera keeps
    row-major layouts, so the format is accepted and has no effect); other values still
    reach `fn`, which rejects them."""
    from ._torch_legacy import memory_format

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if isinstance(kwargs.get("memory_format"), memory_format):
            del kwargs["memory_format"]
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    method._core = fn  # type: ignore[attr-defined]  (a later, fuller wrapper calls fn directly)
    if not isinstance(fn, types.FunctionType):  # a C++ method names itself in its errors
        method.__wrapped_by_arg_errors__ = True  # type: ignore[attr-defined]
    return method


_INPLACE_OPERATORS = ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                      "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
                      "__irshift__", "__imatmul__")


def _cast_errors_as_torch(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """`fn` whose "can't be cast" dtype errors are InplaceCastError (TypeError as tessera's
    dtype errors, RuntimeError as torch raises)."""
    from ._inplace import InplaceCastError

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except TypeError as e:
            if "can't be cast" in str(e) and not isinstance(e, InplaceCastError):
                raise InplaceCastError(str(e)) from None
            raise
    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    if not isinstance(fn, types.FunctionType):  # a C++ method names itself in its errors
        method.__wrapped_by_arg_errors__ = True  # type: ignore[attr-defined]
    return method


def wrap_inplace_cast_errors() -> None:
    """Applies _cast_errors_as_torch to the in-place operators and methods (run after every
    in-place method is attached)."""
    names = [n for n in dir(Tensor) if (n.endswith("_") and not n.startswith("_")
                                        and callable(getattr(Tensor, n, None)))]
    for name in (*_INPLACE_OPERATORS, *names):
        fn = getattr(Tensor, name, None)
        if fn is None or isinstance(fn, property) or name in ("requires_grad_", "share_memory_",
                                                                "detach_", "retain_grad"):
            continue
        setattr(Tensor, name, _cast_errors_as_torch(fn, name))


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


def install() -> None:
    """Attaches the Tensor attributes above."""
    from ._torch_legacy import strided
    Tensor._set_data = _set_data
    Tensor.__bool__ = _bool
    Tensor.item = _dual_item(Tensor.item)
    for name in ("clone", "contiguous"):  # Tensor.to takes memory_format itself
        setattr(Tensor, name, _accept_memory_format(getattr(Tensor, name), name))
    for name in ("squeeze_", "unsqueeze_", "t_", "transpose_", "swapaxes_", "swapdims_",
                 "as_strided_"):
        setattr(Tensor, name, _metadata_inplace(name))
    Tensor.resize_ = _resize_
    Tensor.resize_as_ = _resize_as_
    Tensor.set_ = _set_
    Tensor.new = _new
    Tensor.new_empty_strided = _new_empty_strided
    Tensor.index_reduce = _index_reduce
    Tensor.index_reduce_ = _index_reduce_
    Tensor.map_ = _map_
    Tensor.map2_ = _map2_
    Tensor.as_strided_scatter = _as_strided_scatter
    Tensor.conj_physical = _conj_physical
    Tensor.conj_physical_ = _conj_physical_
    Tensor.layout = property(lambda self: strided, doc="Always tessera.strided.")
    Tensor.name = property(lambda self: None, doc="None (tessera has no named tensors).")
    Tensor.dense_dim = lambda self: self.ndim
    Tensor.sparse_dim = lambda self: 0
    Tensor.to_dense = lambda self, dtype=None, *, masked_grad=None: \
        self if dtype is None else self.astype(dtype)
    Tensor.module_load = _module_load
    Tensor.untyped_storage = lambda self: UntypedStorage(self)
    Tensor.storage = lambda self: TypedStorage(self)

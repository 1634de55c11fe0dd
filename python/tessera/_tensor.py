"""Python-level Tensor methods: printing, conversions, and the torch-style conveniences that
take flexible arguments. The hot operators are bound in C++ (csrc/python/bind_tensor.cpp)."""
from __future__ import annotations

import builtins
from typing import Any, Optional

import numpy as np

from . import _C
from ._C import Tensor
from ._dtypes import _as_dtype, bfloat16, float32

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


def _move(x: Tensor, device: Any, non_blocking: builtins.bool) -> Tensor:
    """x on `device`; differentiable (the gradient moves back to x's device)."""
    if x.requires_grad and _C.is_grad_enabled():
        from .autograd import Function

        class _ToDevice(Function):
            @staticmethod
            def forward(ctx: Any, t: Tensor) -> Tensor:
                ctx.src = t.device
                return _C._to_device(t, device, non_blocking)

            @staticmethod
            def backward(ctx: Any, g: Tensor) -> Tensor:
                return _C._to_device(g, ctx.src, False)

        return _ToDevice.apply(x)
    return _C._to_device(x, device, non_blocking)


def _to_device(self: Tensor, device: Any, /, *, stream: Any = None) -> Tensor:
    """The array API's to_device: this tensor on `device` (itself when already there).

    `stream` (a ts.cuda.Stream or None) queues the copy on that stream.
    """
    d = _C.Device(device)
    if d == self.device:
        return self
    if stream is not None:
        from . import cuda
        with cuda.stream(stream):
            return _move(self, d, False)
    return _move(self, d, False)


def _to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """x.to(dtype), x.to(device), x.to(device, dtype), x.to(other) like PyTorch.

    non_blocking=True lets a host-to-device copy from pinned memory, or a device-to-host copy
    (into pinned memory), run asynchronously: synchronize before reading the result.
    """
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    non_blocking = builtins.bool(kwargs.pop("non_blocking", False))
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to: unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, (str, _C.Device)) or (hasattr(a, "type") and hasattr(a, "index")):
            device = a
        elif isinstance(a, builtins.bool):
            non_blocking = a
        else:
            dtype = _as_dtype(a)
    out = self
    if device is not None and _C.Device(device) != out.device:
        out = _move(out, _C.Device(device), non_blocking)
    if dtype is not None and _as_dtype(dtype) != out.dtype:
        out = _C._astype(out, _as_dtype(dtype), True)
    if memory_format is not None:
        out = _C._to_memory_format(out, memory_format, "to")
    return _C._clone(out) if copy and out is self else out


def _cuda(self: Tensor, device: Any = None, non_blocking: builtins.bool = False) -> Tensor:
    """This tensor on a CUDA device (default: the current one)."""
    if device is None:
        from . import cuda
        device = f"cuda:{cuda.current_device()}"
    elif isinstance(device, builtins.int):
        device = f"cuda:{device}"
    return _to(self, device, non_blocking=non_blocking)


def _cpu(self: Tensor) -> Tensor:
    return self if self.device.type == "cpu" else _move(self, "cpu", False)


def _pin_memory(self: Tensor) -> Tensor:
    """A copy of this CPU tensor in page-locked memory (fast, asynchronous copies to the GPU)."""
    return _C._pin_memory(self)


def _record_stream(self: Tensor, stream: Any) -> None:
    """Marks this tensor's memory as used by `stream` too: the allocator will not reuse it
    until that stream's queued work is done."""
    _C._cuda.record_stream(self, stream.cuda_stream)


def _astype_method(self: Tensor, dtype: Any, /, *, copy: builtins.bool = True) -> Tensor:
    return _C._astype(self, _as_dtype(dtype), copy)


def _shape_args(shape: tuple) -> Any:
    return shape[0] if len(shape) == 1 and not isinstance(shape[0], (builtins.int, np.integer)) else shape


def _one_keyword(op: str, name: str, given: tuple, value: Any) -> tuple:
    """torch's keyword form (x.view(size=...), x.reshape(shape=...)) as the varargs tuple."""
    if given:
        raise TypeError(f"{op}() got multiple values for argument '{name}'")
    return (value,)


def _reshape(self: Tensor, *sizes: Any, shape: Any = None) -> Tensor:
    if shape is not None:
        sizes = _one_keyword("reshape", "shape", sizes, shape)
    return _C._reshape(self, _shape_args(sizes), -1)


def _view(self: Tensor, *shape: Any, size: Any = None, dtype: Any = None) -> Tensor:
    if size is not None or dtype is not None:  # torch's view(size=...) / view(dtype=...)
        if size is not None and dtype is not None:
            raise TypeError("view() takes either size= or dtype=, not both")
        shape = _one_keyword("view", "size" if dtype is None else "dtype", shape,
                             _as_dtype(dtype) if dtype is not None else size)
    if len(shape) == 1 and isinstance(shape[0], _C.dtype):
        if shape[0] == self.dtype:
            return _C._reshape(self, self.shape, 0)
        return _C._view_dtype(self, shape[0])
    return _C._reshape(self, _shape_args(shape), 0)


def _permute(self: Tensor, *order: Any, dims: Any = None) -> Tensor:
    if dims is not None:
        order = _one_keyword("permute", "dims", order, dims)
    return _C._permute_dims(self, _shape_args(order))


def _transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    perm = list(range(self.ndim))
    d0, d1 = dim0 % builtins.max(self.ndim, 1), dim1 % builtins.max(self.ndim, 1)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return _C._permute_dims(self, perm)


def _is_pinned(self: Tensor) -> builtins.bool:
    return _C._is_pinned(self)


def _is_cuda(self: Tensor) -> builtins.bool:
    return self.device.type == "cuda"


def _is_cpu(self: Tensor) -> builtins.bool:
    return self.device.type == "cpu"

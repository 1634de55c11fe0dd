"""PyTorch's leftovers that belong to no family of ops (issue 17: the one module for them):
``device``, ``Size``, layouts and memory formats, the legacy typed-tensor classes
(``torch.FloatTensor(2, 3)``, ``isinstance(x, torch.LongTensor)``), window functions,
build/feature flags, deprecated spellings, and the functions torch removed (which raise
torch's error naming their replacement)."""
from __future__ import annotations

import math
import operator
from typing import Any, Optional, Sequence

from ._C import Device, Tensor

device = Device
"""torch.device: tessera's Device (``ts.device('cpu')``, ``ts.device('cuda', 0)``)."""


class Size(tuple):
    """A shape tuple with torch.Size's repr and ``numel()``: its items are ints of int64's
    range (anything with ``__index__``, as torch.Size), so a Size from a checkpoint or a user
    holds no floats, nested tuples or ints no tensor can have."""

    def __new__(cls, sizes: Any = ()) -> "Size":
        items = tuple(sizes)
        # int subclasses stay as they are (the ONNX tracer's DimInt carries its graph value)
        if not all(isinstance(v, int) and type(v) is not bool for v in items):
            fixed = []
            for i, v in enumerate(items):
                try:
                    fixed.append(v if isinstance(v, int) and type(v) is not bool
                                 else operator.index(v))
                except TypeError:
                    raise _errors().TypeError(
                        f"Size: takes an iterable of 'int' (item {i} is "
                        f"'{type(v).__name__}')") from None
            items = tuple(fixed)
        for v in items:
            if not -2**63 <= v < 2**63:
                raise _errors().IntRangeError(f"Size: {v} does not fit in int64; hint: a size "
                                              f"must be a 64-bit integer")
        return super().__new__(cls, items)

    def __repr__(self) -> str:
        return f"tessera.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)


class _Named:
    """A named singleton (layouts, memory formats) printing as ``tessera.<name>``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"tessera.{self.name}"

    def __reduce__(self) -> str:
        return self.name


class layout(_Named):
    """torch.layout: tessera tensors are always ``strided``."""


class memory_format(_Named):
    """torch.memory_format: accepted where torch takes one; tessera keeps row-major."""


strided = layout("strided")
sparse_coo = layout("sparse_coo")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = contiguous_format


def _ts() -> Any:
    import tessera
    return tessera


def _errors() -> Any:
    from . import errors
    return errors


class _TypedTensorMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and str(obj.dtype).rsplit(".", 1)[-1] == cls._dtype_name


def _typed_tensor(cls_name: str, dtype_name: str) -> type:
    def __new__(cls: Any, *args: Any, device: Any = None) -> Tensor:  # noqa: N807
        ts = _ts()
        dt = getattr(ts, dtype_name)
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, Tensor):
                return data.astype(dt)
            if isinstance(data, (tuple, list)) and all(isinstance(v, int) for v in data) \
                    and type(data).__name__ == "Size":
                return ts.empty(tuple(data), dtype=dt, device=device)
            return ts.asarray(data, dtype=dt, device=device)
        if not all(isinstance(a, int) for a in args):
            raise TypeError(f"{cls_name}(): expected sizes (ints) or data, got {args}")
        return ts.empty(tuple(args), dtype=dt, device=device)

    return _TypedTensorMeta(cls_name, (), {
        "__new__": __new__, "_dtype_name": dtype_name, "__module__": "tessera",
        "__doc__": f"Legacy torch.{cls_name}: {cls_name}(*sizes) is uninitialized, "
                   f"{cls_name}(data) converts; isinstance checks the dtype ({dtype_name})."})


def _tensor_init(*args: Any, device: Any = None) -> Tensor:
    """The tensor ``torch.Tensor(*args)`` makes (Tensor.__init__, csrc/python/bind_tensor.cpp):
    ``Tensor()`` empty, ``Tensor(2, 3)`` / ``Tensor(torch.Size([2, 3]))`` uninitialized,
    ``Tensor(data)`` the data (a sequence or array) converted, all in the default dtype;
    ``Tensor(tensor)`` that tensor itself (an alias of any dtype)."""
    ts = _ts()
    dt = ts.get_default_dtype()
    if len(args) == 1 and not isinstance(args[0], int):
        data = args[0]
        if isinstance(data, Tensor):
            return data
        if isinstance(data, Size):
            return ts.empty(tuple(data), dtype=dt, device=device)
        if isinstance(data, (bool, float, complex, str)) or data is None:
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return ts.asarray(data, dtype=dt, device=device, copy=True)
    for a in args:
        if isinstance(a, bool) or not isinstance(a, int):
            raise TypeError(f"new() received an invalid combination of arguments: expected "
                            f"sizes (ints) or one data argument, got "
                            f"({', '.join(type(v).__name__ for v in args)})")
    return ts.empty(tuple(args) if args else (0,), dtype=dt, device=device)


FloatTensor = _typed_tensor("FloatTensor", "float32")
DoubleTensor = _typed_tensor("DoubleTensor", "float64")
HalfTensor = _typed_tensor("HalfTensor", "float16")
BFloat16Tensor = _typed_tensor("BFloat16Tensor", "bfloat16")
LongTensor = _typed_tensor("LongTensor", "int64")
IntTensor = _typed_tensor("IntTensor", "int32")
ShortTensor = _typed_tensor("ShortTensor", "int16")
CharTensor = _typed_tensor("CharTensor", "int8")
ByteTensor = _typed_tensor("ByteTensor", "uint8")
BoolTensor = _typed_tensor("BoolTensor", "bool")


# ----------------------------------------------------------------------------- windows
def _window(name: str, window_length: int, periodic: bool, dtype: Any, device: Any,
            requires_grad: bool, values: Any) -> Tensor:
    ts = _ts()
    if isinstance(window_length, bool) or not isinstance(window_length, int):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if not isinstance(periodic, bool):
        raise TypeError(f"{name}(): argument 'periodic' (position 2) must be bool, not "
                        f"{type(periodic).__name__}")
    dt = ts.get_default_dtype() if dtype is None else dtype
    if not ts.isdtype(dt, "real floating"):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dt}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length == 0:
        out = ts.empty((0,), dtype=dt, device=device)
    elif window_length == 1:
        out = ts.ones((1,), dtype=dt, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        k = ts.arange(n, dtype=ts.float64)
        out = values(k, n)[:window_length].astype(dt)
        if device is not None:
            out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """0.5 - 0.5 cos(2 pi k / (N - 1)) (N = window_length + 1 when `periodic`)."""
    ts = _ts()
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 0.5 - 0.5 * ts.cos(2 * math.pi * k / (n - 1)))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False) -> Tensor:
    """alpha - beta cos(2 pi k / (N - 1))."""
    ts = _ts()
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: alpha - beta * ts.cos(2 * math.pi * k / (n - 1)))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None,
                    requires_grad: bool = False) -> Tensor:
    """0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))."""
    ts = _ts()
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 0.42 - 0.5 * ts.cos(2 * math.pi * k / (n - 1))
                   + 0.08 * ts.cos(4 * math.pi * k / (n - 1)))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None,
                    requires_grad: bool = False) -> Tensor:
    """1 - |2k / (N - 1) - 1|."""
    ts = _ts()
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 1 - ts.abs(2 * k / (n - 1) - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    """I0(beta sqrt(1 - (2k / (N - 1) - 1)^2)) / I0(beta)."""
    import numpy as np
    ts = _ts()

    def values(k: Tensor, n: int) -> Tensor:
        x = k.numpy()
        return ts.asarray(np.i0(beta * np.sqrt(np.clip(1 - (2 * x / (n - 1) - 1) ** 2, 0, None)))
                          / np.i0(beta))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, values)


# ----------------------------------------------------------------------------- flags
has_lapack = True
has_mkl = False
has_openmp = True
has_spectral = True


def is_vulkan_available() -> bool:
    return False


def _ints(op: str, arg: str, v: Any) -> tuple:
    """`v` (a sequence of ints) as a tuple; torch's TypeError naming `op` otherwise."""
    if not isinstance(v, (list, tuple)) or not all(
            isinstance(e, int) and not isinstance(e, bool) for e in v):
        raise TypeError(f"{op}(): argument '{arg}' must be tuple of ints, not "
                        f"{type(v).__name__}")
    return tuple(v)


def _expect_tensor(x: Any, name: str, arg: str = "input", position: int = 1) -> None:
    """torch's TypeError for a non-tensor where `name` takes the Tensor `arg`."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{type(x).__name__}")


def cudnn_is_acceptable(tensor: Tensor) -> bool:
    """False: tessera has no cuDNN path."""
    _expect_tensor(tensor, "cudnn_is_acceptable")
    return False


def compiled_with_cxx11_abi() -> bool:
    return True


def is_distributed(input: Tensor) -> bool:
    _expect_tensor(input, "is_distributed")
    return False


def set_default_tensor_type(t: Any) -> None:
    """Deprecated: sets the default float dtype from a typed-tensor class or its name."""
    ts = _ts()
    names = {"torch.FloatTensor": "float32", "torch.DoubleTensor": "float64",
             "tessera.FloatTensor": "float32", "tessera.DoubleTensor": "float64"}
    name = names.get(t) if isinstance(t, str) else getattr(t, "_dtype_name", None)
    if name not in ("float32", "float64"):
        raise TypeError("only floating-point types are supported as the default type")
    ts.set_default_dtype(getattr(ts, name))


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of `tensor` (torch.to_dlpack)."""
    _expect_tensor(tensor, "to_dlpack", "tensor")
    return tensor.__dlpack__()


def matrix_rank(input: Tensor, tol: Optional[float] = None, symmetric: bool = False) -> Tensor:
    """Deprecated torch.matrix_rank: linalg.matrix_rank with absolute tolerance `tol`."""
    ts = _ts()
    _expect_tensor(input, "matrix_rank")
    if tol is None:
        return ts.linalg.matrix_rank(input)
    return (ts.linalg.svdvals(input) > tol).sum(-1)


def nuclear_norm(input: Tensor, dim: Optional[Sequence[int]] = None,
                 keepdim: bool = False) -> Tensor:
    """The sum of singular values over the two dims `dim` (default the last two)."""
    ts = _ts()
    _expect_tensor(input, "nuclear_norm")
    x = input if dim is None else ts.moveaxis(input, _ints("nuclear_norm", "dim", dim), (-2, -1))
    out = ts.linalg.matrix_norm(x, ord="nuc", keepdims=keepdim)
    if keepdim and dim is not None:
        out = ts.moveaxis(out, (-2, -1), tuple(dim))
    return out


def frobenius_norm(input: Tensor, dim: Sequence[int] = (-2, -1), keepdim: bool = False) -> Tensor:
    """sqrt of the sum of squares over `dim`."""
    ts = _ts()
    _expect_tensor(input, "frobenius_norm")
    return ts.linalg.vector_norm(input, ord=2, axis=_ints("frobenius_norm", "dim", dim),
                                 keepdims=keepdim)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """nn.functional.pad with mode 'constant' (negative pads crop)."""
    from .nn.functional import pad as _pad
    _expect_tensor(input, "constant_pad_nd")
    return _pad(input, _ints("constant_pad_nd", "pad", pad), mode="constant", value=value)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> Any:
    _expect_tensor(input, "unsafe_chunk")
    return input.chunk(chunks, dim)


def unsafe_split(input: Tensor, split_size: Any, dim: int = 0) -> Any:
    _expect_tensor(input, "unsafe_split")
    return input.split(split_size, dim)


def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> Any:
    _expect_tensor(input, "unsafe_split_with_sizes")
    return input.split(list(_ints("unsafe_split_with_sizes", "split_sizes", split_sizes)), dim)


__all__ = ["device", "Size", "layout", "memory_format", "strided", "sparse_coo",
           "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
           "legacy_contiguous_format", "FloatTensor", "DoubleTensor", "HalfTensor",
           "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
           "ByteTensor", "BoolTensor", "hann_window", "hamming_window", "blackman_window",
           "bartlett_window", "kaiser_window", "has_lapack", "has_mkl", "has_openmp",
           "has_spectral", "is_vulkan_available", "cudnn_is_acceptable",
           "compiled_with_cxx11_abi", "is_distributed", "set_default_tensor_type", "to_dlpack",
           "matrix_rank", "nuclear_norm", "frobenius_norm", "constant_pad_nd", "unsafe_chunk",
           "unsafe_split", "unsafe_split_with_sizes"]


# ---- torch.typename and the functions torch removed in 1.9
_TYPENAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
              "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
              "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
              "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
              "complex128": "ComplexDoubleTensor"}


def typename(obj: Any) -> str:
    """'tessera.FloatTensor' style names for tensors, else the object's qualified type."""
    if isinstance(obj, Tensor):
        return "tessera." + _TYPENAMES.get(str(obj.dtype).rsplit(".", 1)[-1], "Tensor")
    module, qual = "", ""
    if hasattr(obj, "__module__"):
        module = obj.__module__ + "."
    if hasattr(obj, "__qualname__"):
        qual = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qual = obj.__name__
    else:
        module = obj.__class__.__module__ + "."
        qual = obj.__class__.__qualname__
    if module in ("", "builtins."):
        module = ""
    return module + qual


def _removed_error(name: str, hint: str) -> RuntimeError:
    return RuntimeError(f"This function was deprecated since version 1.9 and is now removed. "
                        f"`torch.{name}` is deprecated in favor of {hint}.")


def solve(input: Tensor, A: Tensor) -> Any:
    """Removed from torch in 1.9: use linalg.solve."""
    raise _removed_error("solve", "`torch.linalg.solve`")


def lstsq(input: Tensor, A: Tensor) -> Any:
    """Removed from torch in 1.9: use linalg.lstsq."""
    raise _removed_error("lstsq", "`torch.linalg.lstsq`")


def eig(input: Tensor, eigenvectors: bool = False) -> Any:
    """Removed from torch in 1.9: use linalg.eig."""
    raise _removed_error("eig", "`torch.linalg.eig`")


def symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True) -> Any:
    """Removed from torch in 1.9: use linalg.eigh."""
    raise _removed_error("symeig", "`torch.linalg.eigh`")


__all__ += ["typename", "solve", "lstsq", "eig", "symeig"]

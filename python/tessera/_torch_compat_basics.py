"""PyTorch-style Tensor basics: the callable ``size``, dtype conversions (x.float(), x.long(),
x.type(...), ...), and the small query methods (numel, element_size, is_floating_point...).

Note [callable size]: the array API makes ``x.size`` an int property (the element count),
PyTorch makes it a method ``x.size(dim=None)``. ``x.size`` here is an int subclass that is
also callable: ``x.size == 6`` and ``isinstance(x.size, int)`` hold, ``x.size()`` returns the
shape tuple and ``x.size(1)`` / ``x.size(-1)`` one extent.
"""
from __future__ import annotations

import builtins
from typing import Any, Optional, Tuple

from . import _C
from ._C import Tensor
from ._dtypes import (_as_dtype, bfloat16, bool as bool_, complex64, complex128, float16,
                      float32, float64, int8, int16, int32, int64, uint8)

__all__: list = []


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


# ---- dtype conversions
def _converter(dtype: Any, name: str) -> Any:
    def convert(self: Tensor, memory_format: Any = None) -> Tensor:
        return self if self.dtype == dtype else _C._astype(self, dtype, True)
    convert.__name__ = name
    convert.__doc__ = f"torch.Tensor.{name}(): this tensor as {dtype.name} (itself when it already is)."
    return convert


_CONVERSIONS = {"float": float32, "double": float64, "half": float16, "bfloat16": bfloat16,
                "long": int64, "int": int32, "short": int16, "char": int8, "byte": uint8,
                "bool": bool_, "cfloat": complex64, "cdouble": complex128}

_TYPE_NAMES = {float32: "FloatTensor", float64: "DoubleTensor", float16: "HalfTensor",
               bfloat16: "BFloat16Tensor", int64: "LongTensor", int32: "IntTensor",
               int16: "ShortTensor", int8: "CharTensor", uint8: "ByteTensor",
               bool_: "BoolTensor", complex64: "ComplexFloatTensor",
               complex128: "ComplexDoubleTensor"}


def _type_name(t: Tensor) -> str:
    name = _TYPE_NAMES.get(t.dtype, f"{t.dtype.name}Tensor")
    return f"tessera.{'cuda.' if t.device.type == 'cuda' else ''}{name}"


def _type(self: Tensor, dtype: Any = None, non_blocking: builtins.bool = False, **kwargs: Any) -> Any:
    """torch.Tensor.type: with no dtype the type name (e.g. 'tessera.FloatTensor'); with a
    dtype (or a type name like 'torch.LongTensor') this tensor converted to it."""
    if dtype is None:
        return _type_name(self)
    if isinstance(dtype, str):
        short = dtype.rsplit(".", 1)[-1]
        by_name = {v: k for k, v in _TYPE_NAMES.items()}
        if short in by_name:
            dtype = by_name[short]
    d = _as_dtype(dtype)
    return self if d == self.dtype else _C._astype(self, d, True)


def _type_as(self: Tensor, other: Tensor) -> Tensor:
    """This tensor converted to `other`'s dtype."""
    if not isinstance(other, Tensor):
        raise TypeError(f"type_as: other must be a Tensor, got {type(other).__name__}")
    return _type(self, other.dtype)


# ---- queries
def _is_floating_point(self: Tensor) -> builtins.bool:
    return self.dtype in (float16, bfloat16, float32, float64)


def _is_complex(self: Tensor) -> builtins.bool:
    return self.dtype in (complex64, complex128)


def _is_signed(self: Tensor) -> builtins.bool:
    return self.dtype not in (bool_, uint8, _C.uint16, _C.uint32, _C.uint64)


def _get_device(self: Tensor) -> int:
    """-1 on the CPU, else the CUDA device index (torch.Tensor.get_device)."""
    return -1 if self.device.type == "cpu" else (self.device.index or 0)


def _is_nonzero(self: Tensor) -> builtins.bool:
    if self.size != 1:
        raise RuntimeError(f"is_nonzero: a tensor with {int(self.size)} elements is ambiguous; "
                           "it needs exactly one element")
    return builtins.bool(self.item())


def _is_same_size(self: Tensor, other: Tensor) -> builtins.bool:
    return tuple(self.shape) == tuple(other.shape)


def _data_get(self: Tensor) -> Tensor:
    """torch's ``.data``: this tensor's values without autograd history (shares memory)."""
    return self.detach()


def _data_set(self: Tensor, value: Tensor) -> None:
    """torch's ``t.data = value``: t keeps its identity (and autograd flags) but takes value's
    storage, shape and dtype."""
    if not isinstance(value, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
    if self.requires_grad and not (_is_floating_point(value) or _is_complex(value)):
        raise RuntimeError("data set to a tensor that requires gradients must be floating point "
                           "or complex dtype")
    self._set_data(value)


def _no_grad() -> Any:
    from .autograd import no_grad
    return no_grad()


def _adjoint(self: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (a view for real tensors)."""
    if self.ndim < 2:
        raise RuntimeError(f"adjoint: expected a tensor with 2 or more dimensions, got {self.ndim}")
    t = self.mT
    return _C.conj(t) if _is_complex(self) else t


def _H(self: Tensor) -> Tensor:
    if self.ndim not in (0, 2):
        raise RuntimeError(f"H: expected a matrix or a 0-d tensor, got {self.ndim} dimensions")
    if self.ndim == 0:
        return _C.conj(self) if _is_complex(self) else self
    return _adjoint(self)


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


def _stride(self: Tensor, dim: Optional[int] = None) -> Any:
    """x.stride() -> strides in elements (a tuple); x.stride(d) -> one of them."""
    st = _c_stride(self)
    if dim is None:
        return st
    return st[_dim_index("stride", dim, self.ndim)] if self.ndim else _zero_d_stride(dim)


def _zero_d_stride(dim: Any) -> Any:
    raise IndexError(f"stride: dimension specified as {dim} but tensor has no dimensions")


_c_stride = Tensor.stride


# ---- x.real / x.imag: views of a complex tensor's parts, writable (torch's and NumPy's)
def _real_get(self: Tensor) -> Tensor:
    if _is_complex(self):
        from ._torch_compat_functions import view_as_real
        return view_as_real(self)[..., 0]
    return self


def _imag_get(self: Tensor) -> Tensor:
    if _is_complex(self):
        from ._torch_compat_functions import view_as_real
        return view_as_real(self)[..., 1]
    return _C.imag(self)


def _real_set(self: Tensor, value: Any) -> None:
    _real_get(self)[...] = value


def _imag_set(self: Tensor, value: Any) -> None:
    if not _is_complex(self):
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


def _nelement(self: Tensor) -> int:
    return int(self.size)


def _ndimension(self: Tensor) -> int:
    return self.ndim


def _element_size(self: Tensor) -> int:
    return self.itemsize


def _false(self: Tensor) -> builtins.bool:
    return False


def _itself(self: Tensor) -> Tensor:
    return self


def _storage_offset(self: Tensor) -> int:
    return self._offset

"""Parameter: a leaf tensor that a Module registers as learnable.

Note [Parameter is a marker, not a subclass]
tessera.Tensor is a pybind11 class without a Python constructor, so a Python subclass
cannot be instantiated and `__class__` cannot be reassigned (the layouts differ). A
Parameter is therefore a plain leaf Tensor with ``requires_grad`` set and the marker
attribute ``_is_param``; ``isinstance(t, Parameter)`` checks the marker through a
metaclass, so code written for PyTorch (``isinstance(v, nn.Parameter)``) works unchanged.
Ops on a Parameter return plain tensors, as in PyTorch.
"""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any

from .._C import Tensor


class _ParameterMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and getattr(obj, "_is_param", False) is True


class Parameter(metaclass=_ParameterMeta):
    """``Parameter(data, requires_grad=True)``: a leaf tensor sharing `data`'s storage."""

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Tensor:  # type: ignore[misc]
        from .. import asarray, empty
        if data is None:
            data = empty((0,))
        elif not isinstance(data, Tensor):
            data = asarray(data)
        t = data.detach()
        t.requires_grad_(requires_grad)
        t._is_param = True
        return t


class _BufferMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and getattr(obj, "_is_buffer", False) is True


class Buffer(metaclass=_BufferMeta):
    """``Buffer(data, persistent=True)``: a tensor that assigning to a Module attribute
    registers as a buffer (PyTorch's ``nn.Buffer``)."""

    def __new__(cls, data: Any, *, persistent: bool = True) -> Tensor:  # type: ignore[misc]
        from .. import asarray
        t = data.detach() if isinstance(data, Tensor) else asarray(data)
        t._is_buffer = True
        t._persistent = persistent
        return t


from ._uninitialized import (UninitializedBuffer, UninitializedParameter,  # noqa: E402,F401
                             UninitializedTensorMixin, is_lazy)

"""UninitializedParameter / UninitializedBuffer: the shape-less placeholders of lazy modules
(torch.nn.parameter's classes of the same names).

As Parameter (Note [Parameter is a marker, not a subclass]), they are plain tessera tensors:
an empty (0,) tensor carrying the marker ``_is_lazy`` (plus ``_is_param`` for parameters).
``materialize(shape)`` gives the *same* object its real storage (``Tensor._set_data``) and drops
the marker, so an optimizer or a state dict holding it keeps working, as torch's in-place class
change does. Unlike torch, reading ``.shape`` of an uninitialized tensor gives (0,) instead of
raising, and ops on it fail with the op's own shape error rather than torch's ValueError.
"""
from __future__ import annotations

from typing import Any

from .._C import Tensor
from .parameter import Parameter, _ParameterMeta


def is_lazy(param: Any) -> bool:
    """True for an UninitializedParameter / UninitializedBuffer not materialized yet."""
    return isinstance(param, Tensor) and param.__dict__.get("_is_lazy", False) is True


def _new_uninitialized(requires_grad: bool, device: Any, dtype: Any) -> Tensor:
    from .. import empty
    t = empty((0,), dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_(True)
    t._is_lazy = True
    return t


def _materialize(self: Tensor, shape: Any, device: Any = None, dtype: Any = None) -> None:
    """Gives this uninitialized tensor uninitialized storage of `shape` (on its device, with
    its dtype unless `device` / `dtype` say otherwise); it becomes a regular
    Parameter / tensor, the same Python object."""
    from .. import empty
    if not is_lazy(self):
        raise RuntimeError("materialize: the tensor is already initialized")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    new = empty(shape, dtype=self.dtype if dtype is None else dtype,
                device=self.device if device is None else device)
    self._set_data(new)
    self.__dict__.pop("_is_lazy", None)


class _UninitializedParameterMeta(_ParameterMeta):
    def __instancecheck__(cls, obj: Any) -> bool:
        return is_lazy(obj) and getattr(obj, "_is_param", False) is True


class UninitializedTensorMixin:
    """Marker base of the two uninitialized kinds (torch's mixin of the same name)."""


class UninitializedParameter(UninitializedTensorMixin, Parameter,
                             metaclass=_UninitializedParameterMeta):
    """A Parameter whose shape is not known yet (lazy modules); ``materialize(shape)``
    turns it into a regular Parameter in place. ``isinstance(p, nn.Parameter)`` holds."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,  # type: ignore[misc]
                dtype: Any = None) -> Tensor:
        t = _new_uninitialized(requires_grad, device, dtype)
        t._is_param = True
        return t


class _UninitializedBufferMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return is_lazy(obj) and not getattr(obj, "_is_param", False)


class UninitializedBuffer(UninitializedTensorMixin, metaclass=_UninitializedBufferMeta):
    """A buffer whose shape is not known yet (lazy modules); ``materialize(shape)`` turns it
    into a regular tensor in place."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None,  # type: ignore[misc]
                dtype: Any = None, persistent: bool = True) -> Tensor:
        t = _new_uninitialized(requires_grad, device, dtype)
        # As torch: assigning one to a Module attribute registers a buffer.
        t._is_buffer = True
        t._persistent = t.persistent = persistent
        return t

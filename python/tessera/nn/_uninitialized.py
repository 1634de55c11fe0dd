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

from typing import Any, Callable, Optional

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


def _materialize_attr(self: Tensor) -> Callable[..., None]:
    # Only uninitialized tensors have a materialize method (as in torch).
    if not is_lazy(self):
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'materialize'")
    return lambda shape, device=None, dtype=None: _materialize(self, shape, device, dtype)


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


def _uninitialized_repr(self: Tensor, base: Callable[[Tensor], str],
                        param_base: Optional[Callable[[Tensor], str]] = None) -> str:
    """torch's reprs: '<UninitializedParameter>', and 'Parameter containing:' before a
    parameter's values."""
    d = self.__dict__
    if d.get("_is_lazy", False):
        return "<UninitializedParameter>" if d.get("_is_param", False) \
            else "<UninitializedBuffer>"
    if d.get("_is_param", False):
        return "Parameter containing:\n" + (param_base or base)(self)
    return base(self)


def install() -> None:
    """Attaches ``materialize`` and the Parameter / placeholder reprs to Tensor (once)."""
    if getattr(Tensor, "_uninitialized_installed", False):
        return
    base_repr, base_str = Tensor.__repr__, Tensor.__str__
    Tensor.__repr__ = lambda self: _uninitialized_repr(self, base_repr)  # type: ignore
    Tensor.__str__ = lambda self: _uninitialized_repr(self, base_str, base_repr)  # type: ignore
    Tensor.materialize = property(_materialize_attr)  # type: ignore[attr-defined]
    Tensor._uninitialized_installed = True  # type: ignore[attr-defined]


install()

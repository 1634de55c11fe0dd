"""PyTorch parity details of the Tensor object itself.

Note [grad identity]
The C++ ``grad`` getter wraps the stored gradient in a new Python object on each read, so
``p.grad is p.grad`` was False, unlike torch (where optimizers, ``zero_grad(set_to_none=False)``
and ``model.double()`` keep the very same ``.grad`` object). The getter below remembers the last
wrapper it handed out (weakly, so it never keeps a replaced gradient alive) and returns it again
while it still wraps the stored TensorImpl (``_impl_id``).
"""
from __future__ import annotations

import weakref
from typing import Any, Optional

from ._C import Tensor

_cpp_grad = Tensor.grad


def _grad_get(self: Tensor) -> Optional[Tensor]:
    g = _cpp_grad.fget(self)
    if g is None:
        return None
    d = self.__dict__
    ref = d.get("_grad_ref")
    cached = ref() if ref is not None else None
    if cached is not None and cached._impl_id == g._impl_id:
        return cached
    d["_grad_ref"] = weakref.ref(g)
    return g


def _grad_set(self: Tensor, value: Any) -> None:
    _cpp_grad.fset(self, value)
    if value is None:
        self.__dict__.pop("_grad_ref", None)
    else:
        self.__dict__["_grad_ref"] = weakref.ref(value)


def _grad_del(self: Tensor) -> None:
    _grad_set(self, None)


def install() -> None:
    """Attaches the Tensor attributes above."""
    Tensor.grad = property(_grad_get, _grad_set, _grad_del, _cpp_grad.__doc__)

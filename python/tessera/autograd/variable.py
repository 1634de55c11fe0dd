"""torch.autograd.Variable, deprecated in PyTorch: kept for old code."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any

from .._C import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated torch.autograd.Variable: Variable(t, requires_grad=False) is t (as a leaf
    sharing its memory with the flag set); isinstance(x, Variable) holds for every tensor."""

    def __new__(cls, data: Tensor, requires_grad: bool = False,  # type: ignore[misc]
                volatile: bool = False) -> Tensor:
        t = data.detach() if data.requires_grad and not requires_grad else data
        if requires_grad:
            t = t.detach().requires_grad_(True)
        return t

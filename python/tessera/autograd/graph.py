"""tessera.autograd.graph: hooks on the tensors the graph saves for backward (torch.autograd.graph).

    with ts.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).sum()      # every tensor saved for backward goes through pack(t)
    y.backward()               # ... and comes back through unpack(packed)
"""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable

from .. import _C
from .._C import Tensor

Node = _C.Node

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class saved_tensors_hooks:
    """Context manager: pack_hook(tensor) -> object runs when an op (or ctx.save_for_backward)
    saves a tensor; unpack_hook(object) -> tensor runs each time backward needs it. Pairs nest
    (the innermost applies) and are per thread. Tensors saved under a hook pair are not
    version-checked (PyTorch still checks them)."""

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> "saved_tensors_hooks":
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc: Any) -> None:
        _C._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are moved to the CPU during forward and back to their device in backward
    (to trade device memory for transfers). pin_memory is accepted for PyTorch compatibility."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor) -> Any:
            return (t.device, t.to("cpu"))

        def unpack(packed: Any) -> Tensor:
            device, t = packed
            return t.to(device)
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager / decorator: inside it, registering saved_tensors_hooks raises
    RuntimeError(error_message) (e.g. for code that must not be combined with them)."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self._prev = _C._saved_tensors_hooks_disabled()
        _C._set_saved_tensors_hooks_disabled(self.error_message)

    def __exit__(self, *exc: Any) -> None:
        _C._set_saved_tensors_hooks_disabled(self._prev)

    def __call__(self, fn: Callable) -> Callable:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper

"""no_grad / enable_grad / set_grad_enabled / inference_mode: context managers and decorators."""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from .. import _C

F = TypeVar("F", bound=Callable[..., Any])


class _GradModeContext:
    """Base: sets grad mode on enter, restores it on exit; usable as a decorator."""

    _enabled: bool = True

    def __enter__(self) -> None:
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)

    def __exit__(self, *exc: Any) -> None:
        _C._set_grad_enabled(self._prev)

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__(*self._ctor_args()):
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]

    def _ctor_args(self) -> tuple:
        return ()


class no_grad(_GradModeContext):
    """Ops inside do not record the graph (outputs don't require grad)."""

    _enabled = False


class enable_grad(_GradModeContext):
    """Re-enables recording inside a no_grad block."""

    _enabled = True


class set_grad_enabled(_GradModeContext):
    """set_grad_enabled(mode): as a function it sets the mode now; as a context it restores it."""

    def __init__(self, mode: bool) -> None:
        self._enabled = bool(mode)
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _C._set_grad_enabled(self._prev)

    def _ctor_args(self) -> tuple:
        return (self._enabled,)

    def __call__(self, fn: F) -> F:
        _C._set_grad_enabled(self._prev)  # the decorator form must not change the mode now
        return super().__call__(fn)


class inference_mode(_GradModeContext):
    """Like no_grad (tessera has no separate inference tensors); inference_mode(False) is a no-op."""

    def __init__(self, mode: bool = True) -> None:
        self._mode = bool(mode)

    def __enter__(self) -> None:
        self._prev = _C.is_grad_enabled()
        if self._mode:
            _C._set_grad_enabled(False)

    def _ctor_args(self) -> tuple:
        return (self._mode,)


def is_grad_enabled() -> bool:
    return _C.is_grad_enabled()


def is_inference_mode_enabled() -> bool:
    return not _C.is_grad_enabled()

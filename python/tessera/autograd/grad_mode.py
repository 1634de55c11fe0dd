"""no_grad / enable_grad / set_grad_enabled / inference_mode: context managers and decorators.

As in PyTorch, each works as `with ts.no_grad():`, as `@ts.no_grad()` and as a bare
`@ts.no_grad` decorator; the mode is per thread."""
from __future__ import annotations

import functools as _functools
import inspect as _inspect
import threading as _threading
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable

from .. import _C

_F = _t.TypeVar("_F", bound=_t.Callable[..., _t.Any])
_Ctx = _t.TypeVar("_Ctx", bound="_GradModeContext")

_inference = _threading.local()  # .depth: how many inference_mode(True) regions are open


def _wrap(make_ctx: Callable[[], Any], fn: _F) -> _F:
    """fn run inside a fresh context from make_ctx (generators: around each step, as torch)."""
    if _inspect.isgeneratorfunction(fn):
        @_functools.wraps(fn)
        def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
            gen = fn(*args, **kwargs)
            try:
                with make_ctx():
                    item = next(gen)
                while True:
                    try:
                        sent = yield item
                    except GeneratorExit:
                        with make_ctx():
                            gen.close()
                        raise
                    except BaseException as exc:  # forwarded into the generator, like torch
                        with make_ctx():
                            item = gen.throw(exc)
                    else:
                        with make_ctx():
                            item = gen.send(sent)
            except StopIteration as stop:
                return stop.value
        return gen_wrapper  # type: ignore[return-value]

    @_functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with make_ctx():
            return fn(*args, **kwargs)
    return wrapper  # type: ignore[return-value]


class _GradModeContext:
    """Base: sets grad mode on enter, restores it on exit; usable as a decorator."""

    _enabled: bool = True

    def __new__(cls: "type[_Ctx]", orig_func: Any = None) -> _Ctx:
        # `@no_grad` without parentheses passes the function itself (typed as the context,
        # the common form, so `@ts.no_grad()` keeps the decorated function's type).
        if orig_func is None:
            return super().__new__(cls)
        if not callable(orig_func):
            raise TypeError(f"{cls.__name__}() takes no arguments")
        return cls()(orig_func)  # type: ignore[no-any-return]

    def __enter__(self) -> None:
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)

    def __exit__(self, *exc: Any) -> None:
        _C._set_grad_enabled(self._prev)

    def __call__(self, fn: _F) -> _F:
        return _wrap(self.clone, fn)

    def clone(self) -> "_GradModeContext":
        """A fresh context with the same settings (a decorator enters one per call)."""
        return self.__class__()


class no_grad(_GradModeContext):
    """Ops inside do not record the graph (outputs don't require grad)."""

    _enabled = False


class enable_grad(_GradModeContext):
    """Re-enables recording inside a no_grad block."""

    _enabled = True


class set_grad_enabled(_GradModeContext):
    """set_grad_enabled(mode): as a function it sets the mode now; as a context it restores it."""

    def __new__(cls, mode: bool) -> "set_grad_enabled":
        return object.__new__(cls)

    def __init__(self, mode: bool) -> None:
        self._enabled = bool(mode)
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _C._set_grad_enabled(self._prev)

    def clone(self) -> "set_grad_enabled":
        prev = _C.is_grad_enabled()
        ctx = set_grad_enabled(self._enabled)
        ctx._prev = prev
        return ctx

    def __call__(self, fn: _F) -> _F:
        _C._set_grad_enabled(self._prev)  # the decorator form must not change the mode now
        return super().__call__(fn)


class inference_mode(_GradModeContext):
    """inference_mode(mode=True): like no_grad, and is_inference_mode_enabled() is True inside.
    tessera has no separate inference tensors; inference_mode(False) changes nothing."""

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):  # bare @inference_mode
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: Any = True) -> None:
        self._mode = bool(mode)

    def __enter__(self) -> None:
        self._prev = _C.is_grad_enabled()
        self._prev_depth = getattr(_inference, "depth", 0)
        if self._mode:
            _C._set_grad_enabled(False)
            _inference.depth = self._prev_depth + 1
        else:
            _inference.depth = 0

    def __exit__(self, *exc: Any) -> None:
        _C._set_grad_enabled(self._prev)
        _inference.depth = self._prev_depth

    def clone(self) -> "inference_mode":
        return inference_mode(self._mode)


def is_grad_enabled() -> bool:
    """Whether ops record the autograd graph in this thread."""
    return _C.is_grad_enabled()


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside inference_mode() (not merely no_grad())."""
    return getattr(_inference, "depth", 0) > 0

"""torch.jit, run eagerly: tessera has no TorchScript compiler, so script / trace return
the module or function itself (as ts.compile does), and the annotations model code carries for
TorchScript (ignore, unused, export, annotate, Final, is_scripting, is_tracing) keep their
eager meaning. Saving a scripted module (torch.jit.save / load) is not available."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Optional  # noqa: F401

Final = _t.Final  # torch.jit.Final is typing's (`x: torch.jit.Final[int]` in model code)

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "annotate", "Final",
           "is_scripting", "is_tracing", "fork", "wait"]


def script(obj: Any, optimize: Optional[bool] = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """torch.jit.script: the module or function itself, run eagerly."""
    return obj


def trace(func: Any, example_inputs: Any = None, optimize: Optional[bool] = None,
          check_trace: bool = True, check_inputs: Any = None, check_tolerance: float = 1e-5,
          strict: bool = True, _force_outplace: bool = False, _module_class: Any = None,
          _compilation_unit: Any = None, example_kwarg_inputs: Any = None,
          _store_inputs: bool = True) -> Any:
    """torch.jit.trace: the module or function itself, run eagerly (example_inputs unused)."""
    return func


def trace_module(mod: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
    """torch.jit.trace_module: the module itself, run eagerly."""
    return mod


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """@torch.jit.ignore / @torch.jit.ignore(drop=True): leaves the function as it is."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: Callable) -> Callable:
    """@torch.jit.unused: leaves the function as it is."""
    return fn


def export(fn: Callable) -> Callable:
    """@torch.jit.export: leaves the method as it is."""
    return fn


def annotate(the_type: Any, the_value: Any) -> Any:
    """torch.jit.annotate(type, value): the value."""
    return the_value


def is_scripting() -> bool:
    """False: code always runs eagerly."""
    return False


def is_tracing() -> bool:
    """False: code always runs eagerly."""
    return False


class _Future:
    def __init__(self, value: Any) -> None:
        self._value = value

    def wait(self) -> Any:
        return self._value


def fork(func: Callable, *args: Any, **kwargs: Any) -> _Future:
    """torch.jit.fork: runs func now; wait() gives its result."""
    return _Future(func(*args, **kwargs))


def wait(future: _Future) -> Any:
    """torch.jit.wait: the forked call's result."""
    return future.wait()

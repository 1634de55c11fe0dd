"""Public namespaces hold public API only: no public name of a tessera module is a typing
construct (Optional, Any, a Union alias, a TypeVar) or a module object from outside tessera
(os, math, numpy as np, ...). Modules import those under a leading underscore (``import math as
_math``, ``import typing as _t``; names used only in annotations under ``if _t.TYPE_CHECKING``,
as every module has ``from __future__ import annotations``).

Compared with PyTorch: torch.cuda, torch.nn.functional and torch.nn.init leak such names
(``Optional``, ``os``, ``np``, ...); tessera's counterparts do not, and keep torch's public names.
"""
from __future__ import annotations

import __future__
import importlib
import inspect
import math as _math
import pkgutil
import types
import typing as _t

import pytest

import tessera as ts

# What `from __future__ import annotations` binds in every module that has it: a name no
# module can avoid while it uses the import.
UNAVOIDABLE = {"annotations"}
# Names a module re-exports as API, with the reason.
REEXPORTED = {
    "tessera.multiprocessing.reducer": "torch.multiprocessing re-exports the standard "
                                       "multiprocessing API, whose `reducer` is a module",
    "tessera.jit.Final": "torch.jit.Final is typing.Final, used in model code's annotations "
                         "(`k: torch.jit.Final[int]`)",
}


def _leak(value: _t.Any) -> _t.Optional[str]:
    """Why `value` is not public API, or None."""
    if isinstance(value, types.ModuleType):
        name = value.__name__
        return None if name == "tessera" or name.startswith("tessera.") else f"module {name}"
    if isinstance(value, (_t.TypeVar, __future__._Feature)):
        return type(value).__name__
    if type(value).__module__ in ("typing", "typing_extensions"):
        return f"typing {value!r}"
    if value is _t.Any or (getattr(value, "__module__", None) == "typing"
                           and not inspect.isclass(value)):
        return f"typing {value!r}"
    return None


def _public_modules() -> _t.Dict[str, types.ModuleType]:
    found: _t.Dict[str, types.ModuleType] = {}
    for info in pkgutil.walk_packages(ts.__path__, "tessera."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        try:
            found[info.name] = importlib.import_module(info.name)
        except ImportError:  # an optional dependency (tensorboard, onnx)
            continue
    found["tessera"] = ts
    return found


def test_public_names_are_no_typing_constructs_or_foreign_modules():
    leaks = []
    modules = _public_modules()
    for modname, mod in sorted(modules.items()):
        for name in sorted(dir(mod)):
            if name.startswith("_"):
                continue
            why = _leak(getattr(mod, name))
            if why and not (name in UNAVOIDABLE and why == "_Feature") \
                    and f"{modname}.{name}" not in REEXPORTED:
                leaks.append(f"{modname}.{name}: {why}")
    assert len(modules) > 100, len(modules)
    assert not leaks, "\n".join(leaks)


def test_the_check_catches_leaks():
    assert _leak(_t.Optional) and _leak(_t.Any) and _leak(_t.Optional[int])
    assert _leak(_t.Union[int, str]) and _leak(_t.TypeVar("T")) and _leak(_t.Callable[..., int])
    assert _leak(_math) and _leak(inspect) and _leak(__future__.annotations)
    assert not _leak(ts.nn) and not _leak(ts.ones) and not _leak(ts.Tensor) and not _leak(1)


@pytest.mark.parametrize("name", ["cuda", "autograd", "nn.functional", "nn.init", "linalg",
                                  "fft", "special", "optim", "utils.data", "amp", "random"])
def test_namespaces_keep_torchs_public_names(name):
    # removing the leaks removed no name torch also has as API (a function, class or module of
    # torch's own)
    torch = pytest.importorskip("torch")
    ours, theirs = ts, torch
    for part in name.split("."):
        ours, theirs = getattr(ours, part), getattr(theirs, part)
    for key in dir(theirs):
        value = getattr(theirs, key, None)
        if (key.startswith("_") or _leak(value) or hasattr(ours, key)
                or not getattr(value, "__module__", "").startswith("torch")):
            continue
        # torch's names tessera never had are not this test's business: only those whose
        # tessera spelling exists with a leading underscore (a rename too far)
        assert not hasattr(ours, "_" + key), f"ts.{name}.{key} became private"

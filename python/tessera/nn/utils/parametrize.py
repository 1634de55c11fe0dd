"""torch.nn.utils.parametrize: register_parametrization, remove_parametrizations,
is_parametrized, cached, ParametrizationList — with PyTorch's state-dict layout
(``parametrizations.<name>.original`` or ``original0``, ``original1``, ... and the
parametrization modules' own state under ``parametrizations.<name>.<i>``).

Note [Parametrized attributes by class injection]
As in PyTorch, the first parametrization of a module swaps its class for a fresh subclass
("Parametrized<Name>") that carries one property per parametrized tensor: reading it runs
the ParametrizationList, assigning to it runs the right inverses into the originals. The
properties live on the per-module class, so other instances are unaffected; removing the
last parametrization restores the original class.
"""
from __future__ import annotations

import contextlib as _contextlib
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Iterator, Optional, Sequence

from ..._C import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter


def _ts() -> Any:
    import tessera
    return tessera


def _is_param(t: Any) -> bool:
    return isinstance(t, Parameter)


def _as_original(value: Tensor, like: Tensor) -> Tensor:
    """A Parameter (when `like` is one, with its requires_grad) or plain tensor holding
    `value`."""
    v = value.detach()
    return Parameter(v, requires_grad=like.requires_grad) if _is_param(like) else v


class ParametrizationList(ModuleList):
    """The chain of parametrizations of one tensor plus its original(s)."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules")
        super().__init__(modules)
        self.unsafe = unsafe
        t = _ts()
        with t.no_grad():
            new: Any = original
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    new = m.right_inverse(new)
        self.is_tensor = isinstance(new, Tensor)
        if self.is_tensor:
            if new is not original and tuple(new.shape) == tuple(original.shape) \
                    and new.dtype == original.dtype:
                with t.no_grad():
                    original[...] = new  # keep the original object (optimizers hold it)
                new = original
            self._store("original", new if new is original else _as_original(new, original))
            self.ntensors = 1
        else:
            new = tuple(new)
            self.ntensors = len(new)
            for i, v in enumerate(new):
                self._store(f"original{i}", _as_original(v, original))
        if not unsafe:
            self._check(original)

    def _store(self, name: str, value: Tensor) -> None:
        if _is_param(value):
            self.register_parameter(name, value)
        else:
            self.register_buffer(name, value)

    def _check(self, original: Tensor) -> None:
        z = self()
        if not isinstance(z, Tensor):
            raise ValueError(f"A parametrization must return a tensor, got {type(z).__name__}")
        if z.dtype != original.dtype or tuple(z.shape) != tuple(original.shape):
            raise ValueError(f"Registering a parametrization may not change the shape or dtype "
                             f"of the tensor unless unsafe=True: {tuple(original.shape)} "
                             f"{original.dtype} became {tuple(z.shape)} {z.dtype}")

    def originals(self) -> Sequence[Tensor]:
        if self.is_tensor:
            return (self.original,)
        return tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def forward(self) -> Tensor:
        mods = list(self)
        x = mods[0](*self.originals())
        for m in mods[1:]:
            x = m(x)
        return x

    def right_inverse(self, value: Tensor) -> None:
        """Sets the originals so that the chain evaluates to `value`."""
        t = _ts()
        with t.no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    value = m.right_inverse(value)
                elif not self.unsafe and m is not list(self)[0]:
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement "
                                       f"right_inverse")
            if self.is_tensor:
                self.original[...] = value
            else:
                for orig, v in zip(self.originals(), value):
                    orig[...] = v


def is_parametrized(module: Module, tensor_name: Optional[str] = None) -> bool:
    """Whether `module` has any parametrization (or one on `tensor_name`)."""
    p = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(p, ModuleDict):
        return False
    return len(p) > 0 if tensor_name is None else tensor_name in p


def _inject_class(module: Module) -> None:
    cls = type(module)
    object.__setattr__(module, "__class__",
                       type(f"Parametrized{cls.__name__}", (cls,), {"_unparametrized_class": cls}))


def _inject_property(module: Module, name: str) -> None:
    def get(self: Module) -> Tensor:
        return self.parametrizations[name]()

    def set_(self: Module, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    setattr(type(module), name, property(get, set_))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Makes module.`tensor_name` the output of `parametrization` applied to a stored
    original (Note [Parametrized attributes by class injection])."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            z = parametrization(y)
            if tuple(z.shape) != tuple(y.shape) or z.dtype != y.dtype:
                raise ValueError("Registering a parametrization may not change the shape or "
                                 "dtype of the tensor unless unsafe=True")
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{type(module).__name__}' does not have a parameter, a buffer, "
                         f"or a parametrized element with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    if original is None:
        raise ValueError(f"register_parametrization: '{tensor_name}' is None")
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_class(module)
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = plist
    _inject_property(module, tensor_name)
    return module


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Removes the parametrizations on `tensor_name`; the tensor becomes a plain parameter
    (or buffer) holding the parametrized value (leave_parametrized) or the original."""
    t = _ts()
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {type(module).__name__} does not have a parametrization on "
                         f"{tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with t.no_grad():
                value = getattr(module, tensor_name)
            if tuple(value.shape) == tuple(original.shape) and value.dtype == original.dtype:
                with t.no_grad():
                    original[...] = value
            else:
                original = _as_original(value, original)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        with t.no_grad():
            value = getattr(module, tensor_name)
        original = _as_original(value, plist.original0)
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if _is_param(original):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        del module._modules["parametrizations"]
        object.__setattr__(module, "__class__", type(module)._unparametrized_class)
    return module


@_contextlib.contextmanager
def cached() -> Iterator[None]:
    """PyTorch caches parametrized tensors inside this block; tessera recomputes them (same
    values), so the block only marks intent."""
    yield

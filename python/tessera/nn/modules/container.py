"""Containers: Sequential, ModuleList, ModuleDict."""
from __future__ import annotations

import typing as _t
from collections import OrderedDict, abc as _abc
from itertools import chain

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from ..._C import Tensor
from ..parameter import Parameter
from .module import Module


class Sequential(Module):
    """Runs its modules in order: ``Sequential(m0, m1, ...)`` or ``Sequential(OrderedDict)``."""

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (OrderedDict, dict)):
            for key, mod in args[0].items():
                self.add_module(key, mod)
        else:
            for i, mod in enumerate(args):
                self.add_module(str(i), mod)

    def _index(self, idx: int) -> str:
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules)[idx % n]

    def __getitem__(self, idx: Union[int, slice]) -> Any:
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[self._index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(self._index(idx), module)

    def __delitem__(self, idx: Union[int, slice]) -> None:
        keys = list(self._modules)[idx] if isinstance(idx, slice) else [self._index(idx)]
        for k in keys:
            del self._modules[k]
        # Renumber so the keys stay 0..n-1, as PyTorch does (named keys become numbers too).
        _renumber(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: "Sequential") -> "Sequential":
        """A new Sequential of both containers' modules (shared, not copied), keyed 0..n-1."""
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{str(type(other))} is given.")
        ret = Sequential()
        for layer in self:
            ret.append(layer)
        for layer in other:
            ret.append(layer)
        return ret

    def __iadd__(self, other: "Sequential") -> "Sequential":
        """Appends `other`'s modules in place under keys len(self), len(self)+1, ..."""
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{str(type(other))} is given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def _check_factor(self, other: Any) -> None:
        # torch's checks and messages for the repeat factor of * and *=.
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def __mul__(self, other: int) -> "Sequential":
        """A new Sequential repeating the modules `other` times; the same module objects are
        reused (so parameters are shared), as torch."""
        self._check_factor(other)
        combined = Sequential()
        offset = 0
        for _ in range(other):
            for module in self:
                combined.add_module(str(offset), module)
                offset += 1
        return combined

    def __rmul__(self, other: int) -> "Sequential":
        return self.__mul__(other)

    def __imul__(self, other: int) -> "Sequential":
        """Repeats the modules in place; like torch this reads the keys "0".."n-1"."""
        self._check_factor(other)
        n = len(self)
        offset = n
        for _ in range(other - 1):
            for i in range(n):
                self.add_module(str(i + offset), self._modules[str(i)])
            offset += n
        return self

    def pop(self, key: Union[int, slice]) -> Any:
        """Removes and returns the module (or, for a slice, a Sequential) at `key`."""
        v = self[key]
        del self[key]
        return v

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        """Inserts `module` before position `index` (-len..len), shifting the later keys
        up by one; like torch this assumes the keys are "0".."n-1"."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> "Sequential":
        """Appends each module of `sequential` (any iterable of modules)."""
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input: Any) -> Any:
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(Module):
    """A list of submodules, registered under "0", "1", ..."""

    def __init__(self, modules: Optional[Iterable[Module]] = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: Union[int, slice]) -> Any:
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return self._modules[str(idx % n)]

    def __setitem__(self, idx: int, module: Module) -> None:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        self.add_module(str(idx % n), module)

    def __delitem__(self, idx: Union[int, slice]) -> None:
        n = len(self)
        if isinstance(idx, slice):
            keys = [str(k) for k in range(n)[idx]]
        else:
            if not -n <= idx < n:
                raise IndexError(f"index {idx} is out of range")
            keys = [str(idx % n)]
        for k in keys:
            del self._modules[k]
        # Renumber so the keys stay 0..n-1, as PyTorch does.
        _renumber(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        """A new ModuleList of this list's modules then `other`'s (any iterable)."""
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __repr__(self) -> str:
        """torch's compact form: a run of consecutive modules with the same repr prints
        once, as '(i-j): n x <repr>'."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs: List[List[Any]] = []  # [start, end, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for start, end, r in runs:
            text = f"({start}): {r}" if start == end else \
                f"({start}-{end}): {end - start + 1} x {r}"
            lines.append(text.replace("\n", "\n  "))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def pop(self, key: Union[int, slice]) -> Any:
        """Removes and returns the module (or, for a slice, a ModuleList) at `key`."""
        v = self[key]
        del self[key]
        return v

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        if not isinstance(modules, _abc.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)


class _DictProtocol:
    """The read side of the dict protocol over one registry (``_modules`` or
    ``_parameters``); subclasses define ``__setitem__``."""

    _table = ""

    def _d(self) -> Dict[str, Any]:
        return self.__dict__[self._table]

    def __getitem__(self, key: str) -> Any:
        return self._d()[key]

    def __delitem__(self, key: str) -> None:
        del self._d()[key]

    def __len__(self) -> int:
        return len(self._d())

    def __iter__(self) -> Iterator[str]:
        return iter(self._d())

    def __contains__(self, key: str) -> bool:
        return key in self._d()

    def keys(self) -> Iterable[str]:
        return self._d().keys()

    def values(self) -> Iterable[Any]:
        return self._d().values()

    def items(self) -> Iterable[Tuple[str, Any]]:
        return self._d().items()

    def pop(self, key: str) -> Any:
        return self._d().pop(key)

    def clear(self) -> None:
        self._d().clear()

    def update(self, entries: Any) -> None:
        items = entries.items() if hasattr(entries, "items") else entries
        for k, v in items:
            self[k] = v  # type: ignore[index]


class ModuleDict(_DictProtocol, Module):
    """An ordered dict of submodules."""

    _table = "_modules"

    def __init__(self, modules: Optional[Union[Dict[str, Module],
                                               Iterable[Tuple[str, Module]]]] = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)


class ParameterList(Module):
    """A list of parameters registered under "0", "1", ... (tensors are wrapped as
    Parameters)."""

    def __init__(self, values: Optional[Iterable[Any]] = None) -> None:
        super().__init__()
        for v in values or ():
            self.append(v)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Tensor]:
        return iter(self._parameters.values())

    def __getitem__(self, idx: int) -> Tensor:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return self._parameters[str(idx % n)]

    def __setitem__(self, idx: int, value: Any) -> None:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        self.register_parameter(str(idx % n), _as_param(value))

    def append(self, value: Any) -> "ParameterList":
        self.register_parameter(str(len(self)), _as_param(value))
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        """One line per entry, as torch: '  (0): Parameter containing: [dtype of size 2x3]'."""
        return "\n".join(f"  ({k}): " + _param_summary(p, f"tessera.{p.dtype}")
                         for k, p in enumerate(self))


class ParameterDict(_DictProtocol, Module):
    """An ordered dict of parameters (tensors are wrapped as Parameters)."""

    _table = "_parameters"

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __setitem__(self, key: str, value: Any) -> None:
        self.register_parameter(key, _as_param(value))

    def extra_repr(self) -> str:
        """One line per entry, as torch: '  (a): Parameter containing: [FloatTensor ...]'."""
        from ..._torch_legacy import typename
        return "\n".join(f"  ({k}): " + _param_summary(p, typename(p))
                         for k, p in self._parameters.items())


def _renumber(modules: Dict[str, Any]) -> None:
    """Re-keys `modules` in place as "0".."n-1", keeping the order."""
    mods = list(modules.values())
    modules.clear()
    for i, m in enumerate(mods):
        modules[str(i)] = m


def _param_summary(p: Any, dtype_text: str) -> str:
    size = "x".join(str(n) for n in p.shape)
    device = f" ({p.device})" if p.device.type != "cpu" else ""
    return f"Parameter containing: [{dtype_text} of size {size}{device}]"


def _as_param(value: Any) -> Tensor:
    return value if isinstance(value, Parameter) else Parameter(value)

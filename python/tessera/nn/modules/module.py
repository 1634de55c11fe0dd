"""Module: the base class of layers — registration of parameters, buffers and submodules,
train/eval, hooks, state dicts (keys and layouts as in PyTorch)."""
from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

from ..._C import Tensor
from ..parameter import Buffer, Parameter

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class RemovableHandle:
    """Returned by the hook registration methods; ``remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, table: Dict[int, Callable]) -> None:
        self._table = table
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self) -> None:
        self._table.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def to_tensor(value: Any) -> Tensor:
    """A tessera tensor from a tessera tensor, NumPy array or torch tensor (via DLPack)."""
    from ... import asarray, from_dlpack
    if isinstance(value, Tensor):
        return value
    if type(value).__module__.startswith("torch"):
        return from_dlpack(value.detach().cpu().contiguous())
    return asarray(value)


class Module:
    """Base class for all layers. Subclasses assign parameters, buffers and submodules as
    attributes in ``__init__`` and define ``forward``; calling the module runs the hooks
    and ``forward``."""

    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())

    # ----------------------------------------------------------------- registration
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: forward is not defined")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for hook in list(self._forward_pre_hooks.values()):
            res = hook(self, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            res = hook(self, args, out)
            if res is not None:
                out = res
        return out

    def register_parameter(self, name: str, param: Optional[Tensor]) -> None:
        """Registers `param` (a Parameter or None) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str) or "." in name or name == "":
            raise KeyError(f"register_parameter: invalid parameter name {name!r}")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"register_parameter: attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: cannot assign '{type(param).__name__}' "
                            f"as parameter '{name}' (nn.Parameter or None expected)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Optional[Tensor], persistent: bool = True) -> None:
        """Registers a tensor (or None) as a buffer: part of the state dict when
        `persistent`, moved by ``to()``, but not a parameter."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str) or "." in name or name == "":
            raise KeyError(f"register_buffer: invalid buffer name {name!r}")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"register_buffer: attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: cannot assign '{type(tensor).__name__}' as "
                            f"buffer '{name}' (Tensor or None expected)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: Optional["Module"]) -> None:
        """Registers a submodule under `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {type(module).__name__} is not a Module subclass")
        if not isinstance(name, str) or "." in name or name == "":
            raise KeyError(f"add_module: invalid module name {name!r}")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            if "_parameters" not in d:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._drop(name)
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._drop(name)
            self._modules[name] = value
        elif isinstance(value, Buffer):
            self._drop(name)
            self.register_buffer(name, value, getattr(value, "_persistent", True))
        elif "_parameters" in d and name in self._parameters:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter "
                                f"'{name}' (nn.Parameter or None expected)")
            self._parameters[name] = None
        elif "_modules" in d and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (nn.Module or None expected)")
            self._modules[name] = None
        elif "_buffers" in d and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer "
                                f"'{name}' (Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _drop(self, name: str) -> None:
        """Forgets `name` from every registry and the instance dict before re-registering."""
        self.__dict__.pop(name, None)
        for table in ("_parameters", "_buffers", "_modules"):
            self.__dict__[table].pop(name, None)
        self._non_persistent_buffers.discard(name)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for table in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(table, {}):
                del self.__dict__[table][name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> List[str]:
        keys = list(super().__dir__())
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(set(keys))

    # ----------------------------------------------------------------- traversal
    def named_modules(self, memo: Optional[Set[int]] = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, "Module"]]:
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, mod in self._modules.items():
            if mod is None:
                continue
            yield from mod.named_modules(memo, prefix + ("." if prefix else "") + name,
                                         remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[Tuple[str, "Module"]]:
        seen: Set[int] = set()
        for name, mod in self._modules.items():
            if mod is not None and id(mod) not in seen:
                seen.add(id(mod))
                yield name, mod

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, table: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[Tuple[str, Tensor]]:
        seen: Set[int] = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mprefix, mod in mods:
            for name, t in getattr(mod, table).items():
                if t is None:
                    continue
                if remove_duplicate:
                    if id(t) in seen:
                        continue
                    seen.add(id(t))
                yield mprefix + ("." if mprefix else "") + name, t

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[Tuple[str, Tensor]]:
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[Tuple[str, Tensor]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> "Module":
        mod = self
        for item in target.split(".") if target else []:
            if item not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str) -> Tensor:
        modpath, _, name = target.rpartition(".")
        mod = self.get_submodule(modpath)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    # ----------------------------------------------------------------- modes and conversions
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("train: training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clears the gradients of all parameters (to None, or to zeros in place)."""
        from ...autograd import no_grad
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with no_grad():
                    g = p.grad
                    g[...] = 0
                    p.grad = g

    def apply(self, fn: Callable[["Module"], Any]) -> "Module":
        """Calls fn on every submodule (children first) and on self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> "Module":
        """Replaces every parameter and buffer t by fn(t) (parameters stay parameters)."""
        for m in self.children():
            m._apply(fn)
        for name, p in self._parameters.items():
            if p is None:
                continue
            new = fn(p)
            if new is not p:
                newp = Parameter(new, p.requires_grad)
                if p.grad is not None:
                    newp.grad = fn(p.grad)
                self._parameters[name] = newp
        for name, b in self._buffers.items():
            if b is not None:
                self._buffers[name] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """``to(dtype)``, ``to(device)`` or ``to(device, dtype)``: floating-point parameters and
        buffers take `dtype`; everything moves to `device`. Parameters are replaced by new
        Parameter objects when they change, so build optimizers after calling ``to``."""
        from ... import isdtype
        from ..._C import dtype as DType
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        if kwargs:
            raise TypeError(f"to: unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, DType):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            else:
                device = a

        from ...autograd import no_grad

        @no_grad()
        def convert(t: Tensor) -> Tensor:
            if dtype is not None and isdtype(t.dtype, ("real floating", "complex floating")):
                if t.dtype != dtype:
                    t = t.to(dtype)
            if device is not None and str(t.device) != str(device):
                t = t.to(device)
            return t
        return self._apply(convert)

    def float(self) -> "Module":
        from ... import float32
        return self.to(float32)

    def double(self) -> "Module":
        from ... import float64
        return self.to(float64)

    def half(self) -> "Module":
        from ... import float16
        return self.to(float16)

    def bfloat16(self) -> "Module":
        from ... import bfloat16
        return self.to(bfloat16)

    def cpu(self) -> "Module":
        return self.to("cpu")

    # ----------------------------------------------------------------- hooks
    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, args) -> None or new args; runs before forward."""
        h = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[h.id] = hook
        return h

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, args, output) -> None or new output; runs after forward."""
        h = RemovableHandle(self._forward_hooks)
        self._forward_hooks[h.id] = hook
        return h

    # ----------------------------------------------------------------- state dicts
    def state_dict(self, destination: Optional[Dict[str, Any]] = None, prefix: str = "",
                   keep_vars: bool = False) -> Dict[str, Tensor]:
        """Parameters and persistent buffers by dotted name, detached unless `keep_vars`
        (they share storage with the module)."""
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def load_state_dict(self, state_dict: Dict[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copies tensors (tessera, NumPy or torch) into the parameters and buffers. Returns
        (missing_keys, unexpected_keys); with `strict` those and shape mismatches raise
        RuntimeError listing every problem, as PyTorch does."""
        from ...autograd import no_grad
        missing: List[str] = []
        errors: List[str] = []
        expected = self.state_dict(keep_vars=True)
        for key, target in expected.items():
            if key not in state_dict:
                missing.append(key)
                continue
            value = to_tensor(state_dict[key])
            if tuple(value.shape) != tuple(target.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{tuple(value.shape)} from checkpoint, the shape in current "
                              f"model is {tuple(target.shape)}.")
                continue
            if assign:
                self._assign(key, value, target)
            else:
                with no_grad():
                    target[...] = value
        unexpected = [k for k in state_dict if k not in expected]
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    def _assign(self, key: str, value: Tensor, target: Tensor) -> None:
        modpath, _, name = key.rpartition(".")
        mod = self.get_submodule(modpath)
        if name in mod._parameters:
            mod._parameters[name] = Parameter(value, target.requires_grad)
        else:
            mod._buffers[name] = value

    # ----------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            mod_str = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {mod_str}")
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

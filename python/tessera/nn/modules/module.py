"""Module: the base class of layers — registration of parameters, buffers and submodules,
train/eval, hooks, state dicts (keys and layouts as in PyTorch)."""
from __future__ import annotations

import functools as _functools
import typing as _t
import warnings as _warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

from ... import _C
from ..._C import Tensor
from ..parameter import Buffer, Parameter

class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns (torch's namedtuple, same repr when all keys matched)."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    """Returned by the hook registration methods; ``remove()`` unregisters the hook (from
    `table` and from the side tables in `extra`: with_kwargs / always_call flags)."""

    _next_id = 0

    def __init__(self, table: Dict[int, Callable], extra: Any = None) -> None:
        self._table = table
        self._extra = () if extra is None else (extra if isinstance(extra, tuple) else (extra,))
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self) -> None:
        self._table.pop(self.id, None)
        for t in self._extra:
            t.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


# Hooks that run for every module (torch.nn.modules.module's globals of the same names).
_global_forward_pre_hooks: Dict[int, Callable] = OrderedDict()
_global_forward_hooks: Dict[int, Callable] = OrderedDict()
_global_forward_hooks_with_kwargs: Dict[int, bool] = OrderedDict()
_global_forward_hooks_always_called: Dict[int, bool] = OrderedDict()
_global_backward_pre_hooks: Dict[int, Callable] = OrderedDict()
_global_backward_hooks: Dict[int, Callable] = OrderedDict()
_global_is_full_backward_hook: Optional[bool] = None


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """A forward pre-hook common to all modules: hook(module, args) -> None or new args;
    runs before each module's own pre-hooks."""
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """A forward hook common to all modules: hook(module, args, output) (or
    hook(module, args, kwargs, output) `with_kwargs`) -> None or new output; runs before each
    module's own forward hooks. `always_call`: also runs when forward raises."""
    h = RemovableHandle(_global_forward_hooks, (_global_forward_hooks_with_kwargs,
                                                _global_forward_hooks_always_called))
    _global_forward_hooks[h.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[h.id] = True
    if always_call:
        _global_forward_hooks_always_called[h.id] = True
    return h


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """A backward pre-hook common to all modules: hook(module, grad_output) -> None or new
    grad_output."""
    h = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[h.id] = hook
    return h


def _register_global_backward_hook(hook: Callable, full: bool) -> RemovableHandle:
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as "
                           "a global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = full
    h = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[h.id] = hook
    return h


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """A backward hook common to all modules: hook(module, grad_input, grad_output) -> None
    or new grad_input."""
    return _register_global_backward_hook(hook, True)


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    """Deprecated twin of register_module_full_backward_hook (tessera runs it with the full
    hook's grad_input/grad_output, see Module.register_backward_hook)."""
    return _register_global_backward_hook(hook, False)


def _pack_with_none(indices: List[int], values: Tuple[Any, ...], size: int) -> Tuple[Any, ...]:
    res: List[Any] = [None] * size
    for i, v in zip(indices, values):
        res[i] = v
    return tuple(res)


class _BackwardHookState:
    """One module call's backward hooks: the output-side identity stores grad_output (after the
    pre-hooks); the input-side identity then calls the full hooks with grad_input."""

    def __init__(self, module: "Module", hooks: List[Callable], pre_hooks: List[Callable]) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs: Optional[Tuple[Any, ...]] = None
        self.n_inputs = 0
        self.input_index: Optional[List[int]] = None
        self.n_outputs = 0
        self.output_index: List[int] = []
        self.input_meta: List[Tuple[Any, ...]] = []

    def on_grad_output(self, grads: Tuple[Any, ...]) -> Tuple[Any, ...]:
        self.grad_outputs = _pack_with_none(self.output_index, grads, self.n_outputs)
        for hook in self.pre_hooks:
            res = hook(self.module, self.grad_outputs)
            if res is None:
                continue
            if not isinstance(res, tuple):
                res = (res,)
            if len(res) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(res)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = res
        local = self.grad_outputs
        if self.input_index is None:
            # No input needs a gradient: the full hooks run now, with grad_input all None.
            grad_inputs = _pack_with_none([], (), self.n_inputs)
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple)
                                            and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_index)

    def on_grad_input(self, grads: Tuple[Any, ...]) -> Tuple[Any, ...]:
        if self.grad_outputs is None:
            return grads  # reached without passing through the outputs (as torch: no hook)
        assert self.input_index is not None
        from ... import zeros
        # As torch's identity node: inputs without a gradient (or not requiring one) get zeros.
        grads = tuple(zeros(shape, dtype=dt, device=dev) if g is None or not rg else g
                      for g, (shape, dt, dev, rg) in zip(grads, self.input_meta))
        res = _pack_with_none(self.input_index, grads, self.n_inputs)
        for hook in self.hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if not isinstance(out, tuple):
                out = (out,)
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)


def _hook_function() -> type:
    """The identity autograd.Function whose backward calls into a _BackwardHookState (built
    lazily: autograd imports nn)."""
    global _BackwardHookFunction
    if _BackwardHookFunction is None:
        from ...autograd.function import Function

        class BackwardHookFunction(Function):
            @staticmethod
            def forward(ctx: Any, state: _BackwardHookState, side: str, *tensors: Tensor) -> Any:
                ctx.state, ctx.side = state, side
                ctx.set_materialize_grads(False)
                ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
                return tensors

            @staticmethod
            def backward(ctx: Any, *grads: Any) -> Any:
                fn = ctx.state.on_grad_output if ctx.side == "out" else ctx.state.on_grad_input
                return (None, None) + tuple(fn(grads))

        _BackwardHookFunction = BackwardHookFunction
    return _BackwardHookFunction


_BackwardHookFunction: Any = None


def _wrap_tensors(state: _BackwardHookState, side: str, args: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """Passes the top-level tensors of `args` through the identity Function; returns the new
    args and records where the tensors were (None: nothing required grad)."""
    from ... import _C
    idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    tensors = [args[i] for i in idx]
    if not (_C.is_grad_enabled() and any(t.requires_grad for t in tensors)):
        return args, None
    if side == "in":
        state.input_meta = [(tuple(t.shape), t.dtype, t.device, t.requires_grad) for t in tensors]
    new = _hook_function().apply(state, side, *tensors)
    out = list(args)
    for i, t in zip(idx, new):
        out[i] = t
    return tuple(out), idx


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
    _version: int = 1
    _compiled_call_impl: Optional[Callable] = None
    T_destination = _t.TypeVar("T_destination", bound=_t.Dict[str, _t.Any])
    call_super_init: bool = False
    dump_patches: bool = False

    _HOOK_TABLES = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
                    "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                    "_backward_pre_hooks", "_backward_hooks", "_state_dict_pre_hooks",
                    "_state_dict_hooks", "_load_state_dict_pre_hooks",
                    "_load_state_dict_post_hooks")

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_is_full_backward_hook", None)
        for table in self._HOOK_TABLES:
            object.__setattr__(self, table, OrderedDict())

    def __setstate__(self, state: Dict[str, Any]) -> None:
        """Unpickling: restores the attributes and adds hook tables an older pickle lacks."""
        self.__dict__.update(state)
        for table in self._HOOK_TABLES:
            if table not in self.__dict__:
                object.__setattr__(self, table, OrderedDict())
        if "_non_persistent_buffers" not in self.__dict__:
            object.__setattr__(self, "_non_persistent_buffers", set())
        if "_is_full_backward_hook" not in self.__dict__:
            object.__setattr__(self, "_is_full_backward_hook", None)

    # ----------------------------------------------------------------- calling
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required "
                                  f"\"forward\" function")

    def _get_name(self) -> str:
        return type(self).__name__

    def _get_backward_hooks(self) -> Tuple[List[Callable], List[Callable]]:
        """(full hooks, non-full hooks), global ones first, as torch."""
        full: List[Callable] = []
        non_full: List[Callable] = []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        elif _global_is_full_backward_hook is False:
            non_full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        elif self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self) -> List[Callable]:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        d = self.__dict__
        if not (d.get("_forward_pre_hooks") or d.get("_forward_hooks")
                or d.get("_backward_pre_hooks") or d.get("_backward_hooks")
                or _global_forward_pre_hooks or _global_forward_hooks
                or _global_backward_pre_hooks or _global_backward_hooks):
            return self.forward(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    _wrapped_call_impl = __call__

    def _call_forward_hook(self, hook_id: int, hook: Callable, args: Tuple[Any, ...],
                           kwargs: Dict[str, Any], result: Any) -> Any:
        if hook_id in self._forward_hooks_with_kwargs or \
                hook_id in _global_forward_hooks_with_kwargs:
            return hook(self, args, kwargs, result)
        return hook(self, args, result)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """torch's order: global then own forward pre-hooks, backward-hook wrapping of the
        inputs, forward, global then own forward hooks, wrapping of the outputs. Forward hooks
        registered with always_call also run when something raised."""
        result = None
        called: Set[int] = set()
        try:
            full, non_full = self._get_backward_hooks()
            # Non-full (deprecated) hooks run with the full hooks' arguments in tessera.
            full = full + non_full
            pre = self._get_backward_pre_hooks()
            for hook_id, hook in (*_global_forward_pre_hooks.items(),
                                  *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    res = hook(self, args, kwargs)
                    if res is not None:
                        if isinstance(res, tuple) and len(res) == 2:
                            args, kwargs = res
                        else:
                            raise RuntimeError("forward pre-hook must return None or a tuple "
                                               f"of (new_args, new_kwargs), but got {res}.")
                else:
                    res = hook(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)
            state = None
            if full or pre:
                state = _BackwardHookState(self, full, pre)
                state.n_inputs = len(args)
                args, state.input_index = _wrap_tensors(state, "in", args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called or \
                        hook_id in _global_forward_hooks_always_called:
                    called.add(hook_id)
                res = self._call_forward_hook(hook_id, hook, args, kwargs, result)
                if res is not None:
                    result = res
            if state is not None:
                result = self._wrap_outputs(state, result)
            return result
        except Exception:
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if (hook_id in self._forward_hooks_always_called
                        or hook_id in _global_forward_hooks_always_called) \
                        and hook_id not in called:
                    try:
                        res = self._call_forward_hook(hook_id, hook, args, kwargs, result)
                        if res is not None:
                            result = res
                    except Exception as e:
                        _warnings.warn("module forward hook with ``always_call=True`` raised an "
                                      "exception that was silenced as another error was raised "
                                      f"in forward: {e}")
            raise

    @staticmethod
    def _wrap_outputs(state: _BackwardHookState, result: Any) -> Any:
        single = isinstance(result, Tensor)
        if not single and not isinstance(result, tuple):
            _warnings.warn("For backward hooks to be called, module output should be a Tensor "
                          f"or a tuple of Tensors but received {type(result)}")
            return result
        outs = (result,) if single else result
        state.n_outputs = len(outs)
        outs, idx = _wrap_tensors(state, "out", outs)
        if idx is not None:
            state.output_index = idx
        return outs[0] if single else outs

    def register_parameter(self, name: str, param: Optional[Tensor]) -> None:
        """Registers `param` (a Parameter or None) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: cannot assign '{type(param).__name__}' "
                            f"as parameter '{name}' (nn.Parameter or None expected)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Optional[Tensor], persistent: bool = True) -> None:
        """Registers a tensor (or None) as a buffer: part of the state dict when
        `persistent`, moved by ``to()``, but not a parameter."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name("buffer", name, self._buffers)
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
        self._check_name("module", name, self._modules)
        self._modules[name] = module

    def _check_name(self, kind: str, name: Any, table: Dict[str, Any]) -> None:
        """torch's checks (and messages) for a new parameter, buffer or module name."""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            got = f", got: {name}" if kind == "module" else ""  # torch's wording differs
            raise KeyError(f'{kind} name can\'t contain "."{got}')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in table:
            raise KeyError(f"attribute '{name}' already exists")

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            if "_parameters" not in d:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._drop(name, keep="_parameters")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._drop(name, keep="_modules")
            self._modules[name] = value
        elif isinstance(value, Buffer):
            self._drop(name, keep="_buffers")
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

    def _drop(self, name: str, keep: str) -> None:
        """Forgets `name` from the instance dict and the registries other than `keep` before
        re-registering it there (so re-assigning keeps its place, as torch)."""
        self.__dict__.pop(name, None)
        for table in ("_parameters", "_buffers", "_modules"):
            if table != keep:
                self.__dict__[table].pop(name, None)
        if keep != "_buffers":
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
        return sorted({k for k in keys if not k[0].isdigit()})

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
        mods = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                if recurse else [(prefix, self)])
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

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target` (AttributeError if it is not a buffer)."""
        modpath, _, name = target.rpartition(".")
        mod = self.get_submodule(modpath)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Sets the submodule at dotted path `target` (its parent must exist; with `strict`
        the submodule itself must exist too)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(f"{parent._get_name()} has no attribute `{atoms[-1]}`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError(f"`{atoms[-1]}` is not an nn.Module")
        setattr(parent, atoms[-1], module)

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
        """Clears the gradients of all parameters: to None, or (as torch) detaches each
        ``.grad`` in place and fills it with zeros."""
        for p in self.parameters():
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn: Callable[["Module"], Any]) -> "Module":
        """Calls fn on every submodule (children first) and on self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        """Converts every parameter and buffer with fn, as torch: a parameter keeps its
        identity (``param.data = fn(param)``, its ``.grad`` likewise), so optimizers built
        before ``to()``/``double()`` still update the module; buffers are replaced."""
        from ...autograd import no_grad
        if recurse:
            for m in self.children():
                m._apply(fn)
        for p in self._parameters.values():
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            if new is not p:
                p._set_data(new)
            g = p.grad
            if g is not None:
                with no_grad():
                    new_g = fn(g)
                if new_g is not g:
                    g._set_data(new_g)
        for name, b in self._buffers.items():
            if b is not None:
                self._buffers[name] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """``to(dtype)``, ``to(device)`` or ``to(device, dtype)``: floating-point parameters and
        buffers take `dtype`; everything moves to `device`. Parameters keep their identity (their data is
        replaced, as torch), so an optimizer built before ``to`` still updates them."""
        from ... import isdtype
        from ..._C import dtype as DType
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)  # copies are synchronous in tessera
        memory_format = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to: unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, bool):
                continue  # to(device, dtype, non_blocking)
            if isinstance(a, DType):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            else:
                device = a
        if dtype is not None and not isdtype(dtype, ("real floating", "complex floating")):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")

        from ...autograd import no_grad

        @no_grad()
        def convert(t: Tensor) -> Tensor:
            if dtype is not None and isdtype(t.dtype, ("real floating", "complex floating")):
                if t.dtype != dtype:
                    t = t.to(dtype)
            if device is not None and str(t.device) != str(device):
                t = t.to(device)
            if memory_format is not None and t.ndim in (4, 5):
                # PyTorch converts the 4-D (and, for channels_last_3d, 5-D) parameters.
                name = getattr(memory_format, "name", memory_format)
                if t.ndim == (5 if name == "channels_last_3d" else 4) or \
                        name not in ("channels_last", "channels_last_3d"):
                    t = _C._to_memory_format(t, memory_format, "to")
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

    def cuda(self, device: Any = None) -> "Module":
        """Moves parameters and buffers to a CUDA device (``cuda:device`` for an int)."""
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return self.to(device)

    def type(self, dst_type: Any) -> "Module":
        """Casts every parameter and buffer (of any dtype, as torch) to `dst_type`."""
        from ...autograd import no_grad
        with no_grad():
            return self._apply(lambda t: t.type(dst_type))

    def to_empty(self, *, device: Any, recurse: bool = True) -> "Module":
        """Moves parameters and buffers to `device` as uninitialized tensors."""
        from ... import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def share_memory(self) -> "Module":
        """Calls ``share_memory_()`` on every parameter and buffer (as torch); returns self."""
        return self._apply(lambda t: t.share_memory_())

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """torch compiles forward in place with torch.compile; tessera has no compiler, so
        this keeps eager execution and returns None as torch does."""
        return None

    def _slow_forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # ----------------------------------------------------------------- hooks
    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """hook(module, args) -> None or new args (a non-tuple is wrapped in one), or with
        `with_kwargs` hook(module, args, kwargs) -> None or (new_args, new_kwargs); runs before
        forward, first when `prepend`."""
        h = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[h.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """hook(module, args, output) (or hook(module, args, kwargs, output) `with_kwargs`) ->
        None or new output; runs after forward (also when forward raises, `always_call`)."""
        h = RemovableHandle(self._forward_hooks, (self._forward_hooks_with_kwargs,
                                                  self._forward_hooks_always_called))
        self._forward_hooks[h.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if always_call:
            self._forward_hooks_always_called[h.id] = True
        if prepend:
            self._forward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_pre_hook(self, hook: Callable,
                                        prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_output) -> None or new grad_output (a tuple, one entry per
        output, None for non-tensor outputs); runs when the gradients of the outputs are
        known, before they flow into the module's graph."""
        h = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[h.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def _add_backward_hook(self, hook: Callable, full: bool, prepend: bool) -> RemovableHandle:
        if self._is_full_backward_hook is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = full
        h = RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_hook(self, hook: Callable,
                                    prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_input, grad_output) -> None or new grad_input: grad_input holds
        the gradients of the positional inputs (None for non-tensors and inputs that don't
        require grad), grad_output those of the outputs, as torch defines them."""
        return self._add_backward_hook(hook, True, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated (as in torch). torch passes the last autograd node's grad_input; tessera
        passes the full hook's (module inputs / outputs), which is the same for modules whose
        forward is one op on one input; prefer register_full_backward_hook."""
        return self._add_backward_hook(hook, False, False)

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, prefix, keep_vars), called before state_dict collects this module."""
        h = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[h.id] = hook
        return h

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata) -> None or a new state dict
        (respected at the root module only, torch's legacy behaviour)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via register_state_dict_post_hook")
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata) -> None; may edit state_dict."""
        hook._from_public_api = True  # type: ignore[attr-defined]
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    def _register_load_state_dict_pre_hook(self, hook: Callable,
                                           with_module: bool = False) -> RemovableHandle:
        """hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs) (module first when `with_module`), before this module loads."""
        h = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = (
            _functools.partial(hook, self) if with_module else hook)
        return h

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) -> None, before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, incompatible_keys) -> None, after load_state_dict loaded this module
        and its children; it may clear incompatible_keys' lists in place."""
        h = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[h.id] = hook
        return h

    # ----------------------------------------------------------------- state dicts
    def get_extra_state(self) -> Any:
        """Extra picklable state saved as '<prefix>_extra_state' when a subclass overrides
        this (and set_extra_state)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called. Please file an issue.")

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called. Please file an issue.")

    def _has_extra_state(self) -> bool:
        return type(self).get_extra_state is not Module.get_extra_state

    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = b if keep_vars else b.detach()
        if self._has_extra_state():
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: Optional[Dict[str, Any]] = None,
                   prefix: str = "", keep_vars: bool = False) -> Dict[str, Any]:
        """Parameters and persistent buffers by dotted name, detached unless `keep_vars`
        (they share storage with the module); `_metadata` holds each module's version."""
        if args:
            destination = args[0] if destination is None else destination
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            res = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if res is not None:
                    destination = res
            elif res is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _load_from_state_dict(self, state_dict: Dict[str, Any], prefix: str,
                              local_metadata: Dict[str, Any], strict: bool,
                              missing_keys: List[str], unexpected_keys: List[str],
                              error_msgs: List[str]) -> None:
        """Loads this module's own entries (not its children's); subclasses override it to
        convert older layouts (local_metadata['version'] is the saving module's _version)."""
        from ...autograd import no_grad
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers}
        local_state = {k: v for k, v in (*self._parameters.items(), *persistent.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            try:
                value = to_tensor(state_dict[key])
            except Exception:
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f"torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(state_dict[key])}")
                continue
            if len(param.shape) == 0 and len(value.shape) == 1 and value.shape[0] == 1:
                value = value[0]  # torch's backward compatibility: a 1-element 1-d entry
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.size()} from checkpoint, the shape in current "
                                  f"model is {param.size()}.")
                continue
            try:
                if assign:
                    if isinstance(param, Parameter):
                        if isinstance(value, Parameter):
                            value.requires_grad_(param.requires_grad)
                        else:
                            value = Parameter(value, param.requires_grad)
                        self._parameters[name] = value
                    else:
                        self._buffers[name] = value
                else:
                    with no_grad():
                        param[...] = value
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions '
                                  f"in the model are {tuple(param.shape)} and whose dimensions "
                                  f"in the checkpoint are {tuple(value.shape)}, an exception "
                                  f"occurred : {ex.args}.")
        extra_key = prefix + "_extra_state"
        if self._has_extra_state():
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    # "weight.x" names no submodule (torch: unexpected); only a module has
                    # entries below it
                    name = key[len(prefix):].split(".", 1)
                    if name[0] not in (self._modules if len(name) > 1 else local_state):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copies tensors (tessera, NumPy or torch) into the parameters and buffers (or, with
        `assign`, makes them the module's tensors). Returns (missing_keys, unexpected_keys);
        with `strict` those and shape mismatches raise RuntimeError listing every problem,
        as PyTorch does."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: List[str] = []
        unexpected: List[str] = []
        errors: List[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]

        def load(module: Module, local: Dict[str, Any], prefix: str = "") -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local, prefix, local_metadata, True, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)},
                         child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, keys) is not None:
                    raise RuntimeError("load_state_dict post hook should return None, "
                                       "but it returned a value")

        load(self, state_dict)
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

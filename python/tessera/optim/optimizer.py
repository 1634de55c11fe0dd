"""Optimizer base: param groups, per-parameter state, zero_grad, state dicts (PyTorch's
layout: {'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]})."""
from __future__ import annotations

import copy as _copy
import functools as _functools
import typing as _t
from collections import OrderedDict

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Optional

from .._C import Tensor


def _ts() -> Any:
    import tessera
    return tessera


class _ParamState:
    """Per-parameter state keyed by the parameter object (tessera tensors compare
    elementwise, so they cannot be dict keys themselves)."""

    def __init__(self) -> None:
        self._d: Dict[int, Dict[str, Any]] = {}
        self._keep: Dict[int, Tensor] = {}

    def __getitem__(self, p: Tensor) -> Dict[str, Any]:
        if id(p) not in self._d:
            self._d[id(p)] = {}
            self._keep[id(p)] = p
        return self._d[id(p)]

    def __contains__(self, p: Tensor) -> bool:
        return id(p) in self._d and bool(self._d[id(p)])

    def __len__(self) -> int:
        return sum(1 for v in self._d.values() if v)

    def items(self) -> Iterator:
        return ((self._keep[k], v) for k, v in self._d.items() if v)

    def clear(self) -> None:
        self._d.clear()
        self._keep.clear()


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


def _flags(name: str, differentiable: bool = False, **others: Any) -> Dict[str, Any]:
    """PyTorch's implementation-selection options (foreach, fused, capturable: whichever
    the torch optimizer has), accepted so torch code runs unchanged and kept in the param
    groups as torch keeps them. They select nothing here: each optimizer has one
    implementation (per-parameter tessera ops, or one fused C++ pass) that runs on the
    parameters' device. ``differentiable=True`` (an update autograd can trace through) is
    refused: steps run under no_grad."""
    if differentiable:
        raise NotImplementedError(f"{name}: differentiable=True is not supported (optimizer "
                                  "steps run under no_grad)")
    return dict(differentiable=differentiable, **others)


def _check_nonneg(name: str, **values: float) -> None:
    """Raises PyTorch's ``Invalid <what>: value`` errors for negative (or NaN) options."""
    for what, v in values.items():
        if not 0.0 <= v:  # NaN too (as PyTorch): it would make every parameter NaN
            raise ValueError(f"{name}: Invalid {what.replace('_', ' ')}: {v}")


def _step_tensor() -> Tensor:
    """A fresh ``state['step']``: a 0-d float32 CPU tensor, as PyTorch keeps it (on the CPU
    whatever ts.set_default_device says: the fused steps read it on the host)."""
    t = _ts()
    return t.zeros((), dtype=t.float32, device="cpu")


def _begin_step(p: Tensor, state: Dict[str, Any], *zeros: str) -> float:
    """Starts one parameter's update: on its first step creates ``state['step']`` and a
    zero tensor like `p` under each name in `zeros`; then bumps the step and returns it."""
    if not state:
        state["step"] = _step_tensor()
        for name in zeros:
            state[name] = _ts().zeros_like(p)
    return _bump(state)


def _bump(state: Dict[str, Any]) -> float:
    """Increments ``state['step']`` (0-d float32 tensor, in place) and returns its value."""
    st = state["step"]
    st += 1
    return float(st.item())


def _load_value(v: Any, p: Tensor, to_tensor: Callable[[Any], Tensor]) -> Any:
    """One loaded state value: numbers, strings and None as they are, lists element by
    element (LBFGS's history), tensors (tessera, NumPy or torch) cast to p's dtype and
    moved to p's device (as PyTorch does)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)):
        return type(v)(_load_value(e, p, to_tensor) for e in v)
    return to_tensor(v).astype(p.dtype).to(p.device)


_global_step_pre_hooks: Dict[int, Callable] = OrderedDict()
_global_step_post_hooks: Dict[int, Callable] = OrderedDict()


def _real(x: Any) -> Any:
    """view_as_real of a complex tensor (a view: updates write through), anything else as is.
    PyTorch's optimizers update a complex parameter as the pairs of reals it holds, with
    its state kept complex (Note [complex parameters])."""
    if isinstance(x, Tensor) and x.is_complex():
        return _ts().view_as_real(x)
    return x


def _update_as_real(opt: Any, p: Tensor, group: Dict[str, Any], state: Dict[str, Any]) -> None:
    """Note [complex parameters]: opt._update on view_as_real(p) and of its gradient and state;
    state tensors the update creates with the real view's shape are kept as complex views."""
    rp = _real(p)
    real_state = {k: _real(v) for k, v in state.items()}
    before = dict(real_state)
    opt._update(rp, _real(p.grad), group, real_state)
    for k, v in real_state.items():
        if before.get(k) is v:
            continue
        if isinstance(v, Tensor) and v.is_floating_point() and tuple(v.shape) == tuple(rp.shape):
            v = _ts().view_as_complex(v if v.is_contiguous() else v.contiguous())
        state[k] = v


def _handle(table: Dict[int, Callable], hook: Callable, prepend: bool = False) -> Any:
    from ..nn.modules.module import RemovableHandle
    h = RemovableHandle(table)
    table[h.id] = hook
    if prepend:
        table.move_to_end(h.id, last=False)  # type: ignore[attr-defined]
    return h


def register_optimizer_step_pre_hook(hook: Callable) -> Any:
    """A hook(optimizer, args, kwargs) run before every optimizer's step; it may return
    (new_args, new_kwargs)."""
    return _handle(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable) -> Any:
    """A hook(optimizer, args, kwargs) run after every optimizer's step."""
    return _handle(_global_step_post_hooks, hook)


def _hooked_step(step: Callable) -> Callable:
    """Wraps a step method with the global and per-optimizer step hooks (as PyTorch does
    for every Optimizer subclass's step)."""
    if getattr(step, "_hooked", False):
        return step

    @_functools.wraps(step)
    def wrapper(self: "Optimizer", *args: Any, **kwargs: Any) -> Any:
        for hook in [*_global_step_pre_hooks.values(), *self._step_pre_hooks.values()]:
            res = hook(self, args, kwargs)
            if res is not None:
                if not (isinstance(res, tuple) and len(res) == 2):
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {res}.")
                args, kwargs = res
        out = step(self, *args, **kwargs)
        self._opt_called = True  # read by LRScheduler.step's order check
        for hook in [*self._step_post_hooks.values(), *_global_step_post_hooks.values()]:
            hook(self, args, kwargs)
        return out
    wrapper._hooked = True  # type: ignore[attr-defined]
    return wrapper


class Optimizer:
    """Base class: ``Optimizer(params, defaults)`` with params an iterable of tensors or of
    dicts (param groups with their own options). Hooks as in PyTorch: step pre/post,
    state_dict pre/post and load_state_dict pre/post (``register_*_hook``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _hooked_step(cls.__dict__["step"])  # type: ignore[method-assign]

    def __new__(cls, *args: Any, **kwargs: Any) -> "Optimizer":
        self = super().__new__(cls)
        for name in ("_step_pre_hooks", "_step_post_hooks", "_state_dict_pre_hooks",
                     "_state_dict_post_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks"):
            setattr(self, name, OrderedDict())
        return self

    def register_step_pre_hook(self, hook: Callable) -> Any:
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before step."""
        return _handle(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> Any:
        """hook(optimizer, args, kwargs) -> None, after step."""
        return _handle(self._step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> Any:
        """hook(optimizer) -> None, before state_dict() builds its result."""
        return _handle(self._state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> Any:
        """hook(optimizer, state_dict) -> None or a replacement state dict."""
        return _handle(self._state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> Any:
        """hook(optimizer, state_dict) -> None or the state dict to load instead."""
        return _handle(self._load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> Any:
        """hook(optimizer) -> None, after load_state_dict()."""
        return _handle(self._load_state_dict_post_hooks, hook, prepend)

    # Whether state['step'] is a 0-d float32 tensor (PyTorch's layout, which the fused
    # C++ steps increment in place) rather than a Python float.
    _tensor_step = False

    def __init__(self, params: Any, defaults: Dict[str, Any]) -> None:
        self.defaults = defaults
        self.state = _ParamState()
        self.param_groups: List[Dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params argument given to the optimizer "
                            "should be an iterable of Tensors or dicts, but got a Tensor")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        """Adds a group of parameters with its own options (defaults fill the rest)."""
        group = dict(param_group)
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        # (name, tensor) pairs, e.g. module.named_parameters(): names go to param_names.
        names = [item[0] for item in params if isinstance(item, tuple)]
        if names and len(names) != len(params):
            raise ValueError("all optimizer params should be with/without names. Some param "
                             "names are missing")
        group["params"] = [item[1] for item in params] if names else params
        if names:
            group = {"params": group["params"], "param_names": names,
                     **{k: v for k, v in group.items() if k not in ("params", "param_names")}}
        if self.param_groups and ("param_names" in group) != ("param_names" in self.param_groups[0]):
            raise ValueError("all optimizer param groups should be with/without names. cannot "
                             f"add param group {'with' if names else 'without'} names to the "
                             f"optimizer")
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__}: optimizer can only optimize Tensors, "
                                f"got {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError(f"{type(self).__name__}: can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ValueError(f"{type(self).__name__}: parameter group didn't specify a "
                                 f"value of required optimization parameter {k}")
            group.setdefault(k, v)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        t = _ts()
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:  # in place, as torch does: references to the gradient see the zeros
                    with t.no_grad():
                        p.grad[...] = 0

    @_hooked_step
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        """One update of every parameter that has a gradient; `closure` re-evaluates the
        loss (run with grad enabled) and its value is returned."""
        t = _ts()
        loss = None
        if closure is not None:
            with t.enable_grad():
                loss = closure()
        with t.no_grad():
            for group in self.param_groups:
                self._step_group(group)
        return loss

    def _step_group(self, group: Dict[str, Any]) -> None:
        """Updates one group's parameters; fused optimizers override this with one C++ call."""
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                _update_as_real(self, p, group, self.state[p])
            else:
                self._update(p, p.grad, group, self.state[p])

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any],
                state: Dict[str, Any]) -> None:
        raise NotImplementedError

    # ----------------------------------------------------------------- state dicts
    def state_dict(self) -> Dict[str, Any]:
        for hook in self._state_dict_pre_hooks.values():
            hook(self)
        index: Dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        out = {"state": state, "param_groups": groups}
        for hook in self._state_dict_post_hooks.values():
            res = hook(self, out)
            out = out if res is None else res
        return out

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Restores options and state; tensors may be tessera, NumPy or torch (a PyTorch
        optimizer's state_dict loads directly)."""
        from ..nn.modules.module import to_tensor
        for hook in self._load_state_dict_pre_hooks.values():
            res = hook(self, state_dict)
            state_dict = state_dict if res is None else res
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, theirs in zip(self.param_groups, groups):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        self.state.clear()
        for mine, theirs in zip(self.param_groups, groups):
            for p, idx in zip(mine["params"], theirs["params"]):
                saved = state_dict["state"].get(idx)
                if saved is None:
                    continue
                st = self.state[p]
                for k, v in saved.items():
                    if k == "step":
                        v = float(v.item()) if hasattr(v, "item") else float(v)
                        st[k] = (_ts().asarray(v, dtype=_ts().float32, device="cpu")
                                 if self._tensor_step else v)
                    else:
                        st[k] = _load_value(v, p, to_tensor)
            for k, v in theirs.items():
                if k != "params":
                    mine[k] = _copy.deepcopy(v)
        for hook in self._load_state_dict_post_hooks.values():
            hook(self)

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(g):
                if k != "params":
                    s += f"\n    {k}: {g[k]}"
        return s + "\n)"



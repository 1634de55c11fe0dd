"""FullyShardedDataParallel: PyTorch's FSDP (ZeRO-3) for the common case, over
tessera.distributed's all_gather_into_tensor / reduce_scatter_tensor.

Note [FSDP flat parameters]: each FSDP instance flattens the parameters of its module (not
those of nested FSDP instances, nor of ignored_modules) into one flat vector, padded to a
multiple of the world size; rank r keeps elements [r S, (r+1) S) as its only parameter,
``_flat_param`` (so the optimizer, any tessera optimizer, holds state for 1/world of the
model), and the original parameters are removed from their modules. Forward:

1. ``_UnshardParams.apply(flat_param)`` all-gathers the full flat vector (cast to
   ``MixedPrecision.param_dtype`` first) and returns one view per original parameter, which
   are set as plain attributes on their modules while the wrapped module runs; that one
   autograd node's backward copies the parameters' gradients into one flat gradient,
   reduce-scatters it with ReduceOp.AVG (each rank gets the mean over ranks of its shard's
   gradient, equal to one process's gradient on the concatenated batch) and returns the
   shard as the flat parameter's gradient.
2. FULL_SHARD: the forward runs under ``saved_tensors_hooks``; a tensor an op saves for
   backward that lies in a gathered flat vector (a weight, its transpose) is saved as
   (instance, offset, shape, stride) instead, so the full vector is freed when forward
   ends; backward all-gathers it again at the first unpack of that instance and frees it
   after the reduce-scatter. SHARD_GRAD_OP keeps the gathered vector until backward (the
   saved views hold it); NO_SHARD keeps full parameters and all-reduces gradients (DDP).

State dicts (StateDictType.FULL_STATE_DICT): ``state_dict()`` gathers every instance's
parameters and returns the original module's keys and shapes (no ``_fsdp_wrapped_module``
prefix), the same dict a plain model or DDP's ``module`` writes, so it loads at any world
size and into a model without FSDP; ``FullStateDictConfig(rank0_only=True,
offload_to_cpu=True)`` keeps it on rank 0's host only. ``load_state_dict`` takes such a dict
on every rank and keeps each rank's shard (no communication). Optimizer state:
``FSDP.optim_state_dict(model, optim)`` (full, keyed by parameter names) and
``FSDP.optim_state_dict_to_load(model, optim, osd)`` (this rank's shard of it).
"""
from __future__ import annotations

import contextlib as _contextlib
import enum as _enum
import math as _math
import typing as _t
from collections import OrderedDict
from dataclasses import dataclass

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ... import _C
from ... import distributed as dist
from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...autograd.graph import saved_tensors_hooks
from ...nn.modules.module import Module
from ...nn.parameter import Parameter

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "BackwardPrefetch",
           "StateDictType", "FullStateDictConfig", "MixedPrecision", "CPUOffload"]


class ShardingStrategy(_enum.Enum):
    FULL_SHARD = 1
    SHARD_GRAD_OP = 2
    NO_SHARD = 3
    HYBRID_SHARD = 4
    _HYBRID_SHARD_ZERO2 = 5


class BackwardPrefetch(_enum.Enum):
    BACKWARD_PRE = 1
    BACKWARD_POST = 2


class StateDictType(_enum.Enum):
    FULL_STATE_DICT = 1
    LOCAL_STATE_DICT = 2
    SHARDED_STATE_DICT = 3


@dataclass
class FullStateDictConfig:
    offload_to_cpu: bool = False
    rank0_only: bool = False


_FLOATS = (_C.float16, _C.bfloat16, _C.float32, _C.float64)


@dataclass
class MixedPrecision:
    """param_dtype: the dtype parameters are gathered and computed in; reduce_dtype: the
    dtype gradients are reduced in (default param_dtype); the shards and the optimizer keep
    the parameters' own dtype."""
    param_dtype: Any = None
    reduce_dtype: Any = None
    buffer_dtype: Any = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True


@dataclass
class CPUOffload:
    offload_params: bool = False


class _SavedParamView:
    """What FULL_SHARD saves for backward instead of a view of a gathered flat vector."""
    __slots__ = ("state", "offset", "shape", "stride")

    def __init__(self, state: "FullyShardedDataParallel", offset: int, shape: tuple,
                 stride: tuple) -> None:
        self.state, self.offset, self.shape, self.stride = state, offset, shape, stride


_GATHERED: List["FullyShardedDataParallel"] = []   # instances inside their forward


def _pack(t: Any) -> Any:
    for st in reversed(_GATHERED):
        full = st._fwd_full
        if full is None or t.dtype != full.dtype or t.device != full.device:
            continue
        base, p = full.data_ptr(), t.data_ptr()
        es = full.element_size()
        if base <= p < base + full.numel() * es:
            return _SavedParamView(st, (p - base) // es, tuple(t.shape), tuple(t.stride()))
    return t


def _unpack(o: Any) -> Any:
    if isinstance(o, _SavedParamView):
        return o.state._regather().as_strided(o.shape, o.stride, o.offset)
    return o


class _UnshardParams(Function):
    """shard -> one view per original parameter of the gathered flat vector; backward:
    reduce-scatter of the parameters' gradients into the shard's gradient."""

    @staticmethod
    def forward(ctx: Any, shard: Any, state: "FullyShardedDataParallel") -> Any:
        ctx.state = state
        ctx.set_materialize_grads(False)
        full = state._unshard(shard, compute=True)
        state._fwd_full = full
        return tuple(state._views(full))

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            return ctx.state._reduce_grads(grads), None


def _own_params(module: Module, ignored: set) -> List[Tuple[Module, str, str, Any]]:
    """(module, attribute, dotted name, parameter) for every parameter of `module`'s tree,
    not descending into FSDP instances, skipping `ignored` (ids of parameters)."""
    out: List[Tuple[Module, str, str, Any]] = []
    seen_mods: set = set()

    def walk(m: Module, prefix: str) -> None:
        if id(m) in seen_mods:
            return
        seen_mods.add(id(m))
        for name, p in m._parameters.items():
            if p is not None and id(p) not in ignored:
                out.append((m, name, prefix + name, p))
        for cname, child in m._modules.items():
            if child is not None and not isinstance(child, FullyShardedDataParallel):
                walk(child, prefix + cname + ".")
    walk(module, "")
    return out


def _unwrapped_numel(module: Module) -> int:
    return sum(p.numel() for _, _, _, p in _own_params(module, set()))


class FullyShardedDataParallel(Module):
    """``FullyShardedDataParallel(module, process_group=None, sharding_strategy=FULL_SHARD,
    auto_wrap_policy=None, mixed_precision=None, ignored_modules=None, device_id=None,
    sync_module_states=False)``: Note [FSDP flat parameters]. Every rank must build the
    same model (seeded alike, or sync_module_states=True to take rank 0's values) and call
    forward/backward/state_dict in the same order. ``parameters()`` yields the shards: build
    the optimizer after wrapping."""

    def __init__(self, module: Module, process_group: Any = None,
                 sharding_strategy: Optional[ShardingStrategy] = None,
                 cpu_offload: Optional[CPUOffload] = None,
                 auto_wrap_policy: Optional[Callable[..., bool]] = None,
                 backward_prefetch: Optional[BackwardPrefetch] = BackwardPrefetch.BACKWARD_PRE,
                 mixed_precision: Optional[MixedPrecision] = None,
                 ignored_modules: Optional[Sequence[Module]] = None,
                 param_init_fn: Optional[Callable[[Module], None]] = None,
                 device_id: Any = None, sync_module_states: bool = False,
                 forward_prefetch: bool = False, limit_all_gathers: bool = True,
                 use_orig_params: bool = False, ignored_states: Any = None,
                 device_mesh: Any = None) -> None:
        super().__init__()
        if not dist.is_initialized():
            raise RuntimeError("FullyShardedDataParallel: the default process group has not "
                               "been initialized; call tessera.distributed."
                               "init_process_group() first")
        if not isinstance(module, Module):
            raise TypeError(f"FullyShardedDataParallel: module must be an nn.Module, got "
                            f"{type(module).__name__}")
        strategy = ShardingStrategy.FULL_SHARD if sharding_strategy is None \
            else ShardingStrategy(sharding_strategy)
        if strategy in (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2):
            raise NotImplementedError("FullyShardedDataParallel: HYBRID_SHARD is not "
                                      "supported; use FULL_SHARD, SHARD_GRAD_OP or NO_SHARD")
        if cpu_offload is not None and cpu_offload.offload_params:
            raise NotImplementedError("FullyShardedDataParallel: CPUOffload(offload_params="
                                      "True) is not supported")
        if device_mesh is not None:
            raise NotImplementedError("FullyShardedDataParallel: device_mesh is not "
                                      "supported; pass process_group")
        if param_init_fn is not None:
            param_init_fn(module)
        if device_id is not None:
            dev = f"cuda:{device_id}" if isinstance(device_id, int) else str(device_id)
            module = module.to(dev)
        self.process_group = process_group
        self.sharding_strategy = strategy
        self.mixed_precision = mixed_precision
        self._rank = dist.get_rank(process_group)
        self._world = dist.get_world_size(process_group)
        self._is_root = True
        self._sync = True
        self._acc: Any = None
        self._fwd_full: Any = None
        self._bwd_full: Any = None
        self._sd_type = StateDictType.FULL_STATE_DICT
        self._sd_config = FullStateDictConfig()
        ignored: set = set()
        for m in ignored_modules or ():
            ignored.update(id(p) for p in m.parameters())
        if auto_wrap_policy is not None:
            kw = dict(process_group=process_group, sharding_strategy=strategy,
                      mixed_precision=mixed_precision, ignored_modules=ignored_modules,
                      sync_module_states=sync_module_states)
            self._auto_wrap(module, auto_wrap_policy, kw)
        for m in module.modules():
            if isinstance(m, FullyShardedDataParallel):
                m._is_root = False
        self._fsdp_wrapped_module = module
        found = _own_params(module, ignored)
        if sync_module_states and self._world > 1:
            self._broadcast_states(module, found)
        self._build_flat(found)

    # -- construction -----------------------------------------------------------------------
    def _auto_wrap(self, module: Module, policy: Callable[..., bool],
                   kw: Dict[str, Any]) -> None:
        for name, child in list(module._modules.items()):
            if child is None or isinstance(child, FullyShardedDataParallel):
                continue
            self._auto_wrap(child, policy, kw)
            if policy(module=child, recurse=False, nonwrapped_numel=_unwrapped_numel(child)):
                module._modules[name] = FullyShardedDataParallel(child, **kw)

    def _broadcast_states(self, module: Module, found: list) -> None:
        src = dist.get_global_rank(self.process_group, 0) if self.process_group else 0
        with no_grad():
            for _, _, _, p in found:
                dist.broadcast(p.detach(), src, group=self.process_group)
            for m in self._plain_modules(module):
                for b in m._buffers.values():
                    if b is not None:
                        dist.broadcast(b, src, group=self.process_group)

    @staticmethod
    def _plain_modules(module: Module) -> Iterator[Module]:
        """`module` and its descendants, not descending into FSDP instances."""
        stack = [module]
        while stack:
            m = stack.pop()
            yield m
            stack.extend(c for c in m._modules.values()
                         if c is not None and not isinstance(c, FullyShardedDataParallel))

    def _build_flat(self, found: List[Tuple[Module, str, str, Any]]) -> None:
        from ..._creation import zeros
        uniq: List[Any] = []
        index: Dict[int, int] = {}
        self._slots: List[Tuple[Module, str, str, int]] = []   # (module, attr, fqn, unique #)
        for m, name, fqn, p in found:
            if id(p) not in index:
                index[id(p)] = len(uniq)
                uniq.append(p)
            self._slots.append((m, name, fqn, index[id(p)]))
        self._order = {id(m): (m, list(m._parameters.keys())) for m, _, _, _ in found}
        if not uniq:
            self._flat_param = None
            self._spans: List[Tuple[int, int, tuple]] = []
            self._numel = self._padded = self._shard_numel = 0
            return
        dtypes = {str(p.dtype) for p in uniq}
        devices = {str(p.device) for p in uniq}
        if len(dtypes) > 1 or len(devices) > 1:
            raise ValueError(f"FullyShardedDataParallel: the parameters flattened together must "
                             f"share one dtype and device, got dtypes {sorted(dtypes)} on "
                             f"{sorted(devices)}; wrap the submodules that differ in their own "
                             "FSDP (auto_wrap_policy) or cast the model first")
        grads = {bool(p.requires_grad) for p in uniq}
        if len(grads) > 1:
            raise ValueError("FullyShardedDataParallel: parameters flattened together must all "
                             "require grad or all not (use_orig_params=False, as PyTorch); "
                             "wrap the frozen submodules in their own FSDP or ignored_modules")
        spans, off = [], 0
        for p in uniq:
            spans.append((off, p.numel(), tuple(p.shape)))
            off += p.numel()
        self._spans = spans
        self._numel = off
        w = 1 if self.sharding_strategy == ShardingStrategy.NO_SHARD else self._world
        self._shard_numel = _math.ceil(off / w)
        self._padded = self._shard_numel * w
        p0 = uniq[0]
        with no_grad():
            flat = zeros((self._padded,), dtype=p0.dtype, device=p0.device)
            for p, (o, n, _) in zip(uniq, spans):
                flat[o:o + n].copy_(p.detach().reshape(-1))
            r = 0 if w == 1 else self._rank
            shard = flat[r * self._shard_numel:(r + 1) * self._shard_numel].clone()
        self._flat_param = Parameter(shard, requires_grad=grads.pop())
        for m, name, _, _ in found:
            m._parameters.pop(name, None)

    # -- gathering and reducing -------------------------------------------------------------
    @property
    def module(self) -> Module:
        """The wrapped module."""
        return self._fsdp_wrapped_module

    def _unshard(self, shard: Any, compute: bool) -> Any:
        """The full flat vector (padded): in param_dtype when `compute`, else the shard's."""
        from ..._creation import empty
        src = shard.detach()
        mp = self.mixed_precision
        if compute and mp is not None and mp.param_dtype is not None and \
                src.dtype != mp.param_dtype:
            src = src.to(mp.param_dtype)
        if self.sharding_strategy == ShardingStrategy.NO_SHARD:
            return src
        full = empty((self._padded,), dtype=src.dtype, device=src.device)
        dist.all_gather_into_tensor(full, src, group=self.process_group)
        return full

    def _views(self, full: Any) -> List[Any]:
        return [full[o:o + n].view(shape) for o, n, shape in self._spans]

    def _regather(self) -> Any:
        if self._bwd_full is None:
            with no_grad():
                self._bwd_full = self._unshard(self._flat_param, compute=True)
        return self._bwd_full

    def _reduce_grads(self, grads: Sequence[Any]) -> Any:
        from ..._creation import empty, zeros
        ref = next((g for g in grads if g is not None), None)
        self._bwd_full = None
        if ref is None:
            return None
        flat = zeros((self._padded,), dtype=ref.dtype, device=ref.device)
        for g, (o, n, _) in zip(grads, self._spans):
            if g is not None:
                flat[o:o + n].copy_(g.reshape(-1))
        mp = self.mixed_precision
        if mp is not None and mp.reduce_dtype is not None and flat.dtype != mp.reduce_dtype:
            flat = flat.to(mp.reduce_dtype)
        if not self._sync:                     # no_sync(): accumulate the unsharded gradient
            self._acc = flat if self._acc is None else self._acc + flat
            return None
        if self._acc is not None:
            flat = flat + self._acc.to(flat.dtype)
            self._acc = None
        if self.sharding_strategy == ShardingStrategy.NO_SHARD:
            dist.all_reduce(flat, dist.ReduceOp.AVG, group=self.process_group)
            out = flat
        else:
            out = empty((self._shard_numel,), dtype=flat.dtype, device=flat.device)
            dist.reduce_scatter_tensor(out, flat, dist.ReduceOp.AVG, group=self.process_group)
        dt = self._flat_param.dtype
        return out if out.dtype == dt else out.to(dt)

    def _install(self, views: Sequence[Any]) -> None:
        for m, name, _, k in self._slots:
            object.__setattr__(m, name, views[k])

    def _uninstall(self) -> None:
        for m, name, _, _ in self._slots:
            m.__dict__.pop(name, None)

    # -- forward ----------------------------------------------------------------------------
    def _cast_inputs(self, args: tuple, kwargs: dict) -> Tuple[tuple, dict]:
        """MixedPrecision's input casts, as torch's FSDP: floating-point tensors (in nested
        lists, tuples and dicts) go to param_dtype at the root (cast_root_forward_inputs,
        default True) or at every instance (cast_forward_inputs)."""
        mp = self.mixed_precision
        if mp is None or mp.param_dtype is None or not (
                mp.cast_forward_inputs or (self._is_root and mp.cast_root_forward_inputs)):
            return args, kwargs
        dt = mp.param_dtype

        def cast(v: Any) -> Any:
            if isinstance(v, _C.Tensor):
                return v.to(dt) if v.dtype in _FLOATS and v.dtype != dt else v
            if isinstance(v, tuple) and hasattr(v, "_fields"):  # a namedtuple
                return type(v)(*[cast(u) for u in v])
            if isinstance(v, (list, tuple)):
                return type(v)(cast(u) for u in v)
            if isinstance(v, dict):
                return {k: cast(u) for k, u in v.items()}
            return v

        return cast(args), cast(kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = self._cast_inputs(args, kwargs)
        if self._flat_param is None:
            return self._fsdp_wrapped_module(*args, **kwargs)
        self._bwd_full = None
        track = is_grad_enabled() and self._flat_param.requires_grad
        if track:
            views = _UnshardParams.apply(self._flat_param, self)
            views = views if isinstance(views, tuple) else (views,)
        else:
            with no_grad():
                views = tuple(self._views(self._unshard(self._flat_param, compute=True)))
        self._install(views)
        del views
        reshard = track and self.sharding_strategy == ShardingStrategy.FULL_SHARD
        try:
            if reshard:
                _GATHERED.append(self)
                with saved_tensors_hooks(_pack, _unpack):
                    return self._fsdp_wrapped_module(*args, **kwargs)
            return self._fsdp_wrapped_module(*args, **kwargs)
        finally:
            if reshard:
                _GATHERED.remove(self)
            self._uninstall()
            self._fwd_full = None

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_fsdp_wrapped_module":
                raise
            return getattr(self._fsdp_wrapped_module, name)

    def _instances(self) -> List["FullyShardedDataParallel"]:
        return [m for m in self.modules() if isinstance(m, FullyShardedDataParallel)]

    @_contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Within the block, backward accumulates unsharded gradients locally (no
        communication, full-size memory); the next synchronized backward reduces them too."""
        insts = self._instances()
        old = [m._sync for m in insts]
        for m in insts:
            m._sync = False
        try:
            yield
        finally:
            for m, o in zip(insts, old):
                m._sync = o

    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0) -> Any:
        """Clips the gradients of every shard by the norm of the whole (unsharded) gradient;
        returns that norm (a collective)."""
        from ..._creation import zeros
        grads = [p.grad for p in self.parameters() if p.grad is not None]
        dev = next(iter(self.parameters())).device
        norm_type = float(norm_type)
        sharded = self.sharding_strategy != ShardingStrategy.NO_SHARD
        with no_grad():
            if _math.isinf(norm_type):
                total = zeros((), dtype="float32", device=dev)
                for g in grads:
                    total = total.maximum(g.abs().max().float())
                total = total.reshape(1)
                if sharded:
                    dist.all_reduce(total, dist.ReduceOp.MAX, group=self.process_group)
                total = total[0]
            else:
                acc = zeros((1,), dtype="float64", device=dev)
                for g in grads:
                    acc += (g.double().abs() ** norm_type).sum()
                if sharded:
                    dist.all_reduce(acc, dist.ReduceOp.SUM, group=self.process_group)
                total = acc[0] ** (1.0 / norm_type)
            coef = float(max_norm) / (float(total) + 1e-6)
            if coef < 1.0:
                for g in grads:
                    g.mul_(coef)
        return total

    # -- full parameters and state dicts ----------------------------------------------------
    @staticmethod
    @_contextlib.contextmanager
    def summon_full_params(module: Module, recurse: bool = True, writeback: bool = True,
                           rank0_only: bool = False, offload_to_cpu: bool = False,
                           with_grads: bool = False) -> Iterator[None]:
        """Within the block the original parameters are set on their modules (gathered, in
        the shards' dtype); with writeback, in-place changes go back into the shards."""
        if with_grads or offload_to_cpu or rank0_only:
            raise NotImplementedError("summon_full_params: with_grads, offload_to_cpu and "
                                      "rank0_only are not supported")
        if isinstance(module, FullyShardedDataParallel) and not recurse:
            insts = [module]
        else:
            insts = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        insts = [m for m in insts if m._flat_param is not None]
        fulls = []
        with no_grad():
            for st in insts:
                full = st._unshard(st._flat_param, compute=False)
                st._install(st._views(full))
                fulls.append(full)
        try:
            yield
        finally:
            with no_grad():
                for st, full in zip(insts, fulls):
                    st._uninstall()
                    if writeback and st.sharding_strategy != ShardingStrategy.NO_SHARD:
                        s = st._shard_numel
                        st._flat_param.copy_(full[st._rank * s:(st._rank + 1) * s])

    @staticmethod
    @_contextlib.contextmanager
    def state_dict_type(module: Module, state_dict_type: StateDictType,
                        state_dict_config: Optional[FullStateDictConfig] = None,
                        optim_state_dict_config: Any = None) -> Iterator[None]:
        """Sets the kind of state_dict() every FSDP instance in `module` returns."""
        if StateDictType(state_dict_type) != StateDictType.FULL_STATE_DICT:
            raise NotImplementedError(f"FullyShardedDataParallel: {state_dict_type} is not "
                                      "supported; use StateDictType.FULL_STATE_DICT")
        insts = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        old = [(m._sd_type, m._sd_config) for m in insts]
        for m in insts:
            m._sd_type = StateDictType.FULL_STATE_DICT
            m._sd_config = state_dict_config or FullStateDictConfig()
        try:
            yield
        finally:
            for m, (t, c) in zip(insts, old):
                m._sd_type, m._sd_config = t, c

    # -- optimizer state dicts (PyTorch's FSDP.optim_state_dict layout) --------------------
    @staticmethod
    def _flat_index(model: Module) -> List[Tuple["FullyShardedDataParallel", List[str]]]:
        """Every FSDP instance with parameters in `model`, with the original names (relative
        to `model`, first name of tied parameters) of its flat parameter's pieces."""
        out = []
        for name, m in model.named_modules():
            if not isinstance(m, FullyShardedDataParallel) or m._flat_param is None:
                continue
            prefix = ".".join(part for part in name.split(".")
                              if part and part != "_fsdp_wrapped_module")
            prefix = prefix + "." if prefix else ""
            names: Dict[int, str] = {}
            for _, _, fqn, k in m._slots:
                names.setdefault(k, prefix + fqn)
            out.append((m, [names[k] for k in range(len(m._spans))]))
        return out

    @staticmethod
    def optim_state_dict(model: Module, optim: Any, optim_state_dict: Optional[Dict] = None,
                         group: Any = None) -> Dict[str, Any]:
        """The optimizer's state for the unsharded parameters (a collective): {'state': {name:
        {key: value}}, 'param_groups': [{..., 'params': [names]}]}, names as in the full
        model state dict. Per-element state (exp_avg, ...) is gathered and split per
        parameter; scalars (step) are taken as they are. Loads at any world size through
        optim_state_dict_to_load."""
        osd = optim.state_dict() if optim_state_dict is None else optim_state_dict
        order = [p for g in optim.param_groups for p in g["params"]]
        index = {id(p): i for i, p in enumerate(order)}
        names_of: Dict[int, List[str]] = {}
        state: Dict[str, Any] = {}
        with no_grad():
            for m, names in FullyShardedDataParallel._flat_index(model):
                i = index.get(id(m._flat_param))
                if i is None:
                    continue
                names_of[i] = names
                entry = osd["state"].get(i, {})
                per = {n: {} for n in names}
                for key in sorted(entry):
                    v = entry[key]
                    if hasattr(v, "shape") and tuple(v.shape) == tuple(m._flat_param.shape):
                        full = m._unshard(v.to(m._flat_param.device), compute=False)
                        for n, piece in zip(names, m._views(full)):
                            per[n][key] = piece.clone()
                    else:
                        for n in names:
                            per[n][key] = v.clone() if hasattr(v, "clone") else v
                state.update((n, d) for n, d in per.items() if d)
        plain = FullyShardedDataParallel._plain_names(model)
        for i, p in enumerate(order):                 # parameters outside any flat parameter
            if i not in names_of and id(p) in plain:
                names_of[i] = [plain[id(p)]]
                if i in osd["state"]:
                    state[plain[id(p)]] = dict(osd["state"][i])
        groups = []
        for g in osd["param_groups"]:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = [n for i in g["params"] for n in names_of.get(i, [])]
            groups.append(packed)
        return {"state": state, "param_groups": groups}

    @staticmethod
    def _plain_names(model: Module) -> Dict[int, str]:
        """id -> name (without `_fsdp_wrapped_module.`) of the parameters that are not flat."""
        flats = {id(m._flat_param) for m in model.modules()
                 if isinstance(m, FullyShardedDataParallel) and m._flat_param is not None}
        return {id(p): ".".join(x for x in n.split(".") if x != "_fsdp_wrapped_module")
                for n, p in model.named_parameters() if id(p) not in flats}

    @staticmethod
    def optim_state_dict_to_load(model: Module, optim: Any,
                                 optim_state_dict: Dict[str, Any],
                                 is_named_optimizer: bool = False,
                                 load_directly: bool = False,
                                 group: Any = None) -> Dict[str, Any]:
        """The state dict `optim.load_state_dict` takes on this rank, made from a full one
        (optim_state_dict's layout): each rank keeps the slice of its shards."""
        from ..._creation import zeros
        order = [p for g in optim.param_groups for p in g["params"]]
        index = {id(p): i for i, p in enumerate(order)}
        full_state = optim_state_dict["state"]
        state: Dict[int, Any] = {}
        with no_grad():
            for m, names in FullyShardedDataParallel._flat_index(model):
                i = index.get(id(m._flat_param))
                if i is None:
                    continue
                have = [full_state[n] for n in names if n in full_state]
                if not have:
                    continue
                fp = m._flat_param
                s = m._shard_numel
                lo = 0 if m.sharding_strategy == ShardingStrategy.NO_SHARD else m._rank * s
                entry: Dict[str, Any] = {}
                for key in have[0]:
                    v0 = have[0][key]
                    spans_shaped = hasattr(v0, "shape") and all(
                        n in full_state and tuple(full_state[n][key].shape) == shape
                        for n, (_, _, shape) in zip(names, m._spans)) and \
                        (tuple(v0.shape) != () or all(sh == () for _, _, sh in m._spans))
                    if not spans_shaped:
                        entry[key] = v0
                        continue
                    flat = zeros((m._padded,), dtype=v0.dtype, device=fp.device)
                    for n, (o, cnt, _) in zip(names, m._spans):
                        flat[o:o + cnt].copy_(full_state[n][key].reshape(-1).to(fp.device))
                    entry[key] = flat[lo:lo + s].clone()
                state[i] = entry
        plain = FullyShardedDataParallel._plain_names(model)
        for i, p in enumerate(order):
            n = plain.get(id(p))
            if n is not None and i not in state and n in full_state:
                state[i] = dict(full_state[n])
        groups = []
        for mine, theirs in zip(optim.state_dict()["param_groups"],
                                optim_state_dict["param_groups"]):
            packed = {k: v for k, v in theirs.items() if k != "params"}
            packed["params"] = mine["params"]
            groups.append(packed)
        return {"state": state, "param_groups": groups}

    def state_dict(self, *args: Any, destination: Optional[Dict[str, Any]] = None,
                   prefix: str = "", keep_vars: bool = False) -> Dict[str, Any]:
        """The full (unsharded) state dict under the original module's keys (a collective:
        every rank calls it)."""
        if args:
            destination = args[0] if destination is None else destination
            if len(args) > 1 and prefix == "":
                prefix = args[1]
        created = destination is None
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        cfg = self._sd_config
        mine: List[str] = []
        with no_grad():
            views: List[Any] = []
            if self._flat_param is not None:
                views = self._views(self._unshard(self._flat_param, compute=False))
            saved = {}
            for key, (m, names) in self._order.items():
                saved[key] = OrderedDict(m._parameters)
            for m, name, fqn, k in self._slots:
                m._parameters[name] = views[k]
                mine.append(prefix + fqn)
            for key, (m, names) in self._order.items():   # the original order of each module
                params = m._parameters
                ordered = OrderedDict((n, params[n]) for n in names if n in params)
                ordered.update((n, v) for n, v in params.items() if n not in ordered)
                m._parameters = ordered
            try:
                self._fsdp_wrapped_module.state_dict(destination=destination, prefix=prefix,
                                                     keep_vars=False)
            finally:
                for key, (m, _) in self._order.items():
                    m._parameters = saved[key]
            for key in mine:
                destination[key] = destination[key].clone()
            if self._is_root and cfg.offload_to_cpu:
                for k, v in destination.items():
                    if hasattr(v, "device") and v.device.type != "cpu":
                        destination[k] = v.cpu()
        if self._is_root and created and cfg.rank0_only and self._rank != 0:
            destination.clear()
        return destination

    def _load_from_state_dict(self, state_dict: Dict[str, Any], prefix: str,
                              local_metadata: Dict[str, Any], strict: bool,
                              missing_keys: List[str], unexpected_keys: List[str],
                              error_msgs: List[str]) -> None:
        """Takes this instance's parameters from a full state dict (each rank keeps its
        shard) and renames the rest of its keys under `_fsdp_wrapped_module.` for the
        wrapped module's own loading."""
        from ...nn.modules.module import to_tensor
        given: Dict[int, Tuple[str, Any]] = {}
        for m, name, fqn, k in self._slots:
            key = prefix + fqn
            if key in state_dict:
                v = state_dict.pop(key)
                given.setdefault(k, (key, v))
        first = {}
        for m, name, fqn, k in self._slots:
            first.setdefault(k, prefix + fqn)
        if self._flat_param is not None:
            s = self._shard_numel
            lo = 0 if self.sharding_strategy == ShardingStrategy.NO_SHARD else self._rank * s
            with no_grad():
                for k, (o, n, shape) in enumerate(self._spans):
                    if k not in given:
                        if strict:
                            missing_keys.append(first[k])
                        continue
                    key, v = given[k]
                    try:
                        v = to_tensor(v)
                    except Exception:
                        error_msgs.append(f'While copying the parameter named "{key}", '
                                          f"expected a Tensor, got {type(v)}")
                        continue
                    if tuple(v.shape) != shape:
                        error_msgs.append(f"size mismatch for {key}: copying a param with "
                                          f"shape {tuple(v.shape)} from checkpoint, the shape "
                                          f"in current model is {shape}.")
                        continue
                    a, b = max(o, lo), min(o + n, lo + s)
                    if a < b:
                        src = v.reshape(-1)[a - o:b - o]
                        self._flat_param[a - lo:b - lo].copy_(
                            src.to(self._flat_param.device).to(self._flat_param.dtype))
        inner = prefix + "_fsdp_wrapped_module."
        for key in [k for k in state_dict if k.startswith(prefix) and not k.startswith(inner)]:
            state_dict[inner + key[len(prefix):]] = state_dict.pop(key)

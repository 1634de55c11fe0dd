"""ZeroRedundancyOptimizer (ZeRO stage 1): optimizer state sharded across ranks.

Each rank owns a partition of the parameters (PyTorch's greedy rule: per parameter group,
largest first, to the rank with the fewest elements so far) and keeps optimizer state only
for those; ``step()`` updates the owned parameters with the wrapped optimizer, then every
owner broadcasts its updated parameters so all ranks hold the same model. Gradients must
already be averaged (DistributedDataParallel does it), as in PyTorch.
"""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Type

from . import broadcast, gather_object, get_global_rank, get_rank, get_world_size
from ..optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]


class ZeroRedundancyOptimizer(Optimizer):
    """``ZeroRedundancyOptimizer(params, optimizer_class=ts.optim.AdamW, lr=...)``:
    param_groups hold every parameter (so zero_grad and schedulers see them all); the state
    lives in ``self.optim``, the local optimizer over this rank's partition.
    ``consolidate_state_dict(to)`` then ``state_dict()`` on rank `to` give the state dict the
    unsharded optimizer would have."""

    def __init__(self, params: Any, optimizer_class: Type[Optimizer],
                 process_group: Any = None, parameters_as_bucket_view: bool = False,
                 overlap_with_ddp: bool = False, **defaults: Any) -> None:
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer: overlap_with_ddp=True is not "
                                      "supported; step() after backward instead")
        super().__init__(params, defaults)
        self.process_group = process_group
        self.optimizer_class = optimizer_class
        self.world_size = get_world_size(process_group)
        self.rank = get_rank(process_group)
        self._owner: Dict[int, int] = {}
        self._partition: List[List[List[Any]]] = [[[] for _ in self.param_groups]
                                                  for _ in range(self.world_size)]
        for gi, g in enumerate(self.param_groups):
            load = [0] * self.world_size
            for p in sorted(g["params"], key=lambda t: -t.numel()):
                r = min(range(self.world_size), key=lambda i: load[i])
                load[r] += p.numel()
                self._owner[id(p)] = r
            for p in g["params"]:               # keep the group's order inside a partition
                self._partition[self._owner[id(p)]][gi].append(p)
        local = [dict({k: v for k, v in g.items() if k != "params"},
                      params=self._partition[self.rank][gi])
                 for gi, g in enumerate(self.param_groups)]
        self.optim = optimizer_class(local, **defaults)
        self._consolidated: Optional[Dict[str, Any]] = None

    @property
    def state(self) -> Any:  # type: ignore[override]
        return self.optim.state if hasattr(self, "optim") else self._pre_state

    @state.setter
    def state(self, value: Any) -> None:
        self._pre_state = value

    def _sync_options(self) -> None:
        for mine, local in zip(self.param_groups, self.optim.param_groups):
            for k, v in mine.items():
                if k != "params":
                    local[k] = v

    def step(self, closure: Optional[Callable[[], Any]] = None, **kwargs: Any) -> Any:
        """Updates this rank's partition, then broadcasts every partition from its owner."""
        self._sync_options()      # lr schedulers write into self.param_groups
        loss = self.optim.step(closure, **kwargs) if closure is not None else self.optim.step(
            **kwargs)
        self._broadcast_partitions()
        return loss

    def _broadcast_partitions(self) -> None:
        """Every owner's updated parameters to all ranks: one broadcast per owner and dtype
        (its parameters flattened into one buffer), not one per parameter: a GPT-2-small
        step has ~150 parameters, and each collective costs a launch on every rank."""
        from .._manipulation import concat
        from .._creation import empty
        from ..autograd.grad_mode import no_grad
        pending: List[tuple] = []
        with no_grad():
            for r in range(self.world_size):
                src = get_global_rank(self.process_group, r) if self.process_group else r
                by_kind: Dict[tuple, List[Any]] = {}
                for group in self._partition[r]:
                    for p in group:
                        by_kind.setdefault((str(p.dtype), str(p.device)), []).append(p)
                for params in by_kind.values():
                    if r == self.rank:
                        flat = concat([p.detach().reshape(-1) for p in params])
                    else:
                        flat = empty((sum(p.numel() for p in params),), dtype=params[0].dtype,
                                     device=params[0].device)
                    work = broadcast(flat, src, group=self.process_group, async_op=True)
                    pending.append((work, flat, params if r != self.rank else []))
            for work, flat, params in pending:
                work.wait()
                o = 0
                for p in params:
                    p.copy_(flat[o:o + p.numel()].reshape(p.shape))
                    o += p.numel()

    def _global_index(self) -> Dict[int, int]:
        index: Dict[int, int] = {}
        for g in self.param_groups:
            for p in g["params"]:
                index.setdefault(id(p), len(index))
        return index

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Collects every rank's shard of the state on rank `to` (a collective)."""
        index = self._global_index()
        local = self.optim.state_dict()
        # the local optimizer numbers its own params 0..k-1 in partition order
        mine = [index[id(p)] for g in self._partition[self.rank] for p in g]
        # state travels (pickled) and is kept on the host, so the state dict loads anywhere
        shard = {mine[k]: {n: (x.cpu() if hasattr(x, "cpu") else x) for n, x in v.items()}
                 for k, v in local["state"].items()}
        shards: List[Any] = [None] * self.world_size
        gather_object(shard, shards if self.rank == to else None, dst=to,
                      group=self.process_group)
        if self.rank == to:
            state: Dict[int, Any] = {}
            for s in shards:
                state.update(s)
            groups = []
            for g in self.param_groups:
                packed = {k: v for k, v in g.items() if k != "params"}
                packed["params"] = [index[id(p)] for p in g["params"]]
                groups.append(packed)
            self._consolidated = {"state": dict(sorted(state.items())),
                                  "param_groups": groups}
        else:
            self._consolidated = None

    def state_dict(self) -> Dict[str, Any]:
        """The full state dict, on the rank consolidate_state_dict() gathered it to."""
        if self._consolidated is None:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please "
                               "call `consolidate_state_dict(to=...)` on all ranks beforehand "
                               "if you meant to save the global state.")
        return self._consolidated

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Loads a full (unsharded) state dict: each rank keeps the state of its partition."""
        index = self._global_index()
        for mine, theirs in zip(self.param_groups, state_dict["param_groups"]):
            for k, v in theirs.items():
                if k != "params":
                    mine[k] = v
        local_groups = []
        for gi, g in enumerate(self.optim.param_groups):
            packed = {k: v for k, v in state_dict["param_groups"][gi].items() if k != "params"}
            packed["params"] = [index[id(p)] for p in self._partition[self.rank][gi]]
            local_groups.append(packed)
        owned = {i for g in local_groups for i in g["params"]}
        self.optim.load_state_dict({
            "state": {i: v for i, v in state_dict["state"].items() if i in owned},
            "param_groups": local_groups})

    def zero_grad(self, set_to_none: bool = True) -> None:
        super().zero_grad(set_to_none)


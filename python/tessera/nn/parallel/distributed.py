"""DistributedDataParallel: PyTorch's DDP over tessera.distributed.

Note [DDP buckets]: parameters that require grad are grouped, in reverse registration order
(about the order backward produces their gradients), into buckets of at most bucket_cap_mb
per dtype and device, each with one flat gradient buffer. A post-accumulate-grad hook on every
parameter copies its gradient into its bucket slot (with gradient_as_bucket_view the
parameter's .grad *is* that slot, so nothing is copied); when a bucket's last gradient
arrives, its all-reduce (ReduceOp.AVG) starts asynchronously, in bucket order on every rank,
while backward goes on computing the other gradients. When the last bucket has started, the
hook waits for all of them and writes the averaged gradients back to .grad. So communication
overlaps computation without the autograd engine knowing about it.

Unused parameters: with find_unused_parameters=True the forward walks the output's autograd
graph; parameters it does not reach are marked ready at once (zeros in their slots), and a
final all-reduce of a used-flag per parameter leaves the .grad of parameters no rank used
untouched, as PyTorch does. Without it, a bucket that never fills makes the next forward
raise PyTorch's "Expected to have finished reduction" error instead of hanging.
"""
from __future__ import annotations

import contextlib as _contextlib
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from ... import distributed as dist
from ...autograd.grad_mode import no_grad
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class _Bucket:
    def __init__(self, params: List[Any], index: int) -> None:
        from ..._creation import zeros
        self.params, self.index = params, index
        self.offsets: List[int] = []
        n = 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        self.buffer = zeros((n,), dtype=params[0].dtype, device=params[0].device)
        self.pending = len(params)
        self.work: Optional[dist.Work] = None

    def view(self, i: int) -> Any:
        p = self.params[i]
        return self.buffer[self.offsets[i]:self.offsets[i] + p.numel()].reshape(p.shape)


def _key(t: Any) -> Tuple[int, Tuple[int, ...], str]:
    return (t.data_ptr(), tuple(t.shape), str(t.dtype))


class DistributedDataParallel(Module):
    """Wraps `module` for data-parallel training: one process per device, each with its own
    share of the batch; after ``loss.backward()`` every rank holds the gradients averaged over
    all ranks (equal to one process's gradients on the concatenated batch with a mean loss).

    Parameters and buffers are broadcast from rank 0 at construction; buffers again before
    each forward when broadcast_buffers. ``no_sync()`` skips the all-reduce (gradient
    accumulation); the next synchronized backward averages the accumulated sum."""

    def __init__(self, module: Module, device_ids: Optional[Sequence[Any]] = None,
                 output_device: Any = None, dim: int = 0, broadcast_buffers: bool = True,
                 process_group: Any = None, bucket_cap_mb: Optional[float] = 25,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params: Any = None, param_to_hook_all_reduce: Any = None,
                 mixed_precision: Any = None, device_mesh: Any = None) -> None:
        super().__init__()
        if not dist.is_initialized():
            raise RuntimeError("DistributedDataParallel: the default process group has not "
                               "been initialized; call tessera.distributed."
                               "init_process_group() first")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else None
        self.output_device, self.dim = output_device, dim
        self.broadcast_buffers = broadcast_buffers
        self.process_group = process_group
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb)
                                    * 1024 * 1024)
        seen = set()
        params = []
        for _, p in module.named_parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._params = params
        self._sync_module_states()
        self._buckets = self._make_buckets(params)
        self._where: Dict[int, Tuple[_Bucket, int]] = {}
        for b in self._buckets:
            for i, p in enumerate(b.params):
                self._where[id(p)] = (b, i)
                if gradient_as_bucket_view:
                    with no_grad():
                        if p.grad is not None:
                            b.view(i).copy_(p.grad)
                    p.grad = b.view(i)
        self._hooks = [p.register_post_accumulate_grad_hook(self._make_hook(p))
                       for p in params]
        self._used: List[bool] = [False] * len(params)
        self._index = {id(p): k for k, p in enumerate(params)}
        self._next_bucket = 0
        self._expecting = self._fired = False

    # -- setup ------------------------------------------------------------------------------
    def _sync_module_states(self) -> None:
        if dist.get_world_size(self.process_group) == 1:
            return
        src = dist.get_global_rank(self.process_group, 0) if self.process_group else 0
        with no_grad():
            for t in list(self.module.parameters()) + list(self.module.buffers()):
                dist.broadcast(t.detach(), src, group=self.process_group)

    def _make_buckets(self, params: List[Any]) -> List[_Bucket]:
        buckets: List[_Bucket] = []
        open_: Dict[Tuple[str, str], Tuple[List[Any], int]] = {}
        for p in reversed(params):
            k = (str(p.dtype), str(p.device))
            group, size = open_.get(k, ([], 0))
            nbytes = p.numel() * p.element_size()
            if group and size + nbytes > self.bucket_bytes_cap:
                buckets.append(_Bucket(group, len(buckets)))
                group, size = [], 0
            group.append(p)
            open_[k] = (group, size + nbytes)
        for group, _ in open_.values():
            if group:
                buckets.append(_Bucket(group, len(buckets)))
        return buckets

    # -- forward ----------------------------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.require_backward_grad_sync and self._expecting and self._fired:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss. You can enable unused parameter detection by passing "
                "the keyword argument `find_unused_parameters=True` to "
                "`tessera.nn.parallel.DistributedDataParallel`, and by making sure all "
                "`forward` function outputs participate in calculating loss. Parameters that "
                f"received no gradient: {self._missing_names()}")
        if self.broadcast_buffers and dist.get_world_size(self.process_group) > 1:
            src = dist.get_global_rank(self.process_group, 0) if self.process_group else 0
            with no_grad():
                for buf in self.module.buffers():
                    dist.broadcast(buf, src, group=self.process_group)
        out = self.module(*inputs, **kwargs)
        self._expecting = False
        if self.require_backward_grad_sync:
            self._reset()
            self._expecting = True
            if self.find_unused_parameters:
                reached = self._reached(out)
                for p in self._params:
                    if _key(p) not in reached:
                        self._mark_ready(p, used=False)
        return out

    def _missing_names(self) -> List[str]:
        names = {id(p): n for n, p in self.module.named_parameters()}
        return [names.get(id(p), "?") for p in self._params if not self._used[self._index[id(p)]]]

    def _reset(self) -> None:
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._next_bucket = 0
        self._fired = False
        self._used = [False] * len(self._params)

    @staticmethod
    def _reached(out: Any) -> set:
        roots = []

        def collect(o: Any) -> None:
            if hasattr(o, "grad_fn"):
                if o.grad_fn is not None:
                    roots.append(o.grad_fn)
            elif isinstance(o, dict):
                for v in o.values():
                    collect(v)
            elif isinstance(o, (list, tuple)):
                for v in o:
                    collect(v)
        collect(out)
        # seen keeps the node wrappers alive: pybind11 hands back the same wrapper for a live
        # node, so ids are stable and shared subgraphs are walked once.
        found: set = set()
        seen: Dict[int, Any] = {}
        stack = roots
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen[id(node)] = node
            if node.name() == "AccumulateGrad":
                found.add(_key(node.variable))
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        return found

    # -- backward ---------------------------------------------------------------------------
    def _make_hook(self, p: Any) -> Any:
        def hook(param: Any) -> None:
            if self.require_backward_grad_sync and self._expecting:
                self._fired = True
                self._mark_ready(p, used=True)
        return hook

    def _mark_ready(self, p: Any, used: bool) -> None:
        b, i = self._where[id(p)]
        k = self._index[id(p)]
        if self._used[k] or (not used and b.pending == 0):
            return
        self._used[k] = used
        with no_grad():
            slot = b.view(i)
            if not used:
                slot.fill_(0)
            elif p.grad is not None and not (self.gradient_as_bucket_view and
                                             p.grad.data_ptr() == slot.data_ptr()):
                slot.copy_(p.grad)
        b.pending -= 1
        if b.pending == 0:
            self._launch_ready()

    def _launch_ready(self) -> None:
        while self._next_bucket < len(self._buckets) and \
                self._buckets[self._next_bucket].pending == 0:
            b = self._buckets[self._next_bucket]
            b.work = dist.all_reduce(b.buffer, dist.ReduceOp.AVG, group=self.process_group,
                                     async_op=True)
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finish()

    def _finish(self) -> None:
        for b in self._buckets:
            if b.work is not None:
                b.work.wait()
        globally_used = None
        if self.find_unused_parameters:
            import numpy as np
            from ..._creation import asarray
            flags = asarray(np.array(self._used, dtype=np.int32),
                            device=self._params[0].device)
            dist.all_reduce(flags, dist.ReduceOp.MAX, group=self.process_group)
            globally_used = [bool(v) for v in np.asarray(flags.cpu())]
        with no_grad():
            for b in self._buckets:
                for i, p in enumerate(b.params):
                    if globally_used is not None and not globally_used[self._index[id(p)]]:
                        continue
                    slot = b.view(i)
                    if p.grad is None:
                        p.grad = slot if self.gradient_as_bucket_view else slot.clone()
                    elif p.grad.data_ptr() != slot.data_ptr():
                        p.grad.copy_(slot)
        self._expecting = False

    @_contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Within the block, backward accumulates gradients locally without communication."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _get_ddp_logging_data(self) -> Dict[str, Any]:
        return {"bucket_sizes": [b.buffer.numel() * b.buffer.element_size()
                                 for b in self._buckets], "num_buckets": len(self._buckets)}

"""tessera.distributed: PyTorch's ``torch.distributed`` API over MPI (CPU) and NCCL (CUDA).

``init_process_group(backend, init_method, world_size, rank, timeout)`` meets the other ranks
through the rendezvous store (``env://`` reads MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE as
torchrun sets them; ``tcp://host:port``; ``file:///path``) and creates the backend:
``"mpi"`` or ``"gloo"`` (the same CPU backend, under the name CPU scripts ask for) or
``"nccl"``. Collectives take and return PyTorch's forms; ``async_op=True`` returns a
:class:`Work`. Ranks passed as ``src``/``dst`` are global ranks, as in PyTorch.
"""
from __future__ import annotations

import datetime as _datetime
import io as _io
import os as _os
import pickle as _pickle
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Union
from urllib.parse import urlparse

from .process_group import ProcessGroup, ReduceOp, Work
from .store import (DistBackendError, DistError, DistStoreError, FileStore, HashStore,
                    PrefixStore, Store, TCPStore)

__all__ = ["is_available", "is_initialized", "is_mpi_available", "is_nccl_available",
           "is_gloo_available", "is_torchelastic_launched", "init_process_group",
           "destroy_process_group", "get_rank", "get_world_size", "get_backend", "new_group",
           "get_global_rank", "get_group_rank", "get_process_group_ranks", "barrier",
           "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "reduce_scatter", "reduce_scatter_tensor", "all_to_all_single", "all_to_all",
           "gather", "scatter", "send", "recv", "isend", "irecv", "P2POp",
           "batch_isend_irecv", "broadcast_object_list",
           "all_gather_object", "gather_object", "ReduceOp", "Work", "ProcessGroup",
           "GroupMember", "group", "Backend", "Store", "TCPStore", "FileStore", "HashStore",
           "PrefixStore", "DistError", "DistStoreError", "DistBackendError"]


class Backend(str):
    """Backend names (PyTorch's ``dist.Backend``): ``Backend("GLOO") == "gloo"``."""
    GLOO = "gloo"
    MPI = "mpi"
    NCCL = "nccl"
    UNDEFINED = "undefined"

    def __new__(cls, name: str) -> "Backend":
        n = name.lower()
        if n not in ("gloo", "mpi", "nccl"):
            raise ValueError(f"Invalid backend: '{name}' (tessera has 'gloo' = 'mpi' on CPU "
                             "and 'nccl' on CUDA)")
        return str.__new__(cls, n)


class _NonMember:
    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    """``GroupMember.WORLD`` is the default group (None in calls); ``NON_GROUP_MEMBER`` is
    what ``new_group`` returns on ranks outside the new group."""
    WORLD: Optional[ProcessGroup] = None
    NON_GROUP_MEMBER = _NonMember()


class group:  # noqa: N801 - PyTorch's name
    WORLD: Optional[ProcessGroup] = None


class _State:
    world: Optional[ProcessGroup] = None
    backend: str = ""
    store: Optional[Store] = None
    ranks: Dict[int, List[int]] = {}         # id(group) -> global ranks
    groups: List[ProcessGroup] = []          # the subgroups made by new_group, to tear down
    generation: int = 0
    group_count: int = 0


def is_available() -> bool:
    """True: the package is always importable (its backends load on first use)."""
    return True


def is_initialized() -> bool:
    return _State.world is not None


def is_mpi_available() -> bool:
    from .mpi_backend import is_available as ok
    return ok()


is_gloo_available = is_mpi_available


def is_nccl_available() -> bool:
    from .nccl_backend import is_available as ok
    return ok()


def is_torchelastic_launched() -> bool:
    return "TORCHELASTIC_RUN_ID" in _os.environ


def _timeout_s(timeout: Union[None, float, _datetime.timedelta]) -> float:
    if timeout is None:
        return float(_os.environ.get("TESSERA_DIST_TIMEOUT", 1800))
    return timeout.total_seconds() if isinstance(timeout, _datetime.timedelta) else float(timeout)


def _env_int(name: str, given: int) -> int:
    if given is not None and given >= 0:
        return int(given)
    if name not in _os.environ:
        raise ValueError(f"init_process_group: {name} is not set; pass {name.lower()}= or "
                         f"set the {name} environment variable (torchrun and "
                         "tessera.distributed.run set it)")
    return int(_os.environ[name])


def _rendezvous(init_method: Optional[str], rank: int, world_size: int,
                timeout: float) -> tuple:
    method = init_method or "env://"
    url = urlparse(method)
    if url.scheme == "file":
        rank, world_size = _env_int("RANK", rank), _env_int("WORLD_SIZE", world_size)
        return FileStore(url.path, world_size, timeout), rank, world_size
    if url.scheme == "env":
        rank, world_size = _env_int("RANK", rank), _env_int("WORLD_SIZE", world_size)
        host = _os.environ.get("MASTER_ADDR")
        port = _os.environ.get("MASTER_PORT")
        if host is None or port is None:
            raise ValueError("init_process_group(init_method='env://'): MASTER_ADDR and "
                             "MASTER_PORT must be set (torchrun and tessera.distributed.run "
                             "set them)")
    elif url.scheme == "tcp":
        rank, world_size = _env_int("RANK", rank), _env_int("WORLD_SIZE", world_size)
        host, port = url.hostname, url.port
        if host is None or port is None:
            raise ValueError(f"init_process_group: init_method {method!r} needs "
                             "tcp://host:port")
    else:
        raise ValueError(f"init_process_group: unknown init_method {method!r}; use env://, "
                         "tcp://host:port or file:///path")
    if not 0 <= rank < world_size:
        raise ValueError(f"init_process_group: rank {rank} is outside [0, {world_size})")
    store = TCPStore(str(host), int(port), world_size, is_master=(rank == 0), timeout=timeout)
    return store, rank, world_size


def _create(backend: str, store: Store, rank: int, world_size: int,
            timeout: float, device_id: Any = None) -> ProcessGroup:
    if backend in ("gloo", "mpi"):
        from .mpi_backend import MPIProcessGroup
        return MPIProcessGroup.create(store, rank, world_size, timeout)
    from .nccl_backend import NCCLProcessGroup
    return NCCLProcessGroup.create(store, rank, world_size, timeout, device_id=device_id)


def _backend_name(backend: Optional[str]) -> str:
    if backend is None:
        from .. import cuda
        return "nccl" if cuda.is_available() else "gloo"
    b = str(backend).lower()
    if ":" in b:     # "cpu:gloo,cuda:nccl": the device this process computes on decides
        from .. import cuda
        parts = dict(p.split(":", 1) for p in b.split(","))
        b = parts.get("cuda", "nccl") if cuda.is_available() else parts.get("cpu", "gloo")
    return str(Backend(b))


def init_process_group(backend: Optional[str] = None, init_method: Optional[str] = None,
                       timeout: Union[None, float, _datetime.timedelta] = None,
                       world_size: int = -1, rank: int = -1, store: Optional[Store] = None,
                       group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Joins this process to the default group of `world_size` ranks (PyTorch's call).

    `timeout` (seconds or a timedelta; default 1800 s, or $TESSERA_DIST_TIMEOUT) bounds the
    rendezvous and every collective: a rank that died makes the others raise
    ``DistBackendError``/``DistStoreError`` after it instead of hanging."""
    if _State.world is not None:
        raise RuntimeError("trying to initialize the default process group twice! "
                           "(call destroy_process_group() first)")
    name = _backend_name(backend)
    t = _timeout_s(timeout)
    if store is None:
        store, rank, world_size = _rendezvous(init_method, rank, world_size, t)
    elif rank < 0 or world_size < 0:
        raise ValueError("init_process_group: with store=, rank= and world_size= are required")
    _State.generation += 1
    pstore = PrefixStore(f"tessera/{_State.generation}", store)
    pg = _create(name, pstore, rank, world_size, t, device_id)
    _State.world, _State.backend, _State.store = pg, name, store
    _State.ranks = {id(pg): list(range(world_size))}
    _State.group_count = 0
    GroupMember.WORLD = group.WORLD = pg


def destroy_process_group(group: Optional[ProcessGroup] = None) -> None:
    """Tears down `group`, or the default group and every group made from it."""
    if group is None or group is _State.world:
        if _State.world is None:
            return
        for sub in _State.groups:  # NCCL communicators left alive crash the process at exit
            sub.shutdown()
        _State.groups = []
        _State.world.shutdown()
        store = _State.store
        _State.world, _State.backend, _State.store, _State.ranks = None, "", None, {}
        GroupMember.WORLD = globals()["group"].WORLD = None
        if isinstance(store, TCPStore):
            store.close()
        return
    group.shutdown()
    _State.ranks.pop(id(group), None)
    _State.groups = [g for g in _State.groups if g is not group]


def _world() -> ProcessGroup:
    if _State.world is None:
        raise RuntimeError("Default process group has not been initialized, please make sure "
                           "to call init_process_group.")
    return _State.world


def _pg(group: Any) -> ProcessGroup:
    w = _world()
    if group is None:
        return w
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("this rank is not a member of the group it passed to a collective")
    if id(group) not in _State.ranks:
        raise ValueError(f"unknown or destroyed process group {group!r}")
    return group


def get_world_size(group: Optional[ProcessGroup] = None) -> int:
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _pg(group).size()


def get_rank(group: Optional[ProcessGroup] = None) -> int:
    """This process's rank in `group` (-1 when it is not a member)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _pg(group).rank()


def get_backend(group: Optional[ProcessGroup] = None) -> str:
    return _State.backend if _pg(group) is not None else ""


def get_process_group_ranks(group: Optional[ProcessGroup]) -> List[int]:
    return list(_State.ranks[id(_pg(group))])


def get_global_rank(group: Optional[ProcessGroup], group_rank: int) -> int:
    return get_process_group_ranks(group)[group_rank]


def get_group_rank(group: Optional[ProcessGroup], global_rank: int) -> int:
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"global rank {global_rank} is not part of group {group!r}")
    return ranks.index(global_rank)


def new_group(ranks: Optional[Sequence[int]] = None,
              timeout: Union[None, float, _datetime.timedelta] = None,
              backend: Optional[str] = None, pg_options: Any = None,
              use_local_synchronization: bool = False, group_desc: Optional[str] = None
              ) -> Any:
    """A group of the global `ranks` (all ranks when None). Like PyTorch, every rank of the
    default group must call it, members or not; non-members get NON_GROUP_MEMBER."""
    w = _world()
    ranks = sorted(range(w.size())) if ranks is None else [int(r) for r in ranks]
    if len(set(ranks)) != len(ranks) or any(not 0 <= r < w.size() for r in ranks):
        raise ValueError(f"new_group: ranks {ranks} must be distinct ranks in "
                         f"[0, {w.size()})")
    _State.group_count += 1
    sub = w.split(ranks) if _State.backend != "nccl" else w.split_with_store(  # type: ignore
        ranks, PrefixStore(f"tessera/{_State.generation}/g{_State.group_count}",
                           _State.store))
    if sub is None:
        return GroupMember.NON_GROUP_MEMBER
    if timeout is not None:
        sub.timeout = _timeout_s(timeout)
    _State.ranks[id(sub)] = list(ranks)
    _State.groups.append(sub)
    return sub


def _check(tensor: Any, what: str, name: str = "tensor") -> None:
    from .._C import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{what}: {name} must be a tessera Tensor, got "
                        f"{type(tensor).__name__}")


def _group_rank(pg: ProcessGroup, group: Any, global_rank: int, what: str) -> int:
    ranks = _State.ranks[id(pg)]
    if global_rank not in ranks:
        raise ValueError(f"{what}: rank {global_rank} is not part of the group (ranks "
                         f"{ranks})")
    return ranks.index(global_rank)


def _done(work: Work, async_op: bool) -> Optional[Work]:
    if async_op:
        return work
    work.wait()
    return None


def _contig_flat(t: Any) -> Any:
    """A contiguous 1-D tensor over `t`'s elements: a view when possible, else a copy."""
    return (t if t.is_contiguous() else t.contiguous()).reshape(-1)


def _then(work: Work, after: Any) -> Work:
    """`work`, with `after` run once it completes (copies out of staging buffers)."""
    finish = work._finish

    def both() -> None:
        if finish is not None:
            finish()
        after()
    work._finish = both
    return work


def _copy_into(dst: Any, src: Any) -> None:
    from .. import no_grad
    with no_grad():
        dst.copy_(src.reshape(dst.shape))


def all_reduce(tensor: Any, op: ReduceOp = ReduceOp.SUM, group: Optional[ProcessGroup] = None,
               async_op: bool = False) -> Optional[Work]:
    """Reduces `tensor` over all ranks of `group` in place (every rank gets the result)."""
    _check(tensor, "all_reduce")
    return _done(_pg(group).allreduce(tensor, ReduceOp(op)), async_op)


def broadcast(tensor: Any, src: Optional[int] = None, group: Optional[ProcessGroup] = None,
              async_op: bool = False, group_src: Optional[int] = None) -> Optional[Work]:
    """Copies rank `src`'s tensor into every rank's `tensor` (same shape and dtype)."""
    _check(tensor, "broadcast")
    pg = _pg(group)
    root = group_src if group_src is not None else _group_rank(pg, group, int(src or 0),
                                                               "broadcast")
    return _done(pg.broadcast(tensor, root), async_op)


def reduce(tensor: Any, dst: Optional[int] = None, op: ReduceOp = ReduceOp.SUM,
           group: Optional[ProcessGroup] = None, async_op: bool = False,
           group_dst: Optional[int] = None) -> Optional[Work]:
    """Reduces into rank `dst`'s `tensor`; the others' tensors are left unspecified."""
    _check(tensor, "reduce")
    pg = _pg(group)
    root = group_dst if group_dst is not None else _group_rank(pg, group, int(dst or 0),
                                                               "reduce")
    return _done(pg.reduce(tensor, root, ReduceOp(op)), async_op)


def _same(what: str, ref: Any, others: Sequence[Any], name: str) -> None:
    for i, t in enumerate(others):
        _check(t, what, f"{name}[{i}]")
        if t.dtype != ref.dtype or t.numel() != ref.numel() or t.device != ref.device:
            raise ValueError(f"{what}: {name}[{i}] has shape {tuple(t.shape)}, dtype {t.dtype} "
                             f"on {t.device}; expected {ref.numel()} elements of {ref.dtype} "
                             f"on {ref.device} like the input")


def _empty(n: int, like: Any) -> Any:
    from .._creation import empty
    return empty((n,), dtype=like.dtype, device=like.device)


def all_gather(tensor_list: List[Any], tensor: Any, group: Optional[ProcessGroup] = None,
               async_op: bool = False) -> Optional[Work]:
    """tensor_list[r] receives rank r's `tensor` (len(tensor_list) == world size)."""
    _check(tensor, "all_gather")
    pg = _pg(group)
    if len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors, the group "
                         f"has {pg.size()} ranks")
    _same("all_gather", tensor, tensor_list, "tensor_list")
    n = tensor.numel()
    flat = _empty(n * pg.size(), tensor)
    work = pg.allgather_into(flat, _contig_flat(tensor))

    def out() -> None:
        for r, t in enumerate(tensor_list):
            _copy_into(t, flat[r * n:(r + 1) * n])
    return _done(_then(work, out), async_op)


def all_gather_into_tensor(output_tensor: Any, input_tensor: Any,
                           group: Optional[ProcessGroup] = None,
                           async_op: bool = False) -> Optional[Work]:
    """output_tensor (world * n elements: concatenated along dim 0 or stacked) receives every
    rank's input_tensor in rank order."""
    _check(output_tensor, "all_gather_into_tensor", "output_tensor")
    _check(input_tensor, "all_gather_into_tensor", "input_tensor")
    pg = _pg(group)
    if output_tensor.numel() != input_tensor.numel() * pg.size() or \
            output_tensor.dtype != input_tensor.dtype:
        raise ValueError(f"all_gather_into_tensor: output {tuple(output_tensor.shape)} "
                         f"{output_tensor.dtype} must hold world size ({pg.size()}) x input "
                         f"{tuple(input_tensor.shape)} {input_tensor.dtype}")
    return _done(pg.allgather_into(output_tensor, _contig_flat(input_tensor)), async_op)


def reduce_scatter(output: Any, input_list: List[Any], op: ReduceOp = ReduceOp.SUM,
                   group: Optional[ProcessGroup] = None,
                   async_op: bool = False) -> Optional[Work]:
    """Rank r's `output` receives the reduction over ranks of their input_list[r]."""
    _check(output, "reduce_scatter", "output")
    pg = _pg(group)
    if len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors, the "
                         f"group has {pg.size()} ranks")
    _same("reduce_scatter", output, input_list, "input_list")
    from .._manipulation import concat
    flat = concat([_contig_flat(t) for t in input_list])
    return _done(pg.reduce_scatter_into(output, flat, ReduceOp(op)), async_op)


def reduce_scatter_tensor(output: Any, input: Any, op: ReduceOp = ReduceOp.SUM,
                          group: Optional[ProcessGroup] = None,
                          async_op: bool = False) -> Optional[Work]:
    """Rank r's `output` receives the reduction over ranks of the r-th 1/world of `input`."""
    _check(output, "reduce_scatter_tensor", "output")
    _check(input, "reduce_scatter_tensor", "input")
    pg = _pg(group)
    if input.numel() != output.numel() * pg.size() or input.dtype != output.dtype:
        raise ValueError(f"reduce_scatter_tensor: input {tuple(input.shape)} {input.dtype} "
                         f"must hold world size ({pg.size()}) x output "
                         f"{tuple(output.shape)} {output.dtype}")
    return _done(pg.reduce_scatter_into(output, _contig_flat(input), ReduceOp(op)), async_op)


def all_to_all_single(output: Any, input: Any,
                      output_split_sizes: Optional[Sequence[int]] = None,
                      input_split_sizes: Optional[Sequence[int]] = None,
                      group: Optional[ProcessGroup] = None,
                      async_op: bool = False) -> Optional[Work]:
    """Splits `input` along dim 0 (evenly, or by input_split_sizes) and sends part r to rank
    r; `output` receives the parts from every rank, concatenated along dim 0 in rank order."""
    _check(output, "all_to_all_single", "output")
    _check(input, "all_to_all_single", "input")
    pg = _pg(group)
    w = pg.size()
    if output.dtype != input.dtype:
        raise TypeError(f"all_to_all_single: output dtype {output.dtype} != input dtype "
                        f"{input.dtype}")

    def counts(t: Any, sizes: Optional[Sequence[int]], name: str) -> List[int]:
        rows = t.shape[0] if t.ndim else 1
        row = t.numel() // rows if rows else 0
        if sizes is None or len(sizes) == 0:
            if rows % w:
                raise ValueError(f"all_to_all_single: {name} dim 0 ({rows}) is not divisible "
                                 f"by the world size {w}; pass {name}_split_sizes")
            return [rows // w * row] * w
        if len(sizes) != w or sum(sizes) != rows or any(s < 0 for s in sizes):
            raise ValueError(f"all_to_all_single: {name}_split_sizes {list(sizes)} must have "
                             f"{w} non-negative sizes summing to dim 0 ({rows})")
        return [int(s) * row for s in sizes]
    oc = counts(output, output_split_sizes, "output")
    ic = counts(input, input_split_sizes, "input")
    return _done(pg.alltoall(output, _contig_flat(input), oc, ic), async_op)


def all_to_all(output_tensor_list: List[Any], input_tensor_list: List[Any],
               group: Optional[ProcessGroup] = None, async_op: bool = False) -> Optional[Work]:
    """output_tensor_list[r] receives rank r's input_tensor_list[this rank]."""
    pg = _pg(group)
    w = pg.size()
    if len(output_tensor_list) != w or len(input_tensor_list) != w:
        raise ValueError(f"all_to_all: both lists need {w} tensors")
    for i, t in enumerate(list(output_tensor_list) + list(input_tensor_list)):
        _check(t, "all_to_all", f"tensor {i}")
    from .._manipulation import concat
    inp = concat([_contig_flat(t) for t in input_tensor_list])
    out = _empty(sum(t.numel() for t in output_tensor_list), inp)
    work = pg.alltoall(out, inp, [t.numel() for t in output_tensor_list],
                       [t.numel() for t in input_tensor_list])

    def back() -> None:
        o = 0
        for t in output_tensor_list:
            _copy_into(t, out[o:o + t.numel()])
            o += t.numel()
    return _done(_then(work, back), async_op)


def gather(tensor: Any, gather_list: Optional[List[Any]] = None, dst: Optional[int] = None,
           group: Optional[ProcessGroup] = None, async_op: bool = False) -> Optional[Work]:
    """Rank `dst`'s gather_list[r] receives rank r's `tensor`."""
    _check(tensor, "gather")
    pg = _pg(group)
    root = _group_rank(pg, group, int(dst or 0), "gather")
    if pg.rank() != root:
        return _done(pg.gather(None, _contig_flat(tensor), root), async_op)
    if gather_list is None or len(gather_list) != pg.size():
        raise ValueError(f"gather: the destination rank needs gather_list of {pg.size()} "
                         "tensors")
    _same("gather", tensor, gather_list, "gather_list")
    n = tensor.numel()
    flat = _empty(n * pg.size(), tensor)
    work = pg.gather(flat, _contig_flat(tensor), root)

    def back() -> None:
        for r, t in enumerate(gather_list):
            _copy_into(t, flat[r * n:(r + 1) * n])
    return _done(_then(work, back), async_op)


def scatter(tensor: Any, scatter_list: Optional[List[Any]] = None, src: Optional[int] = None,
            group: Optional[ProcessGroup] = None, async_op: bool = False) -> Optional[Work]:
    """Rank r's `tensor` receives rank `src`'s scatter_list[r]."""
    _check(tensor, "scatter")
    pg = _pg(group)
    root = _group_rank(pg, group, int(src or 0), "scatter")
    flat = None
    if pg.rank() == root:
        if scatter_list is None or len(scatter_list) != pg.size():
            raise ValueError(f"scatter: the source rank needs scatter_list of {pg.size()} "
                             "tensors")
        _same("scatter", tensor, scatter_list, "scatter_list")
        from .._manipulation import concat
        flat = concat([_contig_flat(t) for t in scatter_list])
    return _done(pg.scatter(tensor, flat, root), async_op)


def isend(tensor: Any, dst: Optional[int] = None, group: Optional[ProcessGroup] = None,
          tag: int = 0, group_dst: Optional[int] = None) -> Work:
    """Starts sending `tensor` to rank `dst`; wait() on the returned Work."""
    _check(tensor, "isend")
    pg = _pg(group)
    peer = group_dst if group_dst is not None else _group_rank(pg, group, int(dst or 0),
                                                               "isend")
    if peer == pg.rank():
        raise ValueError("isend: a rank cannot send to itself")
    return pg.send(tensor, peer, int(tag))


def irecv(tensor: Any, src: Optional[int] = None, group: Optional[ProcessGroup] = None,
          tag: int = 0, group_src: Optional[int] = None) -> Work:
    """Starts receiving into `tensor` from rank `src` (any rank when None)."""
    _check(tensor, "irecv")
    pg = _pg(group)
    peer = group_src if group_src is not None else (
        None if src is None else _group_rank(pg, group, int(src), "irecv"))
    return pg.recv(tensor, peer, int(tag))


class P2POp:
    """One point-to-point operation for :func:`batch_isend_irecv` (PyTorch's ``P2POp``):
    `op` is :func:`isend` or :func:`irecv`, `peer` a global rank (or `group_peer` a rank in
    `group`)."""

    def __init__(self, op: Callable[..., Any], tensor: Any, peer: Optional[int] = None,
                 group: Optional[ProcessGroup] = None, tag: int = 0,
                 group_peer: Optional[int] = None) -> None:
        if op is not isend and op is not irecv:
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``tessera.distributed.isend`` or ``tessera.distributed.irecv``.")
        _check(tensor, "P2POp")
        pg = _pg(group)
        if group_peer is None:
            if peer is None:
                raise ValueError("P2POp: pass peer= (a global rank) or group_peer=")
            group_peer = _group_rank(pg, group, int(peer), "P2POp")
        elif not 0 <= int(group_peer) < pg.size():
            raise ValueError(f"P2POp: group_peer {group_peer} is outside [0, {pg.size()})")
        self.op, self.tensor, self.tag = op, tensor, int(tag)
        self.group, self.group_peer = pg, int(group_peer)
        self.peer = _State.ranks[id(pg)][self.group_peer]


def batch_isend_irecv(p2p_op_list: List[P2POp]) -> List[Work]:
    """Starts every send and receive of the list at once and returns their Works. Under NCCL
    they form one NCCL group (one Work), so a ring of sends and receives cannot deadlock as
    separate isend/irecv calls can, since NCCL runs each in stream order."""
    if not isinstance(p2p_op_list, list) or not p2p_op_list or \
            not all(isinstance(o, P2POp) for o in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``tessera.distributed.P2POp``.")
    pg = p2p_op_list[0].group
    if not all(o.group is pg for o in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    return pg.batch_p2p([(o.op is isend, o.tensor, o.group_peer, o.tag) for o in p2p_op_list])


def send(tensor: Any, dst: Optional[int] = None, group: Optional[ProcessGroup] = None,
         tag: int = 0, group_dst: Optional[int] = None) -> None:
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor: Any, src: Optional[int] = None, group: Optional[ProcessGroup] = None,
         tag: int = 0, group_src: Optional[int] = None) -> int:
    """Receives into `tensor`; returns the sender's global rank."""
    pg = _pg(group)
    work = irecv(tensor, src, group, tag, group_src)
    work.wait()
    sender = work.result()[0] if work.result() else (group_src if src is None else None)
    if sender is None:
        return int(src)  # type: ignore[arg-type]
    return _State.ranks[id(pg)][sender]


def barrier(group: Optional[ProcessGroup] = None, async_op: bool = False,
            device_ids: Optional[List[int]] = None) -> Optional[Work]:
    """Blocks until every rank of `group` reached it."""
    return _done(_pg(group).barrier(), async_op)


# Object collectives: pickled objects travel as uint8 tensors (on the current CUDA device
# under NCCL), sizes first. Unpickling runs code from the other ranks, as in PyTorch.
def _object_device(pg: ProcessGroup, device: Any) -> Any:
    if device is not None:
        return device
    if _State.backend == "nccl":
        from .. import cuda
        return f"cuda:{cuda.current_device()}"
    return "cpu"


def _to_bytes_tensor(obj: Any, device: Any) -> Any:
    import numpy as np
    from .._creation import asarray
    buf = _io.BytesIO()
    _pickle.Pickler(buf).dump(obj)
    data = np.frombuffer(buf.getvalue(), dtype=np.uint8).copy()
    return asarray(data, device=device)


def _from_bytes_tensor(t: Any, n: int) -> Any:
    import numpy as np
    raw = np.asarray(t.cpu() if t.device.type != "cpu" else t)[:n]
    return _pickle.loads(raw.tobytes())


def broadcast_object_list(object_list: List[Any], src: Optional[int] = None,
                          group: Optional[ProcessGroup] = None, device: Any = None,
                          group_src: Optional[int] = None) -> None:
    """Replaces every rank's object_list entries with rank `src`'s (pickled)."""
    from .._creation import asarray, zeros
    import numpy as np
    pg = _pg(group)
    dev = _object_device(pg, device)
    root = group_src if group_src is not None else _group_rank(pg, group, int(src or 0),
                                                               "broadcast_object_list")
    if pg.rank() == root:
        parts = [_to_bytes_tensor(o, "cpu") for o in object_list]
        sizes = asarray(np.array([p.numel() for p in parts], dtype=np.int64), device=dev)
    else:
        sizes = zeros((len(object_list),), dtype="int64", device=dev)
    pg.broadcast(sizes, root).wait()
    host_sizes = [int(s) for s in np.asarray(sizes.cpu())]
    if pg.rank() == root:
        from .._manipulation import concat
        payload = concat(parts).to(dev) if parts else zeros((0,), dtype="uint8", device=dev)
    else:
        payload = zeros((sum(host_sizes),), dtype="uint8", device=dev)
    if sum(host_sizes):
        pg.broadcast(payload, root).wait()
    if pg.rank() != root:
        raw = np.asarray(payload.cpu())
        o = 0
        for i, n in enumerate(host_sizes):
            object_list[i] = _pickle.loads(raw[o:o + n].tobytes())
            o += n


def all_gather_object(object_list: List[Any], obj: Any,
                      group: Optional[ProcessGroup] = None) -> None:
    """object_list[r] receives rank r's `obj` (pickled)."""
    from .._creation import asarray, zeros
    import numpy as np
    pg = _pg(group)
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries, "
                         f"the group has {pg.size()} ranks")
    dev = _object_device(pg, None)
    mine = _to_bytes_tensor(obj, dev)
    sizes = zeros((pg.size(),), dtype="int64", device=dev)
    pg.allgather_into(sizes, asarray(np.array([mine.numel()], dtype=np.int64),
                                     device=dev)).wait()
    host = [int(s) for s in np.asarray(sizes.cpu())]
    m = max(host)
    padded = zeros((m,), dtype="uint8", device=dev)
    if mine.numel():
        _copy_into(padded[:mine.numel()], mine)
    out = zeros((m * pg.size(),), dtype="uint8", device=dev)
    pg.allgather_into(out, padded).wait()
    raw = np.asarray(out.cpu())
    for r in range(pg.size()):
        object_list[r] = _pickle.loads(raw[r * m:r * m + host[r]].tobytes())


def gather_object(obj: Any, object_gather_list: Optional[List[Any]] = None,
                  dst: Optional[int] = None, group: Optional[ProcessGroup] = None) -> None:
    """Rank `dst`'s object_gather_list[r] receives rank r's `obj`."""
    pg = _pg(group)
    everything: List[Any] = [None] * pg.size()
    all_gather_object(everything, obj, group)
    if pg.rank() == _group_rank(pg, group, int(dst or 0), "gather_object"):
        if object_gather_list is None or len(object_gather_list) != pg.size():
            raise ValueError(f"gather_object: the destination needs object_gather_list of "
                             f"{pg.size()} entries")
        object_gather_list[:] = everything

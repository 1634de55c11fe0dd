"""The CPU backend: collectives through MPI (mpi4py over the ``mpich`` wheel).

Collectives run on NumPy views of the tensors' own memory (zero copy through the buffer
protocol); only non-contiguous tensors and 16-bit float reductions (MPI has no bfloat16 or
float16 arithmetic) go through a staging copy. Every call is MPI's non-blocking form
(``Iallreduce``, ``Ibcast``, ...), so ``Work.wait()`` polls it against the group's timeout and
raises instead of hanging when a peer died.

How processes become one MPI world: see Note [MPI world from a store] in docs/design.md. In
short: each worker is its own MPI world of size 1 (the launcher starts it under the wheel's
``mpiexec -n 1``, which gives it a PMI server), rank 0 opens an MPI port and posts its name in
the rendezvous store, and the others join one at a time with ``MPI_Comm_connect``/``accept``
and ``MPI_Intercomm_merge``; a final ``Split`` orders the ranks. Processes started together by
``mpiexec -n N`` use ``COMM_WORLD`` directly.
"""
from __future__ import annotations

import os as _os
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as _np

from .process_group import ProcessGroup, ReduceOp, Work
from .store import DistBackendError, Store

_MPI: Any = None


def mpi() -> Any:
    """mpi4py.MPI, imported (and MPI initialized) on first use."""
    global _MPI
    if _MPI is None:
        try:
            import mpi4py
            mpi4py.rc.threads = True
            from mpi4py import MPI
        except ImportError as e:  # pragma: no cover - the test extra installs it
            raise RuntimeError("tessera.distributed: the MPI backend needs mpi4py and an MPI "
                               "library: pip install mpi4py mpich") from e
        _MPI = MPI
    return _MPI


def is_available() -> bool:
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def _under_pmi() -> bool:
    return any(k in _os.environ for k in ("PMI_FD", "PMI_PORT", "PMI_RANK", "PMIX_RANK",
                                          "OMPI_COMM_WORLD_SIZE"))


def _np_view(t: Any) -> Tuple[_np.ndarray, Optional[Callable[[], None]]]:
    """A flat NumPy array over `t`'s memory, and a write-back for a staged copy (None when
    the array is `t`'s own memory)."""
    if t.device.type != "cpu":
        raise ValueError(f"the MPI backend works on CPU tensors, got a tensor on {t.device}; "
                         "use the 'nccl' backend for CUDA tensors")
    if t.is_contiguous():
        return _np.asarray(t).reshape(-1), None
    staged = t.contiguous()

    def back() -> None:
        import tessera
        with tessera.no_grad():
            t.copy_(staged)
    return _np.asarray(staged).reshape(-1), back


_OPS = {ReduceOp.SUM: "SUM", ReduceOp.PRODUCT: "PROD", ReduceOp.MIN: "MIN",
        ReduceOp.MAX: "MAX", ReduceOp.BAND: "BAND", ReduceOp.BOR: "BOR", ReduceOp.BXOR: "BXOR"}


def _reduction(arr: _np.ndarray, op: ReduceOp, what: str
               ) -> Tuple[_np.ndarray, Any, Callable[[_np.ndarray], None]]:
    """(buffer MPI reduces, MPI op, store-back) for `arr` under `op`: float16/bfloat16 in
    float32, bool as uint8 (SUM = or, PRODUCT = and), AVG as SUM then a division."""
    MPI = mpi()
    kind = arr.dtype.kind
    if op == ReduceOp.PREMUL_SUM:
        raise ValueError(f"{what}: PREMUL_SUM is not supported by the MPI backend")
    if op == ReduceOp.AVG and kind in "iub":
        raise ValueError(f"{what}: ReduceOp.AVG needs a floating or complex dtype, got "
                         f"{arr.dtype} (PyTorch's backends refuse it too)")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and kind not in "iub":
        raise ValueError(f"{what}: bitwise ReduceOp.{op.name} needs an integer or bool dtype, "
                         f"got {arr.dtype}")
    if kind == "c" and op in (ReduceOp.MIN, ReduceOp.MAX):
        raise ValueError(f"{what}: ReduceOp.{op.name} is not defined for complex dtype "
                         f"{arr.dtype}")
    name = _OPS.get(op, "SUM")
    if kind == "b":
        buf = arr.view(_np.uint8)
        name = {"SUM": "MAX", "PROD": "MIN", "BAND": "MIN", "BOR": "MAX"}.get(name, name)

        def store_b(res: _np.ndarray) -> None:
            if res is not buf:
                buf[...] = res
        return buf, getattr(MPI, name), store_b
    if arr.dtype.itemsize == 2 and kind not in "iu":          # float16, bfloat16
        buf = arr.astype(_np.float32)

        def store_h(res: _np.ndarray) -> None:
            arr[...] = res.astype(arr.dtype)
        return buf, getattr(MPI, name), store_h

    def store(res: _np.ndarray) -> None:
        if res is not arr:
            arr[...] = res
    return arr, getattr(MPI, name), store


def _raw(arr: _np.ndarray) -> _np.ndarray:
    """Bytes-compatible view for moves without arithmetic (16-bit floats MPI cannot name)."""
    if arr.dtype.kind in "fc" and arr.dtype.itemsize == 2 or arr.dtype.kind == "V" or \
            arr.dtype.name == "bfloat16":
        return arr.view(_np.uint16)
    if arr.dtype.kind == "b":
        return arr.view(_np.uint8)
    return arr


def _mpi_error(what: str, e: Exception) -> DistBackendError:
    return DistBackendError(f"{what}: MPI failed ({e}); a peer rank may have died")


class MPIProcessGroup(ProcessGroup):
    """A process group over an MPI intracommunicator."""

    def __init__(self, comm: Any, timeout: float) -> None:
        MPI = mpi()
        comm.Set_errhandler(MPI.ERRORS_RETURN)
        super().__init__(comm.Get_rank(), comm.Get_size(), timeout)
        self.comm = comm

    @staticmethod
    def create(store: Store, rank: int, world_size: int, timeout: float) -> "MPIProcessGroup":
        """Forms the world of `world_size` processes (Note [MPI world from a store])."""
        MPI = mpi()
        world = MPI.COMM_WORLD
        if world.Get_size() == world_size:                      # mpiexec -n world_size
            return MPIProcessGroup(world.Split(0, rank), timeout)
        if world_size == 1:
            return MPIProcessGroup(MPI.COMM_SELF.Dup(), timeout)
        if world.Get_size() != 1:
            raise RuntimeError(f"init_process_group: MPI's world has {world.Get_size()} "
                               f"processes but world_size is {world_size}")
        if not _under_pmi():
            raise RuntimeError(
                "init_process_group(backend='mpi'/'gloo'): this process has no MPI process "
                "manager, so it cannot join the others (MPICH singletons cannot connect). "
                "Start the script with `python -m tessera.distributed.run --nproc-per-node N "
                "script.py` (it runs each worker under the mpich wheel's `mpiexec -n 1`) or "
                "with `mpiexec -n N python script.py`.")
        comm = MPI.COMM_SELF
        if rank == 0:
            port = MPI.Open_port()
            store.set("mpi/port", port)
        else:
            port = store.get("mpi/port").decode()
        try:
            # Joins go strictly in rank order: rank k connects only once rank 0 has seen it
            # arrive and opened its turn, so no other rank's connect can take its accept.
            if rank > 0:
                store.set(f"mpi/arrived/{rank}", b"1")
                store.wait([f"mpi/turn/{rank}"])
                inter = MPI.COMM_SELF.Connect(port, root=0)
                comm = inter.Merge(high=True)
                inter.Free()
            for k in range(max(rank, 0) + 1, world_size):
                if rank == 0:
                    store.wait([f"mpi/arrived/{k}"])
                    store.set(f"mpi/turn/{k}", b"1")
                else:
                    store.wait([f"mpi/turn/{k}"])
                inter = comm.Accept(port, root=0)
                merged = inter.Merge(high=False)
                inter.Free()
                if comm is not MPI.COMM_SELF:
                    comm.Free()
                comm = merged
        except MPI.Exception as e:
            raise _mpi_error("init_process_group", e) from e
        ordered = comm.Split(0, rank)
        comm.Free()
        if rank == 0:
            store.set("mpi/done", b"1")
            MPI.Close_port(port)
        return MPIProcessGroup(ordered, timeout)

    def name(self) -> str:
        return "mpi"

    def _work(self, reqs: List[Any], what: str, finish: Optional[Callable[[], None]] = None,
              result: Optional[List[Any]] = None, keep: Sequence[Any] = ()) -> Work:
        """A Work over MPI requests. `keep`: every buffer MPI reads or writes until the
        requests complete (staging copies included): the Work holds them, since a buffer
        freed early is read by the peer after it is gone (UCX's CMA rendezvous: 'Bad
        address', seen for a reduce_scatter staging copy of 28 MB)."""
        MPI = mpi()

        def test() -> bool:
            try:
                return bool(MPI.Request.Testall(reqs))
            except MPI.Exception as e:
                raise _mpi_error(what, e) from e
        work = Work(test, finish, self.timeout, what, result)
        work._mpi_buffers = list(keep)       # type: ignore[attr-defined]
        return work

    def _chain(self, *fs: Optional[Callable[[], None]]) -> Callable[[], None]:
        def run() -> None:
            for f in fs:
                if f is not None:
                    f()
        return run

    def allreduce(self, tensor: Any, op: ReduceOp) -> Work:
        arr, back = _np_view(tensor)
        buf, mop, store = _reduction(arr, op, "all_reduce")
        req = self.comm.Iallreduce(mpi().IN_PLACE, buf, mop)

        def finish() -> None:
            store(buf)
            if op == ReduceOp.AVG:
                arr[...] = arr / self._size
        return self._work([req], "all_reduce", self._chain(finish, back), keep=(buf, arr))

    def broadcast(self, tensor: Any, root: int) -> Work:
        arr, back = _np_view(tensor)
        raw = _raw(arr)
        return self._work([self.comm.Ibcast(raw, root)], "broadcast", back, keep=(raw,))

    def reduce(self, tensor: Any, root: int, op: ReduceOp) -> Work:
        arr, back = _np_view(tensor)
        buf, mop, store = _reduction(arr, op, "reduce")
        if self._rank == root:
            req = self.comm.Ireduce(mpi().IN_PLACE, buf, mop, root)
        else:
            req = self.comm.Ireduce(buf, None, mop, root)

        def finish() -> None:
            if self._rank == root:
                store(buf)
                if op == ReduceOp.AVG:
                    arr[...] = arr / self._size
        return self._work([req], "reduce", self._chain(finish, back), keep=(buf, arr))

    def allgather_into(self, output: Any, input: Any) -> Work:
        out, back = _np_view(output)
        inp, _ = _np_view(input)
        ri, ro = _raw(inp), _raw(out)
        return self._work([self.comm.Iallgather(ri, ro)], "all_gather", back, keep=(ri, ro))

    def reduce_scatter_into(self, output: Any, input: Any, op: ReduceOp) -> Work:
        out, back = _np_view(output)
        inp, _ = _np_view(input)
        ibuf, mop, _s = _reduction(inp, op, "reduce_scatter")
        obuf, _m, store = _reduction(out, op, "reduce_scatter")
        if ibuf is inp:
            ibuf = inp.copy() if inp.dtype.kind != "b" else inp.view(_np.uint8).copy()
        req = self.comm.Ireduce_scatter_block(ibuf, obuf, mop)

        def finish() -> None:
            store(obuf)
            if op == ReduceOp.AVG:
                out[...] = out / self._size
        return self._work([req], "reduce_scatter", self._chain(finish, back),
                          keep=(ibuf, obuf, out))

    def alltoall(self, output: Any, input: Any, out_counts: Sequence[int],
                 in_counts: Sequence[int]) -> Work:
        out, back = _np_view(output)
        inp, _ = _np_view(input)
        sd = _np.concatenate([[0], _np.cumsum(in_counts)[:-1]]).astype(_np.int64)
        rd = _np.concatenate([[0], _np.cumsum(out_counts)[:-1]]).astype(_np.int64)
        ri, ro = _raw(inp), _raw(out)
        req = self.comm.Ialltoallv([ri, (list(in_counts), list(sd))],
                                   [ro, (list(out_counts), list(rd))])
        return self._work([req], "all_to_all", back, keep=(ri, ro))

    def gather(self, output: Optional[Any], input: Any, root: int) -> Work:
        inp, _ = _np_view(input)
        ri = _raw(inp)
        if self._rank == root:
            out, back = _np_view(output)
            ro = _raw(out)
            return self._work([self.comm.Igather(ri, ro, root)], "gather", back, keep=(ri, ro))
        return self._work([self.comm.Igather(ri, None, root)], "gather", keep=(ri,))

    def scatter(self, output: Any, input: Optional[Any], root: int) -> Work:
        out, back = _np_view(output)
        src = _raw(_np_view(input)[0]) if self._rank == root else None
        ro = _raw(out)
        return self._work([self.comm.Iscatter(src, ro, root)], "scatter", back,
                          keep=(src, ro))

    def send(self, tensor: Any, dst: int, tag: int) -> Work:
        arr, _ = _np_view(tensor)
        raw = _raw(arr)
        return self._work([self.comm.Isend(raw, dst, tag)], "send", keep=(raw,))

    def recv(self, tensor: Any, src: Optional[int], tag: int) -> Work:
        MPI = mpi()
        arr, back = _np_view(tensor)
        result: List[Any] = []
        if src is not None:
            raw = _raw(arr)
            req = self.comm.Irecv(raw, src, tag)
            result.append(src)
            return self._work([req], "recv", back, result, keep=(raw,))
        # From any rank: MPI_ANY_SOURCE does not match across the worlds that connect/accept
        # joined (MPICH over UCX), so probe each peer in turn, then receive from the one found.
        peers = [r for r in range(self._size) if r != self._rank]
        reqs: List[Any] = []

        def test() -> bool:
            try:
                if not reqs:
                    for r in peers:
                        if self.comm.Iprobe(r, tag):
                            result.append(r)
                            reqs.append(self.comm.Irecv(_raw(arr), r, tag))
                            break
                    else:
                        return False
                return bool(reqs[0].Test())
            except MPI.Exception as e:
                raise _mpi_error("recv", e) from e
        return Work(test, back, self.timeout, "recv", result)

    def barrier(self) -> Work:
        return self._work([self.comm.Ibarrier()], "barrier")

    def split(self, ranks: Sequence[int]) -> Optional["MPIProcessGroup"]:
        MPI = mpi()
        member = self._rank in ranks
        sub = self.comm.Split(0 if member else MPI.UNDEFINED,
                              list(ranks).index(self._rank) if member else 0)
        return MPIProcessGroup(sub, self.timeout) if member else None

    def shutdown(self) -> None:
        try:
            self.comm.Free()
        except Exception:
            pass

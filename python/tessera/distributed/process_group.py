"""The process-group interface every backend implements, its `Work` handles and `ReduceOp`.

A backend (``MPIProcessGroup``, ``NCCLProcessGroup``) receives tensors already checked by
``tessera.distributed``'s functions and returns a :class:`Work`; the synchronous forms call
``wait()`` on it. Ranks given to a backend are ranks *within its group*.
"""
from __future__ import annotations

import enum as _enum
import time as _time
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, List, Optional, Sequence, Tuple

from .store import DistBackendError

__all__ = ["ReduceOp", "Work", "ProcessGroup"]


class ReduceOp(_enum.IntEnum):
    """Reductions of all_reduce/reduce/reduce_scatter (PyTorch's ``ReduceOp``).
    AVG needs a floating dtype; BAND/BOR/BXOR integer or bool ones."""
    SUM = 0
    PRODUCT = 1
    MIN = 2
    MAX = 3
    BAND = 4
    BOR = 5
    BXOR = 6
    AVG = 7
    PREMUL_SUM = 8


# PyTorch also spells ReduceOp.RedOpType.SUM.
type.__setattr__(ReduceOp, "RedOpType", ReduceOp)


class Work:
    """The handle of a collective (PyTorch's ``Work``): ``wait()`` blocks until this rank's
    part is done (on CUDA: until the current stream is ordered after it) and raises
    ``DistBackendError`` on failure or timeout; ``is_completed()`` polls without blocking."""

    def __init__(self, test: Callable[[], bool], finish: Optional[Callable[[], None]] = None,
                 timeout: float = 300.0, what: str = "collective",
                 result: Optional[List[Any]] = None) -> None:
        self._test, self._finish, self._timeout, self._what = test, finish, timeout, what
        self._done = False
        self._result = result if result is not None else []

    @staticmethod
    def completed(result: Optional[List[Any]] = None) -> "Work":
        return Work(lambda: True, None, result=result)

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()

    def is_completed(self) -> bool:
        if not self._done and self._test():
            self._complete()
        return self._done

    def wait(self, timeout: Optional[float] = None) -> bool:
        if self._done:
            return True
        if timeout is not None and hasattr(timeout, "total_seconds"):
            timeout = timeout.total_seconds()        # PyTorch passes a timedelta
        limit = self._timeout if timeout is None else float(timeout)
        deadline = _time.monotonic() + limit
        # Note [Polling a collective]: MPI makes progress only inside its calls, so a long
        # sleep between tests stalls a pipelined transfer; spin first, then yield, then sleep
        # in steps of at most 200 us (2 cores shared by several ranks must not be starved).
        spins, delay = 0, 1e-5
        while not self._test():
            spins += 1
            if spins < 256:
                continue
            if _time.monotonic() > deadline:
                raise DistBackendError(
                    f"{self._what}: timed out after {limit:.1f} s; a peer rank may have "
                    "died or called a different collective (timeout= of "
                    "init_process_group sets the limit)")
            if spins < 4096:
                _time.sleep(0)
            else:
                _time.sleep(delay)
                delay = min(delay * 2, 2e-4)
        self._complete()
        return True

    def result(self) -> List[Any]:
        return self._result

    def get_future(self) -> Any:
        raise NotImplementedError("Work.get_future: futures are not supported; use wait()")


class ProcessGroup:
    """What a backend provides. Tensors are tessera Tensors on the backend's device;
    `op` is a ReduceOp; roots and peers are ranks in this group."""

    def __init__(self, rank: int, size: int, timeout: float) -> None:
        self._rank, self._size, self.timeout = rank, size, timeout

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        raise NotImplementedError

    def allreduce(self, tensor: Any, op: ReduceOp) -> Work:
        raise NotImplementedError

    def broadcast(self, tensor: Any, root: int) -> Work:
        raise NotImplementedError

    def reduce(self, tensor: Any, root: int, op: ReduceOp) -> Work:
        raise NotImplementedError

    def allgather_into(self, output: Any, input: Any) -> Work:
        """output: (size * n,) contiguous elements, input: n elements."""
        raise NotImplementedError

    def reduce_scatter_into(self, output: Any, input: Any, op: ReduceOp) -> Work:
        """input: size * n elements, output: n elements."""
        raise NotImplementedError

    def alltoall(self, output: Any, input: Any, out_counts: Sequence[int],
                 in_counts: Sequence[int]) -> Work:
        """counts in elements, per peer, over contiguous flat tensors."""
        raise NotImplementedError

    def gather(self, output: Optional[Any], input: Any, root: int) -> Work:
        raise NotImplementedError

    def scatter(self, output: Any, input: Optional[Any], root: int) -> Work:
        raise NotImplementedError

    def send(self, tensor: Any, dst: int, tag: int) -> Work:
        raise NotImplementedError

    def recv(self, tensor: Any, src: Optional[int], tag: int) -> Work:
        """src None: from any rank; the Work's result() holds the sender's group rank."""
        raise NotImplementedError

    def batch_p2p(self, ops: Sequence[Tuple[bool, Any, int, int]]) -> List[Work]:
        """(is_send, tensor, peer, tag) each, all started before any is waited for."""
        return [self.send(t, peer, tag) if is_send else self.recv(t, peer, tag)
                for is_send, t, peer, tag in ops]

    def barrier(self) -> Work:
        raise NotImplementedError

    def split(self, ranks: Sequence[int]) -> Optional["ProcessGroup"]:
        """A group of `ranks` (collective over this group); None on ranks not in it."""
        raise NotImplementedError

    def shutdown(self) -> None:
        pass

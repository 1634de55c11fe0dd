"""ForkingPickler reductions: a CPU tensor pickles as the fd of its shared-memory storage
(``multiprocessing.reduction.DupFd``) and its geometry; the receiver maps the same memory."""
from __future__ import annotations

import os as _os
import typing as _t
from multiprocessing.reduction import DupFd, ForkingPickler

if _t.TYPE_CHECKING:
    from typing import Any, Callable

from .. import Tensor
from .. import _C


def rebuild_tensor_fd(df: Any, nbytes: int, dtype: Any, shape: tuple[int, ...],
                      strides: tuple[int, ...], offset: int, requires_grad: bool,
                      is_param: bool, is_buffer: bool) -> Tensor:
    """The receiving side: a tensor over the sender's shared memory."""
    fd = df.detach()
    try:
        t = _C._tensor_from_shared_fd(_os.dup(fd), nbytes, dtype, shape, strides, offset)
    finally:
        _os.close(fd)
    if is_param:
        from ..nn import Parameter
        return Parameter(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    if is_buffer:
        t._is_buffer = True
    return t


def reduce_tensor(t: Tensor) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """Pickles `t` for another process: shared memory for CPU tensors (moved there first, as
    torch's file_descriptor strategy), a copy otherwise."""
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the "
            "queue).")
    if t.device.type != "cpu":
        return t.__reduce__()
    fd, nbytes = t._share_fd()
    return (rebuild_tensor_fd,
            (DupFd(fd), nbytes, t.dtype, tuple(t.shape), tuple(t.stride()), t.storage_offset(),
             t.requires_grad, getattr(t, "_is_param", False) is True,
             getattr(t, "_is_buffer", False) is True))


def init_reductions() -> None:
    """Registers the reductions with ForkingPickler (done on import of tessera.multiprocessing)."""
    ForkingPickler.register(Tensor, reduce_tensor)

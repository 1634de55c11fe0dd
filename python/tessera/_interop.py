"""DLPack exchange: from_dlpack; Tensor.__dlpack__ / __dlpack_device__ are bound in C++
(csrc/python/bind_interop.cpp), as is the buffer protocol."""
from __future__ import annotations

import builtins
import datetime
import types
from typing import Any, Optional

from . import _C
from ._C import Tensor

__all__ = ["from_dlpack"]

_KDL_CPU = 1
# types.CapsuleType is new in Python 3.13; datetime's C API capsule gives the type before that.
_CapsuleType = getattr(types, "CapsuleType", type(datetime.datetime_CAPI))
# The newest DLPack major.minor whose capsules we read.
_MAX_VERSION = (1, 0)


_KDL_CUDA_TYPES = (2, 13)  # kDLCUDA, kDLCUDAManaged


def _consumer_stream(device_id: int) -> int:
    """The stream value to pass a CUDA producer: our current stream on that device
    (DLPack's 1 for the legacy default stream)."""
    s = _C._cuda.current_stream(device_id)
    return 1 if s == 0 else s


def _np_bool() -> type:
    import numpy as np
    return np.bool_


def from_dlpack(x: Any, /, *, device: Any = None, copy: Optional[builtins.bool] = None) -> Tensor:
    """A tensor sharing memory with `x`, any object with ``__dlpack__`` (NumPy, PyTorch, CuPy, JAX, ...).

    Args:
        x: a DLPack producer (or, as a convenience, a DLPack PyCapsule, consumed by this call).
        device: where the result lives; None (the producer's device), "cpu" or "cuda:N"
            (a copy when it differs from the producer's device).
        copy: None copies only when needed, True always copies, False never copies
            (ValueError/BufferError when a copy would be needed).

    The producer's memory stays alive as long as any tessera view of it; the producer's deleter
    runs once, when the last view dies. Read-only producers (DLPack 1.x flag) give read-only
    tensors. For a CUDA producer, the producer makes our current stream wait for its pending
    writes (the DLPack stream protocol). Shapes: the result has x's shape and strides.
    """
    if copy is not None and not isinstance(copy, (builtins.bool, _np_bool())):
        raise TypeError(f"from_dlpack: copy must be True, False or None, got "
                        f"{type(copy).__name__} ({copy!r})")
    target = _C.Device(device) if device is not None else None
    if isinstance(x, Tensor):
        # A new tensor over the same memory, outside x's autograd graph (as a DLPack round
        # trip would give; NumPy and PyTorch never return the producer itself).
        out = x.detach()
        return _place(_C._clone(out) if copy else out, target, copy)
    if isinstance(x, _CapsuleType):
        return _place(_C._from_dlpack_capsule(x, copy), target, copy)
    try:
        dlpack = x.__dlpack__
    except AttributeError:
        raise AttributeError(
            f"from_dlpack: {type(x).__name__} has no __dlpack__ method; hint: use tessera.asarray "
            "for NumPy arrays, sequences and buffer-protocol objects") from None
    src = None
    if hasattr(x, "__dlpack_device__"):
        raw = x.__dlpack_device__()
        try:
            src = tuple(int(v) for v in raw)
            if len(src) != 2:
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            raise _C.ValueError(f"from_dlpack: {type(x).__name__}.__dlpack_device__() must return "
                                f"(device_type, device_id) as two ints, got {raw!r:.80}") from None
    on_cuda = src is not None and src[0] in _KDL_CUDA_TYPES
    try:
        if copy is None and target is None and not on_cuda:  # the common case: no keyword dict
            capsule = dlpack(max_version=_MAX_VERSION)
        else:
            kwargs: dict = {"max_version": _MAX_VERSION}
            if copy is not None:
                kwargs["copy"] = copy
            if on_cuda:
                kwargs["stream"] = _consumer_stream(src[1])
            elif target is not None and target.type == "cpu":
                kwargs["dl_device"] = (_KDL_CPU, 0)
            capsule = dlpack(**kwargs)
    except TypeError:
        # A producer from before DLPack 1.0 in Python knows none of these keywords.
        capsule = dlpack(stream=_consumer_stream(src[1])) if on_cuda else dlpack()
    return _place(_C._from_dlpack_capsule(capsule, copy), target, copy)


def _place(t: Tensor, target: Any, copy: Optional[builtins.bool]) -> Tensor:
    if target is None or t.device == target:
        return t
    if copy is False:
        raise ValueError(f"from_dlpack: copy=False but the data is on {t.device}, not {target}")
    return _C._to_device(t, target, False)

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


def _check_device(device: Any) -> None:
    d = _C.Device(device)
    if d.type != "cpu":
        raise RuntimeError(f"from_dlpack: device {d} is not available in this build (CUDA backend not built)")


def from_dlpack(x: Any, /, *, device: Any = None, copy: Optional[builtins.bool] = None) -> Tensor:
    """A tensor sharing memory with `x`, any object with ``__dlpack__`` (NumPy, PyTorch, JAX, ...).

    Args:
        x: a DLPack producer (or, as a convenience, a DLPack PyCapsule, consumed by this call).
        device: where the result lives; None (the producer's device) or "cpu".
        copy: None copies only when needed, True always copies, False never copies
            (ValueError/BufferError when a copy would be needed).

    The producer's memory stays alive as long as any tessera view of it; the producer's deleter
    runs once, when the last view dies. Read-only producers (DLPack 1.x flag) give read-only
    tensors. Shapes: the result has x's shape and strides (any strides, incl. negative).
    """
    if device is not None:
        _check_device(device)
    if isinstance(x, Tensor):
        return _C._clone(x) if copy else x
    if isinstance(x, _CapsuleType):
        return _C._from_dlpack_capsule(x, copy)
    try:
        dlpack = x.__dlpack__
    except AttributeError:
        raise AttributeError(
            f"from_dlpack: {type(x).__name__} has no __dlpack__ method; hint: use tessera.asarray "
            "for NumPy arrays, sequences and buffer-protocol objects") from None
    try:
        if copy is None and device is None:  # the common case: no keyword dict to build
            capsule = dlpack(max_version=_MAX_VERSION)
        else:
            kwargs: dict = {"max_version": _MAX_VERSION}
            if copy is not None:
                kwargs["copy"] = copy
            if device is not None:
                kwargs["dl_device"] = (_KDL_CPU, 0)
            capsule = dlpack(**kwargs)
    except TypeError:
        # A producer from before DLPack 1.0 in Python knows none of these keywords.
        capsule = dlpack()
    return _C._from_dlpack_capsule(capsule, copy)

"""torch.nn.attention: SDPBackend and sdpa_kernel, the context manager that limits which
backends scaled_dot_product_attention may use. tessera's paths all compute the same function;
the switches (kept in C++, ops/nn/attention.h, beside torch.backends.cuda's enable_*_sdp) only
make a call with no backend left to run it a RuntimeError, as in PyTorch (on CPU, MATH or
FLASH_ATTENTION must be among them)."""
from __future__ import annotations

import contextlib as _contextlib
import typing as _t
from enum import IntEnum

if _t.TYPE_CHECKING:
    from typing import Iterator, List, Union

from ... import _C

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(IntEnum):
    """The backends of scaled_dot_product_attention, with PyTorch's values."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCHES = {SDPBackend.MATH: "math_sdp", SDPBackend.FLASH_ATTENTION: "flash_sdp",
             SDPBackend.EFFICIENT_ATTENTION: "mem_efficient_sdp"}


@_contextlib.contextmanager
def sdpa_kernel(backends: Union[List[SDPBackend], SDPBackend],
                set_priority: bool = False) -> Iterator[None]:
    """Within the block, scaled_dot_product_attention may use only `backends` (one or a
    list); the previous switches come back on exit."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    if not isinstance(backends, (list, tuple)) or \
            not all(isinstance(b, SDPBackend) for b in backends):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    chosen = set(backends)
    saved = _C._attention_settings()
    saved_cudnn = _C._cuda.cudnn_sdp_enabled()
    try:
        _C._set_attention_settings(**{k: b in chosen for b, k in _SWITCHES.items()})
        _C._cuda.cudnn_sdp_set_enabled(SDPBackend.CUDNN_ATTENTION in chosen)
        yield
    finally:
        _C._set_attention_settings(**{k: saved[k] for k in _SWITCHES.values()})
        _C._cuda.cudnn_sdp_set_enabled(saved_cudnn)

"""PyTorch's global switches: deterministic algorithms, float32 matmul precision, warn_always,
interop threads, flush_denormal, print options, anomaly detection (torch.set_anomaly_enabled).
tessera's CPU kernels are deterministic already; the flags are recorded and reported back."""
from __future__ import annotations

import math
import sys
import warnings
from typing import Any, Dict, Optional, Union

import numpy as np

from ._C import Tensor

__all__ = ["are_deterministic_algorithms_enabled", "get_deterministic_debug_mode", "get_float32_matmul_precision", "get_num_interop_threads", "init_num_threads", "is_deterministic_algorithms_warn_only_enabled", "is_storage", "is_warn_always_enabled", "set_anomaly_enabled", "set_deterministic_debug_mode", "set_float32_matmul_precision", "set_flush_denormal", "set_num_interop_threads", "set_printoptions", "set_warn_always", "use_deterministic_algorithms"]


_STATE: Dict[str, Any] = {"deterministic": False, "warn_only": False, "matmul": "highest",
                          "warn_always": False, "interop": 1}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Records the flag (tessera's CPU kernels are deterministic already)."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"use_deterministic_algorithms expects a bool, but got "
                           f"{type(mode).__name__}")
    _STATE["deterministic"], _STATE["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _STATE["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _STATE["warn_only"]


def set_deterministic_debug_mode(debug_mode: Union[int, str]) -> None:
    """0/'default', 1/'warn', 2/'error' as torch."""
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _STATE["deterministic"]:
        return 0
    return 1 if _STATE["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """'highest', 'high' or 'medium' (recorded; tessera's CPU matmul is full float32)."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    _STATE["matmul"] = precision


def get_float32_matmul_precision() -> str:
    return _STATE["matmul"]


def _expect_bool(value: Any, what: str) -> None:
    if not isinstance(value, bool):
        raise RuntimeError(f"{what} expects a bool, but got {type(value).__name__}")


def set_warn_always(b: bool) -> None:
    """Records whether warnings that torch shows once should always show."""
    _expect_bool(b, "set_warn_always")
    _STATE["warn_always"] = b


def is_warn_always_enabled() -> bool:
    return _STATE["warn_always"]


def set_num_interop_threads(num: int) -> None:
    if num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _STATE["interop"] = num


def get_num_interop_threads() -> int:
    return _STATE["interop"]


def set_flush_denormal(mode: bool) -> bool:
    """Not supported by tessera's kernels: returns False (torch's answer where unsupported)."""
    _expect_bool(mode, "flush_denormal")
    return False


def is_storage(obj: Any) -> bool:
    return False


_PRINT = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(precision: Optional[int] = None, threshold: Optional[float] = None,
                     edgeitems: Optional[int] = None, linewidth: Optional[int] = None,
                     profile: Optional[str] = None, sci_mode: Optional[bool] = None) -> None:
    """torch.set_printoptions: profiles 'default', 'short', 'full' and the individual options
    (applied through NumPy's print options, which tessera's repr uses)."""
    import numpy as np
    if profile == "default":
        _PRINT.update(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    elif profile == "short":
        _PRINT.update(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        _PRINT.update(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            _PRINT[k] = v
    _PRINT["sci_mode"] = sci_mode
    np.set_printoptions(precision=_PRINT["precision"],
                        threshold=sys.maxsize if _PRINT["threshold"] == math.inf
                        else int(_PRINT["threshold"]),
                        edgeitems=_PRINT["edgeitems"], linewidth=_PRINT["linewidth"],
                        suppress=sci_mode is False)


def get_printoptions() -> Dict[str, Any]:
    """The options set_printoptions manages."""
    return dict(_PRINT)


def set_anomaly_enabled(mode: bool, check_nan: bool = True) -> None:
    """Turns autograd's anomaly detection on or off (torch.set_anomaly_enabled)."""
    from . import _C
    if not isinstance(mode, bool):
        raise TypeError(f"set_anomaly_enabled(): argument 'enabled' must be bool, not "
                        f"{type(mode).__name__}")
    _C._set_anomaly_enabled(mode)


def init_num_threads() -> None:
    """A no-op: tessera's thread pool needs no per-thread initialization."""

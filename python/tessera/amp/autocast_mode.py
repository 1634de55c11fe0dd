"""ts.autocast: regions where ops on PyTorch's cast lists run in a lower precision.

    with ts.autocast("cuda"):            # float16 on CUDA (bfloat16 on CPU) by default
        y = model(x)                     # matmul/linear/conv: float16; softmax, losses: float32
    loss = loss_fn(y, target)
    loss.backward()                      # gradients come back in each parameter's dtype

The state (enabled and dtype per device type, the weight-cast cache) is thread-local and
lives in C++ (csrc/autograd/autocast.cpp); ops pay one thread-local check when it is off.
"""
from __future__ import annotations

import functools as _functools
import typing as _t
import warnings as _warnings

if _t.TYPE_CHECKING:
    from typing import Any, Optional

from .. import _C

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled",
           "set_autocast_dtype", "is_autocast_available", "custom_fwd", "custom_bwd"]

_F = _t.TypeVar("_F", bound=_t.Callable[..., _t.Any])
_DEVICE_TYPES = ("cpu", "cuda")


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast knows `device_type` ('cpu' or 'cuda')."""
    return device_type in _DEVICE_TYPES


def _check_device_type(device_type: Any, fn: str) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"{fn}: expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"{fn}: unsupported autocast device_type '{device_type}' "
                           f"(expected 'cpu' or 'cuda')")
    return device_type


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is enabled for `device_type` in this thread."""
    return _C._autocast_is_enabled(_check_device_type(device_type, "is_autocast_enabled"))


def get_autocast_dtype(device_type: str) -> Any:
    """The lower-precision dtype autocast uses for `device_type` in this thread."""
    return _C._autocast_get_dtype(_check_device_type(device_type, "get_autocast_dtype"))


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Low-level: turns autocast for `device_type` on or off in this thread (prefer the
    context manager, which restores the previous state)."""
    _C._autocast_set_enabled(_check_device_type(device_type, "set_autocast_enabled"), bool(enabled))


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Low-level: sets the lower-precision dtype for `device_type` in this thread."""
    _C._autocast_set_dtype(_check_device_type(device_type, "set_autocast_dtype"), dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast caches, within its outermost region, the lower-precision casts of
    float32 leaf tensors that require grad (weights), so each is cast once per region
    (torch.is_autocast_cache_enabled; on by default, per thread)."""
    return bool(_C._autocast_is_cache_enabled())


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Low-level: turns the weight-cast cache on or off in this thread (autocast's
    ``cache_enabled=`` sets it for its region and restores it on exit)."""
    if not isinstance(enabled, bool):  # as PyTorch, which takes a bool only
        raise TypeError(f"set_autocast_cache_enabled: enabled must be a bool (got "
                        f"{type(enabled).__name__})")
    _C._autocast_set_cache_enabled(enabled)


def clear_autocast_cache() -> None:
    """Drops this thread's cached weight casts (done on leaving the outermost autocast
    region)."""
    _C._autocast_clear_cache()


def _supported_dtypes() -> tuple:
    from .. import _dtypes
    return (_dtypes.bfloat16, _dtypes.float16)


class autocast:
    """Context manager and decorator: ops inside run in mixed precision, as PyTorch's
    ``torch.autocast``.

    Args:
        device_type: 'cuda' or 'cpu': autocast applies to ops on tensors of that device type.
        dtype: the lower precision (default: float16 for CUDA, bfloat16 for CPU). A dtype the
            device type does not support warns and disables autocast, like PyTorch.
        enabled: False makes a region that turns autocast off (useful nested in an enabled one).
        cache_enabled: cache casts of float32 weights (leaves requiring grad) within the
            outermost region (default: the current setting, initially True).

    Ops on the lower-precision list (matmul, linear, conv, scaled_dot_product_attention,
    vecdot) return the autocast dtype; ops on the float32 list (losses, and on CUDA softmax,
    log_softmax, layer_norm, group_norm, exp/log-type reductions) return float32; other ops
    run in their inputs' dtypes. float64 and non-floating inputs are never cast.
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: Optional[bool] = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"autocast: expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = (_C._autocast_is_cache_enabled() if cache_enabled is None
                               else bool(cache_enabled))
        if enabled:
            enabled = self._check_enabled()
        self._enabled = bool(enabled)

    def _check_enabled(self) -> bool:
        name = self.device.upper()
        if self.device == "cuda":
            from .. import cuda
            if not cuda.is_available():
                _warnings.warn("CUDA is not available. Disabling autocast.", stacklevel=3)
                return False
        if self.fast_dtype not in _supported_dtypes():
            _warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                          f"bfloat16, float16 currently.", stacklevel=3)
            return False
        return True

    def __enter__(self) -> "autocast":
        self._prev_cache_enabled = _C._autocast_is_cache_enabled()
        self._prev = _C._autocast_is_enabled(self.device)
        self._prev_dtype = _C._autocast_get_dtype(self.device)
        _C._autocast_set_enabled(self.device, self._enabled)
        _C._autocast_set_dtype(self.device, self.fast_dtype)
        _C._autocast_increment_nesting()
        _C._autocast_set_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc: Any) -> bool:
        # Drop cached weight casts on leaving the outermost region (PyTorch does likewise).
        if _C._autocast_decrement_nesting() == 0:
            _C._autocast_clear_cache()
        _C._autocast_set_enabled(self.device, self._prev)
        _C._autocast_set_dtype(self.device, self._prev_dtype)
        _C._autocast_set_cache_enabled(self._prev_cache_enabled)
        return False

    def __call__(self, func: _F) -> _F:
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                            f"Did you mean to use autocast as a context manager?")

        @_functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)
        return decorate_autocast  # type: ignore[return-value]


def _cast(value: Any, device_type: str, dtype: Any) -> Any:
    """value with its eligible tensors (floating, not float64, on device_type) cast to dtype;
    containers are rebuilt."""
    from .. import _dtypes
    if isinstance(value, _C.Tensor):
        eligible = (_dtypes.isdtype(value.dtype, "real floating") and value.dtype != _dtypes.float64
                    and value.device.type == device_type)
        return value.astype(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        out = [_cast(v, device_type, dtype) for v in value]
        return type(value)(out) if isinstance(value, list) else tuple(out)
    return value


def custom_fwd(fwd: Optional[_F] = None, *, device_type: str,
               cast_inputs: Any = None) -> Any:
    """Decorator for the forward of a ts.autograd.Function, as torch.amp.custom_fwd: records
    the autocast state for its backward and, with `cast_inputs`, runs forward with
    autocast off and its floating inputs cast to that dtype (when autocast is on)."""
    if fwd is None:
        return _functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    _check_device_type(device_type, "custom_fwd")

    @_functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd: Optional[_F] = None, *, device_type: str) -> Any:
    """Decorator for the backward of a ts.autograd.Function: runs it with the autocast state
    its forward ran under (as torch.amp.custom_bwd)."""
    if bwd is None:
        return _functools.partial(custom_bwd, device_type=device_type)
    _check_device_type(device_type, "custom_bwd")

    @_functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd

"""ts.amp.GradScaler: dynamic loss scaling for float16 training, as torch.amp.GradScaler.

    scaler = ts.amp.GradScaler("cuda")
    for x, y in data:
        opt.zero_grad()
        with ts.autocast("cuda"):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()   # gradients of loss * scale: small ones survive float16
        scaler.unscale_(opt)            # optional: to clip the true gradients
        ts.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)                # skipped when a gradient has an inf/NaN
        scaler.update()                 # backs the scale off after a skip, grows it after
                                        # growth_interval clean steps

The scale, the growth tracker and the found-inf flags are device tensors on the loss's
device, updated with tessera ops (so it works on CPU and CUDA alike); step() reads the
found-inf flag once (one host synchronization per step, as PyTorch's does).
"""
from __future__ import annotations

import typing as _t
import warnings as _warnings
from collections import defaultdict
from enum import Enum

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Iterable, Optional, Union

from .. import _C

__all__ = ["GradScaler", "OptState"]


def _ts() -> Any:
    import tessera
    return tessera


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> Dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _scaled(x: Any, factor: Any) -> Any:
    """x * factor computed in float32 for 16-bit x (rounded once back to x's dtype), like
    PyTorch's mixed-dtype multiply by a 0-d float32 tensor."""
    t = _ts()
    if x.dtype in (t.float16, t.bfloat16):
        return (x.astype(t.float32) * factor).astype(x.dtype)
    return x * factor


class GradScaler:
    """Scales the loss so float16 gradients don't underflow, and unscales them before the
    optimizer step, skipping steps whose gradients overflowed.

    Args:
        device: 'cuda' (default) or 'cpu': where the scale lives.
        init_scale: initial scale factor.
        growth_factor: the scale is multiplied by it after `growth_interval` steps in a row
            without infs/NaNs (must be > 1).
        backoff_factor: the scale is multiplied by it after a step with infs/NaNs (< 1).
        growth_interval: clean steps between growths.
        enabled: False makes every method a pass-through (scale() returns its input,
            step() calls optimizer.step()).
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if device not in ("cpu", "cuda"):
            raise ValueError(f"GradScaler: device must be 'cpu' or 'cuda', got {device!r}")
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _ts().cuda.is_available():
            _warnings.warn("GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("GradScaler: the growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("GradScaler: the backoff factor must be < 1.0.")
            self._init_scale = float(init_scale)
            self._scale: Any = None  # created on the loss's device by the first scale()
            self._growth_factor = float(growth_factor)
            self._backoff_factor = float(backoff_factor)
            self._growth_interval = int(growth_interval)
            self._init_growth_tracker = 0
            self._growth_tracker: Any = None
            self._per_optimizer_states: Dict[int, Dict[str, Any]] = defaultdict(_fresh_state)

    # ---- helpers
    def _lazy_init(self, device: Any) -> None:
        t = _ts()
        self._scale = t.full((), self._init_scale, dtype=t.float32, device=device)
        self._growth_tracker = t.full((), self._init_growth_tracker, dtype=t.int32, device=device)

    def _check_initialized(self, fn: str) -> None:
        if self._scale is None:
            raise RuntimeError(f"GradScaler.{fn}: no scale yet; call scale(loss) (and backward) "
                               f"before {fn}().")

    # ---- public API
    def scale(self, outputs: Union[Any, Iterable[Any]]) -> Any:
        """outputs (a tensor, or an iterable/nesting of tensors) multiplied by the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, _C.Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            return _scaled(outputs, self._scale.to(outputs.device))

        def apply(val: Any) -> Any:
            if isinstance(val, _C.Tensor):
                if self._scale is None:
                    self._lazy_init(val.device)
                return _scaled(val, self._scale.to(val.device))
            if isinstance(val, (list, tuple)):
                return type(val)(apply(v) for v in val)
            if isinstance(val, _t.Iterable):
                return map(apply, val)
            raise ValueError("GradScaler.scale: outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def _unscale_grads_(self, optimizer: Any, inv_scale: Any, allow_fp16: bool) -> Dict[str, Any]:
        """Multiplies every gradient by inv_scale in place; one found-inf flag (float32 0-d,
        1.0 when some gradient had an inf/NaN) per device."""
        t = _ts()
        found: Dict[str, Any] = {}
        inv_by_device: Dict[str, Any] = {}
        with t.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype == t.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    key = str(g.device)
                    if key not in inv_by_device:
                        inv_by_device[key] = inv_scale.to(g.device)
                    bad = t.logical_not(t.all(t.isfinite(g)))
                    found[key] = bad if key not in found else t.logical_or(found[key], bad)
                    g *= inv_by_device[key]
        return {k: v.astype(t.float32) for k, v in found.items()}

    def unscale_(self, optimizer: Any) -> None:
        """Divides the optimizer's gradients by the scale (in place) and records whether any
        is inf/NaN. Optional before step(): call it to clip or inspect the true gradients;
        at most once per optimizer between update()s."""
        if not self._enabled:
            return
        self._check_initialized("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        t = _ts()
        # The reciprocal in float64, as PyTorch does (float32 division can be inexact).
        inv_scale = t.reciprocal(self._scale.astype(t.float64)).astype(t.float32)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Optional[Any]:
        """unscale_(optimizer) unless already done, then optimizer.step(*args, **kwargs)
        unless a gradient had an inf/NaN. Returns what optimizer.step returned (None when
        skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_initialized("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise RuntimeError("GradScaler.step: no gradients found for this optimizer (no "
                               "parameter has a .grad); call backward() on the scaled loss first.")
        retval = None
        # The one host synchronization per step.
        if not sum(float(v.item()) for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: Optional[Union[float, Any]] = None) -> None:
        """Updates the scale: `new_scale` if given (a float or a 1-element tensor), else
        backoff after a skipped step, growth after growth_interval clean ones."""
        if not self._enabled:
            return
        self._check_initialized("update")
        t = _ts()
        if new_scale is not None:
            if isinstance(new_scale, (int, float)):
                value = t.full((), float(new_scale), dtype=t.float32, device=self._scale.device)
            else:
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise ValueError("GradScaler.update: new_scale should be a float or a "
                                     "1-element tensor with requires_grad=False.")
                value = t.reshape(new_scale, ()).astype(t.float32).to(self._scale.device)
            self._scale = value
        else:
            found_infs = [f.to(self._scale.device)
                          for state in self._per_optimizer_states.values()
                          for f in state["found_inf_per_device"].values()]
            if not found_infs:
                raise RuntimeError("GradScaler.update: no inf checks were recorded prior to "
                                   "update(); call step() (or unscale_()) first.")
            found = found_infs[0]
            for f in found_infs[1:]:
                found = found + f
            self._scale, self._growth_tracker = self._updated(found)
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _updated(self, found_inf: Any) -> tuple:
        """PyTorch's _amp_update_scale_ with tessera ops, on the scale's device (no sync)."""
        t = _ts()
        scale, tracker = self._scale, self._growth_tracker
        inf = found_inf > 0
        successful = tracker + 1
        grow = t.logical_and(t.logical_not(inf), successful >= self._growth_interval)
        grown = scale * self._growth_factor
        grown = t.where(t.isfinite(grown), grown, scale)  # never grow to inf
        new_scale = t.where(inf, scale * self._backoff_factor, t.where(grow, grown, scale))
        new_tracker = t.where(t.logical_or(inf, grow), t.zeros_like(successful), successful)
        return new_scale, new_tracker.astype(t.int32)

    def get_scale(self) -> float:
        """The current scale as a Python float (synchronizes); 1.0 when disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> Dict[str, Any]:
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker (Python
        numbers, as PyTorch's); {} when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        t = _ts()
        self._init_scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._scale is not None:
            self._scale = t.full((), self._init_scale, dtype=t.float32, device=self._scale.device)
            self._growth_tracker = t.full((), self._init_growth_tracker, dtype=t.int32,
                                          device=self._scale.device)

    def __getstate__(self) -> Dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise RuntimeError("A GradScaler instance may only be pickled at the beginning "
                                   "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._enabled:
            self._per_optimizer_states = defaultdict(_fresh_state)

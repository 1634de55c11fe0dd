"""Stochastic weight averaging and EMA (PyTorch's ``torch.optim.swa_utils``): AveragedModel,
the averaging functions, SWALR and update_bn."""
from __future__ import annotations

import copy as _copy
import itertools as _itertools
import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Iterable, List, Optional, Sequence, Union

from .._C import Tensor
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler
from .optimizer import Optimizer, _ts

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]

_AvgFn = _t.Callable[[Tensor, Tensor, _t.Union[Tensor, int]], Tensor]
_MultiAvgFn = _t.Callable[[_t.List[Tensor], _t.List[Tensor], _t.Union[Tensor, int]], None]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_avg_fn(decay: float = 0.999) -> _AvgFn:
    """avg_fn for an exponential moving average: decay * avg + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> _AvgFn:
    """avg_fn for the running mean: avg + (current - avg) / (n + 1)."""
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


def _in_place(fn: _AvgFn) -> _MultiAvgFn:
    """A multi_avg_fn (updates lists of tensors in place) from a per-tensor avg_fn."""
    def update(averaged: List[Tensor], current: List[Tensor], num_averaged: Any) -> None:
        with _ts().no_grad():
            for a, c in zip(averaged, current):
                a[...] = fn(a, c, num_averaged)
    return update


def get_ema_multi_avg_fn(decay: float = 0.999) -> _MultiAvgFn:
    """In-place EMA over lists of tensors: avg = lerp(avg, current, 1 - decay)."""
    _check_decay(decay)
    return _in_place(lambda a, c, n: a + (c - a) * (1 - decay))


def get_swa_multi_avg_fn() -> _MultiAvgFn:
    """In-place running mean over lists of tensors."""
    return _in_place(lambda a, c, n: a + (c - a) * (1 / (_count(n) + 1)))


def _count(n: Any) -> int:
    return int(n.item()) if isinstance(n, Tensor) else int(n)


class AveragedModel(Module):
    """Keeps a deep copy of `model` (as ``.module``) whose parameters (and buffers, with
    use_buffers=True) are averaged by ``update_parameters(model)``: the first call copies,
    later calls apply avg_fn / multi_avg_fn (default: the running mean). Without
    use_buffers, buffers are copied from the model. ``n_averaged`` is an int64 buffer."""

    def __init__(self, model: Module, device: Any = None, avg_fn: Optional[_AvgFn] = None,
                 multi_avg_fn: Optional[_MultiAvgFn] = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("AveragedModel: only one of avg_fn and multi_avg_fn should be "
                             "provided")
        t = _ts()
        self.module = _copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", t.zeros((), dtype=t.int64))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> Iterable[Tensor]:
        if self.use_buffers:
            return _itertools.chain(model.parameters(), model.buffers())
        return model.parameters()

    def update_parameters(self, model: Module) -> None:
        t = _ts()
        with t.no_grad():
            mine = list(self._tensors(self.module))
            theirs = [p.detach().to(a.device) for a, p in zip(mine, self._tensors(model))]
            mine = mine[:len(theirs)]
            n = int(self.n_averaged.item())
            if n == 0:
                for a, p in zip(mine, theirs):
                    a[...] = p
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn(mine, theirs, self.n_averaged)
            else:
                fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                for a, p in zip(mine, theirs):
                    a[...] = fn(a.detach(), p, self.n_averaged)
            if not self.use_buffers:
                for b, bm in zip(self.module.buffers(), model.buffers()):
                    b[...] = bm.detach().to(b.device)
            self.n_averaged[...] = self.n_averaged + 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recomputes every BatchNorm's running statistics with one pass over `loader`
    (cumulative averages: momentum None during the pass); batches that are lists or
    tuples contribute their first element."""
    from ..nn.modules.batchnorm import _BatchNorm
    t = _ts()
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    with t.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for m, mom in momenta.items():
        m.momentum = mom
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its swa_lr over anneal_epochs ('cos' or 'linear'),
    then holds it (PyTorch's recursive form, so sequences match torch's)."""

    def __init__(self, optimizer: Optimizer, swa_lr: Union[float, Sequence[float]],
                 anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)
        swa_lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * n
        if len(swa_lrs) != n:
            raise ValueError(f"SWALR: swa_lr must have length {n}, got {len(swa_lrs)}")
        for lr, g in zip(swa_lrs, optimizer.param_groups):
            g["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self._anneal_strategy = anneal_strategy
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t: float) -> float:
        return t if self._anneal_strategy == "linear" else (1 - _math.cos(_math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> List[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self._anneal(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                for g in self.optimizer.param_groups]
        alpha = self._anneal(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev)]

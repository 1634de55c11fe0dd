"""The Geometric distribution (torch.distributions.Geometric)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts
from tessera.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .distribution import Distribution, _ProbsOrLogits
from .utils import broadcast_all

__all__ = ["Geometric"]


class Geometric(_ProbsOrLogits, Distribution):
    """The number of failures before the first success of Bernoulli(probs) trials (probs in
    (0, 1]; or logits)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: Optional[bool] = None) -> None:
        self._set_probs_or_logits(probs, logits, lambda v: broadcast_all(v)[0])
        if probs is not None and validate_args is not False and (
                validate_args or Distribution._validate_args):
            if not bool((self.probs > 0).all()):
                invalid = self.probs[self.probs <= 0]
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{invalid}")
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Geometric":
        new = self._get_checked_instance(Geometric, _instance)
        self._expand_probs_or_logits(new, tuple(batch_shape))
        return self._expanded(new, batch_shape)

    @property
    def mean(self) -> Any:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Any:
        return ts.zeros_like(self.probs)

    @property
    def variance(self) -> Any:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        tiny = ts.finfo(self.probs.dtype).tiny
        with ts.no_grad():
            u = ts.rand(shape, dtype=self.probs.dtype, device=self.probs.device).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = ts.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Any:
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs

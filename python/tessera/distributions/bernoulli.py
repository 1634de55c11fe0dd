"""The Bernoulli distribution (torch.distributions.Bernoulli)."""
from __future__ import annotations

import numbers as _numbers
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts
from tessera.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .distribution import _ProbsOrLogits
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(_ProbsOrLogits, ExponentialFamily):
    """1 with probability `probs` (or sigmoid(`logits`)), else 0; exactly one is given."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: Optional[bool] = None) -> None:
        self._set_probs_or_logits(probs, logits, lambda v: broadcast_all(v)[0])
        is_scalar = isinstance(probs if probs is not None else logits, _numbers.Number)
        batch_shape = ts.Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Bernoulli":
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = ts.Size(tuple(batch_shape))
        self._expand_probs_or_logits(new, tuple(batch_shape))
        return self._expanded(new, batch_shape)

    @property
    def mean(self) -> Any:
        return self.probs

    @property
    def mode(self) -> Any:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return ts.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self) -> Any:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with ts.no_grad():
            return ts.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Any:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Any:
        values = ts.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self) -> tuple:
        return (ts.logit(self.probs),)

    def _log_normalizer(self, x: Any) -> Any:
        return ts.log1p(ts.exp(x))

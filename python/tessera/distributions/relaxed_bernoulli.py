"""RelaxedBernoulli and LogitRelaxedBernoulli (torch.distributions.relaxed_bernoulli): the
binary Concrete / Gumbel-softmax relaxation, reparameterizable."""
from __future__ import annotations

import numbers as _numbers
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .distribution import Distribution, _ProbsOrLogits
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class _Relaxed(TransformedDistribution):
    """temperature, logits and probs of a relaxation: its base distribution's."""

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = self._get_checked_instance(type(self), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self) -> Any:
        return self.base_dist.temperature

    @property
    def logits(self) -> Any:
        return self.base_dist.logits

    @property
    def probs(self) -> Any:
        return self.base_dist.probs


class LogitRelaxedBernoulli(_ProbsOrLogits, Distribution):
    """The logit of a RelaxedBernoulli: (logit(U) + logits) / temperature for U uniform."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: Optional[bool] = None) -> None:
        self.temperature = temperature
        self._set_probs_or_logits(probs, logits, lambda v: broadcast_all(v)[0])
        is_scalar = isinstance(probs if probs is not None else logits, _numbers.Number)
        batch_shape = ts.Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LogitRelaxedBernoulli":
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        new.temperature = self.temperature
        self._expand_probs_or_logits(new, tuple(batch_shape))
        return self._expanded(new, batch_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(ts.rand(shape, dtype=probs.dtype, device=probs.device))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) \
            / self.temperature

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(_Relaxed):
    """sigmoid of a LogitRelaxedBernoulli: a relaxation of Bernoulli(probs/logits) on (0, 1),
    sharper as `temperature` (a tensor) goes to 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: Optional[bool] = None) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

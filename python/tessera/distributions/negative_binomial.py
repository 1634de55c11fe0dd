"""The NegativeBinomial distribution (torch.distributions.NegativeBinomial)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts
from tessera.nn.functional import logsigmoid

from . import constraints
from .distribution import Distribution, _ProbsOrLogits
from .gamma import Gamma
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_ProbsOrLogits, Distribution):
    """The number of successes before `total_count` failures in Bernoulli trials with
    success probability `probs` (or sigmoid(`logits`)); total_count may be real. Draws are
    Poisson(Gamma(total_count, exp(-logits))) (a gamma-Poisson mixture)."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: Optional[bool] = None) -> None:
        self._set_count_and_probs_or_logits(total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "NegativeBinomial":
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = ts.Size(tuple(batch_shape))
        self._expand_count_and_probs_or_logits(new, batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self) -> Any:
        return self.total_count * ts.exp(self.logits)

    @property
    def mode(self) -> Any:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Any:
        return self.mean / ts.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=ts.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape: Any = ()) -> Any:
        with ts.no_grad():
            return ts.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * logsigmoid(-self.logits)
                                 + value * logsigmoid(self.logits))
        log_normalization = (-ts.lgamma(self.total_count + value) + ts.lgamma(1.0 + value)
                             + ts.lgamma(self.total_count))
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization

"""The Exponential distribution (torch.distributions.Exponential)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _broadcast_params

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Exponential with rate `rate` (mean 1 / rate)."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Any:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Any:
        return ts.zeros_like(self.rate)

    @property
    def stddev(self) -> Any:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Any:
        return self.rate.pow(-2)

    def __init__(self, rate: Any, validate_args: Optional[bool] = None) -> None:
        (self.rate,), batch_shape = _broadcast_params(rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        u = ts.empty(tuple(shape), dtype=self.rate.dtype, device=self.rate.device)
        return u.exponential_() / self.rate

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ts.exp(-self.rate * value)

    def icdf(self, value: Any) -> Any:
        return -ts.log1p(-value) / self.rate

    def entropy(self) -> Any:
        return 1.0 - ts.log(self.rate)

    @property
    def _natural_params(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x: Any) -> Any:
        return -ts.log(-x)

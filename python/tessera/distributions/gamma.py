"""The Gamma distribution (torch.distributions.Gamma)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _broadcast_params

__all__ = ["Gamma"]


def _standard_gamma(concentration: Any) -> Any:
    return ts._C._standard_gamma(concentration)


class Gamma(ExponentialFamily):
    """Gamma with shape `concentration` and rate `rate` (mean concentration / rate).
    rsample is reparameterized: its gradient w.r.t. concentration is the implicit one of
    the `_standard_gamma` op."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Any:
        return self.concentration / self.rate

    @property
    def mode(self) -> Any:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Any:
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration: Any, rate: Any,
                 validate_args: Optional[bool] = None) -> None:
        (self.concentration, self.rate), batch_shape = _broadcast_params(concentration, rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Gamma":
        new = self._get_checked_instance(Gamma, _instance)
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new.rate = self.rate.expand(tuple(batch_shape))
        return self._expanded(new, batch_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=ts.finfo(value.dtype).tiny)

    def log_prob(self, value: Any) -> Any:
        value = ts.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (ts.xlogy(self.concentration, self.rate) + ts.xlogy(self.concentration - 1, value)
                - self.rate * value - ts.lgamma(self.concentration))

    def entropy(self) -> Any:
        return (self.concentration - ts.log(self.rate) + ts.lgamma(self.concentration)
                + (1.0 - self.concentration) * ts.digamma(self.concentration))

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return ts.special.gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return ts.lgamma(x + 1) + (x + 1) * ts.log(-y.reciprocal())

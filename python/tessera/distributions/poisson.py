"""The Poisson distribution (torch.distributions.Poisson)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _broadcast_params, broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """Poisson counts with rate `rate` (>= 0)."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self) -> Any:
        return self.rate

    @property
    def mode(self) -> Any:
        return self.rate.floor()

    @property
    def variance(self) -> Any:
        return self.rate

    def __init__(self, rate: Any, validate_args: Optional[bool] = None) -> None:
        (self.rate,), batch_shape = _broadcast_params(rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        with ts.no_grad():
            return ts.poisson(self.rate.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - ts.lgamma(value + 1)

    @property
    def _natural_params(self) -> tuple:
        return (ts.log(self.rate),)

    def _log_normalizer(self, x: Any) -> Any:
        return ts.exp(x)

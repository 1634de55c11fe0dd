"""The Normal distribution (torch.distributions.Normal)."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _broadcast_params, _standard_normal

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """A normal (Gaussian) distribution with mean `loc` and standard deviation `scale`."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self) -> Any:
        return self.loc

    mode = mean

    @property
    def stddev(self) -> Any:
        return self.scale

    @property
    def variance(self) -> Any:
        return self.stddev.pow(2)

    def __init__(self, loc: Any, scale: Any, validate_args: Optional[bool] = None) -> None:
        (self.loc, self.scale), batch_shape = _broadcast_params(loc, scale)
        super().__init__(batch_shape, validate_args=validate_args)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with ts.no_grad():
            return ts.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - _math.log(_math.sqrt(2 * _math.pi))

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ts.erf((value - self.loc) * self.scale.reciprocal() / _math.sqrt(2)))

    def icdf(self, value: Any) -> Any:
        return self.loc + self.scale * ts.erfinv(2 * value - 1) * _math.sqrt(2)

    def entropy(self) -> Any:
        return 0.5 + 0.5 * _math.log(2 * _math.pi) + ts.log(self.scale)

    @property
    def _natural_params(self) -> tuple:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return -0.25 * x.pow(2) / y + 0.5 * ts.log(-_math.pi / y)

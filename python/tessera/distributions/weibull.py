"""The Weibull distribution (torch.distributions.Weibull): scale * E ** (1 / concentration)
for E ~ Exponential(1)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The two-parameter Weibull distribution with `scale` (lambda) and `concentration`
    (k): cdf 1 - exp(-(x / scale) ** concentration)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale: Any, concentration: Any,
                 validate_args: Optional[bool] = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self._build(Exponential(ts.ones_like(self.scale), validate_args=validate_args),
                    validate_args)

    def _build(self, base_dist: Any, validate_args: Optional[bool]) -> None:
        self.concentration_reciprocal = self.concentration.reciprocal()
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        TransformedDistribution.__init__(self, base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Weibull":
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._build(self.base_dist.expand(batch_shape), False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        return self.scale * ts.exp(ts.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Any:
        return (self.scale
                * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal())

    @property
    def variance(self) -> Any:
        return self.scale.pow(2) * (ts.exp(ts.lgamma(1 + 2 * self.concentration_reciprocal))
                                    - ts.exp(2 * ts.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self) -> Any:
        return (euler_constant * (1 - self.concentration_reciprocal)
                + ts.log(self.scale * self.concentration_reciprocal) + 1)

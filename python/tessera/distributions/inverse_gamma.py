"""The InverseGamma distribution (torch.distributions.InverseGamma): 1 / X for a Gamma X."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any,
                 validate_args: Optional[bool] = None) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "InverseGamma":
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self) -> Any:
        return self.base_dist.concentration

    @property
    def rate(self) -> Any:
        return self.base_dist.rate

    @property
    def mean(self) -> Any:
        return ts.where(self.concentration > 1, self.rate / (self.concentration - 1), _math.inf)

    @property
    def mode(self) -> Any:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Any:
        result = self.rate.square() / ((self.concentration - 1).square()
                                       * (self.concentration - 2))
        return ts.where(self.concentration > 2, result, _math.inf)

    def entropy(self) -> Any:
        return (self.concentration + self.rate.log() + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())

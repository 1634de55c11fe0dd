"""The HalfNormal distribution (torch.distributions.HalfNormal): |X| for a centered Normal."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class _Folded(TransformedDistribution):
    """|X| for X with a density symmetric about 0 (`base_dist`, with a `scale`): the half
    distributions' shared log_prob, cdf, icdf, entropy and mode."""

    @property
    def scale(self) -> Any:
        return self.base_dist.scale

    @property
    def mode(self) -> Any:
        return ts.zeros_like(self.scale)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        value = ts.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        log_prob = self.base_dist.log_prob(value) + _math.log(2)
        return ts.where(value >= 0, log_prob, -_math.inf)

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Any) -> Any:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Any:
        return self.base_dist.entropy() - _math.log(2)


class HalfNormal(_Folded):
    """|X| for X ~ Normal(0, scale)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: Optional[bool] = None) -> None:
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "HalfNormal":
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Any:
        return self.scale * _math.sqrt(2 / _math.pi)

    @property
    def variance(self) -> Any:
        return self.scale.pow(2) * (1 - 2 / _math.pi)

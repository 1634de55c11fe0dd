"""The Kumaraswamy distribution (torch.distributions.Kumaraswamy): (1 - (1 - U) ** (1 / b))
** (1 / a) for U ~ Uniform(0, 1); a Beta-like law with a closed-form cdf."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from .beta import Beta
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a: Any, b: Any, n: int) -> Any:
    """The n-th raw moment b * B(1 + n / a, b)."""
    arg1 = 1 + n / a
    log_value = ts.lgamma(arg1) + ts.lgamma(b) - ts.lgamma(arg1 + b)
    return b * ts.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy with `concentration1` (a) and `concentration0` (b): density
    a b x^(a-1) (1 - x^a)^(b-1) on (0, 1)."""
    arg_constraints = Beta.arg_constraints
    support = Beta.support
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: Optional[bool] = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(ts.full_like(self.concentration0, 0),
                            ts.full_like(self.concentration0, 1), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Kumaraswamy":
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Any:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Any:
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        undefined = (self.concentration0 < 1) | (self.concentration1 < 1)
        return ts.where(undefined, _math.nan, log_mode).exp()

    @property
    def variance(self) -> Any:
        return _moments(self.concentration1, self.concentration0, 2) - ts.pow(self.mean, 2)

    def entropy(self) -> Any:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = ts.digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - ts.log(self.concentration1) - ts.log(self.concentration0)

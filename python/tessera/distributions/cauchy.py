"""The Cauchy distribution (torch.distributions.Cauchy)."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .distribution import Distribution
from .utils import _broadcast_params

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy (Lorentz) with median `loc` and half width `scale`; no mean or variance."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: Optional[bool] = None) -> None:
        (self.loc, self.scale), batch_shape = _broadcast_params(loc, scale)
        super().__init__(batch_shape, validate_args=validate_args)

    def _full(self, v: float) -> Any:
        return ts.full(tuple(self._extended_shape()), v, dtype=self.loc.dtype,
                       device=self.loc.device)

    @property
    def mean(self) -> Any:
        return self._full(_math.nan)

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return self._full(_math.inf)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        eps = ts.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return (-_math.log(_math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return ts.atan((value - self.loc) / self.scale) / _math.pi + 0.5

    def icdf(self, value: Any) -> Any:
        return ts.tan(_math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Any:
        return _math.log(4 * _math.pi) + self.scale.log()

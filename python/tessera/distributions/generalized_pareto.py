"""The generalized Pareto distribution (torch.distributions.GeneralizedPareto)."""
from __future__ import annotations

import math as _math
import numbers as _numbers
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GPD(loc, scale, concentration): survival (1 + concentration z)^(-1/concentration) in
    z = (x - loc) / scale (exp(-z) at concentration 0); bounded above for concentration < 0.
    rsample inverts the cdf at uniform draws."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any,
                 validate_args: Optional[bool] = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, _numbers.Number) for v in (loc, scale, concentration))
        super().__init__(ts.Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "GeneralizedPareto":
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = ts.Size(tuple(batch_shape))
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        new.concentration = self.concentration.expand(tuple(batch_shape))
        return self._expanded(new, batch_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        return self.icdf(ts.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _safe_concentration(self) -> tuple:
        """(concentration == 0 (isclose), concentration with those set to 1)."""
        eq_zero = ts.isclose(self.concentration, ts.zeros_like(self.concentration))
        return eq_zero, ts.where(eq_zero, ts.ones_like(self.concentration), self.concentration)

    def _z(self, x: Any) -> Any:
        return (x - self.loc) / self.scale

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + ts.ones_like(z)
        where_nonzero = ts.where(y == 0, y, y * ts.log1p(safe_conc * z))
        return -self.scale.log() - ts.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        return ts.where(eq_zero, -z, -ts.log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value: Any) -> Any:
        return ts.log1p(-ts.exp(self.log_survival_function(value)))

    def cdf(self, value: Any) -> Any:
        return ts.exp(self.log_cdf(value))

    def icdf(self, value: Any) -> Any:
        eq_zero, safe_conc = self._safe_concentration()
        logu = ts.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * ts.expm1(-safe_conc * logu)
        return ts.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    @property
    def mean(self) -> Any:
        valid = self.concentration < 1
        safe_conc = ts.where(valid, self.concentration, 0.5)
        return ts.where(valid, self.loc + self.scale / (1 - safe_conc), _math.nan)

    @property
    def variance(self) -> Any:
        valid = self.concentration < 0.5
        safe_conc = ts.where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return ts.where(valid, result, _math.nan)

    def entropy(self) -> Any:
        ans = ts.log(self.scale) + self.concentration + 1
        return ts.broadcast_to(ans, tuple(self._batch_shape))

    @property
    def mode(self) -> Any:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        upper = ts.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                         _math.inf)
        return constraints.interval(self.loc, upper)

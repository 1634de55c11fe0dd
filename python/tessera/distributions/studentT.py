"""Student's t distribution (torch.distributions.StudentT)."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _broadcast_params, _standard_normal

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom, location `loc` and scale `scale`."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0,
                 validate_args: Optional[bool] = None) -> None:
        (self.df, self.loc, self.scale), batch_shape = _broadcast_params(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "StudentT":
        new = self._get_checked_instance(StudentT, _instance)
        shape = tuple(batch_shape)
        new.df = self.df.expand(shape)
        new.loc = self.loc.expand(shape)
        new.scale = self.scale.expand(shape)
        new._chi2 = self._chi2.expand(shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self) -> Any:
        return ts.where(self.df <= 1, _math.nan, self.loc)

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        m = self.scale.pow(2) * self.df / (self.df - 2)
        m = ts.where((self.df <= 2) & (self.df > 1), _math.inf, m)
        return ts.where(self.df <= 1, _math.nan, m)

    def rsample(self, sample_shape: Any = ()) -> Any:
        # X ~ Normal(0, 1), Z ~ Chi2(df): Y = X / sqrt(Z / df) ~ StudentT(df)
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        Y = X * ts.rsqrt(Z / self.df)
        return self.loc + self.scale * Y

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * _math.log(_math.pi)
             + ts.lgamma(0.5 * self.df) - ts.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * ts.log1p(y ** 2.0 / self.df) - Z

    def entropy(self) -> Any:
        lbeta = (ts.lgamma(0.5 * self.df) + _math.lgamma(0.5)
                 - ts.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (ts.digamma(0.5 * (self.df + 1))
                                         - ts.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)

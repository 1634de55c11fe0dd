"""The Fisher-Snedecor (F) distribution (torch.distributions.FisherSnedecor)."""
from __future__ import annotations

import math as _math
import numbers as _numbers
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """F(df1, df2): the ratio of two scaled chi-squares; rsample is X1 / X2 for
    X1 ~ Gamma(df1 / 2, df1), X2 ~ Gamma(df2 / 2, df2) (reparameterized)."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: Optional[bool] = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, _numbers.Number) and isinstance(df2, _numbers.Number)
        super().__init__(ts.Size() if scalar else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "FisherSnedecor":
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = ts.Size(tuple(batch_shape))
        new.df1 = self.df1.expand(tuple(batch_shape))
        new.df2 = self.df2.expand(tuple(batch_shape))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self) -> Any:
        df2 = ts.where(self.df2 <= 2, _math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Any:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ts.where(self.df1 <= 2, _math.nan, mode)

    @property
    def variance(self) -> Any:
        df2 = ts.where(self.df2 <= 4, _math.nan, self.df2)
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = ts.finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * ts.log(value)
        t3 = (ct1 + ct2) * ts.log1p(ct3 * value)
        return t1 + t2 - t3

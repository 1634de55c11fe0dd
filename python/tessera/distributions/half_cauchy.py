"""The HalfCauchy distribution (torch.distributions.HalfCauchy): |X| for a centered Cauchy."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .cauchy import Cauchy
from .half_normal import _Folded
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(_Folded):
    """|X| for X ~ Cauchy(0, scale)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: Optional[bool] = None) -> None:
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "HalfCauchy":
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Any:
        return ts.full(tuple(self._extended_shape()), _math.inf, dtype=self.scale.dtype,
                       device=self.scale.device)

    @property
    def variance(self) -> Any:
        return self.base_dist.variance

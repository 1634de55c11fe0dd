"""The Gumbel distribution (torch.distributions.Gumbel): a transformed Uniform."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import _broadcast_params, euler_constant

__all__ = ["Gumbel"]



class Gumbel(TransformedDistribution):
    """Gumbel (type-1 extreme value) with location `loc` and scale `scale`:
    loc - scale * log(-log(U)) for U uniform."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: Optional[bool] = None) -> None:
        (self.loc, self.scale), _ = _broadcast_params(loc, scale)
        finfo = ts.finfo(self.loc.dtype)
        base_dist = Uniform(ts.full_like(self.loc, finfo.tiny),
                            ts.full_like(self.loc, 1 - finfo.eps), validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ts.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Gumbel":
        new = self._get_checked_instance(Gumbel, _instance)
        shape = tuple(batch_shape)
        new.loc = self.loc.expand(shape)
        new.scale = self.scale.expand(shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Any:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def stddev(self) -> Any:
        return (_math.pi / _math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Any:
        return self.stddev.pow(2)

    def entropy(self) -> Any:
        return self.scale.log() + (1 + euler_constant)

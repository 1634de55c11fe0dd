"""The Laplace distribution (torch.distributions.Laplace)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .distribution import Distribution
from .utils import _broadcast_params

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Laplace (double exponential) with location `loc` and scale `scale`."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> Any:
        return self.loc

    mode = mean

    @property
    def variance(self) -> Any:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Any:
        return (2 ** 0.5) * self.scale

    def __init__(self, loc: Any, scale: Any, validate_args: Optional[bool] = None) -> None:
        (self.loc, self.scale), batch_shape = _broadcast_params(loc, scale)
        super().__init__(batch_shape, validate_args=validate_args)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        eps = ts.finfo(self.loc.dtype).eps
        u = ts.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        u = u * (2 - eps) + (eps - 1)  # uniform in [eps - 1, 1)
        return self.loc - self.scale * u.sign() * ts.log1p(-u.abs())

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return -ts.log(2 * self.scale) - ts.abs(value - self.loc) / self.scale

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * ts.expm1(
            -(value - self.loc).abs() / self.scale)

    def icdf(self, value: Any) -> Any:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * ts.log1p(-2 * term.abs())

    def entropy(self) -> Any:
        return 1 + ts.log(2 * self.scale)

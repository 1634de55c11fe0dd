"""The Beta distribution (torch.distributions.Beta), a two-component Dirichlet."""
from __future__ import annotations

import numbers as _numbers
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """Beta on [0, 1] with concentrations `concentration1` (alpha) and `concentration0`
    (beta)."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: Optional[bool] = None) -> None:
        if isinstance(concentration1, _numbers.Real) and isinstance(concentration0, _numbers.Real):
            concentration1_concentration0 = ts.tensor(
                [float(concentration1), float(concentration0)], dtype=ts.get_default_dtype())
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            concentration1_concentration0 = ts.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(concentration1_concentration0, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Beta":
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = ts.Size(tuple(batch_shape))
        new._dirichlet = Dirichlet(self._dirichlet.concentration.expand(tuple(batch_shape) + (2,)),
                                   validate_args=False)
        return self._expanded(new, batch_shape)

    @property
    def mean(self) -> Any:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Any:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Any:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Any:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = ts.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self) -> Any:
        return self._dirichlet.entropy()

    @property
    def concentration1(self) -> Any:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Any:
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return ts.lgamma(x) + ts.lgamma(y) - ts.lgamma(x + y)

"""The Dirichlet distribution (torch.distributions.Dirichlet)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import _standard_gamma

__all__ = ["Dirichlet"]


def _sample_dirichlet(concentration: Any) -> Any:
    """Normalized Gamma(concentration, 1) draws over the last dim, clamped into (0, 1) as
    torch's; differentiable through _standard_gamma's reparameterized gradient."""
    gammas = _standard_gamma(concentration)
    x = gammas / gammas.sum(-1, keepdim=True)
    finfo = ts.finfo(x.dtype)
    return x.clamp(min=finfo.tiny, max=1 - finfo.eps)


class Dirichlet(ExponentialFamily):
    """Dirichlet over the simplex of the last dim of `concentration` (all > 0)."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Any, validate_args: Optional[bool] = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        return _sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return (ts.xlogy(self.concentration - 1.0, value).sum(-1)
                + ts.lgamma(self.concentration.sum(-1)) - ts.lgamma(self.concentration).sum(-1))

    @property
    def mean(self) -> Any:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Any:
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, keepdim=True)
        mask = (self.concentration < 1).all(dim=-1)
        onehot = ts.nn.functional.one_hot(self.concentration.argmax(-1),
                                          concentrationm1.shape[-1]).to(mode.dtype)
        return ts.where(mask.unsqueeze(-1), onehot, mode)

    @property
    def variance(self) -> Any:
        con0 = self.concentration.sum(-1, keepdim=True)
        return (self.concentration * (con0 - self.concentration)
                / (con0.pow(2) * (con0 + 1)))

    def entropy(self) -> Any:
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (ts.lgamma(self.concentration).sum(-1) - ts.lgamma(a0)
                - (k - a0) * ts.digamma(a0)
                - ((self.concentration - 1.0) * ts.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x: Any) -> Any:
        return x.lgamma().sum(-1) - ts.lgamma(x.sum(-1))

"""MixtureSameFamily (torch.distributions.MixtureSameFamily): a Categorical-weighted
mixture of the components along a distribution's rightmost batch dim."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A (batch of) mixture(s): `mixture_distribution` (a Categorical over k components)
    picks one of the k components of `component_distribution`, whose rightmost batch dim is
    k. The batch shape is the components' batch shape without that dim (the mixture's batch
    shape broadcasts with it)."""
    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: Optional[bool] = None) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "torch.distributions.Distribution")
        mdbs = mixture_distribution.batch_shape
        cdbs = ts.Size(tuple(component_distribution.batch_shape)[:-1])
        for size1, size2 in zip(reversed(tuple(mdbs)), reversed(tuple(cdbs))):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not "
                                 f"compatible with `component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=cdbs, event_shape=event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "MixtureSameFamily":
        batch_shape = ts.Size(tuple(batch_shape))
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            tuple(batch_shape) + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        return self._expanded(new, batch_shape)

    @constraints.dependent_property
    def support(self) -> Any:
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    @property
    def mean(self) -> Any:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return ts.sum(probs * self.component_distribution.mean, dim=-1 - self._event_ndims)

    @property
    def variance(self) -> Any:
        """The law of total variance: E[Var(X | k)] + Var(E[X | k])."""
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_cond_var = ts.sum(probs * self.component_distribution.variance, dim=dim)
        var_cond_mean = ts.sum(
            probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0), dim=dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x: Any) -> Any:
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return ts.sum(cdf_x * self.mixture_distribution.probs, dim=-1)

    def log_prob(self, x: Any) -> Any:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))  # [S, B, k]
        log_mix_prob = ts.log_softmax(self.mixture_distribution.logits, dim=-1)  # [B, k]
        return ts.logsumexp(log_prob_x + log_mix_prob, dim=-1)  # [S, B]

    def sample(self, sample_shape: Any = ()) -> Any:
        """Draws every component, then gathers the one the mixture picked."""
        with ts.no_grad():
            sample_shape = tuple(sample_shape)
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)
            index = mix_sample.reshape(mix_shape + (1,) * (len(es) + 1))
            index = index.repeat((1,) * len(mix_shape) + (1,) + es)
            return ts.gather(comp_samples, gather_dim, index).squeeze(gather_dim)

    def _pad(self, x: Any) -> Any:
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Any) -> Any:
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(xs[:-1] + (1,) * pad_ndims + xs[-1:] + (1,) * self._event_ndims)

    def __repr__(self) -> str:
        return ("MixtureSameFamily(\n  " + repr(self.mixture_distribution) + ",\n  "
                + repr(self.component_distribution) + ")")

"""The Multinomial distribution (torch.distributions.Multinomial)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .binomial import Binomial
from .categorical import Categorical, _OverCategorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(_OverCategorical, Distribution):
    """The category counts of `total_count` draws from a Categorical(probs/logits) (event
    shape (K,)). `total_count` is an int; it may be left at 1 for log_prob only."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    total_count: int

    @property
    def mean(self) -> Any:
        return self.probs * self.total_count

    @property
    def variance(self) -> Any:
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: Optional[bool] = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Multinomial":
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = ts.Size(tuple(batch_shape))
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs,
                                 validate_args=False)
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> Any:
        return constraints.multinomial(self.total_count)

    def sample(self, sample_shape: Any = ()) -> Any:
        sample_shape = tuple(sample_shape)
        samples = self._categorical.sample((self.total_count,) + sample_shape)
        # (total_count, sample_shape, batch_shape) -> (sample_shape, batch_shape, total_count)
        shifted_idx = list(range(samples.dim()))
        shifted_idx.append(shifted_idx.pop(0))
        samples = samples.permute(*shifted_idx)
        counts = ts.zeros(tuple(self._extended_shape(sample_shape)), dtype=self.probs.dtype,
                          device=self.probs.device)
        counts.scatter_add_(-1, samples, ts.ones(tuple(samples.shape), dtype=counts.dtype,
                                                 device=counts.device))
        return counts

    def entropy(self) -> Any:
        n = ts.tensor(self.total_count, dtype=self.probs.dtype, device=self.probs.device)
        cat_entropy = self._categorical.entropy()
        term1 = n * cat_entropy - ts.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = ts.exp(self._binomial.log_prob(support))
        weights = ts.lgamma(support + 1)
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = ts.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ts.lgamma(value + 1).sum(-1)
        logits = ts.where((value == 0) & (logits == -float("inf")), 0.0, logits)
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers

"""The Categorical distribution (torch.distributions.Categorical)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts

from . import constraints
from .distribution import Distribution, _ProbsOrLogits

__all__ = ["Categorical"]


class Categorical(_ProbsOrLogits, Distribution):
    """A distribution over the category indices 0 .. K - 1 of the last dim of `probs`
    (non-negative, normalized here) or `logits` (unnormalized log-probabilities); exactly
    one of them is given."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _binary = False

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: Optional[bool] = None) -> None:
        def normalized(v: Any) -> Any:
            name = "probs" if probs is not None else "logits"
            if v.dim() < 1:
                raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
            if probs is not None:
                return v / v.sum(-1, keepdim=True)
            return v - v.logsumexp(dim=-1, keepdim=True)  # normalized log-probabilities

        self._set_probs_or_logits(probs, logits, normalized)
        self._num_events = self._param.size()[-1]
        batch_shape = ts.Size(tuple(self._param.shape[:-1]))
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Categorical":
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = ts.Size(tuple(batch_shape))
        self._expand_probs_or_logits(new, tuple(batch_shape) + (self._num_events,))
        new._num_events = self._num_events
        return self._expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> Any:
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self) -> Any:
        return ts.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype,
                       device=self.probs.device)

    @property
    def mode(self) -> Any:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Any:
        return ts.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype,
                       device=self.probs.device)

    def sample(self, sample_shape: Any = ()) -> Any:
        if not isinstance(sample_shape, tuple):
            sample_shape = tuple(sample_shape)
        n = 1
        for s in sample_shape:
            n *= s
        probs_2d = self.probs.reshape(-1, self._num_events)
        with ts.no_grad():
            if n == 0:
                samples_2d = ts.zeros((0, probs_2d.shape[0]), dtype=ts.int64,
                                      device=probs_2d.device)
            else:
                samples_2d = ts.multinomial(probs_2d.detach(), n, True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ts.broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Any:
        min_real = ts.finfo(self.logits.dtype).min
        logits = ts.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand: bool = True) -> Any:
        num_events = self._num_events
        values = ts.arange(num_events, dtype=ts.int64, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class _OverCategorical:
    """probs, logits and param_shape of a distribution built over a Categorical
    (`self._categorical`): OneHotCategorical, Multinomial, ExpRelaxedCategorical."""
    _categorical: Categorical

    @property
    def _param(self) -> Any:
        return self._categorical._param

    @property
    def probs(self) -> Any:
        return self._categorical.probs

    @property
    def logits(self) -> Any:
        return self._categorical.logits

    @property
    def param_shape(self) -> Any:
        return self._categorical.param_shape

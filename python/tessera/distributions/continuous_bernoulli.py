"""The continuous Bernoulli distribution (torch.distributions.ContinuousBernoulli; Loaiza-Ganem
& Cunningham, NeurIPS 2019): density proportional to p^x (1 - p)^(1 - x) on [0, 1]."""
from __future__ import annotations

import math as _math
import numbers as _numbers
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

import tessera as ts
from tessera.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .distribution import _ProbsOrLogits
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(_ProbsOrLogits, ExponentialFamily):
    """The continuous Bernoulli with parameter `probs` in (0, 1) (or `logits`, its log-odds);
    probs is not the mean. Within `lims` of 1/2, where the closed forms lose precision, the
    normalizer and moments are Taylor expansions in probs - 1/2."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Any = None, logits: Any = None, lims: tuple = (0.499, 0.501),
                 validate_args: Optional[bool] = None) -> None:
        def convert(v: Any) -> Any:
            (v,) = broadcast_all(v)
            if probs is None:
                return v
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(v).all()):
                raise ValueError("The parameter probs has invalid values")
            return clamp_probs(v)

        self._set_probs_or_logits(probs, logits, convert)
        is_scalar = isinstance(probs if probs is not None else logits, _numbers.Number)
        self._lims = lims
        super().__init__(ts.Size() if is_scalar else self._param.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "ContinuousBernoulli":
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = ts.Size(tuple(batch_shape))
        self._expand_probs_or_logits(new, tuple(batch_shape))
        return self._expanded(new, batch_shape)

    @lazy_property
    def probs(self) -> Any:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside_unstable_region(self) -> Any:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Any:
        return ts.where(self._outside_unstable_region(), self.probs,
                        self._lims[0] * ts.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Any:
        """The log normalizing constant as a function of probs."""
        cut_probs = self._cut_probs()
        below = ts.where(cut_probs <= 0.5, cut_probs, ts.zeros_like(cut_probs))
        above = ts.where(cut_probs >= 0.5, cut_probs, ts.ones_like(cut_probs))
        log_norm = (ts.log(ts.abs(ts.log1p(-cut_probs) - ts.log(cut_probs)))
                    - ts.where(cut_probs <= 0.5, ts.log1p(-2.0 * below), ts.log(2.0 * above - 1.0)))
        x = ts.pow(self.probs - 0.5, 2)
        taylor = _math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ts.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Any:
        cut_probs = self._cut_probs()
        mus = (cut_probs / (2.0 * cut_probs - 1.0)
               + 1.0 / (ts.log1p(-cut_probs) - ts.log(cut_probs)))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * ts.pow(x, 2)) * x
        return ts.where(self._outside_unstable_region(), mus, taylor)

    @property
    def variance(self) -> Any:
        cut_probs = self._cut_probs()
        vars_ = (cut_probs * (cut_probs - 1.0) / ts.pow(1.0 - 2.0 * cut_probs, 2)
                 + 1.0 / ts.pow(ts.log1p(-cut_probs) - ts.log(cut_probs), 2))
        x = ts.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ts.where(self._outside_unstable_region(), vars_, taylor)

    def sample(self, sample_shape: Any = ()) -> Any:
        with ts.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        """The inverse cdf of uniform draws (differentiable in probs)."""
        shape = tuple(self._extended_shape(sample_shape))
        u = ts.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = ((ts.pow(cut_probs, value) * ts.pow(1.0 - cut_probs, 1.0 - value) + cut_probs
                 - 1.0) / (2.0 * cut_probs - 1.0))
        unbounded = ts.where(self._outside_unstable_region(), cdfs, value)
        return ts.where(value <= 0.0, ts.zeros_like(value),
                        ts.where(value >= 1.0, ts.ones_like(value), unbounded))

    def icdf(self, value: Any) -> Any:
        cut_probs = self._cut_probs()
        inverse = ((ts.log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - ts.log1p(-cut_probs))
                   / (ts.log(cut_probs) - ts.log1p(-cut_probs)))
        return ts.where(self._outside_unstable_region(), inverse, value)

    def entropy(self) -> Any:
        log_probs0 = ts.log1p(-self.probs)
        log_probs1 = ts.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x: Any) -> Any:
        """The log normalizing constant as a function of the natural parameter (logits)."""
        out_unst_reg = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut_nat_params = ts.where(out_unst_reg, x, (self._lims[0] - 0.5) * ts.ones_like(x))
        log_norm = ts.log(ts.abs(ts.expm1(cut_nat_params))) - ts.log(ts.abs(cut_nat_params))
        taylor = 0.5 * x + ts.pow(x, 2) / 24.0 - ts.pow(x, 4) / 2880.0
        return ts.where(out_unst_reg, log_norm, taylor)

"""The ExponentialFamily base class (torch.distributions.ExponentialFamily): densities
exp(<t(x), theta> - F(theta) + k(x)); entropy and same-family KL from the log normalizer F
by autograd (Bregman divergences, Nielsen & Nock)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any

import tessera as ts

from .distribution import Distribution
from .utils import _sum_rightmost

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of an exponential family: a member gives its natural parameters
    `_natural_params`, the log normalizer `_log_normalizer(*natural_params)` and the
    expected carrier measure `_mean_carrier_measure`; `entropy()` (and the KL between two
    members of one family) follow from them."""

    @property
    def _natural_params(self) -> tuple:
        """The natural parameters theta (a tuple of tensors)."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Any:
        """F(theta), batched."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        """E[k(x)]."""
        raise NotImplementedError

    def _normalizer_and_grads(self) -> tuple:
        """(theta detached as new leaves, F(theta), dF/dtheta with a graph)."""
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        grads = ts.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        return nparams, lg_normal, grads

    def entropy(self) -> Any:
        """F(theta) - <theta, dF/dtheta> - E[k(x)]."""
        result: Any = -self._mean_carrier_measure
        nparams, lg_normal, grads = self._normalizer_and_grads()
        result = result + lg_normal
        for p, g in zip(nparams, grads):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result


def _kl_expfamily_expfamily(p: Any, q: Any) -> Any:
    """The Bregman divergence of F between q's and p's natural parameters."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_nparams, lg_normal, grads = p._normalizer_and_grads()
    q_nparams = q._natural_params
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, grads):
        result = result - _sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result

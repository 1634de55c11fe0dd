"""KL divergences between distributions (torch.distributions.kl): `kl_divergence(p, q)`
looks up the most specific implementation registered with `register_kl` for the types of
p and q (by their method resolution orders)."""
from __future__ import annotations

import math
import warnings
from functools import total_ordering
from typing import Any, Callable, Dict, Tuple

import tessera as ts
from tessera.nn.functional import softplus

from .distribution import Distribution
from .utils import _sum_rightmost, euler_constant

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: Dict[Tuple[type, type], Callable] = {}
_KL_MEMOIZE: Dict[Tuple[type, type], Callable] = {}


def register_kl(type_p: type, type_q: type) -> Callable:
    """Decorator registering a pairwise function as the KL divergence of (type_p, type_q)::

        @register_kl(Normal, Normal)
        def kl_normal_normal(p, q):
            ...

    Lookup returns the most specific (type, type) match ordered by subclass; an ambiguous
    match warns (register the more specific pair to resolve it)."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # reset since lookup order may have changed
        return fun

    return decorator


@total_ordering
class _Match:
    __slots__ = ["types"]

    def __init__(self, *types: type) -> None:
        self.types = types

    def __eq__(self, other: Any) -> bool:
        return self.types == other.types

    def __le__(self, other: Any) -> bool:
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    """The most specific registered implementation for (type_p, type_q), or NotImplemented."""
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please "
                      f"register_kl({left_p.__name__}, {right_q.__name__})", RuntimeWarning,
                      stacklevel=2)
    return left_fun


def _infinite_like(tensor: Any) -> Any:
    return ts.full_like(tensor, math.inf)


def kl_divergence(p: Distribution, q: Distribution) -> Any:
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the distributions' batch shape.
    NotImplementedError when no implementation is registered for their types."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _inf_where(cond: Any, t: Any) -> Any:
    return ts.where(cond, math.inf, t)


def _zero_where(cond: Any, t: Any) -> Any:
    return ts.where(cond, 0.0, t)


def _kl_bernoulli_bernoulli(p: Any, q: Any) -> Any:
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _zero_where(p.probs == 0, _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _zero_where(p.probs == 1, _inf_where(q.probs == 1, t2))
    return t1 + t2


def _kl_categorical_categorical(p: Any, q: Any) -> Any:
    t = p.probs * (p.logits - q.logits)
    t = _inf_where((q.probs == 0).expand_as(t), t)
    t = _zero_where((p.probs == 0).expand_as(t), t)
    return t.sum(-1)


def _kl_normal_normal(p: Any, q: Any) -> Any:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


def _kl_independent_independent(p: Any, q: Any) -> Any:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


def _kl_uniform_uniform(p: Any, q: Any) -> Any:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


def _kl_exponential_exponential(p: Any, q: Any) -> Any:
    rate_ratio = q.rate / p.rate
    t1 = -rate_ratio.log()
    return t1 + rate_ratio - 1


def _kl_laplace_laplace(p: Any, q: Any) -> Any:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * ts.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


def _kl_poisson_poisson(p: Any, q: Any) -> Any:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


def _kl_gamma_gamma(p: Any, q: Any) -> Any:
    t1 = q.concentration * ts.log(p.rate / q.rate)
    t2 = ts.lgamma(q.concentration) - ts.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ts.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


def _kl_beta_beta(p: Any, q: Any) -> Any:
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = ts.lgamma(q.concentration1) + ts.lgamma(q.concentration0) + ts.lgamma(sum_params_p)
    t2 = ts.lgamma(p.concentration1) + ts.lgamma(p.concentration0) + ts.lgamma(sum_params_q)
    t3 = (p.concentration1 - q.concentration1) * ts.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * ts.digamma(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * ts.digamma(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


def _kl_dirichlet_dirichlet(p: Any, q: Any) -> Any:
    sum_p_concentration = p.concentration.sum(-1)
    sum_q_concentration = q.concentration.sum(-1)
    t1 = ts.lgamma(sum_p_concentration) - ts.lgamma(sum_q_concentration)
    t2 = (ts.lgamma(p.concentration) - ts.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = ts.digamma(p.concentration) - ts.digamma(sum_p_concentration).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


def _batch_trace_xxt(bmat: Any) -> Any:
    return bmat.pow(2).sum((-2, -1))


def _kl_mvn_mvn(p: Any, q: Any) -> Any:
    from .multivariate_normal import _batch_mahalanobis
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event "
                         "shapes cannot be computed")
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = (q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - p_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    combined = tuple(ts.broadcast_shapes(tuple(q_tril.shape[:-2]), tuple(p_tril.shape[:-2])))
    n = p.event_shape[0]
    q_scale_tril = q_tril.expand(combined + (n, n))
    p_scale_tril = p_tril.expand(combined + (n, n))
    term2 = _batch_trace_xxt(ts.linalg.solve_triangular(q_scale_tril, p_scale_tril, upper=False))
    term3 = _batch_mahalanobis(q_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


def _kl_transformed_transformed(p: Any, q: Any) -> Any:
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


def _kl_gumbel_gumbel(p: Any, q: Any) -> Any:
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = ts.exp(ct2 + ts.lgamma(1 + ct1) - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


def _kl_geometric_geometric(p: Any, q: Any) -> Any:
    return -p.entropy() - ts.log1p(-q.probs) / p.probs - q.logits


def _kl_halfnormal_halfnormal(p: Any, q: Any) -> Any:
    return _kl_normal_normal(p.base_dist, q.base_dist)


def _kl_onehot_onehot(p: Any, q: Any) -> Any:
    return _kl_categorical_categorical(p._categorical, q._categorical)


def _register_all() -> None:
    """Registers the pairs above (called by the package once every class exists)."""
    from . import (bernoulli, beta, categorical, dirichlet, exp_family, exponential, gamma,
                   geometric, gumbel, half_normal, independent, laplace, multivariate_normal,
                   normal, one_hot_categorical, poisson, transformed_distribution, uniform)
    table = [
        (bernoulli.Bernoulli, _kl_bernoulli_bernoulli),
        (categorical.Categorical, _kl_categorical_categorical),
        (normal.Normal, _kl_normal_normal),
        (independent.Independent, _kl_independent_independent),
        (uniform.Uniform, _kl_uniform_uniform),
        (exponential.Exponential, _kl_exponential_exponential),
        (laplace.Laplace, _kl_laplace_laplace),
        (poisson.Poisson, _kl_poisson_poisson),
        (gamma.Gamma, _kl_gamma_gamma),
        (beta.Beta, _kl_beta_beta),
        (dirichlet.Dirichlet, _kl_dirichlet_dirichlet),
        (multivariate_normal.MultivariateNormal, _kl_mvn_mvn),
        (transformed_distribution.TransformedDistribution, _kl_transformed_transformed),
        (one_hot_categorical.OneHotCategorical, _kl_onehot_onehot),
        (gumbel.Gumbel, _kl_gumbel_gumbel),
        (geometric.Geometric, _kl_geometric_geometric),
        (half_normal.HalfNormal, _kl_halfnormal_halfnormal),
    ]
    for cls, fun in table:
        register_kl(cls, cls)(fun)
    register_kl(exp_family.ExponentialFamily, exp_family.ExponentialFamily)(
        exp_family._kl_expfamily_expfamily)

"""KL divergences between distributions (torch.distributions.kl): `kl_divergence(p, q)`
looks up the most specific implementation registered with `register_kl` for the types of
p and q (by their method resolution orders)."""
from __future__ import annotations

import math as _math
import typing as _t
import warnings as _warnings
from functools import total_ordering

if _t.TYPE_CHECKING:
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
        _warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). Please "
                      f"register_kl({left_p.__name__}, {right_q.__name__})", RuntimeWarning,
                      stacklevel=2)
    return left_fun


def _infinite_like(tensor: Any) -> Any:
    return ts.full_like(tensor, _math.inf)


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
    return ts.where(cond, _math.inf, t)


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


def _kl_binomial_binomial(p: Any, q: Any) -> Any:
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is "
                                  "not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return _inf_where(p.total_count > q.total_count, kl)


def _kl_cauchy_cauchy(p: Any, q: Any) -> Any:
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


def _kl_continuous_bernoulli_continuous_bernoulli(p: Any, q: Any) -> Any:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + ts.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - ts.log1p(-q.probs)
    return t1 + t2 + t3


def _kl_pareto_pareto(p: Any, q: Any) -> Any:
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return _inf_where(p.support.lower_bound < q.support.lower_bound, result)


def _lowrank_terms(q: Any) -> tuple:
    """q's Woodbury pieces: (log det, A = C^-1/2 W^T D^-1)."""
    from .lowrank_multivariate_normal import _batch_lowrank_logdet
    W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    A = ts.linalg.solve_triangular(q._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)
    return _batch_lowrank_logdet(W, D, q._capacitance_tril), A


def _check_mvn_events(p: Any, q: Any) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with "
                         "different event shapes cannot be computed")


def _lowrank_mahalanobis(q: Any, x: Any) -> Any:
    from .lowrank_multivariate_normal import _batch_lowrank_mahalanobis
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                      x, q._capacitance_tril)


def _kl_lowrank_lowrank(p: Any, q: Any) -> Any:
    _check_mvn_events(p, q)
    q_logdet, A = _lowrank_terms(q)
    p_logdet, _ = _lowrank_terms(p)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    pW, pD, qD = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, q._unbroadcasted_cov_diag
    term2 = ((pD / qD).sum(-1) + _batch_trace_xxt(pW * qD.rsqrt().unsqueeze(-1))
             - _batch_trace_xxt(A * pD.sqrt().unsqueeze(-2)) - _batch_trace_xxt(A.matmul(pW)))
    return 0.5 * (q_logdet - p_logdet + term2 + term3 - p.event_shape[0])


def _kl_lowrank_mvn(p: Any, q: Any) -> Any:
    from .multivariate_normal import _batch_mahalanobis
    _check_mvn_events(p, q)
    q_tril = q._unbroadcasted_scale_tril
    p_logdet, _ = _lowrank_terms(p)
    term1 = 2 * q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) - p_logdet
    term3 = _batch_mahalanobis(q_tril, q.loc - p.loc)
    combined = tuple(ts.broadcast_shapes(tuple(q_tril.shape[:-2]),
                                         tuple(p._unbroadcasted_cov_factor.shape[:-2])))
    n = p.event_shape[0]
    q_scale_tril = q_tril.expand(combined + (n, n))
    p_cov_factor = p._unbroadcasted_cov_factor.expand(combined + (n, p.cov_factor.size(-1)))
    p_cov_diag = ts.diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(combined + (n, n))
    term2 = (_batch_trace_xxt(ts.linalg.solve_triangular(q_scale_tril, p_cov_factor, upper=False))
             + _batch_trace_xxt(ts.linalg.solve_triangular(q_scale_tril, p_cov_diag, upper=False)))
    return 0.5 * (term1 + term2 + term3 - n)


def _kl_mvn_lowrank(p: Any, q: Any) -> Any:
    _check_mvn_events(p, q)
    q_logdet, A = _lowrank_terms(q)
    p_tril = p._unbroadcasted_scale_tril
    term1 = q_logdet - 2 * p_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    term2 = (_batch_trace_xxt(p_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
             - _batch_trace_xxt(A.matmul(p_tril)))
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


# ---- KL between different families (torch's registrations)
def _kl_infinity(p: Any, q: Any) -> Any:
    """q gives zero density where p has mass."""
    return _infinite_like(p.mean)


def _x_log_x(t: Any) -> Any:
    return t * t.log()


def _kl_bernoulli_poisson(p: Any, q: Any) -> Any:
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


def _neg_entropy_minus_cb_terms(p: Any, q: Any) -> Any:
    """-H(p) - E_p[log q] for q continuous Bernoulli, through p's mean."""
    return -p.entropy() - p.mean * q.logits - ts.log1p(-q.probs) - q._cont_bern_log_norm()


def _kl_beta_exponential(p: Any, q: Any) -> Any:
    return (-p.entropy() - q.rate.log()
            + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0)))


def _kl_beta_gamma(p: Any, q: Any) -> Any:
    t1 = -p.entropy()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma()
                                  - (p.concentration1 + p.concentration0).digamma())
    t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
    return t1 + t2 - t3 + t4


def _kl_beta_normal(p: Any, q: Any) -> Any:
    E_beta = p.concentration1 / (p.concentration1 + p.concentration0)
    var_normal = q.scale.pow(2)
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * _math.pi).log()
    t3 = (E_beta * (1 - E_beta) / (p.concentration1 + p.concentration0 + 1)
          + E_beta.pow(2)) * 0.5
    t4 = q.loc * E_beta
    t5 = q.loc.pow(2) * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


def _kl_beta_uniform(p: Any, q: Any) -> Any:
    """inf unless q covers [0, 1]."""
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > p.support.lower_bound) | (q.high < p.support.upper_bound), result)


def _kl_continuous_bernoulli_uniform(p: Any, q: Any) -> Any:
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound),
                      result)


def _kl_continuous_bernoulli_exponential(p: Any, q: Any) -> Any:
    return -p.entropy() - ts.log(q.rate) + q.rate * p.mean


def _kl_continuous_bernoulli_normal(p: Any, q: Any) -> Any:
    t1 = -p.entropy()
    t2 = 0.5 * (_math.log(2.0 * _math.pi) + ts.square(q.loc / q.scale)) + ts.log(q.scale)
    t3 = (p.variance + ts.square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * ts.square(q.scale))
    return t1 + t2 + t3


def _kl_exponential_gamma(p: Any, q: Any) -> Any:
    ratio = q.rate / p.rate
    t1 = -q.concentration * ts.log(ratio)
    return (t1 + ratio + q.concentration.lgamma() + q.concentration * euler_constant
            - (1 + euler_constant))


def _kl_exponential_gumbel(p: Any, q: Any) -> Any:
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = ts.exp(loc_scale_ratio) * scale_rate_prod / (scale_rate_prod + 1)
    t3 = scale_rate_prod.reciprocal()
    return t1 - loc_scale_ratio + t2 + t3


def _kl_exponential_normal(p: Any, q: Any) -> Any:
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * ts.log(rate_sqr * var_normal * 2 * _math.pi)
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


def _kl_gamma_exponential(p: Any, q: Any) -> Any:
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


def _kl_gamma_gumbel(p: Any, q: Any) -> Any:
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = ((p.concentration - 1) * p.concentration.digamma() - p.concentration.lgamma()
          - p.concentration)
    t2 = beta_scale_prod.log() + p.concentration / beta_scale_prod
    t3 = (ts.exp(loc_scale_ratio) * (1 + beta_scale_prod.reciprocal()).pow(-p.concentration)
          - loc_scale_ratio)
    return t1 + t2 + t3


def _kl_gamma_normal(p: Any, q: Any) -> Any:
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = (0.5 * ts.log(beta_sqr * var_normal * 2 * _math.pi) - p.concentration
          - p.concentration.lgamma())
    t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / beta_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (p.concentration - 1) * p.concentration.digamma() + (t2 - t3 + t4) / var_normal


def _kl_gumbel_normal(p: Any, q: Any) -> Any:
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / _math.sqrt(2 * _math.pi)).log()
    t2 = (_math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


def _kl_laplace_normal(p: Any, q: Any) -> Any:
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * ts.log(2 * scale_sqr_var_ratio / _math.pi)
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


def _kl_normal_gumbel(p: Any, q: Any) -> Any:
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = ts.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - (0.5 * (1 + _math.log(2 * _math.pi)))


def _kl_normal_laplace(p: Any, q: Any) -> Any:
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = ts.log(scale_ratio)
    t2 = _math.sqrt(2 / _math.pi) * p.scale * ts.exp(-0.5 * loc_diff_scale_ratio.pow(2))
    t3 = loc_diff * ts.erf(_math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + _math.log(0.5 * _math.pi)))


def _kl_pareto_exponential(p: Any, q: Any) -> Any:
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 - t2 + t3 - 1)


def _kl_pareto_gamma(p: Any, q: Any) -> Any:
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 + t2 + t3 + t4 - 1)


def _kl_pareto_normal(p: Any, q: Any) -> Any:
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (_math.sqrt(2 * _math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return _inf_where(p.alpha <= 2, t1 - t2 + (t3 + t4) / var_normal - 1)


def _kl_uniform_beta(p: Any, q: Any) -> Any:
    common_term = p.high - p.low
    t1 = ts.log(common_term)
    t2 = ((q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term)
          / common_term)
    t3 = ((q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common_term)
          / common_term)
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    return _inf_where((p.high > q.support.upper_bound) | (p.low < q.support.lower_bound),
                      t3 + t4 - t1 - t2)


def _kl_uniform_continuous_bernoulli(p: Any, q: Any) -> Any:
    result = _neg_entropy_minus_cb_terms(p, q)
    return _inf_where((p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound),
                      result)


def _kl_uniform_exponential(p: Any, q: Any) -> Any:
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _inf_where(p.low < q.support.lower_bound, result)


def _kl_uniform_gamma(p: Any, q: Any) -> Any:
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = ((1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common_term)
          / common_term)
    t4 = q.rate * (p.high + p.low) / 2
    return _inf_where(p.low < q.support.lower_bound, -t1 + t2 + t3 + t4)


def _kl_uniform_gumbel(p: Any, q: Any) -> Any:
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * (ts.exp(-high_loc_diff) - ts.exp(-low_loc_diff))
    return t1 - t2


def _kl_uniform_normal(p: Any, q: Any) -> Any:
    common_term = p.high - p.low
    t1 = (_math.sqrt(_math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


def _kl_uniform_pareto(p: Any, q: Any) -> Any:
    support_uniform = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * support_uniform).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - support_uniform) / support_uniform
    return _inf_where(p.low < q.support.lower_bound, t2 * (q.alpha + 1) - t1)


def _cross_table() -> list:
    """(type_p, type_q, function) for torch's registrations between different families."""
    from . import (bernoulli, beta, binomial, continuous_bernoulli, exponential, gamma, gumbel,
                   laplace, lowrank_multivariate_normal, multivariate_normal, normal, pareto,
                   poisson, uniform)
    Bern, Beta, Bin = bernoulli.Bernoulli, beta.Beta, binomial.Binomial
    CB, Exp, Gam = continuous_bernoulli.ContinuousBernoulli, exponential.Exponential, gamma.Gamma
    Gum, Lap, Nor = gumbel.Gumbel, laplace.Laplace, normal.Normal
    Par, Poi, Uni = pareto.Pareto, poisson.Poisson, uniform.Uniform
    LR, MVN = lowrank_multivariate_normal.LowRankMultivariateNormal, \
        multivariate_normal.MultivariateNormal
    table = [
        (LR, MVN, _kl_lowrank_mvn), (MVN, LR, _kl_mvn_lowrank),
        (Bern, Poi, _kl_bernoulli_poisson),
        (Beta, CB, _neg_entropy_minus_cb_terms), (Beta, Exp, _kl_beta_exponential),
        (Beta, Gam, _kl_beta_gamma), (Beta, Nor, _kl_beta_normal),
        (Beta, Uni, _kl_beta_uniform),
        (CB, Exp, _kl_continuous_bernoulli_exponential),
        (CB, Nor, _kl_continuous_bernoulli_normal), (CB, Uni, _kl_continuous_bernoulli_uniform),
        (Exp, Gam, _kl_exponential_gamma), (Exp, Gum, _kl_exponential_gumbel),
        (Exp, Nor, _kl_exponential_normal),
        (Gam, Exp, _kl_gamma_exponential), (Gam, Gum, _kl_gamma_gumbel),
        (Gam, Nor, _kl_gamma_normal),
        (Gum, Nor, _kl_gumbel_normal), (Lap, Nor, _kl_laplace_normal),
        (Nor, Gum, _kl_normal_gumbel), (Nor, Lap, _kl_normal_laplace),
        (Par, Exp, _kl_pareto_exponential), (Par, Gam, _kl_pareto_gamma),
        (Par, Nor, _kl_pareto_normal),
        (Uni, Beta, _kl_uniform_beta), (Uni, CB, _kl_uniform_continuous_bernoulli),
        (Uni, Exp, _kl_uniform_exponential), (Uni, Gam, _kl_uniform_gamma),
        (Uni, Gum, _kl_uniform_gumbel), (Uni, Nor, _kl_uniform_normal),
        (Uni, Par, _kl_uniform_pareto),
    ]
    infinite = {Beta: [Par], CB: [Par], Exp: [Beta, CB, Par, Uni], Gam: [Beta, CB, Par, Uni],
                Gum: [Beta, CB, Exp, Gam, Par, Uni], Lap: [Beta, CB, Exp, Gam, Par, Uni],
                Nor: [Beta, CB, Exp, Gam, Par, Uni], Par: [Beta, CB, Uni], Poi: [Bern, Bin]}
    table += [(tp, tq, _kl_infinity) for tp, qs in infinite.items() for tq in qs]
    return table


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
    from . import binomial, cauchy, continuous_bernoulli, lowrank_multivariate_normal, pareto
    table += [
        (binomial.Binomial, _kl_binomial_binomial),
        (cauchy.Cauchy, _kl_cauchy_cauchy),
        (continuous_bernoulli.ContinuousBernoulli, _kl_continuous_bernoulli_continuous_bernoulli),
        (pareto.Pareto, _kl_pareto_pareto),
        (lowrank_multivariate_normal.LowRankMultivariateNormal, _kl_lowrank_lowrank),
    ]
    for cls, fun in table:
        register_kl(cls, cls)(fun)
    for type_p, type_q, fun in _cross_table():
        register_kl(type_p, type_q)(fun)
    register_kl(exp_family.ExponentialFamily, exp_family.ExponentialFamily)(
        exp_family._kl_expfamily_expfamily)

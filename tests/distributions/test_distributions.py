"""tessera.distributions against torch.distributions: log_prob, entropy, moments, cdf/icdf,
enumerate_support, shapes (batch shapes, broadcast parameters, sample_shape, expand), in
float32 and float64; gradients of log_prob / entropy in float64; validation errors."""
from __future__ import annotations

import zlib
from typing import Any, Callable, Dict, List

import numpy as np
import pytest
import torch

import tessera as ts
from harness import compare_grads

TD = torch.distributions
D = ts.distributions


def _pos(rng: np.random.Generator, shape: tuple, lo: float = 0.5, hi: float = 3.0) -> np.ndarray:
    return rng.uniform(lo, hi, size=shape)


def _simplex(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    p = rng.uniform(0.1, 1.0, size=shape)
    return p / p.sum(-1, keepdims=True)


def _onehot(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    k = shape[-1]
    return np.eye(k)[rng.integers(0, k, size=shape[:-1])]


def _spd(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    a = rng.normal(size=shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _tril(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    a = np.tril(rng.normal(size=shape))
    idx = np.arange(shape[-1])
    a[..., idx, idx] = rng.uniform(0.5, 2.0, size=shape[:-1])
    return a


def _corr_cholesky(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    c = _spd(rng, shape)
    d = np.sqrt(np.diagonal(c, axis1=-2, axis2=-1))
    return np.linalg.cholesky(c / d[..., :, None] / d[..., None, :])


K = 4  # categories / event size
# parameters and values of the laws on (0, 1) with two concentrations (Beta, Kumaraswamy)
_UNIT_TWO_CONCENTRATIONS = dict(
    params=lambda r, b: [_pos(r, b, 0.3, 4.0), _pos(r, b, 0.3, 4.0)],
    value=lambda r, s: r.uniform(0.05, 0.95, size=s), event=())


# name -> (parameter arrays for a batch shape, the constructor on a distributions module,
#          a value array of a given full shape, event shape, the methods torch has)
SPECS: Dict[str, Dict[str, Any]] = {
    "Normal": dict(
        params=lambda r, b: [r.normal(size=b), _pos(r, b)],
        make=lambda M, loc, scale: M.Normal(loc, scale),
        value=lambda r, s: r.normal(size=s), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "stddev", "cdf", "icdf"]),
    "Bernoulli_probs": dict(
        params=lambda r, b: [r.uniform(0.05, 0.95, size=b)],
        make=lambda M, p: M.Bernoulli(probs=p),
        value=lambda r, s: r.integers(0, 2, size=s).astype(float), event=(),
        methods=["log_prob", "entropy", "mean", "variance", "enumerate_support"]),
    "Bernoulli_logits": dict(
        params=lambda r, b: [r.normal(size=b) * 2],
        make=lambda M, lg: M.Bernoulli(logits=lg),
        value=lambda r, s: r.integers(0, 2, size=s).astype(float), event=(),
        methods=["log_prob", "entropy", "mean", "variance"]),
    "Categorical_probs": dict(
        params=lambda r, b: [r.uniform(0.1, 1.0, size=b + (K,))],
        make=lambda M, p: M.Categorical(probs=p),
        value=lambda r, s: r.integers(0, K, size=s), event=(), int_value=True,
        methods=["log_prob", "entropy", "mode", "enumerate_support"]),
    "Categorical_logits": dict(
        params=lambda r, b: [r.normal(size=b + (K,))],
        make=lambda M, lg: M.Categorical(logits=lg),
        value=lambda r, s: r.integers(0, K, size=s), event=(), int_value=True,
        methods=["log_prob", "entropy"]),
    "OneHotCategorical": dict(
        params=lambda r, b: [r.normal(size=b + (K,))],
        make=lambda M, lg: M.OneHotCategorical(logits=lg),
        value=lambda r, s: _onehot(r, s), event=(K,),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "enumerate_support"]),
    "Uniform": dict(
        params=lambda r, b: [-1 - np.abs(r.normal(size=b)), 1 + np.abs(r.normal(size=b))],
        make=lambda M, lo, hi: M.Uniform(lo, hi),
        value=lambda r, s: r.uniform(-0.9, 0.9, size=s), event=(),
        methods=["log_prob", "entropy", "mean", "variance", "stddev", "cdf", "icdf"]),
    "Uniform_unit": dict(  # inside (0, 1): kl against the laws on [0, 1] or [0, inf)
        params=lambda r, b: [r.uniform(0.05, 0.3, size=b), r.uniform(0.6, 0.95, size=b)],
        make=lambda M, lo, hi: M.Uniform(lo, hi),
        value=lambda r, s: r.uniform(0.35, 0.55, size=s), event=(),
        methods=["log_prob", "entropy", "mean", "cdf", "icdf"]),
    "Exponential": dict(
        params=lambda r, b: [_pos(r, b)],
        make=lambda M, rate: M.Exponential(rate),
        value=lambda r, s: _pos(r, s, 0.0, 3.0), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "stddev", "cdf", "icdf"]),
    "Laplace": dict(
        params=lambda r, b: [r.normal(size=b), _pos(r, b)],
        make=lambda M, loc, scale: M.Laplace(loc, scale),
        value=lambda r, s: r.normal(size=s), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "stddev", "cdf", "icdf"]),
    "Gamma": dict(
        params=lambda r, b: [_pos(r, b, 0.3, 4.0), _pos(r, b)],
        make=lambda M, c, rate: M.Gamma(c, rate),
        value=lambda r, s: _pos(r, s, 0.1, 4.0), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "stddev", "cdf"]),
    "Beta": dict(
        _UNIT_TWO_CONCENTRATIONS, make=lambda M, a, b: M.Beta(a, b),
        methods=["log_prob", "entropy", "mean", "variance", "stddev"]),
    "Dirichlet": dict(
        params=lambda r, b: [_pos(r, b + (K,), 0.3, 4.0)],
        make=lambda M, c: M.Dirichlet(c),
        value=lambda r, s: _simplex(r, s), event=(K,),
        methods=["log_prob", "entropy", "mean", "mode", "variance"]),
    "Poisson": dict(
        params=lambda r, b: [_pos(r, b, 0.2, 8.0)],
        make=lambda M, rate: M.Poisson(rate),
        value=lambda r, s: r.integers(0, 10, size=s).astype(float), event=(),
        methods=["log_prob", "mean", "mode", "variance"]),
    "Binomial": dict(
        params=lambda r, b: [r.uniform(0.05, 0.95, size=b)],
        make=lambda M, p: M.Binomial(7, probs=p),
        value=lambda r, s: r.integers(0, 8, size=s).astype(float), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "enumerate_support"]),
    "Binomial_logits": dict(
        params=lambda r, b: [r.normal(size=b) * 2, r.integers(3, 9, size=b).astype(float)],
        make=lambda M, lg, n: M.Binomial(n, logits=lg),
        value=lambda r, s: r.integers(0, 3, size=s).astype(float), event=(),
        methods=["log_prob", "mean", "variance"]),
    "Multinomial": dict(
        params=lambda r, b: [r.uniform(0.1, 1.0, size=b + (K,))],
        make=lambda M, p: M.Multinomial(6, probs=p),
        value=lambda r, s: np.apply_along_axis(
            lambda row: np.bincount(r.integers(0, K, size=6), minlength=K), -1,
            np.zeros(s)).astype(float), event=(K,),
        methods=["log_prob", "entropy", "mean", "variance"]),
    "MultivariateNormal_cov": dict(
        params=lambda r, b: [r.normal(size=b + (3,)), _spd(r, b + (3, 3))],
        make=lambda M, loc, cov: M.MultivariateNormal(loc, covariance_matrix=cov),
        value=lambda r, s: r.normal(size=s), event=(3,),
        methods=["log_prob", "entropy", "mean", "mode", "variance"]),
    "MultivariateNormal_tril": dict(
        params=lambda r, b: [r.normal(size=b + (3,)), _tril(r, b + (3, 3))],
        make=lambda M, loc, L: M.MultivariateNormal(loc, scale_tril=L),
        value=lambda r, s: r.normal(size=s), event=(3,),
        methods=["log_prob", "entropy", "variance"]),
    "MultivariateNormal_prec": dict(
        params=lambda r, b: [r.normal(size=b + (3,)), _spd(r, b + (3, 3))],
        make=lambda M, loc, P: M.MultivariateNormal(loc, precision_matrix=P),
        value=lambda r, s: r.normal(size=s), event=(3,),
        methods=["log_prob", "entropy", "variance"]),
    "Independent_Normal": dict(
        params=lambda r, b: [r.normal(size=b + (3,)), _pos(r, b + (3,))],
        make=lambda M, loc, scale: M.Independent(M.Normal(loc, scale), 1),
        value=lambda r, s: r.normal(size=s), event=(3,),
        methods=["log_prob", "entropy", "mean", "variance"]),
    "LogNormal": dict(
        params=lambda r, b: [r.normal(size=b) * 0.5, _pos(r, b, 0.3, 1.0)],
        make=lambda M, loc, scale: M.LogNormal(loc, scale),
        value=lambda r, s: _pos(r, s, 0.1, 4.0), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "cdf", "icdf"]),
    "Transformed_sigmoid_affine": dict(
        params=lambda r, b: [r.normal(size=b), _pos(r, b)],
        make=lambda M, loc, scale: M.TransformedDistribution(
            M.Normal(loc, scale), [M.transforms.AffineTransform(0.5, 2.0),
                                   M.transforms.SigmoidTransform()]),
        value=lambda r, s: r.uniform(0.05, 0.95, size=s), event=(),
        methods=["log_prob", "cdf", "icdf"]),
    "Transformed_tanh": dict(
        params=lambda r, b: [r.normal(size=b), _pos(r, b, 0.5, 1.5)],
        make=lambda M, loc, scale: M.TransformedDistribution(
            M.Normal(loc, scale), M.transforms.TanhTransform()),
        value=lambda r, s: r.uniform(-0.9, 0.9, size=s), event=(),
        methods=["log_prob", "cdf", "icdf"]),
    "Cauchy": dict(
        params=lambda r, b: [r.normal(size=b), _pos(r, b)],
        make=lambda M, loc, scale: M.Cauchy(loc, scale),
        value=lambda r, s: r.normal(size=s) * 3, event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "cdf", "icdf"]),
    "Gumbel": dict(  # values where the CDF stays above float32's tiny (torch checks it)
        params=lambda r, b: [r.normal(size=b) * 0.5, _pos(r, b, 1.0, 3.0)],
        make=lambda M, loc, scale: M.Gumbel(loc, scale),
        value=lambda r, s: r.uniform(-1.0, 3.0, size=s), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "stddev", "cdf", "icdf"]),
    "HalfNormal": dict(
        params=lambda r, b: [_pos(r, b)],
        make=lambda M, scale: M.HalfNormal(scale),
        value=lambda r, s: _pos(r, s, 0.0, 3.0), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "cdf", "icdf"]),
    "Geometric": dict(
        params=lambda r, b: [r.uniform(0.05, 0.95, size=b)],
        make=lambda M, p: M.Geometric(p),
        value=lambda r, s: r.integers(0, 6, size=s).astype(float), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance"]),
    "Geometric_logits": dict(
        params=lambda r, b: [r.normal(size=b)],
        make=lambda M, lg: M.Geometric(logits=lg),
        value=lambda r, s: r.integers(0, 6, size=s).astype(float), event=(),
        methods=["log_prob", "entropy", "mean", "variance"]),
    "Chi2": dict(
        params=lambda r, b: [_pos(r, b, 0.5, 6.0)],
        make=lambda M, df: M.Chi2(df),
        value=lambda r, s: _pos(r, s, 0.1, 6.0), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "cdf"]),
    "StudentT": dict(
        params=lambda r, b: [_pos(r, b, 0.5, 6.0), r.normal(size=b), _pos(r, b)],
        make=lambda M, df, loc, scale: M.StudentT(df, loc, scale),
        value=lambda r, s: r.normal(size=s) * 2, event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance"]),
    "RelaxedBernoulli": dict(
        params=lambda r, b: [r.uniform(0.05, 0.95, size=b), _pos(r, b, 0.2, 2.0)],
        make=lambda M, p, t: M.RelaxedBernoulli(t, probs=p),
        value=lambda r, s: r.uniform(0.05, 0.95, size=s), event=(),
        methods=["log_prob"]),
    "Weibull": dict(
        params=lambda r, b: [_pos(r, b), _pos(r, b, 0.5, 4.0)],
        make=lambda M, scale, k: M.Weibull(scale, k),
        value=lambda r, s: _pos(r, s, 0.1, 4.0), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "cdf", "icdf"]),
    "Pareto": dict(
        params=lambda r, b: [_pos(r, b, 0.1, 0.5), _pos(r, b, 0.5, 4.0)],
        make=lambda M, scale, alpha: M.Pareto(scale, alpha),
        value=lambda r, s: _pos(r, s, 0.6, 5.0), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "cdf", "icdf"]),
    "Kumaraswamy": dict(
        _UNIT_TWO_CONCENTRATIONS, make=lambda M, a, b: M.Kumaraswamy(a, b),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "cdf", "icdf"]),
    "NegativeBinomial": dict(
        params=lambda r, b: [_pos(r, b, 0.5, 6.0), r.uniform(0.05, 0.9, size=b)],
        make=lambda M, n, p: M.NegativeBinomial(n, probs=p),
        value=lambda r, s: r.integers(0, 10, size=s).astype(float), event=(),
        methods=["log_prob", "mean", "mode", "variance"]),
    "NegativeBinomial_logits": dict(
        params=lambda r, b: [r.normal(size=b), r.integers(1, 6, size=b).astype(float)],
        make=lambda M, lg, n: M.NegativeBinomial(n, logits=lg),
        value=lambda r, s: r.integers(0, 10, size=s).astype(float), event=(),
        methods=["log_prob", "mean", "variance"]),
    "ContinuousBernoulli": dict(  # one probs in the Taylor region around 1/2
        params=lambda r, b: [np.where(r.uniform(size=b) < 0.3, 0.4995,
                                      r.uniform(0.05, 0.95, size=b))],
        make=lambda M, p: M.ContinuousBernoulli(probs=p),
        value=lambda r, s: r.uniform(0.0, 1.0, size=s), event=(),
        methods=["log_prob", "entropy", "mean", "variance", "stddev", "cdf", "icdf"]),
    "ContinuousBernoulli_logits": dict(
        params=lambda r, b: [r.normal(size=b) * 2],
        make=lambda M, lg: M.ContinuousBernoulli(logits=lg),
        value=lambda r, s: r.uniform(0.0, 1.0, size=s), event=(),
        methods=["log_prob", "entropy", "mean", "variance", "cdf", "icdf"]),
    "VonMises": dict(  # concentrations on both sides of the Bessel approximations' 3.75
        params=lambda r, b: [r.normal(size=b) * 3, _pos(r, b, 0.2, 8.0)],
        make=lambda M, loc, k: M.VonMises(loc, k),
        value=lambda r, s: r.uniform(-4.0, 4.0, size=s), event=(),
        methods=["log_prob", "mean", "mode", "variance"]),
    "FisherSnedecor": dict(  # df on both sides of the moments' thresholds (2, 4)
        params=lambda r, b: [_pos(r, b, 0.5, 8.0), _pos(r, b, 1.0, 9.0)],
        make=lambda M, d1, d2: M.FisherSnedecor(d1, d2),
        value=lambda r, s: _pos(r, s, 0.1, 5.0), event=(),
        methods=["log_prob", "mean", "mode", "variance"]),
    "LogisticNormal": dict(
        params=lambda r, b: [r.normal(size=b + (K - 1,)), _pos(r, b + (K - 1,), 0.3, 1.5)],
        make=lambda M, loc, scale: M.LogisticNormal(loc, scale),
        value=lambda r, s: _simplex(r, s), event=(K,),
        methods=["log_prob"]),
    "LowRankMultivariateNormal": dict(
        params=lambda r, b: [r.normal(size=b + (3,)), r.normal(size=b + (3, 2)),
                             _pos(r, b + (3,))],
        make=lambda M, loc, W, d: M.LowRankMultivariateNormal(loc, W, d),
        value=lambda r, s: r.normal(size=s), event=(3,),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "scale_tril",
                 "covariance_matrix", "precision_matrix"]),
    "LKJCholesky": dict(
        params=lambda r, b: [_pos(r, b, 0.3, 4.0)],
        make=lambda M, c: M.LKJCholesky(3, c),
        value=lambda r, s: _corr_cholesky(r, s), event=(3, 3),
        methods=["log_prob"]),
    "Wishart_cov": dict(
        params=lambda r, b: [_pos(r, b, 3.0, 8.0), _spd(r, b + (3, 3))],
        make=lambda M, df, cov: M.Wishart(df, covariance_matrix=cov),
        value=lambda r, s: _spd(r, s), event=(3, 3),
        methods=["log_prob", "entropy", "mean", "mode", "variance"]),
    "Wishart_tril": dict(  # df in (dim - 1, dim + 1]: NaN modes
        params=lambda r, b: [_pos(r, b, 2.5, 4.0), _tril(r, b + (3, 3))],
        make=lambda M, df, L: M.Wishart(df, scale_tril=L),
        value=lambda r, s: _spd(r, s), event=(3, 3),
        methods=["log_prob", "entropy", "mean", "mode", "variance"]),
    "Wishart_prec": dict(
        params=lambda r, b: [_pos(r, b, 3.0, 8.0), _spd(r, b + (3, 3))],
        make=lambda M, df, P: M.Wishart(df, precision_matrix=P),
        value=lambda r, s: _spd(r, s), event=(3, 3),
        methods=["log_prob", "entropy", "mean", "variance"]),
    "HalfCauchy": dict(
        params=lambda r, b: [_pos(r, b)],
        make=lambda M, scale: M.HalfCauchy(scale),
        value=lambda r, s: _pos(r, s, 0.0, 5.0), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "cdf", "icdf"]),
    "InverseGamma": dict(  # concentrations on both sides of the moments' thresholds
        params=lambda r, b: [_pos(r, b, 0.5, 5.0), _pos(r, b)],
        make=lambda M, c, rate: M.InverseGamma(c, rate),
        value=lambda r, s: _pos(r, s, 0.1, 4.0), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "cdf"]),
    "GeneralizedPareto": dict(  # concentrations of both signs, 0 included; torch's log_prob
        # compares concentration with a float32 zero, so it works in float32 only
        float32_only=True,
        params=lambda r, b: [-np.abs(r.normal(size=b)) * 0.2, _pos(r, b, 1.0, 3.0),
                             np.where(r.uniform(size=b) < 0.3, 0.0,
                                      r.uniform(-0.2, 0.8, size=b))],
        make=lambda M, loc, scale, c: M.GeneralizedPareto(loc, scale, c),
        value=lambda r, s: _pos(r, s, 0.3, 2.0), event=(),
        methods=["log_prob", "entropy", "mean", "mode", "variance", "cdf", "icdf"]),
    "OneHotCategoricalStraightThrough": dict(
        params=lambda r, b: [r.normal(size=b + (K,))],
        make=lambda M, lg: M.OneHotCategoricalStraightThrough(logits=lg),
        value=lambda r, s: _onehot(r, s), event=(K,),
        methods=["log_prob", "entropy", "mean", "mode", "variance"]),
    "MixtureSameFamily_Normal": dict(
        params=lambda r, b: [r.normal(size=b + (K,)), r.normal(size=b + (K,)),
                             _pos(r, b + (K,))],
        make=lambda M, lg, loc, scale: M.MixtureSameFamily(M.Categorical(logits=lg),
                                                            M.Normal(loc, scale)),
        value=lambda r, s: r.normal(size=s) * 2, event=(),
        methods=["log_prob", "mean", "variance", "cdf"]),
    "MixtureSameFamily_Independent": dict(  # a batch of 2-d Gaussian mixtures (MDN heads)
        params=lambda r, b: [r.uniform(0.1, 1.0, size=b + (K,)), r.normal(size=b + (K, 2)),
                             _pos(r, b + (K, 2))],
        make=lambda M, p, loc, scale: M.MixtureSameFamily(
            M.Categorical(probs=p), M.Independent(M.Normal(loc, scale), 1)),
        value=lambda r, s: r.normal(size=s) * 2, event=(2,),
        methods=["log_prob", "mean", "variance"]),
    "RelaxedOneHotCategorical": dict(
        params=lambda r, b: [r.normal(size=b + (K,)), _pos(r, b + (1,), 0.2, 2.0)],
        make=lambda M, lg, t: M.RelaxedOneHotCategorical(t.reshape(-1)[0], logits=lg),
        value=lambda r, s: _simplex(r, s), event=(K,),
        methods=["log_prob"]),
}

BATCHES = [(), (3,), (2, 3)]
UNIT_METHODS = {"icdf"}


def _call(dist: Any, method: str, value: Any) -> Any:
    attr = getattr(dist, method)
    if method in ("log_prob", "cdf", "icdf"):
        return attr(value)
    if method == "enumerate_support":
        return attr()
    return attr() if callable(attr) else attr


def _lib_tensor(M: Any, a: np.ndarray, dtype: str) -> Any:
    if M is torch:
        return torch.tensor(a, dtype=getattr(torch, dtype))
    return ts.asarray(np.array(a, order="C")).astype(getattr(ts, dtype))


def _value(spec: Dict[str, Any], rng: np.random.Generator, method: str, shape: tuple) -> Any:
    if method in UNIT_METHODS:
        return rng.uniform(0.05, 0.95, size=shape)
    return spec["value"](rng, shape)


def _both(spec: Dict[str, Any], params: List[np.ndarray], method: str, value: np.ndarray,
          dtype: str) -> tuple:
    out = []
    for M, lib in ((TD, torch), (D, ts)):
        ps = [_lib_tensor(lib, p, dtype) for p in params]
        v = (_lib_tensor(lib, value, "int64") if spec.get("int_value")
             else _lib_tensor(lib, value, dtype))
        out.append(_call(spec["make"](M, *ps), method, v))
    return out[1], out[0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("name", sorted(SPECS))
def test_values_match_torch(name: str, batch: tuple, dtype: str) -> None:
    spec = SPECS[name]
    if spec.get("float32_only") and dtype == "float64":
        pytest.skip("torch raises in float64")
    rng = np.random.default_rng(zlib.crc32(f"{name}{batch}".encode()))
    params = spec["params"](rng, batch)
    tol = 1e-10 if dtype == "float64" else 2e-5
    if name == "Multinomial":  # torch computes its lgamma(n + 1) term in float32
        tol = max(tol, 1e-7)
    for method in spec["methods"]:
        for sample_shape in [(), (5,)]:
            value = _value(spec, rng, method, sample_shape + batch + spec["event"])
            got, want = _both(spec, params, method, value, dtype)
            assert tuple(got.shape) == tuple(want.shape), (method, got.shape, want.shape)
            assert got.dtype.name == str(want.dtype).replace("torch.", ""), (method, got.dtype)
            np.testing.assert_allclose(got.numpy().astype(np.float64),
                                       want.numpy().astype(np.float64), rtol=tol, atol=tol,
                                       equal_nan=True, err_msg=f"{name}.{method}")


@pytest.mark.parametrize("name", sorted(SPECS))
def test_shapes_and_broadcasting_match_torch(name: str) -> None:
    spec = SPECS[name]
    rng = np.random.default_rng(1)
    params = spec["params"](rng, (2, 3))
    # broadcast the first parameter along the batch (shape (1, 3) / (3,) vs (2, 3))
    params[0] = params[0][:1]
    dtype = "float32" if spec.get("float32_only") else "float64"
    for M, lib in ((TD, torch), (D, ts)):
        ps = [_lib_tensor(lib, p, dtype) for p in params]
        try:
            d = spec["make"](M, *ps)
        except Exception as e:  # noqa: BLE001 - both must raise alike
            if lib is torch:
                with pytest.raises(type(e)):
                    spec["make"](D, *[_lib_tensor(ts, p, dtype) for p in params])
                return
            raise
        if lib is torch:
            want = (tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample,
                    d.has_enumerate_support, tuple(d.sample((4, 2)).shape),
                    tuple(d.expand((5,) + tuple(d.batch_shape)).batch_shape))
        else:
            got = (tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample,
                   d.has_enumerate_support, tuple(d.sample((4, 2)).shape),
                   tuple(d.expand((5,) + tuple(d.batch_shape)).batch_shape))
            assert isinstance(d.batch_shape, ts.Size)
    assert got == want


@pytest.mark.parametrize("name", sorted(SPECS))
def test_expand_gives_same_values(name: str) -> None:
    spec = SPECS[name]
    rng = np.random.default_rng(2)
    params = spec["params"](rng, (3,))
    d = spec["make"](D, *[_lib_tensor(ts, p, "float64") for p in params])
    e = d.expand((2, 3))
    value = _lib_tensor(ts, spec["value"](rng, (2, 3) + spec["event"]),
                        "int64" if spec.get("int_value") else "float64")
    np.testing.assert_allclose(e.log_prob(value).numpy(), d.log_prob(value).numpy(), rtol=1e-12)
    assert tuple(e.sample().shape) == (2, 3) + spec["event"]


GRAD_SPECS = [n for n in sorted(SPECS) if n not in ("Multinomial",)]


@pytest.mark.parametrize("name", GRAD_SPECS)
def test_log_prob_and_entropy_gradients_match_torch(name: str) -> None:
    spec = SPECS[name]
    rng = np.random.default_rng(3)
    params = spec["params"](rng, (2, 3))
    value = spec["value"](rng, (2, 3) + spec["event"])
    no_cdf_grad = ("Gamma", "Chi2", "InverseGamma")  # torch: no d/da of the incomplete gamma
    methods = [m for m in ("log_prob", "entropy", "mean", "variance", "cdf")
               if m in spec["methods"] and not (m == "cdf" and name in no_cdf_grad)]
    if name.startswith("Binomial_logits"):  # gradients w.r.t. the logits only
        params, n = params[:1], params[1]
        spec = dict(spec, make=lambda M, lg, _n=n: M.Binomial(
            (torch.tensor(_n) if M is TD else ts.asarray(_n)), logits=lg))

    def run(M: Any, lib: Any, *ps: Any) -> Any:
        v = (_lib_tensor(lib, value, "int64") if spec.get("int_value")
             else _lib_tensor(lib, value, "float32" if spec.get("float32_only") else "float64"))
        d = spec["make"](M, *ps)
        return tuple(_call(d, m, v) for m in methods)

    # all methods at once: every parameter reaches some output (log_prob's at least)
    f32 = spec.get("float32_only", False)
    if f32:
        params = [p.astype(np.float32) for p in params]
    compare_grads(lambda *ps: run(D, ts, *ps), lambda *ps: run(TD, torch, *ps), params,
                  rtol=2e-4 if f32 else 1e-7, dtype="float32" if f32 else "float64")


# ---- kl_divergence
KL_PAIRS = ["Normal", "Bernoulli_probs", "Bernoulli_logits", "Categorical_probs",
            "Categorical_logits", "OneHotCategorical", "Uniform", "Exponential", "Laplace",
            "Gamma", "Beta", "Dirichlet", "Poisson", "MultivariateNormal_cov",
            "MultivariateNormal_tril", "Independent_Normal", "LogNormal", "Gumbel", "Geometric",
            "Geometric_logits", "HalfNormal"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", KL_PAIRS)
def test_kl_divergence_matches_torch(name: str, dtype: str) -> None:
    spec = SPECS[name]
    rng = np.random.default_rng(4)
    p_params = spec["params"](rng, (2, 3))
    # q broadcast against p's batch (torch's Bernoulli KL cannot broadcast: same shape there)
    q_params = spec["params"](rng, (2, 3) if name.startswith("Bernoulli") else (3,))
    if name == "Uniform":  # q covering p, and one q not covering it (inf)
        q_params = [p_params[0][0] - 0.5, p_params[1][0] + 0.5]
        q_params[0][1] = p_params[0][:, 1].max() + 0.1

    def kl(M: Any, lib: Any, *ps: Any) -> Any:
        n = len(p_params)
        return M.kl_divergence(spec["make"](M, *ps[:n]), spec["make"](M, *ps[n:]))

    got = kl(D, ts, *[_lib_tensor(ts, p, dtype) for p in p_params + q_params])
    want = kl(TD, torch, *[_lib_tensor(torch, p, dtype) for p in p_params + q_params])
    tol = 1e-10 if dtype == "float64" else 2e-5
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.numpy().astype(np.float64),
                               rtol=tol, atol=tol)
    if name != "Uniform":
        compare_grads(lambda *ps: kl(D, ts, *ps), lambda *ps: kl(TD, torch, *ps),
                      p_params + q_params, rtol=1e-7)


# the SPECS entry each family's kl is tested with
KL_FAMILY_SPEC = {
    "Bernoulli": "Bernoulli_probs", "Beta": "Beta", "Binomial": "Binomial",
    "ContinuousBernoulli": "ContinuousBernoulli", "Exponential": "Exponential",
    "Gamma": "Gamma", "Gumbel": "Gumbel", "Laplace": "Laplace",
    "LowRankMultivariateNormal": "LowRankMultivariateNormal",
    "MultivariateNormal": "MultivariateNormal_tril", "Normal": "Normal", "Pareto": "Pareto",
    "Poisson": "Poisson", "Uniform": "Uniform_unit"}
CROSS_KL = sorted((a.__name__, b.__name__) for a, b in TD.kl._KL_REGISTRY
                  if a is not b and a is not TD.ExponentialFamily)
SAME_KL_NEW = ["Binomial", "Cauchy", "ContinuousBernoulli", "LowRankMultivariateNormal", "Pareto"]


def _kl_both(p_name: str, q_name: str, dtype: str) -> tuple:
    rng = np.random.default_rng(zlib.crc32(f"{p_name}{q_name}".encode()))
    ps, qs = SPECS[p_name], SPECS[q_name]
    p_params, q_params = ps["params"](rng, (2, 3)), qs["params"](rng, (2, 3))
    n = len(p_params)

    def kl(M: Any, *xs: Any) -> Any:
        return M.kl_divergence(ps["make"](M, *xs[:n]), qs["make"](M, *xs[n:]))

    got = kl(D, *[_lib_tensor(ts, a, dtype) for a in p_params + q_params])
    want = kl(TD, *[_lib_tensor(torch, a, dtype) for a in p_params + q_params])
    return got, want, kl, p_params + q_params


@pytest.mark.parametrize("pair", CROSS_KL + [(n, n) for n in SAME_KL_NEW], ids=str)
def test_kl_pairs_match_torch(pair: tuple) -> None:
    p_name, q_name = (KL_FAMILY_SPEC.get(n, n) for n in pair)
    for dtype in ("float32", "float64"):
        got, want, kl, arrays = _kl_both(p_name, q_name, dtype)
        tol = 1e-10 if dtype == "float64" else 2e-5
        assert tuple(got.shape) == tuple(want.shape)
        assert got.dtype.name == str(want.dtype).replace("torch.", "")
        np.testing.assert_allclose(got.numpy().astype(np.float64),
                                   want.detach().numpy().astype(np.float64), rtol=tol, atol=tol)
    if np.isfinite(want.detach().numpy()).all() and pair[0] not in ("Binomial", "Bernoulli"):
        compare_grads(lambda *xs: kl(D, *xs), lambda *xs: kl(TD, *xs), arrays, rtol=1e-7)


def test_kl_dispatch_register_and_missing() -> None:
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(ts.zeros(2), ts.ones(2)), D.Normal(ts.ones(2), ts.ones(2))
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), [0.5, 0.5])

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p: Any, q: Any) -> Any:
        return ts.zeros(p.batch_shape)

    try:
        assert float(D.kl_divergence(p, q).sum()) == 0
        assert float(D.kl_divergence(q, p).sum()) == 1.0  # the (Normal, Normal) entry
    finally:
        from tessera.distributions import kl as kl_mod
        del kl_mod._KL_REGISTRY[MyNormal, D.Normal]
        kl_mod._KL_MEMOIZE.clear()
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Poisson(ts.tensor(1.0)))
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


# ---- validation
@pytest.fixture(autouse=True)
def _validation_on():
    """Both libraries validate by default; torch's own `torch.cond` (run by other test files in
    the same process) turns torch's default off as a side effect, so pin it for each test."""
    before = TD.Distribution._validate_args
    TD.Distribution.set_default_validate_args(True)
    yield
    TD.Distribution.set_default_validate_args(before)


def _errors_alike(f: Callable[[Any, Any], Any]) -> None:
    """f(distributions module, tensor library) raises the same class in torch and tessera,
    with a message of the same form."""
    with pytest.raises(Exception) as want:
        f(TD, torch)
    with pytest.raises(Exception) as got:
        f(D, ts)
    assert isinstance(got.value, type(want.value)), (want.value, got.value)
    w, g = str(want.value), str(got.value).replace("tessera", "torch")
    assert g.split("(")[0] == w.split("(")[0], (w, g)
    assert g.split(":")[0] == w.split(":")[0], (w, g)


@pytest.mark.parametrize("case", [
    lambda M, L: M.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    lambda M, L: M.Normal(0.0, 1.0).log_prob(1.0),
    lambda M, L: M.Normal(L.zeros(3), 1.0).log_prob(L.zeros(2)),
    lambda M, L: M.Uniform(1.0, 0.0),
    lambda M, L: M.Uniform(0.0, 1.0).log_prob(L.tensor(2.0)),
    lambda M, L: M.Categorical(),
    lambda M, L: M.Categorical(L.tensor([0.5, 0.5]), L.tensor([0.0, 0.0])),
    lambda M, L: M.Categorical(L.tensor([0.5, 0.6])).log_prob(L.tensor(3)),
    lambda M, L: M.Categorical(L.tensor([-0.5, 0.6])),
    lambda M, L: M.Bernoulli(L.tensor(0.5)).log_prob(L.tensor(0.5)),
    lambda M, L: M.Bernoulli(L.tensor(1.5)),
    lambda M, L: M.Gamma(1.0, 0.0),
    lambda M, L: M.Gamma(L.tensor(1.0), L.tensor(1.0)).log_prob(L.tensor(-1.0)),
    lambda M, L: M.Beta(L.tensor(0.5), L.tensor(1.0)).log_prob(L.tensor(1.5)),
    lambda M, L: M.Dirichlet(L.tensor([1.0, -1.0])),
    lambda M, L: M.Dirichlet(L.tensor([1.0, 1.0])).log_prob(L.tensor([0.3, 0.3])),
    lambda M, L: M.Poisson(L.tensor(-1.0)),
    lambda M, L: M.Poisson(L.tensor(2.0)).log_prob(L.tensor(1.5)),
    lambda M, L: M.Binomial(3, L.tensor(0.5)).log_prob(L.tensor(4.0)),
    lambda M, L: M.Exponential(L.tensor([1.0, 0.0])),
    lambda M, L: M.Laplace(L.tensor(0.0), L.tensor(-1.0)),
    lambda M, L: M.MultivariateNormal(L.zeros(2)),
    lambda M, L: M.MultivariateNormal(L.zeros(2), L.eye(2), scale_tril=L.eye(2)),
    lambda M, L: M.MultivariateNormal(L.zeros(2), L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda M, L: M.MultivariateNormal(L.zeros(2), scale_tril=L.tensor([[1.0, 1.0], [0.0, 1.0]])),
    lambda M, L: M.Independent(M.Normal(0.0, 1.0), 1),
    lambda M, L: M.OneHotCategorical(logits=L.zeros(3)).log_prob(L.tensor([1.0, 1.0, 0.0])),
    lambda M, L: M.LogNormal(L.tensor(0.0), L.tensor(1.0)).log_prob(L.tensor(-1.0)),
    lambda M, L: M.Geometric(L.tensor(0.0)),
    lambda M, L: M.Geometric(L.tensor(0.5)).log_prob(L.tensor(-1.0)),
    lambda M, L: M.StudentT(L.tensor(-1.0)),
    lambda M, L: M.Chi2(L.tensor([1.0, -1.0])),
    lambda M, L: M.Cauchy(L.tensor(0.0), L.tensor(0.0)),
    lambda M, L: M.Gumbel(L.tensor(0.0), L.tensor(-1.0)),
    lambda M, L: M.HalfNormal(L.tensor(1.0)).log_prob(L.tensor(-1.0)),
    lambda M, L: M.RelaxedBernoulli(L.tensor(0.5), probs=L.tensor(0.3)).log_prob(L.tensor(1.5)),
    lambda M, L: M.RelaxedOneHotCategorical(L.tensor(0.5), L.tensor([0.3, 0.7])).log_prob(
        L.tensor([0.5, 0.6])),
    lambda M, L: M.Weibull(L.tensor(1.0), L.tensor(-1.0)),
    lambda M, L: M.Weibull(L.tensor(1.0), L.tensor(2.0)).log_prob(L.tensor(-1.0)),
    lambda M, L: M.Pareto(L.tensor(1.0), L.tensor(2.0)).log_prob(L.tensor(0.5)),
    lambda M, L: M.Pareto(L.tensor(0.0), L.tensor(2.0)),
    lambda M, L: M.Kumaraswamy(L.tensor(0.5), L.tensor(0.0)),
    lambda M, L: M.Kumaraswamy(L.tensor(0.5), L.tensor(1.0)).log_prob(L.tensor(1.5)),
    lambda M, L: M.NegativeBinomial(L.tensor(-1.0), L.tensor(0.5)),
    lambda M, L: M.NegativeBinomial(L.tensor(2.0), L.tensor(1.0)),
    lambda M, L: M.NegativeBinomial(L.tensor(2.0), L.tensor(0.5)).log_prob(L.tensor(1.5)),
    lambda M, L: M.NegativeBinomial(L.tensor(2.0)),
    lambda M, L: M.ContinuousBernoulli(L.tensor(1.5), validate_args=False),
    lambda M, L: M.ContinuousBernoulli(L.tensor(0.3)).log_prob(L.tensor(1.5)),
    lambda M, L: M.VonMises(L.tensor(0.0), L.tensor(-1.0)),
    lambda M, L: M.FisherSnedecor(L.tensor(1.0), L.tensor(-1.0)),
    lambda M, L: M.FisherSnedecor(L.tensor(1.0), L.tensor(2.0)).log_prob(L.tensor(-1.0)),
    lambda M, L: M.LogisticNormal(L.zeros(2), L.ones(2)).log_prob(L.tensor([0.5, 0.6, 0.1])),
    lambda M, L: M.LowRankMultivariateNormal(L.tensor(0.0), L.ones(1, 1), L.ones(1)),
    lambda M, L: M.LowRankMultivariateNormal(L.zeros(2), L.ones(2), L.ones(2)),
    lambda M, L: M.LowRankMultivariateNormal(L.zeros(2), L.ones(3, 1), L.ones(2)),
    lambda M, L: M.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(3)),
    lambda M, L: M.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.tensor([1.0, -10.0])),
    lambda M, L: M.LKJCholesky(1, L.tensor(1.0)),
    lambda M, L: M.LKJCholesky(2, L.tensor(-1.0)),
    lambda M, L: M.LKJCholesky(2, L.tensor(1.0)).log_prob(L.eye(2) * 2),
    lambda M, L: M.Wishart(L.tensor(1.0), L.eye(3)),
    lambda M, L: M.Wishart(L.tensor(4.0), L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda M, L: M.Wishart(L.tensor(4.0), L.eye(2)).log_prob(-L.eye(2)),
    lambda M, L: M.HalfCauchy(L.tensor(-1.0)),
    lambda M, L: M.HalfCauchy(L.tensor(1.0)).log_prob(L.tensor(-1.0)),
    lambda M, L: M.InverseGamma(L.tensor(1.0), L.tensor(0.0)),
    lambda M, L: M.GeneralizedPareto(L.tensor(0.0), L.tensor(1.0), L.tensor(-0.5)).log_prob(
        L.tensor(3.0)),
    lambda M, L: M.MixtureSameFamily(M.Normal(0.0, 1.0), M.Normal(L.zeros(3), L.ones(3))),
    lambda M, L: M.MixtureSameFamily(M.Categorical(L.ones(3)), 1.0),
    lambda M, L: M.MixtureSameFamily(M.Categorical(L.ones(2)), M.Normal(L.zeros(3), L.ones(3))),
    lambda M, L: M.MixtureSameFamily(M.Categorical(L.ones(2, 3)),
                                     M.Normal(L.zeros(4, 3), L.ones(4, 3))),
    lambda M, L: M.MixtureSameFamily(M.Categorical(L.ones(3)),
                                     M.Gamma(L.ones(3), L.ones(3))).log_prob(L.tensor(-1.0)),
])
def test_validation_errors_match_torch(case: Callable) -> None:
    _errors_alike(case)


def test_validate_args_default_and_off() -> None:
    assert D.Distribution._validate_args is True
    D.Distribution.set_default_validate_args(False)
    try:
        d = D.Normal(ts.tensor(0.0), ts.tensor(-1.0))  # not checked
        assert d.scale.item() == -1.0
        D.Normal(0.0, 1.0).log_prob(ts.tensor(float("nan")))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(ts.tensor(0.0), ts.tensor(-1.0))
    D.Normal(ts.tensor(0.0), ts.tensor(-1.0), validate_args=False)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(3)


def test_message_text_matches_torch() -> None:
    with pytest.raises(ValueError) as got:
        D.Normal(ts.tensor([0.0, 1.0]), ts.tensor([1.0, -1.0]))
    assert str(got.value).startswith(
        "Expected parameter scale (Tensor of shape (2,)) of distribution Normal(loc: "
        "tessera.Size([2]), scale: tessera.Size([2])) to satisfy the constraint "
        "GreaterThan(lower_bound=0.0), but found invalid values:\n")
    with pytest.raises(ValueError) as got:
        D.Categorical(ts.tensor([0.5, 0.5])).log_prob(ts.tensor(3))
    assert str(got.value).startswith(
        "Expected value argument (Tensor of shape ()) to be within the support "
        "(IntegerInterval(lower_bound=0, upper_bound=1)) of the distribution "
        "Categorical(probs: tessera.Size([2])), but found invalid values:\n")


def test_constraint_reprs_match_torch() -> None:
    C, TC = D.constraints, TD.constraints
    for name in ["real", "positive", "nonnegative", "unit_interval", "simplex", "boolean",
                 "nonnegative_integer", "positive_integer", "real_vector", "lower_cholesky",
                 "positive_definite", "one_hot", "dependent", "lower_triangular"]:
        assert repr(getattr(C, name)) == repr(getattr(TC, name)), name
    for name, args in [("interval", (0, 1)), ("integer_interval", (0, 3)),
                       ("greater_than", (1.5,)), ("greater_than_eq", (0,)),
                       ("less_than", (2.0,)), ("half_open_interval", (0, 1))]:
        assert repr(getattr(C, name)(*args)) == repr(getattr(TC, name)(*args)), name
    assert repr(C.independent(C.positive, 2)) == repr(TC.independent(TC.positive, 2))
    assert C.is_dependent(D.Uniform.support) and C.is_dependent(C.dependent)
    x = np.array([[-1.0, 0.0, 0.5, 1.0, 2.0], [np.nan, 3.0, 0.25, 0.0, 1.0]])
    for name in ["real", "positive", "nonnegative", "unit_interval", "boolean",
                 "nonnegative_integer", "positive_integer", "simplex", "one_hot"]:
        np.testing.assert_array_equal(getattr(C, name).check(ts.asarray(x)).numpy(),
                                      getattr(TC, name).check(torch.tensor(x)).numpy(), name)


def test_repr_and_properties() -> None:
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(D.Categorical(logits=ts.zeros(2, 3))) == \
        "Categorical(logits: tessera.Size([2, 3]))"
    c = D.Categorical(probs=ts.tensor([0.2, 0.8]))
    np.testing.assert_allclose(c.logits.numpy(), np.log([0.2, 0.8]), rtol=1e-6)
    assert c.param_shape == (2,)
    assert D.Normal(0.0, 1.0).perplexity().item() == pytest.approx(np.exp(1.4189385332))
    with pytest.raises(NotImplementedError):
        D.Normal(0.0, 1.0).enumerate_support()
    with pytest.raises(NotImplementedError):
        D.Poisson(ts.tensor(1.0)).entropy()
    assert isinstance(D.Uniform(0.0, 1.0).support, D.constraints.Constraint)


def test_transforms_roundtrip_and_jacobians_match_torch() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3))
    T, TT = D.transforms, TD.transforms
    pairs = [(T.ExpTransform(), TT.ExpTransform()), (T.SigmoidTransform(), TT.SigmoidTransform()),
             (T.TanhTransform(), TT.TanhTransform()),
             (T.AffineTransform(1.0, -2.0), TT.AffineTransform(1.0, -2.0)),
             (T.ComposeTransform([T.AffineTransform(0.5, 3.0), T.ExpTransform()]),
              TT.ComposeTransform([TT.AffineTransform(0.5, 3.0), TT.ExpTransform()])),
             (T.ExpTransform().inv, TT.ExpTransform().inv)]
    for t, tt_ in pairs:
        xi = np.abs(x) + 0.1 if isinstance(t, type(T.ExpTransform().inv)) else x
        a, b = ts.asarray(xi), torch.tensor(xi)
        ya, yb = t(a), tt_(b)
        np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=1e-12)
        np.testing.assert_allclose(t.inv(ya).numpy(), tt_.inv(yb).numpy(), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(t.log_abs_det_jacobian(a, ya).numpy(),
                                   tt_.log_abs_det_jacobian(b, yb).numpy(), rtol=1e-12)
        assert t.sign == tt_.sign or bool((ts.as_tensor(t.sign) == tt_.sign).all())
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()
    assert T.AffineTransform(0.0, 1.0) == T.AffineTransform(0.0, 1.0)

"""Sampling: moments of 20k seeded draws within a few standard errors of the distribution's
mean and variance, reproducibility under ts.manual_seed, sample shapes, reparameterized
gradients (rsample), and the _standard_gamma op and its gradient against torch's."""
from __future__ import annotations

from typing import Any, Callable, List, Tuple

import numpy as np
import pytest
import torch

import tessera as ts

D = ts.distributions
N = 20000


def _t(x: Any, dtype: Any = ts.float64) -> Any:
    return ts.tensor(x, dtype=dtype)


CASES: List[Tuple[str, Callable[[], Any]]] = [
    ("Normal", lambda: D.Normal(_t([0.0, -3.0]), _t([1.0, 0.5]))),
    ("Bernoulli", lambda: D.Bernoulli(_t([0.1, 0.5, 0.9]))),
    ("Bernoulli_logits", lambda: D.Bernoulli(logits=_t([-2.0, 1.0]))),
    ("Categorical", lambda: D.Categorical(_t([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]]))),
    ("OneHotCategorical", lambda: D.OneHotCategorical(_t([0.2, 0.3, 0.5]))),
    ("Uniform", lambda: D.Uniform(_t([0.0, -2.0]), _t([1.0, 5.0]))),
    ("Exponential", lambda: D.Exponential(_t([0.5, 3.0]))),
    ("Laplace", lambda: D.Laplace(_t([0.0, 2.0]), _t([1.0, 0.3]))),
    ("Gamma", lambda: D.Gamma(_t([0.3, 1.0, 4.5]), _t([1.0, 2.0, 0.5]))),
    ("Beta", lambda: D.Beta(_t([0.5, 2.0, 5.0]), _t([0.5, 3.0, 1.0]))),
    ("Dirichlet", lambda: D.Dirichlet(_t([[0.5, 1.0, 2.0], [3.0, 3.0, 3.0]]))),
    ("Poisson", lambda: D.Poisson(_t([0.5, 4.0, 30.0]))),
    ("Binomial", lambda: D.Binomial(_t([5.0, 40.0, 100.0]), _t([0.3, 0.5, 0.9]))),
    ("Multinomial", lambda: D.Multinomial(10, _t([0.2, 0.3, 0.5]))),
    ("MultivariateNormal", lambda: D.MultivariateNormal(
        _t([1.0, -1.0]), covariance_matrix=_t([[2.0, 0.5], [0.5, 1.0]]))),
    ("Independent", lambda: D.Independent(D.Normal(_t([0.0, 1.0]), _t([1.0, 2.0])), 1)),
    ("LogNormal", lambda: D.LogNormal(_t([0.0, 0.5]), _t([0.25, 0.5]))),
    ("Transformed_tanh", lambda: D.TransformedDistribution(
        D.Normal(_t([0.0]), _t([1.0])), [D.transforms.TanhTransform()])),
    ("Gumbel", lambda: D.Gumbel(_t([0.0, 2.0]), _t([1.0, 0.5]))),
    ("HalfNormal", lambda: D.HalfNormal(_t([1.0, 3.0]))),
    ("Geometric", lambda: D.Geometric(_t([0.2, 0.7]))),
    ("Chi2", lambda: D.Chi2(_t([1.0, 5.0]))),
    ("StudentT", lambda: D.StudentT(_t([9.0, 12.0]), _t([1.0, -1.0]), _t([2.0, 0.5]))),
    ("Cauchy", lambda: D.Cauchy(_t([0.0, 3.0]), _t([1.0, 0.2]))),
    ("Weibull", lambda: D.Weibull(_t([1.0, 2.0]), _t([0.8, 3.0]))),
    ("Pareto", lambda: D.Pareto(_t([1.0, 0.5]), _t([5.0, 9.0]))),
    ("Kumaraswamy", lambda: D.Kumaraswamy(_t([0.5, 2.0]), _t([0.7, 3.0]))),
    ("NegativeBinomial", lambda: D.NegativeBinomial(_t([2.0, 7.5]), _t([0.3, 0.6]))),
    ("MixtureSameFamily", lambda: D.MixtureSameFamily(
        D.Categorical(_t([[0.2, 0.8], [0.5, 0.5]])),
        D.Normal(_t([[-2.0, 1.0], [0.0, 5.0]]), _t([[1.0, 0.5], [2.0, 1.0]])))),
    ("ContinuousBernoulli", lambda: D.ContinuousBernoulli(_t([0.1, 0.4995, 0.8]))),
    ("FisherSnedecor", lambda: D.FisherSnedecor(_t([5.0, 12.0]), _t([30.0, 40.0]))),
    ("LowRankMultivariateNormal", lambda: D.LowRankMultivariateNormal(
        _t([1.0, -1.0, 0.0]), _t([[1.0], [0.5], [-1.0]]), _t([0.5, 1.0, 2.0]))),
    ("Wishart", lambda: D.Wishart(_t([4.0, 7.5]), covariance_matrix=_t(
        [[[2.0, 0.5], [0.5, 1.0]], [[1.0, -0.3], [-0.3, 0.5]]]))),
    ("InverseGamma", lambda: D.InverseGamma(_t([9.0, 12.0]), _t([1.0, 3.0]))),
    ("GeneralizedPareto", lambda: D.GeneralizedPareto(_t([0.0, 1.0, -1.0]), _t([1.0, 2.0, 0.5]),
                                                      _t([0.0, 0.1, -0.3]))),
    ("RelaxedBernoulli", lambda: D.RelaxedBernoulli(_t(0.7), _t([0.2, 0.6]))),
    ("RelaxedOneHotCategorical", lambda: D.RelaxedOneHotCategorical(
        _t(0.5), _t([0.2, 0.3, 0.5]))),
]


@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_sample_moments(name: str, make: Callable[[], Any]) -> None:
    d = make()
    ts.manual_seed(1234)
    x = d.sample((N,)).astype(ts.float64).numpy()
    assert x.shape == (N,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert d.support.check(ts.asarray(x)).all()
    m, v = x.mean(0), x.var(0)
    if name == "Transformed_tanh":  # E tanh(Z) = 0 by symmetry; no closed-form variance
        assert np.all(np.abs(m) < 5 * np.sqrt(v / N))
        return
    if name == "Cauchy":  # no moments: the empirical CDF at the quartiles
        for q in (0.25, 0.5, 0.75):
            at = d.icdf(ts.full((2,), q, dtype=ts.float64)).numpy()
            np.testing.assert_array_less(np.abs((x < at).mean(0) - q), 5 * np.sqrt(q * (1 - q) / N))
        return
    if name == "RelaxedBernoulli":  # P(X > 1/2) = probs at any temperature
        p = d.probs.numpy()
        np.testing.assert_array_less(np.abs((x > 0.5).mean(0) - p), 5 * np.sqrt(p * (1 - p) / N))
        return
    if name == "RelaxedOneHotCategorical":  # argmax is Categorical(probs) (Gumbel-max)
        p = d.probs.numpy()
        freq = np.bincount(x.argmax(-1), minlength=3) / N
        np.testing.assert_array_less(np.abs(freq - p), 5 * np.sqrt(p * (1 - p) / N))
        return
    if name == "Categorical":  # no mean/variance (NaN): test_categorical_sample_frequencies
        assert np.isnan(d.mean.numpy()).all()
        return
    mean, var = d.mean.numpy(), d.variance.numpy()
    np.testing.assert_array_less(np.abs(m - mean), 5 * np.sqrt(var / N) + 1e-12)
    m4 = ((x - m) ** 4).mean(0)
    np.testing.assert_array_less(np.abs(v - var), 6 * np.sqrt(np.maximum(m4 - v ** 2, 0) / N)
                                 + 1e-12)


@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_seeded_sampling_is_deterministic(name: str, make: Callable[[], Any]) -> None:
    d = make()
    ts.manual_seed(7)
    a = d.sample((3, 2))
    ts.manual_seed(7)
    b = d.sample((3, 2))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert tuple(a.shape) == (3, 2) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert a.dtype == (ts.int64 if name == "Categorical" else ts.float64)
    if d.has_rsample:
        ts.manual_seed(7)
        r = d.rsample((3, 2))
        assert tuple(r.shape) == tuple(a.shape)


def test_categorical_sample_frequencies() -> None:
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    ts.manual_seed(0)
    x = D.Categorical(ts.asarray(probs)).sample((N,)).numpy()
    freq = np.bincount(x, minlength=4) / N
    np.testing.assert_array_less(np.abs(freq - probs), 5 * np.sqrt(probs * (1 - probs) / N))


def test_mvn_sample_covariance() -> None:
    cov = np.array([[2.0, 0.8, 0.1], [0.8, 1.0, -0.3], [0.1, -0.3, 0.5]])
    ts.manual_seed(3)
    for kw in ({"covariance_matrix": ts.asarray(cov)},
               {"precision_matrix": ts.asarray(np.linalg.inv(cov))},
               {"scale_tril": ts.asarray(np.linalg.cholesky(cov))}):
        x = D.MultivariateNormal(ts.zeros(3, dtype=ts.float64), **kw).sample((N,)).numpy()
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


def test_rsample_normal_is_reparameterized() -> None:
    loc = ts.tensor([0.5, -1.0], dtype=ts.float64, requires_grad=True)
    scale = ts.tensor([2.0, 0.5], dtype=ts.float64, requires_grad=True)
    ts.manual_seed(0)
    x = D.Normal(loc, scale).rsample((100,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [100.0, 100.0])
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-12)
    assert D.Normal(loc, scale).sample().grad_fn is None


def test_rsample_gamma_gradient_matches_torch_formula() -> None:
    c = ts.tensor([0.2, 1.0, 3.0, 20.0], dtype=ts.float64, requires_grad=True)
    rate = ts.tensor([1.0, 2.0, 0.5, 1.5], dtype=ts.float64, requires_grad=True)
    ts.manual_seed(1)
    x = D.Gamma(c, rate).rsample()
    x.sum().backward()
    xv = x.detach().numpy()
    g = torch._standard_gamma_grad(torch.tensor(c.detach().numpy()),
                                   torch.tensor(xv * rate.detach().numpy())).numpy()
    # torch's gradient is an approximation good to about 2e-5 (ours: test_standard_gamma_op)
    np.testing.assert_allclose(c.grad.numpy(), g / rate.detach().numpy(), rtol=5e-5)
    np.testing.assert_allclose(rate.grad.numpy(), -xv / rate.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("dist,d_mean", [
    # d E[x] / d params, from E over reparameterized samples
    (lambda c: D.Gamma(c[0], c[1]), lambda a, b: [1 / b, -a / b ** 2]),
    (lambda c: D.Beta(c[0], c[1]), lambda a, b: [b / (a + b) ** 2, -a / (a + b) ** 2]),
], ids=["Gamma", "Beta"])
def test_rsample_gradient_is_unbiased(dist: Callable, d_mean: Callable) -> None:
    a, b = 1.7, 2.5
    params = ts.tensor([a, b], dtype=ts.float64, requires_grad=True)
    ts.manual_seed(2)
    x = dist(params).rsample((N,))
    x.mean().backward()
    np.testing.assert_allclose(params.grad.numpy(), d_mean(a, b), rtol=0.05)


def test_dirichlet_rsample_gradient_is_unbiased() -> None:
    alpha = np.array([0.7, 1.5, 3.0])
    c = ts.tensor(alpha, requires_grad=True)
    ts.manual_seed(4)
    x = D.Dirichlet(c).rsample((N,))
    x[:, 0].mean().backward()
    a0 = alpha.sum()
    want = np.full(3, -alpha[0] / a0 ** 2)
    want[0] += 1 / a0
    np.testing.assert_allclose(c.grad.numpy(), want, atol=0.01)


def test_standard_gamma_op() -> None:
    # 20 and 200 are where gammainc switches algorithms (asymptotic series inside)
    alpha = np.array([1e-3, 0.05, 0.5, 1.0, 2.5, 10.0, 20.0, 20.0, 150.0, 200.0, 200.0, 1e4])
    x = np.array([1e-200, 1e-20, 0.3, 1.0, 2.0, 11.0, 13.66, 24.0, 160.0, 190.0, 201.2,
                  1.01e4])
    got = ts._C._standard_gamma_grad(ts.asarray(alpha), ts.asarray(x)).numpy()
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-4)  # torch's approximation: ~1e-4
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    for a, xv, g in zip(alpha[1:-1], x[1:-1], got[1:-1]):  # d x / d a = -dP/da / density
        dp = mp.diff(lambda b: mp.gammainc(b, 0, xv, regularized=True) if xv < a
                     else -mp.gammainc(b, xv, mp.inf, regularized=True), a)
        exact = -dp / (mp.mpf(xv) ** (a - 1) * mp.e ** (-xv) / mp.gamma(a))
        assert abs(g - float(exact)) <= 2e-8 * abs(float(exact)), (a, xv, g, exact)
    # the far tails, where P underflows (P(3000, 30) ~ 1e-5000): the series still holds
    far = ts._C._standard_gamma_grad(_t([3000.0, 500.0]), _t([30.0, 1.1])).numpy()
    np.testing.assert_allclose(far, [0.0465184298052234, 0.013494292407163844], rtol=1e-9)
    a32 = ts._C._standard_gamma(ts.full((5,), 0.01))
    assert a32.dtype == ts.float32 and bool((a32 >= ts.finfo(ts.float32).tiny).all())
    with pytest.raises(ValueError, match="_standard_gamma"):
        ts._C._standard_gamma(ts.tensor([1.0, 0.0]))
    with pytest.raises(TypeError, match="_standard_gamma"):
        ts._C._standard_gamma(ts.tensor([1, 2]))
    c = ts.tensor([2.0], requires_grad=True)
    y = ts._C._standard_gamma(c)
    assert y.grad_fn.name() == "StandardGammaBackward0"
    y.backward()
    assert c.grad is not None and c.grad.dtype == ts.float32

"""ts.random: determinism, thread-count independence, distinct streams, shapes/dtypes, and
statistics (moments within a few standard errors, Kolmogorov-Smirnov / chi-square checks
against asymptotic critical values at a tiny false-alarm rate)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tessera as ts
N = 200_000
Z = 4.75  # one-sided standard normal quantile for a false-alarm rate of about 1e-6


def ks_statistic(x: np.ndarray, cdf) -> float:
    """Kolmogorov-Smirnov D = sup |F_n - F| of the sample x against the continuous cdf."""
    x = np.sort(np.asarray(x, dtype=np.float64))
    n = x.size
    f = np.asarray(cdf(x), dtype=np.float64)
    return float(max((np.arange(1, n + 1) / n - f).max(), (f - np.arange(n) / n).max()))


def ks_critical(n: int, alpha: float = 1e-6) -> float:
    """Asymptotic critical value: P(sqrt(n) D > c) ~ 2 exp(-2 c^2)."""
    return math.sqrt(-0.5 * math.log(alpha / 2)) / math.sqrt(n)


def chi2_critical(dof: int) -> float:
    """Upper critical value of chi-square(dof) (Wilson-Hilferty), false-alarm rate ~1e-6."""
    return dof * (1 - 2 / (9 * dof) + Z * math.sqrt(2 / (9 * dof))) ** 3


def test_philox_known_answer():
    # Random123's kat_vectors for philox4x32_10 (counter, key) -> output.
    g = ts.random.Generator(0)
    # Through the public API: block 0, offset 0, seed 0 gives words 0..3; the first float32
    # uniform is word 0 >> 8 scaled by 2^-24.
    u = g.rand(4, dtype=ts.float32).numpy().astype(np.float64)
    words = [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    np.testing.assert_array_equal(u, [(w >> 8) * 2.0**-24 for w in words])


def test_seed_determinism_and_streams():
    ts.random.seed(123)
    a = ts.rand(1000)
    b = ts.rand(1000)
    ts.manual_seed(123)
    a2 = ts.rand(1000)
    np.testing.assert_array_equal(a.numpy(), a2.numpy())
    assert not np.array_equal(a.numpy(), b.numpy())  # successive calls: distinct streams
    g1, g2 = ts.random.Generator(7), ts.random.Generator(7)
    np.testing.assert_array_equal(g1.randn(50).numpy(), g2.randn(50).numpy())
    assert not np.array_equal(ts.random.Generator(8).randn(50).numpy(),
                              ts.random.Generator(7).randn(50).numpy())
    state = g1.get_state()
    x = g1.normal(size=10)
    g1.set_state(state)
    np.testing.assert_array_equal(g1.normal(size=10).numpy(), x.numpy())


@pytest.mark.parametrize("fn", [
    lambda g: g.rand(100_003, dtype=ts.float32),
    lambda g: g.rand(100_003, dtype=ts.float64),
    lambda g: g.randn(100_003, dtype=ts.float32),
    lambda g: g.randn(100_001, dtype=ts.float64),
    lambda g: g.randint(-5, 17, (100_003,)),
    lambda g: g.multinomial(ts.asarray(np.ones((64, 50))), 20),
])
def test_thread_count_independent(fn):
    n = ts.get_num_threads()
    try:
        ts.set_num_threads(1)
        r1 = fn(ts.random.Generator(5)).numpy()
        ts.set_num_threads(2)
        r2 = fn(ts.random.Generator(5)).numpy()
    finally:
        ts.set_num_threads(n)
    np.testing.assert_array_equal(r1, r2)


def test_views_and_layouts_fill_identically():
    x = ts.zeros((40, 30))
    x.mT.uniform_(generator=ts.random.Generator(3))  # fills in the view's C order
    y = ts.random.Generator(3).rand(30, 40)
    np.testing.assert_array_equal(x.mT.numpy(), y.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_uniform_range_and_moments(dtype):
    x = ts.random.Generator(11).rand(N, dtype=getattr(ts, dtype)).astype(ts.float64).numpy()
    assert x.min() >= 0.0 and x.max() < 1.0
    se = math.sqrt(1 / 12 / N)
    assert abs(x.mean() - 0.5) < 5 * se + (2**-8 if dtype == "bfloat16" else 0)
    assert abs(x.var() - 1 / 12) < 0.01
    if dtype in ("float32", "float64"):
        assert ks_statistic(x, lambda t: np.clip(t, 0, 1)) < ks_critical(N)


def test_uniform_low_high_float32_stays_half_open():
    x = ts.random.uniform(1.0, 1.0 + 2**-22, size=N, dtype=ts.float32,
                          generator=ts.random.Generator(2)).numpy()
    assert x.min() >= 1.0 and x.max() < np.float32(1.0 + 2**-22)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_moments_and_ks(dtype):
    x = ts.random.Generator(12).randn(N, dtype=getattr(ts, dtype)).numpy().astype(np.float64)
    assert abs(x.mean()) < 5 / math.sqrt(N)
    assert abs(x.var() - 1) < 5 * math.sqrt(2 / N)
    cdf = np.vectorize(lambda t: 0.5 * (1 + math.erf(t / math.sqrt(2))))
    assert ks_statistic(x, cdf) < ks_critical(N)
    y = ts.random.Generator(1).normal(3.0, 2.0, size=(N,), dtype=getattr(ts, dtype)).numpy()
    assert abs(y.mean() - 3.0) < 5 * 2 / math.sqrt(N) and abs(y.std() - 2.0) < 0.03


def test_normal_tensor_params_and_inplace():
    m = ts.asarray(np.array([0.0, 100.0]))
    y = ts.random.normal(m, 1.0, size=(N // 10, 2), generator=ts.random.Generator(4)).numpy()
    assert abs(y[:, 0].mean()) < 0.1 and abs(y[:, 1].mean() - 100) < 0.1
    x = ts.zeros(N, dtype=ts.float64)
    assert x.normal_(5.0, 0.5) is x
    assert abs(x.numpy().mean() - 5) < 0.01 and abs(x.numpy().std() - 0.5) < 0.01
    assert x.uniform_(-2, -1) is x
    assert x.numpy().min() >= -2 and x.numpy().max() < -1


def test_randint_chi_square():
    k = 7
    x = ts.random.randint(-3, -3 + k, size=(N,), generator=ts.random.Generator(9))
    assert x.dtype == ts.int64
    counts = np.bincount(x.numpy() + 3, minlength=k)
    assert counts.size == k
    expected = N / k
    assert ((counts - expected) ** 2 / expected).sum() < chi2_critical(k - 1)
    assert ts.randint(10, (3, 2)).shape == (3, 2)  # torch-style: [0, 10)
    assert ts.random.randint(5, size=4, dtype=ts.int8).dtype == ts.int8
    big = ts.random.randint(-2**63, 2**63 - 1, size=1000).numpy()
    assert big.min() < -2**60 and big.max() > 2**60


def test_randperm_permutation_shuffle_choice():
    p = ts.randperm(1000).numpy()
    np.testing.assert_array_equal(np.sort(p), np.arange(1000))
    assert not np.array_equal(p, np.arange(1000))
    # Every position is uniform: chi-square over the first element.
    firsts = np.array([ts.random.Generator(s).permutation(5).numpy()[0] for s in range(2000)])
    counts = np.bincount(firsts, minlength=5)
    assert ((counts - 400) ** 2 / 400).sum() < chi2_critical(4)
    x = ts.asarray(np.arange(20.0).reshape(10, 2))
    px = ts.random.permutation(x).numpy()
    np.testing.assert_array_equal(np.sort(px[:, 0]), np.arange(0, 20, 2))
    np.testing.assert_array_equal(px[:, 1] - px[:, 0], 1)
    v = x.mT.mT  # a view: shuffled in place
    ts.random.shuffle(v)
    xn = x.numpy()
    np.testing.assert_array_equal(np.sort(xn[:, 0]), np.arange(0, 20, 2))
    np.testing.assert_array_equal(xn[:, 1] - xn[:, 0], 1)
    c = ts.random.choice(5, size=(N,), generator=ts.random.Generator(1)).numpy()
    counts = np.bincount(c, minlength=5)
    assert ((counts - N / 5) ** 2 / (N / 5)).sum() < chi2_critical(4)
    pr = np.array([0.1, 0.0, 0.6, 0.3])
    c = ts.random.choice(ts.asarray(np.array([10, 20, 30, 40])), size=N, p=pr).numpy()
    counts = np.array([(c == v).sum() for v in (10, 20, 30, 40)])
    assert counts[1] == 0
    keep = pr > 0
    assert ((counts[keep] - N * pr[keep]) ** 2 / (N * pr[keep])).sum() < chi2_critical(2)
    u = ts.random.choice(10, size=10, replace=False).numpy()
    np.testing.assert_array_equal(np.sort(u), np.arange(10))
    assert ts.random.choice(3).shape == ()


def test_multinomial():
    probs = ts.asarray(np.array([[1.0, 2.0, 7.0, 0.0], [0.0, 0.0, 1.0, 1.0]]))
    s = ts.random.multinomial(probs, 2, generator=ts.random.Generator(0)).numpy()
    assert s.shape == (2, 2) and s.dtype == np.int64
    assert len(set(s[0])) == 2 and 3 not in s[0]  # no repeats, never a zero-weight category
    assert sorted(s[1]) == [2, 3]
    s = ts.random.multinomial(ts.asarray(np.array([1.0, 2.0, 7.0, 0.0])), N, replacement=True,
                              generator=ts.random.Generator(3)).numpy()
    counts = np.bincount(s, minlength=4)
    assert counts[3] == 0
    exp = N * np.array([0.1, 0.2, 0.7])
    assert ((counts[:3] - exp) ** 2 / exp).sum() < chi2_critical(2)
    # Without replacement, the first draw follows probs.
    firsts = ts.random.multinomial(ts.asarray(np.tile([1.0, 2.0, 7.0], (20000, 1))), 2,
                                   generator=ts.random.Generator(5)).numpy()[:, 0]
    counts = np.bincount(firsts, minlength=3)
    exp = 20000 * np.array([0.1, 0.2, 0.7])
    assert ((counts - exp) ** 2 / exp).sum() < chi2_critical(2)


def test_bernoulli_exponential():
    b = ts.random.bernoulli(0.3, size=N, generator=ts.random.Generator(1))
    assert b.dtype == ts.float32
    assert abs(b.numpy().mean() - 0.3) < 5 * math.sqrt(0.21 / N)
    p = ts.asarray(np.array([0.0, 1.0, 0.5], dtype=np.float64))
    bt = ts.random.bernoulli(ts.broadcast_to(p, (N // 10, 3))).numpy()
    assert bt.dtype == np.float64
    assert bt[:, 0].max() == 0 and bt[:, 1].min() == 1 and abs(bt[:, 2].mean() - 0.5) < 0.02
    e = ts.random.exponential(2.0, size=N, generator=ts.random.Generator(2), dtype=ts.float64).numpy()
    assert np.isfinite(e).all() and e.min() >= 0
    assert abs(e.mean() - 2.0) < 5 * 2 / math.sqrt(N)
    assert ks_statistic(e, lambda t: 1 - np.exp(-np.maximum(t, 0) / 2.0)) < ks_critical(N)
    e2 = ts.random.exponential(size=1000, lambd=4.0).numpy()
    assert abs(e2.mean() - 0.25) < 0.05


def test_shapes_dtypes_and_generator_methods():
    g = ts.random.Generator(0)
    assert g.rand(2, 3).shape == (2, 3) and g.rand((2, 3)).dtype == ts.float32
    assert g.randn(4, dtype=ts.float64).dtype == ts.float64
    assert ts.rand().shape == () and ts.randn(0, 3).shape == (0, 3)
    assert g.uniform(size=(2,)).shape == (2,) and g.random(3).shape == (3,)
    assert g.integers(0, 4, 5).shape == (5,) and g.randperm(4).shape == (4,)
    assert g.exponential(size=3).shape == (3,) and g.bernoulli(0.5, 2).shape == (2,)
    assert g.choice(4, 2).shape == (2,) and g.permutation(3).shape == (3,)
    assert g.multinomial(ts.asarray(np.ones(3)), 2).shape == (2,)
    assert ts.randperm(5, dtype=ts.float32).dtype == ts.float32
    assert ts.rand(2, dtype="float64").dtype == ts.float64
    assert ts.randn(2, dtype=np.float16).dtype == ts.float16
    assert "Generator(seed=0" in repr(g)


def test_errors():
    with pytest.raises(TypeError, match="rand"):
        ts.rand(3, dtype=ts.int32)
    with pytest.raises(TypeError, match="uniform"):
        ts.zeros(3, dtype=ts.int64).uniform_()
    with pytest.raises(ValueError, match="randint"):
        ts.randint(5, 5, (2,))
    with pytest.raises(ValueError, match="uniform"):
        ts.random.uniform(2.0, 1.0, size=3)
    with pytest.raises(ValueError, match="normal"):
        ts.random.normal(0.0, -1.0, size=3)
    with pytest.raises(ValueError, match="multinomial"):  # more samples than categories
        ts.random.multinomial(ts.asarray(np.array([1.0, 0.0])), 3)
    # PyTorch's rule: without replacement the zero-weight categories come last (was an error)
    assert ts.random.multinomial(ts.asarray(np.array([1.0, 0.0])), 2).tolist() == [0, 1]
    with pytest.raises(ValueError, match="multinomial"):
        ts.random.multinomial(ts.asarray(np.array([1.0, -1.0])), 1)
    with pytest.raises(ValueError, match="multinomial"):
        ts.random.multinomial(ts.asarray(np.zeros(3)), 1, replacement=True)
    with pytest.raises(ValueError, match="choice"):
        ts.random.choice(3, size=4, replace=False)
    with pytest.raises(ValueError, match="choice"):
        ts.random.choice(3, p=[0.5, 0.2, 0.2])
    with pytest.raises(ValueError, match="bernoulli"):
        ts.random.bernoulli(1.5)
    with pytest.raises(ValueError, match="bernoulli"):
        ts.random.bernoulli(ts.asarray(np.array([0.5, -0.1])))
    with pytest.raises(TypeError, match="bernoulli"):
        ts.random.bernoulli(ts.asarray(np.array([0, 1])))
    with pytest.raises(ValueError, match="randperm"):
        ts.randperm(-1)
    with pytest.raises(TypeError, match="generator"):
        ts.rand(2, generator=3)
    with pytest.raises(ValueError, match="shuffle"):
        ts.random.shuffle(ts.asarray(1.0))


def test_choice_and_multinomial_take_dtype_and_device():
    g = ts.random.Generator(3)
    c = g.choice(10, size=(4,), dtype=ts.int32, device="cpu")
    assert c.dtype == ts.int32 and c.shape == (4,)
    m = ts.random.multinomial(ts.asarray([0.2, 0.8]), 3, replacement=True, dtype=ts.int16, generator=g)
    assert m.dtype == ts.int16 and m.shape == (3,)
    assert ts.random.choice(ts.asarray([1.5, 2.5]), size=2, dtype=ts.float64).dtype == ts.float64

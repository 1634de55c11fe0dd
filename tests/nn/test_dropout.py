"""The fused dropout op (csrc/ops/random.h dropout, nn.functional.dropout/dropout2d) on the
CPU: mask statistics, scaling, reproducibility, gradients, in-place, error paths."""
import math

import numpy as np
import pytest

import tessera as ts
import tessera.nn.functional as F
from tessera import _C
from tessera.testing import gradcheck, gradgradcheck

FLOATS = ["float16", "bfloat16", "float32", "float64"]


def _draw(x, p, seed=0, inplace=False):
    ts.random.seed(seed)
    return F.dropout(x, p, True, inplace)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_mask_rate_and_scaling(p):
    n = 1_000_000
    y = _draw(ts.ones(n), p).numpy()
    kept = y != 0
    # Binomial: the kept fraction is within 5 standard deviations of 1 - p.
    sd = math.sqrt(p * (1 - p) / n)
    assert abs(kept.mean() - (1 - p)) < 5 * sd
    np.testing.assert_array_equal(y[kept], np.float32(1 / (1 - p)))


def test_mask_is_uniform_along_the_tensor():
    # Each quarter of a Philox block (element i % 4) drops at the same rate.
    y = _draw(ts.ones(400_000), 0.3).numpy().reshape(-1, 4) != 0
    sd = math.sqrt(0.3 * 0.7 / 100_000)
    for j in range(4):
        assert abs(y[:, j].mean() - 0.7) < 5 * sd


def test_op_returns_bool_mask_and_scaled_values():
    x = ts.asarray(np.arange(1, 1001, dtype=np.float64))
    y, mask = _C._dropout(x, 0.25, ts.random.Generator(5)._g, False)
    assert mask.dtype == ts.bool and tuple(mask.shape) == (1000,)
    m = mask.numpy()
    np.testing.assert_array_equal(y.numpy(), np.where(m, np.arange(1, 1001) * (1 / 0.75), 0.0))
    assert 0.6 < m.mean() < 0.9


def test_seed_reproducibility_and_fresh_offsets():
    x = ts.ones((64, 33))
    a, b = _draw(x, 0.5, seed=11).numpy(), _draw(x, 0.5, seed=11).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, _draw(x, 0.5, seed=12).numpy())
    ts.random.seed(11)
    first, second = F.dropout(x, 0.5).numpy(), F.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(first, a)
    assert not np.array_equal(first, second)  # each call advances the generator's offset


@pytest.mark.parametrize("dtype", FLOATS)
def test_mask_does_not_depend_on_dtype(dtype):
    ref = _draw(ts.ones(1001), 0.4).numpy() != 0
    y = _draw(ts.ones(1001, dtype=getattr(ts, dtype)), 0.4)
    assert y.dtype == getattr(ts, dtype)
    got = y.astype(ts.float64).numpy()
    np.testing.assert_array_equal(got != 0, ref)
    want = float(np.asarray(1 / 0.6, dtype=np.float32 if dtype != "float64" else np.float64))
    if dtype in ("float16", "bfloat16"):  # rounded to the storage type once
        want = float(ts.asarray(want, dtype=ts.float32).astype(getattr(ts, dtype)).astype(ts.float64))
    np.testing.assert_array_equal(np.unique(got[got != 0]), [want])


def test_non_contiguous_input_follows_c_order():
    base = ts.asarray(np.arange(1.0, 61.0, dtype=np.float32).reshape(6, 10))
    xt = base.mT  # (10, 6), transposed strides
    y = _draw(xt, 0.5, seed=4).numpy()
    y_ref = _draw(ts.asarray(np.ascontiguousarray(xt.numpy())), 0.5, seed=4).numpy()
    np.testing.assert_array_equal(y, y_ref)
    neg = ts.asarray(np.arange(1.0, 11.0, dtype=np.float32))[::-2]
    np.testing.assert_array_equal(_draw(neg, 0.5, seed=4).numpy(),
                                  _draw(ts.asarray(neg.numpy().copy()), 0.5, seed=4).numpy())


def test_gradient_is_mask_times_scale():
    x = ts.asarray(np.random.default_rng(0).normal(size=(20, 30)).astype(np.float32),
                   requires_grad=True)
    y = _draw(x, 0.3)
    g = ts.asarray(np.random.default_rng(1).normal(size=(20, 30)).astype(np.float32))
    (y * g).sum().backward()
    mask = y.detach().numpy() != 0
    np.testing.assert_array_equal(x.grad.numpy(),
                                  np.where(mask, g.numpy() * np.float32(1 / 0.7), 0))
    assert y.grad_fn is not None


def test_gradcheck_and_double_backward_float64():
    x = ts.asarray(np.random.default_rng(2).normal(size=(3, 5)), requires_grad=True)

    def fn(t):
        ts.random.seed(21)  # the same mask for every evaluation
        return F.dropout(t, 0.4) * t  # non-linear, so the second derivative is non-zero

    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_create_graph_gradient_is_differentiable():
    x = ts.asarray(np.linspace(-1, 1, 12), requires_grad=True)
    y = _draw(x, 0.5, seed=3)
    (gx,) = ts.autograd.grad((y * y).sum(), x, create_graph=True)
    gx.sum().backward()
    mask = y.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), np.where(mask, 2 * 4.0, 0.0))


def test_p_zero_one_and_eval():
    x = ts.asarray(np.arange(1.0, 7.0, dtype=np.float32))
    assert F.dropout(x, 0.0) is x
    assert F.dropout(x, 0.7, training=False) is x
    y = F.dropout(x, 1.0)
    np.testing.assert_array_equal(y.numpy(), np.zeros(6, np.float32))
    xi = ts.asarray(np.array([np.inf, -np.inf, np.nan], dtype=np.float32))
    np.testing.assert_array_equal(F.dropout(xi, 1.0).numpy(), np.zeros(3, np.float32))
    xr = ts.ones(4, requires_grad=True)
    F.dropout(xr, 1.0).sum().backward()
    np.testing.assert_array_equal(xr.grad.numpy(), np.zeros(4, np.float32))
    assert F.dropout(ts.ones((0, 3)), 0.5).shape == (0, 3)


def test_module_train_and_eval():
    m = ts.nn.Dropout(0.5)
    x = ts.ones((100, 100))
    ts.random.seed(9)
    y = m(x).numpy()
    assert set(np.unique(y)) == {0.0, 2.0}
    m.eval()
    np.testing.assert_array_equal(m(x).numpy(), x.numpy())


def test_inplace_writes_into_x():
    ref = _draw(ts.ones((7, 9)), 0.5, seed=8).numpy()
    x = ts.ones((7, 9))
    out = _draw(x, 0.5, seed=8, inplace=True)
    assert out is x
    np.testing.assert_array_equal(x.numpy(), ref)
    # A strided view is written through.
    base = ts.ones((9, 7))
    _draw(base.mT, 0.5, seed=8, inplace=True)
    np.testing.assert_array_equal(base.mT.numpy(), ref)


def test_inplace_with_autograd():
    w = ts.ones((5, 6), requires_grad=True)
    h = w * 2
    out = _draw(h, 0.5, seed=6, inplace=True)
    assert out is h
    out.sum().backward()
    mask = h.detach().numpy() != 0
    np.testing.assert_array_equal(w.grad.numpy(), np.where(mask, 4.0, 0.0).astype(np.float32))
    leaf = ts.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        F.dropout(leaf, 0.5, True, True)


def test_errors():
    with pytest.raises(ValueError, match="dropout: probability"):
        F.dropout(ts.ones(3), 1.5)
    with pytest.raises(ValueError, match="dropout: probability"):
        F.dropout(ts.ones(3), -0.1)
    with pytest.raises(ValueError, match="dropout2d: probability"):
        F.dropout2d(ts.ones((1, 2, 3, 3)), 2.0)
    with pytest.raises(TypeError, match="dropout: expected a floating-point tensor, got int64"):
        F.dropout(ts.asarray([1, 2, 3]), 0.5)
    with pytest.raises(ValueError, match="dropout: probability"):
        _C._dropout(ts.ones(3), float("nan"), ts.random.Generator(0)._g, False)


def test_dropout2d_drops_whole_channels():
    x = ts.ones((8, 16, 3, 3))
    ts.random.seed(2)
    y = F.dropout2d(x, 0.5).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert (per_channel == per_channel[:, :, :1]).all()
    assert set(np.unique(y)) == {0.0, 2.0}
    xi = ts.ones((2, 4, 2, 2))
    ts.random.seed(2)
    assert F.dropout2d(xi, 0.5, inplace=True) is xi
    assert set(np.unique(xi.numpy())) <= {0.0, 2.0}


def test_dropout_does_not_use_the_host_rng():
    with pytest.raises(ImportError):  # nn's NumPy generator is gone: every draw is ts.random's
        from tessera.nn import _rng  # noqa: F401
    F.dropout(ts.ones(10), 0.5)
    F.dropout2d(ts.ones((1, 2, 2, 2)), 0.5)


# ---------------------------------------------------------------- the documented streams
# Note [Counter-based RNG]: every value is a function of (seed, offset, element index) through
# Philox4x32-10; the CUDA kernels rely on these formulas, so they are pinned here against a
# NumPy reference of the generator.
def _philox(block, offset, seed):
    """Philox4x32-10 words (4, n) for uint64 arrays of block indices."""
    m = np.uint64(0xFFFFFFFF)
    c0, c1 = block & m, block >> np.uint64(32)
    c2 = np.full_like(block, offset & 0xFFFFFFFF)
    c3 = np.full_like(block, offset >> 32)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32)
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & m,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & m)
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m, (k1 + np.uint64(0xBB67AE85)) & m
    return np.stack([c0, c1, c2, c3])


def test_rand_and_dropout_follow_the_documented_stream():
    g = ts.random.Generator(2024)
    g.set_state((2024, 5))
    n = 1001
    w = _philox(np.arange((n + 3) // 4, dtype=np.uint64), 5, 2024)
    words = w.T.reshape(-1)[:n]  # element i: word i % 4 of block i / 4
    np.testing.assert_array_equal(g.rand(n).numpy(),
                                  (words >> np.uint64(8)).astype(np.float32) * np.float32(2**-24))
    x = ts.ones(n)
    y, mask = _C._dropout(x, 0.3, g._g, False)  # offset 6
    w = _philox(np.arange((n + 3) // 4, dtype=np.uint64), 6, 2024).T.reshape(-1)[:n]
    np.testing.assert_array_equal(mask.numpy(), w >= round(0.3 * 2**32))


def test_randn_float64_follows_box_muller_closely():
    g = ts.random.Generator(7)
    n = 20_000
    z = g.randn(n, dtype=ts.float64).numpy()
    w = _philox(np.arange(n // 2, dtype=np.uint64), 0, 7)
    u1 = ((w[0] << np.uint64(32) | w[1]) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    u2 = ((w[2] << np.uint64(32) | w[3]) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    r = np.sqrt(-2 * np.log1p(-u1))
    ref = np.stack([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)], axis=1).reshape(-1)
    # Our own log/sincos (not libm's, Note [Bit-identical random numbers]) stay within a few ulp.
    np.testing.assert_allclose(z, ref, rtol=1e-14, atol=1e-14)


def test_randn_float32_follows_box_muller_closely():
    g = ts.random.Generator(8)
    n = 20_000
    z = g.randn(n).numpy().astype(np.float64)
    w = _philox(np.arange(n // 4, dtype=np.uint64), 0, 8)
    u = (w >> np.uint64(8)).astype(np.float64) * 2.0**-24
    out = []
    for a, b in [(0, 1), (2, 3)]:
        r = np.sqrt(-2 * np.log1p(-u[a]))
        out += [r * np.cos(2 * np.pi * u[b]), r * np.sin(2 * np.pi * u[b])]
    ref = np.stack(out, axis=1).reshape(-1)
    np.testing.assert_allclose(z, ref, rtol=2e-6, atol=2e-6)


# ---------------------------------------------------------------- embedding (sync-free rows)
def test_embedding_gradient_matches_the_indexing_path_bit_for_bit():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(50, 16)).astype(np.float32)
    idx = rng.integers(0, 50, size=(8, 30))
    g = ts.asarray(rng.normal(size=(8, 30, 16)).astype(np.float32))
    w1 = ts.asarray(W, requires_grad=True)
    (F.embedding(ts.asarray(idx), w1, padding_idx=3) * g).sum().backward()
    w2 = ts.asarray(W, requires_grad=True)
    rows = ts.take(w2, ts.asarray(idx.reshape(-1)), axis=0)
    (ts.reshape(rows, (8, 30, 16)) * g).sum().backward()
    ref = w2.grad.numpy()
    ref[3] = 0  # the padding row gets no gradient
    np.testing.assert_array_equal(w1.grad.numpy(), ref)


def test_embedding_gradcheck_and_errors():
    w = ts.asarray(np.random.default_rng(1).normal(size=(6, 3)), requires_grad=True)

    def fn(t):
        return F.embedding(ts.asarray([[0, 5, 4], [2, 2, 0]]), t) ** 2

    assert gradcheck(fn, (w,))
    assert gradgradcheck(fn, (w,))
    with pytest.raises(IndexError, match="embedding: index out of range for 6 embeddings"):
        F.embedding(ts.asarray([6]), w)
    with pytest.raises(IndexError, match="embedding: index out of range for 6 embeddings"):
        F.embedding(ts.asarray([-7]), w)


@pytest.mark.parametrize("idx", [[-1], [0, -6], [6]])
def test_embedding_rejects_what_torch_rejects(idx):
    # PyTorch's embedding takes indices in [0, num) only: negative ones raise IndexError too.
    import torch
    with pytest.raises(IndexError):
        torch.nn.functional.embedding(torch.tensor(idx), torch.zeros(6, 3))
    with pytest.raises(IndexError, match=r"embedding: index out of range for 6 embeddings"):
        F.embedding(ts.asarray(idx), ts.zeros((6, 3)))
    with pytest.raises(IndexError, match=r"embedding: index out of range"):
        ts.nn.Embedding(6, 3)(ts.asarray(idx))


@pytest.mark.parametrize("dtype", FLOATS)
def test_gradient_scale_rounds_like_the_forward(dtype):
    # g * scale in float32 for the 16-bit types (as the forward and PyTorch do), rounded once.
    dt = getattr(ts, dtype)
    x = ts.ones(4001, dtype=dt, requires_grad=True)
    y = _draw(x, 0.1)
    g = ts.asarray(np.random.default_rng(3).normal(size=4001)).astype(dt)
    y.backward(g)
    acc = ts.float64 if dtype == "float64" else ts.float32
    want = ts.where(y.detach() != 0, (g.astype(acc) * (1 / 0.9)).astype(dt), 0.0)
    np.testing.assert_array_equal(x.grad.astype(ts.float64).numpy(),
                                  want.astype(ts.float64).numpy())


@pytest.mark.parametrize("dtype", FLOATS)
def test_backward_one_pass_equals_composite(dtype):
    # The plain backward runs the fused dropout_backward kernel; under create_graph the formula
    # is written with ops. Both give mask ? g * scale : 0 (16-bit scaled in float32), for a
    # non-contiguous incoming gradient and a NaN where an element was dropped.
    p = 0.3
    x = ts.randn(37, 29).astype(getattr(ts, dtype)).requires_grad_(True)
    ts.random.seed(3)
    y = F.dropout(x, p, True)
    g = ts.randn(29, 37).astype(getattr(ts, dtype)).T
    kept = (y != 0).numpy()
    gn = g.numpy().copy()
    gn[~kept] = np.nan
    g = ts.asarray(gn.T).T
    (fast,) = ts.autograd.grad(y, x, g, retain_graph=True)
    (slow,) = ts.autograd.grad(y, x, g, create_graph=True)
    acc = np.float64 if dtype == "float64" else np.float32
    ref = np.where(kept, gn.astype(acc) * acc(1 / (1 - p)), 0).astype(fast.numpy().dtype)
    np.testing.assert_array_equal(fast.numpy(), ref)
    np.testing.assert_array_equal(slow.detach().numpy(), ref)


"""Random numbers, dropout and indexing on CUDA without host round trips: every result is
compared with the CPU's for the same seed / inputs (bit for bit where the arithmetic is the
same), and bad device indices raise IndexError at the next synchronization (Note [Deferred
device errors])."""
import numpy as np
import pytest

import tessera as ts
import tessera.nn.functional as F
from tessera import _C

pytestmark = pytest.mark.skipif(not ts.cuda.is_available(), reason="no CUDA device")

DEV = "cuda:0"
FLOATS = ["float16", "bfloat16", "float32", "float64"]
SIZES = [1, 3, 5, 1003, 100_001]


def host(t):
    """A CUDA tensor's values as a NumPy array (float16/bfloat16 widened to float64 exactly)."""
    assert str(t.device) == DEV, t.device
    t = t.cpu()
    if str(t.dtype) in ("tessera.bfloat16", "bfloat16"):
        t = t.astype(ts.float64)
    return t.numpy()


def cpu_np(t):
    if str(t.dtype) in ("tessera.bfloat16", "bfloat16"):
        t = t.astype(ts.float64)
    return t.numpy()


def equal_bits(c, g):
    assert g.dtype == c.dtype and tuple(g.shape) == tuple(c.shape)
    np.testing.assert_array_equal(host(g), cpu_np(c))


# ---------------------------------------------------------------- random fills
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_rand_randn_match_cpu_bit_for_bit(dtype, n):
    dt = getattr(ts, dtype)
    gc, gg = ts.random.Generator(77), ts.random.Generator(77)
    for _ in range(2):  # the second call runs at the next offset on both devices
        equal_bits(gc.rand(n, dtype=dt), gg.rand(n, dtype=dt, device=DEV))
        equal_bits(gc.randn(n, dtype=dt), gg.randn(n, dtype=dt, device=DEV))
        equal_bits(gc.uniform(-3.0, 5.5, n, dtype=dt), gg.uniform(-3.0, 5.5, n, dtype=dt, device=DEV))
        equal_bits(gc.normal(2.0, 0.5, n, dtype=dt), gg.normal(2.0, 0.5, n, dtype=dt, device=DEV))
    assert gc.get_state().tolist() == gg.get_state().tolist()


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint64", "float32",
                                   "float16", "float64"])
def test_randint_matches_cpu(dtype):
    dt = getattr(ts, dtype)
    ranges = [(0, 7), (-50, 50), (0, 2**62)] if dtype in ("int64", "float64") \
        else [(0, 7), (0, 2**62)] if dtype == "uint64" else [(0, 7), (0, 100)]
    for low, high in ranges:  # a negative low is out of bounds for uint64 (torch raises too)
        c = ts.random.Generator(5).randint(low, high, (1001,), dtype=dt)
        g = ts.random.Generator(5).randint(low, high, (1001,), dtype=dt, device=DEV)
        equal_bits(c, g)


def test_default_generator_serves_both_devices():
    ts.random.seed(123)
    a = ts.rand(10, 7, device=DEV)
    b = ts.randn(5, device=DEV)
    ts.random.seed(123)
    equal_bits(ts.rand(10, 7), a)
    equal_bits(ts.randn(5), b)


def test_inplace_fills_of_views_match_cpu():
    for fill in [lambda x, g: x.uniform_(-1.0, 1.0, generator=g),
                 lambda x, g: x.normal_(0.0, 3.0, generator=g)]:
        c, g = ts.zeros((6, 9)), ts.zeros((6, 9), device=DEV)
        fill(c.mT, ts.random.Generator(3))
        fill(g.mT, ts.random.Generator(3))
        equal_bits(c, g)
    e = ts.zeros((0, 3), device=DEV)
    e.uniform_()
    assert tuple(e.shape) == (0, 3)


def test_normal_float64_statistics_on_device():
    x = host(ts.random.Generator(9).randn(1_000_000, dtype=ts.float64, device=DEV))
    assert abs(x.mean()) < 5e-3 and abs(x.std() - 1) < 5e-3


# ---------------------------------------------------------------- dropout
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_dropout_op_matches_cpu(dtype, p):
    dt = getattr(ts, dtype)
    x = ts.asarray(np.random.default_rng(0).normal(size=(37, 29)), dtype=dt)
    yc, mc = _C._dropout(x, p, ts.random.Generator(4)._g, False)
    yg, mg = _C._dropout(x.to(DEV), p, ts.random.Generator(4)._g, False)
    equal_bits(mc, mg)
    equal_bits(yc, yg)


def test_functional_dropout_forward_backward_match_cpu():
    a = np.random.default_rng(1).normal(size=(64, 33)).astype(np.float32)
    outs, grads = [], []
    for dev in ["cpu", DEV]:
        x = ts.asarray(a, device=dev, requires_grad=True)
        ts.random.seed(31)
        y = F.dropout(x, 0.4)
        (y * y).sum().backward()
        outs.append(y.detach().cpu().numpy())
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(grads[0], grads[1])


def test_dropout_inplace_and_dropout2d_on_cuda_match_cpu():
    a = np.random.default_rng(2).normal(size=(4, 6, 5, 5)).astype(np.float32)
    xc, xg = ts.asarray(a), ts.asarray(a, device=DEV)
    ts.random.seed(8)
    F.dropout(xc, 0.5, inplace=True)
    ts.random.seed(8)
    assert F.dropout(xg, 0.5, inplace=True) is xg
    equal_bits(xc, xg)
    ts.random.seed(9)
    c2 = F.dropout2d(ts.asarray(a), 0.5)
    ts.random.seed(9)
    equal_bits(c2, F.dropout2d(ts.asarray(a, device=DEV), 0.5))


# ---------------------------------------------------------------- indexing
def both(a):
    c = ts.asarray(a)
    return c, c.to(DEV)


def test_take_and_getitem_with_device_indices_match_cpu():
    a = np.random.default_rng(3).normal(size=(20, 7, 3)).astype(np.float32)
    xc, xg = both(a)
    for idx in [np.array([3, -1, 7, 3, 19, 0, -20]), np.array([], dtype=np.int64),
                np.array(4), np.array([[1, -2], [0, 5]]), np.array([2, 6], dtype=np.int32)]:
        ic, ig = both(idx)
        equal_bits(xc[ic], xg[ig])
        equal_bits(ts.take(xc, ic, axis=0), ts.take(xg, ig, axis=0))
        if idx.size == 0 or np.all((idx >= -7) & (idx < 7)):
            equal_bits(xc[:, ic], xg[:, ig])
            equal_bits(ts.take(xc, ic, axis=1), ts.take(xg, ig, axis=1))
            equal_bits(xc[..., ic % 3], xg[..., ig % 3])
    equal_bits(ts.take(xc, ts.asarray([0, 400, -1])), ts.take(xg, ts.asarray([0, 400, -1], device=DEV)))
    i1 = ts.asarray([5, 0, 5])
    equal_bits(ts.index_select(xc, 1, i1), ts.index_select(xg, 1, i1.to(DEV)))
    # A strided source and an empty rest block.
    equal_bits(xc[::-2][ts.asarray([1, -1])], xg[::-2][ts.asarray([1, -1], device=DEV)])
    ec, eg = both(np.zeros((5, 0), np.float32))
    equal_bits(ec[ts.asarray([1, 4])], eg[ts.asarray([1, 4], device=DEV)])


def test_take_along_axis_and_gather_match_cpu():
    a = np.random.default_rng(4).normal(size=(6, 8, 5))
    xc, xg = both(a)
    idx = np.random.default_rng(5).integers(-8, 8, size=(6, 3, 5))
    ic, ig = both(idx)
    equal_bits(ts.take_along_axis(xc, ic, axis=1), ts.take_along_axis(xg, ig, axis=1))
    # torch.gather takes no negative indices (take_along_axis counts them from the end).
    equal_bits(ts.gather(xc, 1, ic % 8), ts.gather(xg, 1, ig % 8))
    # Broadcasting x against the indices.
    bc, bg = both(np.random.default_rng(6).integers(0, 5, size=(6, 8, 2)))
    equal_bits(ts.take_along_axis(xc[:, :1], bc, axis=2), ts.take_along_axis(xg[:, :1], bg, axis=2))


def test_backward_scatter_add_with_repeated_indices_matches_cpu():
    a = np.random.default_rng(7).normal(size=(10, 4))
    idx = np.array([1, 1, 1, -9, 3, 9, 9, 0])  # repeats and negatives
    grads = []
    for dev in ["cpu", DEV]:
        x = ts.asarray(a, device=dev, requires_grad=True)
        i = ts.asarray(idx, device=dev)
        w = ts.asarray(np.arange(32.0).reshape(8, 4), device=dev)
        y = (x[i] * w).sum() + (ts.take(x, i, axis=0) ** 2).sum() \
            + ts.take_along_axis(x, ts.asarray(idx[:4].reshape(1, 4) % 10, device=dev), axis=0).sum()
        y.backward()
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)  # atomics: order only


def test_embedding_forward_backward_matches_cpu():
    tokens = np.array([[0, 3, 9, 3], [9, 9, 2, 0]])
    wts = np.random.default_rng(8).normal(size=(10, 6)).astype(np.float32)
    outs, grads = [], []
    for dev in ["cpu", DEV]:
        w = ts.asarray(wts, device=dev, requires_grad=True)
        y = F.embedding(ts.asarray(tokens, device=dev), w, padding_idx=9)
        (y * y).sum().backward()
        outs.append(y.detach().cpu().numpy())
        grads.append(w.grad.cpu().numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-6)
    assert not grads[1][9].any()  # the padding row gets no gradient


def test_scatter_add_and_index_add_match_cpu():
    a = np.random.default_rng(9).normal(size=(7, 5))
    src = np.random.default_rng(10).normal(size=(4, 5))
    idx = np.array([[0, 6, 6, 1, 2]] * 4)
    ref = ts.scatter_add(ts.asarray(a), 0, ts.asarray(idx), ts.asarray(src))
    got = ts.scatter_add(ts.asarray(a, device=DEV), 0, ts.asarray(idx, device=DEV),
                         ts.asarray(src, device=DEV))
    np.testing.assert_allclose(host(got), ref.numpy(), rtol=1e-12, atol=1e-12)
    i1 = np.array([6, 0, 6, 5])
    ref = ts.index_add(ts.asarray(a), 0, ts.asarray(i1), ts.asarray(src))
    for index_dev in ["cpu", DEV]:
        got = ts.index_add(ts.asarray(a, device=DEV), 0, ts.asarray(i1, device=index_dev),
                           ts.asarray(src, device=DEV))
        np.testing.assert_allclose(host(got), ref.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op,lo", [
    (lambda x, i: x[i], -4),
    (lambda x, i: ts.take(x, i, axis=1), -4),
    # take_along_axis counts [-4, 0) from the end, so -5 reaches gather, whose range (as
    # scatter_add's, index_select's and embedding's in PyTorch) is [0, 4).
    (lambda x, i: ts.take_along_axis(x, ts.reshape(i, (-1, 1)), axis=0), 0),
    (lambda x, i: ts.gather(x, 1, ts.reshape(i, (1, -1))), 0),
    (lambda x, i: ts.scatter_add(x, 1, ts.reshape(i, (1, -1)), ts.ones((1, 2), device=DEV)), 0),
    (lambda x, i: ts.index_select(x, 0, i), 0),
    (lambda x, i: ts.index_add(x, 1, i, ts.ones((4, 2), device=DEV)), 0),
    (lambda x, i: F.embedding(i, x), 0),
])
def test_out_of_range_device_index_raises_at_next_sync(op, lo):
    x = ts.ones((4, 4), device=DEV)
    bad = ts.asarray([1, 4], device=DEV)
    y = op(x, bad)  # no host round trip: the error is deferred
    with pytest.raises(IndexError, match="out of range"):
        ts.cuda.synchronize()
    # The report was cleared and the device keeps working.
    ts.cuda.synchronize()
    assert float(ts.sum(x[ts.asarray([0, -1], device=DEV)])) == 8.0
    op(x, ts.asarray([-5, 0], device=DEV))
    with pytest.raises(IndexError, match=rf"-5 is out of range \[{lo}, 4\)"):
        float(ts.sum(x))  # item() synchronizes too
    del y


@pytest.mark.parametrize("op", [
    lambda x, i: ts.gather(x, 0, i.reshape(1, -1)),
    lambda x, i: ts.scatter_add(x, 0, i.reshape(1, -1), ts.ones((1, 2), device=x.device)),
    lambda x, i: ts.index_select(x, 0, i),
    lambda x, i: ts.index_add(x, 0, i, ts.ones((2, 4), device=x.device)),
])
def test_negative_indices_are_rejected_on_the_device_as_on_the_cpu(op):
    # PyTorch's gather/scatter/index_select/index_add take no negative indices; the CPU raises
    # at the call, the GPU at the next synchronization without one at the call.
    with pytest.raises((IndexError, RuntimeError), match="out of"):
        op(ts.ones((4, 4)), ts.asarray([0, -1]))
    op(ts.ones((4, 4), device=DEV), ts.asarray([0, -1], device=DEV))
    with pytest.raises(IndexError, match=r"index -1 is out of range \[0, 4\)"):
        ts.cuda.synchronize()
    ts.cuda.synchronize()


def test_embedding_rejects_negative_device_indices_as_torch():
    w = ts.arange(12.0, device=DEV).reshape(4, 3)
    F.embedding(ts.asarray([[0, -1]], device=DEV), w)
    with pytest.raises(IndexError, match=r"embedding: index -1 is out of range \[0, 4\)"):
        ts.cuda.synchronize()
    with pytest.raises(IndexError, match="out of range"):
        F.embedding(ts.asarray([0], device=DEV), ts.ones((0, 3), device=DEV))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64", "int8"])
@pytest.mark.parametrize("strided", [False, True])
def test_embedding_rows_match_cpu(dtype, strided):
    # The row-copy kernel: 16-byte units for aligned rows, elements otherwise (a transposed
    # weight, rows of 3 elements).
    dt = getattr(ts, dtype)
    for num, dim in [(10, 8), (7, 3), (5, 96)]:
        base = ts.asarray(np.random.default_rng(num).normal(size=(dim, num) if strided else (num, dim)) * 10)
        w = (base.mT if strided else base).astype(dt)
        idx = np.random.default_rng(dim).integers(0, num, size=(4, 6))
        ref = F.embedding(ts.asarray(idx), w)
        got = F.embedding(ts.asarray(idx, device=DEV), w.to(DEV))
        assert got.dtype == ref.dtype and got.shape == ref.shape == (4, 6, dim)
        np.testing.assert_array_equal(host(got.astype(ts.float64)), ref.astype(ts.float64).numpy())


def test_device_indices_do_not_move_to_the_host_before_the_kernel():
    # An out-of-range index in a huge selection would otherwise raise at the call.
    x = ts.zeros((1000, 8), device=DEV)
    idx = ts.randint(0, 1000, (100_000,), device=DEV)
    idx[-1] = 5000  # host-side setitem of one element (no sync needed to plan the take)
    x[idx]
    with pytest.raises(IndexError):
        ts.cuda.synchronize()


# ---------------------------------------------------------------- nonzero
@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (5, 0), (4, 9), (3, 4, 5), (2, 3, 1, 4)])
def test_nonzero_matches_cpu(shape):
    rng = np.random.default_rng(11)
    for a in [rng.random(shape) < 0.3, np.zeros(shape, bool), np.ones(shape, bool),
              (rng.integers(-2, 3, size=shape)).astype(np.float32)]:
        c, g = both(a)
        equal_bits(ts.argwhere(c), ts.argwhere(g))
        equal_bits(c.nonzero(), g.nonzero())
        if len(shape) >= 2:  # a transposed (non-contiguous) input
            equal_bits(ts.argwhere(c.mT), ts.argwhere(g.mT))
        if len(shape) >= 1:
            for tc, tg in zip(ts.nonzero(c), ts.nonzero(g)):
                equal_bits(tc, tg)


def test_nonzero_large_mask():
    a = np.random.default_rng(12).random(3_000_001) < 0.01
    c, g = both(a)
    equal_bits(ts.argwhere(c), ts.argwhere(g))


# ---------------------------------------------------------------- several index arrays
def test_several_device_index_arrays_and_ints_match_cpu():
    a = np.random.default_rng(13).normal(size=(9, 6, 5, 4)).astype(np.float32)
    xc, xg = both(a)
    rng = np.random.default_rng(14)
    r = rng.integers(-9, 9, size=7)
    c = rng.integers(-6, 6, size=7)
    d = rng.integers(-5, 5, size=(3, 1))
    keys = [
        lambda m: (m(r), m(c)),                      # adjacent pair
        lambda m: (m(r)[:, None], m(c)[None, :]),    # an outer product of positions
        lambda m: (0, m(c)),                         # an int beside an array
        lambda m: (-1, slice(None), m(d)),           # int and array apart: B first
        lambda m: (m(r), slice(1, 4), m(d)),         # arrays apart around a slice
        lambda m: (Ellipsis, m(d), m(c[:1] % 4)),    # trailing pair, broadcast
        lambda m: (m(np.array(3)), m(c)),            # a 0-d device array
        lambda m: (m(np.array([], np.int64)), m(np.array([], np.int64))),
    ]
    for key in keys:
        equal_bits(xc[key(ts.asarray)], xg[key(lambda v: ts.asarray(v, device=DEV))])
    # A strided, sliced source.
    equal_bits(xc[::-2, 1:][ts.asarray([0, -1]), ts.asarray([2, 0])],
               xg[::-2, 1:][ts.asarray([0, -1], device=DEV), ts.asarray([2, 0], device=DEV)])


def test_several_device_index_arrays_backward_matches_cpu():
    a = np.random.default_rng(15).normal(size=(6, 5))
    rows, cols = np.array([0, 5, 5, -1, 2]), np.array([4, 0, 0, -5, 1])
    grads = []
    for dev in ["cpu", DEV]:
        x = ts.asarray(a, device=dev, requires_grad=True)
        y = x[ts.asarray(rows, device=dev), ts.asarray(cols, device=dev)]
        (y * ts.asarray(np.arange(1.0, 6.0), device=dev)).sum().backward()
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-12)


def test_bad_index_in_a_second_array_is_deferred_and_a_bad_int_raises_at_once():
    x = ts.ones((4, 5), device=DEV)
    x[ts.asarray([0, 3], device=DEV), ts.asarray([1, 5], device=DEV)]
    with pytest.raises(IndexError, match=r"5 is out of range \[-5, 5\)"):
        ts.cuda.synchronize()
    with pytest.raises(IndexError, match="out of bounds"):
        x[7, ts.asarray([1], device=DEV)]  # an int is a host value: checked at the call
    ts.cuda.synchronize()

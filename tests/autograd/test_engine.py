"""The autograd engine and its user-facing API (formulas per op are tested per family)."""
import gc
import threading

import numpy as np
import pytest
import torch

import tessera as ts


def leaf(a, dtype=None):
    return ts.asarray(np.asarray(a, dtype=dtype or np.float64), requires_grad=True)


def test_simple_chain_matches_torch():
    a_np = np.array([1.0, -2.0, 3.0])
    x = leaf(a_np)
    y = (x * x + x * 3.0 - 1.0) / 2.0
    y.sum().backward()
    xt = torch.tensor(a_np, requires_grad=True)
    ((xt * xt + xt * 3.0 - 1.0) / 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


def test_leaf_flags_and_grad_fn():
    x = leaf([1.0, 2.0])
    assert x.is_leaf and x.requires_grad and x.grad is None and x.grad_fn is None
    y = x * 2
    assert not y.is_leaf and y.requires_grad and y.grad_fn is not None
    assert "Backward" in y.grad_fn.name()
    (fn, nr), = [f for f in y.grad_fn.next_functions if f[0] is not None]
    assert fn.name() == "AccumulateGrad" and nr == 0
    z = ts.asarray([1, 2])
    with pytest.raises(RuntimeError, match="floating point"):
        z.requires_grad_()
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False


def test_grad_accumulates_and_graph_is_freed():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()
    y2 = (x * x).sum()
    y2.backward(retain_graph=True)
    y2.backward()


def test_non_scalar_backward_needs_gradient():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="scalar"):
        (x * 2).backward()
    (x * 2).backward(ts.asarray([1.0, 10.0], dtype=ts.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])


def test_broadcast_gradient_sums_back():
    x = leaf(np.ones((3, 1)))
    y = leaf(np.arange(4.0))
    (x * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((3, 1), 6.0))
    np.testing.assert_allclose(y.grad.numpy(), np.full(4, 3.0))


def test_no_grad_and_friends():
    x = leaf([1.0])
    with ts.no_grad():
        assert not (x * 2).requires_grad
        with ts.enable_grad():
            assert (x * 2).requires_grad
    with ts.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert ts.is_grad_enabled()
    with ts.inference_mode():
        assert not (x * 2).requires_grad

    @ts.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad and ts.is_grad_enabled()


def test_autograd_grad_and_allow_unused():
    x, z = leaf([1.0, 2.0]), leaf([5.0])
    y = (x * x).sum()
    (gx,) = ts.autograd.grad(y, x, retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), [2.0, 4.0])
    assert x.grad is None
    with pytest.raises(RuntimeError, match="allow_unused"):
        ts.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = ts.autograd.grad(y, [x, z], allow_unused=True)
    assert gz is None


def test_grad_wrt_intermediate():
    x = leaf([1.0, 2.0])
    h = x * 3
    y = (h * h).sum()
    gh, gx = ts.autograd.grad(y, [h, x])
    np.testing.assert_allclose(gh.numpy(), 2 * h.detach().numpy())
    np.testing.assert_allclose(gx.numpy(), 18 * x.detach().numpy())


def test_double_backward():
    x = leaf([1.0, 2.0, 3.0])
    y = (x * x * x).sum()
    (g,) = ts.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.numpy(), 3 * np.array([1.0, 4.0, 9.0]))
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.array([1.0, 2.0, 3.0]))


def test_hooks_retain_grad_detach():
    x = leaf([1.0, 2.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 10)
    y = x * 2
    y.retain_grad()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 20.0])
    np.testing.assert_allclose(y.grad.numpy(), [1.0, 1.0])
    assert len(seen) == 1
    h()  # removes the hook (a callable handle)
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    d = (x * 2).detach()
    assert not d.requires_grad and d.grad_fn is None


def test_inplace_modification_of_saved_tensor_is_detected():
    x = leaf([1.0, 2.0])
    a = x * 1.0
    y = a * a
    a += 1.0
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


def test_custom_function():
    class Cube(ts.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert ctx.needs_input_grad == (True,)
            return g * 3 * x * x

    x = leaf([1.0, 2.0])
    Cube.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])


def test_gradcheck_reports_worst_element():
    x = leaf([0.5, 1.5])
    assert ts.testing.gradcheck(lambda t: t * t * 2.0, (x,))

    class Wrong(ts.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    with pytest.raises(ts.testing.GradcheckError, match="worst at"):
        ts.testing.gradcheck(Wrong.apply, (x,))


def test_functional_jacobian_hessian():
    x = leaf([1.0, 2.0])
    J = ts.autograd.functional.jacobian(lambda t: t * t, x)
    np.testing.assert_allclose(J.numpy(), np.diag([2.0, 4.0]))
    H = ts.autograd.functional.hessian(lambda t: (t * t * t).sum(), x)
    np.testing.assert_allclose(H.numpy(), np.diag([6.0, 12.0]))
    _, vjp = ts.autograd.functional.vjp(lambda t: t * t, x, ts.asarray([1.0, 1.0], dtype=ts.float64))
    np.testing.assert_allclose(vjp.numpy(), [2.0, 4.0])
    _, jvp = ts.autograd.functional.jvp(lambda t: t * t, x, ts.asarray([1.0, 0.0], dtype=ts.float64))
    np.testing.assert_allclose(jvp.numpy(), [2.0, 0.0])


def test_detect_anomaly_names_op():
    x = leaf([0.0])
    with ts.autograd.detect_anomaly():
        y = ts.sqrt(x) * 0.0  # d/dx sqrt at 0 is inf, times 0 -> nan (inf alone passes, as in torch)
        with pytest.raises(RuntimeError, match="Sqrt"):
            y.sum().backward()


def test_checkpoint_matches_plain():
    x = leaf([1.0, 2.0])
    f = lambda t: (t * t * 3.0).sum()  # noqa: E731
    ts.utils.checkpoint.checkpoint(f, x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


def test_threads_backward_independent_graphs():
    results = {}

    def work(k):
        x = leaf(np.full(1000, float(k)))
        for _ in range(20):
            y = (x * x * float(k)).sum()
            (g,) = ts.autograd.grad(y, x)
        results[k] = g.numpy()

    ts_ = [threading.Thread(target=work, args=(k,)) for k in (1, 2)]
    for t in ts_:
        t.start()
    for t in ts_:
        t.join()
    np.testing.assert_allclose(results[1], np.full(1000, 2.0))
    np.testing.assert_allclose(results[2], np.full(1000, 8.0))


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.not_sanitized
def test_graph_memory_flat_over_many_iterations():
    w = leaf(np.ones((16, 16)))
    x = ts.asarray(np.ones((8, 16)))

    def step():
        y = ((x @ w) * 2.0).sum()
        y.backward()
        w.grad = None

    for _ in range(500):
        step()
    gc.collect()
    before = _rss_mb()
    for _ in range(10_000):
        step()
    gc.collect()
    assert _rss_mb() - before < 8

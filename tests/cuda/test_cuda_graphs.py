"""CUDA graphs (Note [CUDA graphs] in csrc/cuda/cuda_graph.h): capture and replay against eager
execution, the private memory pool, random numbers across replays, and the errors.

Without a GPU (CI) only the API surface and its errors run; the lead runs the rest on the GPU
machine (benchmarks/cuda_graphs_device.sh)."""
import numpy as np
import pytest

import tessera as ts
from harness import REPO_ROOT

HAS_CUDA = ts.cuda.is_available()
gpu = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
nogpu = pytest.mark.skipif(HAS_CUDA, reason="checks the CPU-only behaviour")


def test_api_exists_as_in_torch():
    torch = pytest.importorskip("torch")
    for name in ["CUDAGraph", "graph", "graph_pool_handle", "make_graphed_callables",
                 "is_current_stream_capturing"]:
        assert hasattr(ts.cuda, name) and hasattr(torch.cuda, name), name
    for m in ["capture_begin", "capture_end", "replay", "reset", "pool"]:
        assert callable(getattr(ts.cuda.CUDAGraph, m))


# ---------------------------------------------------------------- without a GPU
@nogpu
@pytest.mark.parametrize("call", [
    lambda: ts.cuda.CUDAGraph(),
    lambda: ts.cuda.graph_pool_handle(),
])
def test_graph_api_without_cuda_raises(call):
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        call()


@nogpu
def test_not_capturing_without_cuda():
    assert ts.cuda.is_current_stream_capturing() is False


def test_graph_rejects_non_graphs():
    with pytest.raises(TypeError, match="expected a CUDAGraph"):
        ts.cuda.graph(object())


# ---------------------------------------------------------------- on the GPU
def _np(x):
    return x.cpu().numpy()


@gpu
def test_elementwise_capture_replays_new_inputs():
    x = ts.ones(1000, device="cuda")
    y = x * 2 + 1  # warm-up outside the capture
    g = ts.cuda.CUDAGraph()
    with ts.cuda.graph(g):
        y = ts.sin(x) * 2 + 1
    for v in [0.5, -1.0, 3.0]:
        x.copy_(ts.full((1000,), v, device="cuda"))
        g.replay()
        np.testing.assert_allclose(_np(y), np.sin(np.full(1000, v, np.float32)) * 2 + 1, rtol=1e-6)


@gpu
def test_matmul_capture_equals_eager():
    rng = np.random.default_rng(0)
    a = ts.asarray(rng.standard_normal((64, 128), dtype=np.float32), device="cuda")
    b = ts.asarray(rng.standard_normal((128, 32), dtype=np.float32), device="cuda")
    eager = _np(ts.relu(a @ b))
    g = ts.cuda.CUDAGraph()
    with ts.cuda.graph(g):
        out = ts.relu(a @ b)
    g.replay()
    np.testing.assert_array_equal(_np(out), eager)
    a2 = rng.standard_normal((64, 128), dtype=np.float32)
    a.copy_(ts.asarray(a2, device="cuda"))
    g.replay()
    np.testing.assert_array_equal(_np(out), _np(ts.relu(ts.asarray(a2, device="cuda") @ b)))


def _mlp_step(model, opt, x, y):
    opt.zero_grad(set_to_none=False)
    loss = ts.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


@gpu
def test_training_step_capture_equals_eager():
    def make():
        ts.manual_seed(0)
        m = ts.nn.Sequential(ts.nn.Linear(16, 32), ts.nn.GELU(), ts.nn.Linear(32, 4)).cuda()
        return m, ts.optim.AdamW(m.parameters(), lr=1e-2, fused=True, capturable=True)
    rng = np.random.default_rng(1)
    batches = [(rng.standard_normal((8, 16), dtype=np.float32),
                rng.standard_normal((8, 4), dtype=np.float32)) for _ in range(6)]
    m1, o1 = make()
    eager = []
    for xb, yb in batches:
        eager.append(float(_mlp_step(m1, o1, ts.asarray(xb, device="cuda"),
                                     ts.asarray(yb, device="cuda"))))
    m2, o2 = make()
    sx = ts.asarray(batches[0][0], device="cuda")
    sy = ts.asarray(batches[0][1], device="cuda")
    # warm-up on a side stream (the first step creates the optimizer state), as in PyTorch
    s = ts.cuda.Stream()
    s.wait_stream(ts.cuda.current_stream())
    with ts.cuda.stream(s):
        loss = _mlp_step(m2, o2, sx, sy)
    ts.cuda.current_stream().wait_stream(s)
    got = [float(loss)]
    g = ts.cuda.CUDAGraph()
    with ts.cuda.graph(g):
        static_loss = _mlp_step(m2, o2, sx, sy)
    for xb, yb in batches[1:]:
        sx.copy_(ts.asarray(xb, device="cuda"))
        sy.copy_(ts.asarray(yb, device="cuda"))
        g.replay()
        got.append(float(static_loss))
    np.testing.assert_allclose(got, eager, rtol=1e-5, atol=1e-6)
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(_np(p2), _np(p1), rtol=1e-5, atol=1e-6)


@gpu
def test_dropout_differs_between_replays_and_reproduces_with_seed():
    x = ts.ones(4096, device="cuda")
    ts.nn.functional.dropout(x, 0.5)
    g = ts.cuda.CUDAGraph()
    with ts.cuda.graph(g):
        y = ts.nn.functional.dropout(x, 0.5)
    ts.manual_seed(123)
    g.replay()
    a = _np(y).copy()
    g.replay()
    b = _np(y).copy()
    assert not np.array_equal(a, b)  # fresh numbers per replay
    assert 0.4 < (a > 0).mean() < 0.6
    ts.manual_seed(123)
    g.replay()
    np.testing.assert_array_equal(_np(y), a)  # manual_seed reproduces the replays
    ts.manual_seed(123)
    eager = _np(ts.nn.functional.dropout(x, 0.5))
    np.testing.assert_array_equal(eager, a)  # and they are eager execution's numbers


@gpu
def test_random_fill_advances_generator_per_replay():
    out = ts.empty(1000, device="cuda")
    out.uniform_()
    g = ts.cuda.CUDAGraph()
    with ts.cuda.graph(g):
        out.uniform_()
        out.mul_(2)
    ts.manual_seed(7)
    g.replay()
    first = _np(out).copy()
    ts.manual_seed(7)
    ref = ts.empty(1000, device="cuda").uniform_() * 2
    np.testing.assert_array_equal(first, _np(ref))
    g.replay()
    assert not np.array_equal(first, _np(out))


@gpu
def test_private_pool_is_not_reused_by_eager_allocations():
    x = ts.ones(1 << 16, device="cuda")
    g = ts.cuda.CUDAGraph()
    with ts.cuda.graph(g):
        tmp = x * 3  # allocated from the graph's private pool
        out = tmp + 1
        del tmp  # freed inside the capture: back to the private pool only
    pool_ptrs = {out.data_ptr()}
    snap = ts.cuda.memory_snapshot()
    private = [seg for seg in snap if seg["segment_pool_id"] == g.pool()]
    assert private, "the capture allocated from a private pool"
    private_addrs = {b["address"] for seg in private for b in seg["blocks"]}
    assert out.data_ptr() in private_addrs
    eager = [ts.empty(1 << 16, device="cuda") for _ in range(8)]
    for e in eager:
        assert all(not (seg["address"] <= e.data_ptr() < seg["address"] + seg["total_size"])
                   for seg in private), "an eager allocation reused the graph's pool"
    g.replay()
    np.testing.assert_array_equal(_np(out), np.full(1 << 16, 4, np.float32))
    assert pool_ptrs == {out.data_ptr()}


@gpu
def test_shared_pool_and_reset_release_memory():
    x = ts.ones(1 << 18, device="cuda")
    g1, g2 = ts.cuda.CUDAGraph(), ts.cuda.CUDAGraph()
    with ts.cuda.graph(g1):
        a = x + 1
    with ts.cuda.graph(g2, pool=g1.pool()):
        b = a * 2
    assert g2.pool() == g1.pool()
    g1.replay()
    g2.replay()
    np.testing.assert_array_equal(_np(b), np.full(1 << 18, 4, np.float32))
    handle = ts.cuda.graph_pool_handle()
    assert handle != g1.pool()
    del a, b
    g1.reset()
    g2.reset()
    ts.cuda.empty_cache()
    assert not [seg for seg in ts.cuda.memory_snapshot() if seg["segment_pool_id"] == g1.pool()]


@gpu
@pytest.mark.parametrize("sync", [
    lambda y: y.sum().item(),
    lambda y: y.cpu(),
    lambda y: ts.cuda.synchronize(),
    lambda y: float(y[0]),
    lambda y: ts.cuda.current_stream().synchronize(),
])
def test_sync_during_capture_raises_clearly(sync):
    x = ts.ones(16, device="cuda")
    g = ts.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="CUDA graph is being captured"):
        with ts.cuda.graph(g):
            y = x * 2
            sync(y)
    assert ts.cuda.is_current_stream_capturing() is False
    # the device stays usable, and so does a new capture
    g2 = ts.cuda.CUDAGraph()
    with ts.cuda.graph(g2):
        z = x + 1
    g2.replay()
    np.testing.assert_array_equal(_np(z), np.full(16, 2, np.float32))


@gpu
def test_host_constants_in_capture_are_snapshotted():
    x = ts.zeros(5, device="cuda")
    host = np.arange(5, dtype=np.float32)
    g = ts.cuda.CUDAGraph()
    with ts.cuda.graph(g):
        pos = ts.arange(5, device="cuda")  # nanoGPT's position ids: host data copied in
        c = ts.asarray(host, device="cuda")
        out = x + c + pos.astype(ts.float32)
    host[:] = 100  # the capture took a snapshot: later host writes do not leak in
    x.fill_(1.0)
    g.replay()
    np.testing.assert_array_equal(_np(out), 1 + 2 * np.arange(5, dtype=np.float32))


@gpu
def test_capture_on_default_stream_raises():
    g = ts.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="default stream"):
        g.capture_begin()


@gpu
def test_replay_before_capture_raises():
    with pytest.raises(RuntimeError, match="nothing captured"):
        ts.cuda.CUDAGraph().replay()


@gpu
def test_is_current_stream_capturing():
    g = ts.cuda.CUDAGraph()
    assert not ts.cuda.is_current_stream_capturing()
    x = ts.ones(4, device="cuda")
    with ts.cuda.graph(g):
        inside = ts.cuda.is_current_stream_capturing()
        x.add_(1)
    assert inside


@gpu
def test_make_graphed_callables_module_matches_eager():
    ts.manual_seed(0)
    m = ts.nn.Sequential(ts.nn.Linear(8, 16), ts.nn.ReLU(), ts.nn.Linear(16, 2)).cuda()
    ts.manual_seed(0)
    ref = ts.nn.Sequential(ts.nn.Linear(8, 16), ts.nn.ReLU(), ts.nn.Linear(16, 2)).cuda()
    x0 = ts.randn(4, 8, device="cuda", requires_grad=True)
    gm = ts.cuda.make_graphed_callables(m, (x0,))
    rng = np.random.default_rng(0)
    for _ in range(3):
        xb = rng.standard_normal((4, 8), dtype=np.float32)
        xg = ts.asarray(xb, device="cuda").requires_grad_()
        xr = ts.asarray(xb, device="cuda").requires_grad_()
        for p in list(gm.parameters()) + list(ref.parameters()):
            p.grad = None
        out_g = gm(xg)
        out_r = ref(xr)
        np.testing.assert_allclose(_np(out_g.detach()), _np(out_r.detach()), rtol=1e-5, atol=1e-6)
        out_g.sum().backward()
        out_r.sum().backward()
        np.testing.assert_allclose(_np(xg.grad), _np(xr.grad), rtol=1e-5, atol=1e-6)
        for pg, pr in zip(gm.parameters(), ref.parameters()):
            np.testing.assert_allclose(_np(pg.grad), _np(pr.grad), rtol=1e-5, atol=1e-6)


@gpu
def test_make_graphed_callables_rejects_other_shapes():
    f = ts.cuda.make_graphed_callables(lambda a: a * 2, (ts.ones(3, device="cuda"),))
    with pytest.raises(ValueError, match="static shapes"):
        f(ts.ones(4, device="cuda"))


@gpu
def test_capturable_adamw_matches_host_step_counts():
    def make(capturable):
        ts.manual_seed(0)
        m = ts.nn.Linear(8, 8).cuda()
        return m, ts.optim.AdamW(m.parameters(), lr=1e-2, capturable=capturable)
    (m1, o1), (m2, o2) = make(False), make(True)
    x = ts.randn(4, 8, device="cuda")
    for _ in range(5):
        for m, o in [(m1, o1), (m2, o2)]:
            o.zero_grad()
            m(x).square().sum().backward()
            o.step()
    st = o2.state[next(iter(m2.parameters()))]["step"]
    assert st.is_cuda and float(st) == 5.0
    assert not o1.state[next(iter(m1.parameters()))]["step"].is_cuda
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(_np(p2), _np(p1), rtol=1e-6, atol=1e-7)


@gpu
def test_capturing_a_non_capturable_adam_step_raises():
    m = ts.nn.Linear(4, 4).cuda()
    o = ts.optim.AdamW(m.parameters())
    m(ts.ones(2, 4, device="cuda")).sum().backward()
    o.step()
    g = ts.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="capturable=True"):
        with ts.cuda.graph(g):
            o.step()


def _bench_module():
    import importlib.util
    path = REPO_ROOT / "benchmarks" / "bench_cuda_gpt.py"
    spec = importlib.util.spec_from_file_location("bench_cuda_gpt_for_tests", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@gpu
@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_nanogpt_step_capture_equals_eager(dropout):
    """nanoGPT's model and training step (tied head, flash attention, cross entropy,
    clip_grad_norm_, fused AdamW) captured whole: the replays give eager execution's losses
    and weights, dropout included (the replays draw what eager steps draw after the same
    manual_seed)."""
    bench = _bench_module()
    cfg = dict(n_layer=2, n_head=2, n_embd=32, block=16, vocab=50, dropout=dropout, bias=False)
    rng = np.random.default_rng(0)
    batches = [(rng.integers(0, 50, (4, 16)), rng.integers(0, 50, (4, 16))) for _ in range(5)]

    def make():
        ts.manual_seed(0)
        model = bench.build_nanogpt(ts, capturable=True, **cfg).to("cuda")
        model.train()
        return model, model.configure_optimizers(0.1, 1e-3, (0.9, 0.99))

    def step(model, opt, x, y):
        loss = model(x, y)
        loss.backward()
        ts.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=False)
        return loss

    m1, o1 = make()
    x = ts.asarray(batches[0][0], device="cuda")
    y = ts.asarray(batches[0][1], device="cuda")
    ts.manual_seed(1)
    eager = []
    for xb, yb in batches:
        x.copy_(ts.asarray(xb, device="cuda"))
        y.copy_(ts.asarray(yb, device="cuda"))
        eager.append(float(step(m1, o1, x, y)))
    w_eager = [_np(p) for p in m1.parameters()]

    m2, o2 = make()
    x.copy_(ts.asarray(batches[0][0], device="cuda"))
    y.copy_(ts.asarray(batches[0][1], device="cuda"))
    ts.manual_seed(1)
    side = ts.cuda.Stream()
    side.wait_stream(ts.cuda.current_stream())
    with ts.cuda.stream(side):
        got = [float(step(m2, o2, x, y))]  # warm-up: creates the optimizer state
    ts.cuda.current_stream().wait_stream(side)
    g = ts.cuda.CUDAGraph()
    state = ts.random.default_generator.get_state()
    with ts.cuda.graph(g):
        static_loss = step(m2, o2, x, y)
    ts.random.default_generator.set_state(state)  # the capture itself draws nothing
    for xb, yb in batches[1:]:
        x.copy_(ts.asarray(xb, device="cuda"))
        y.copy_(ts.asarray(yb, device="cuda"))
        g.replay()
        got.append(float(static_loss))
    np.testing.assert_allclose(got, eager, rtol=1e-5)
    for a, b in zip(m2.parameters(), w_eager):
        np.testing.assert_allclose(_np(a), b, rtol=1e-4, atol=1e-6)

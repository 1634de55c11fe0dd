"""Small host -> device copies that do not wait for the stream (Note [Staged host copies]) and
tuned float32 GEMMs (Note [Tuned GEMMs], ts.cuda.tunable): values against the CPU / float64,
with tuning on and off, and copies issued while the stream is busy."""
import numpy as np
import pytest

import tessera as ts

pytestmark = pytest.mark.skipif(not ts.cuda.is_available(), reason="no CUDA device")


def busy_stream():
    """Queues about 50 ms of GPU work, so that a copy issued next runs behind it."""
    a = ts.ones((4096, 4096), device="cuda")
    for _ in range(10):
        a = ts.matmul(a, a) * (1.0 / 4096)
    return a


@pytest.mark.parametrize("n", [1, 7, 256, 1000, 200_000, 300_000])
def test_small_host_copies_keep_values_behind_queued_work(n):
    src = np.arange(n, dtype=np.int64) * 3 - 5
    keep = busy_stream()
    t = ts.asarray(src, device="cuda")
    src[:] = -1  # the copy took the bytes when it was issued
    r = ts.arange(0, n, device="cuda")
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(n, dtype=np.int64) * 3 - 5)
    np.testing.assert_array_equal(r.cpu().numpy(), np.arange(n))
    assert float(keep[0, 0].item()) == pytest.approx(1.0)


def test_many_copies_in_flight_reuse_blocks_safely():
    keep = busy_stream()
    outs = [ts.asarray(np.full(1000, i, dtype=np.float32), device="cuda") for i in range(200)]
    for i, o in enumerate(outs):
        assert np.all(o.cpu().numpy() == i)
    del keep


@pytest.mark.parametrize("tuned", [True, False])
@pytest.mark.parametrize("shape", [(4096, 384, 1152), (1152, 16384, 384), (2048, 1024, 1536),
                                   (1031, 1037, 1029)])  # odd sizes: unaligned rows
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_tuned_float32_gemms_match_float64(tuned, shape, layout):
    m, k, n = shape
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    was = ts.cuda.tunable.is_enabled()
    ts.cuda.tunable.enable(tuned)
    try:
        ta = ts.asarray(a if layout[0] == "n" else a.T.copy(), device="cuda")
        tb = ts.asarray(b if layout[1] == "n" else b.T.copy(), device="cuda")
        ta = ta if layout[0] == "n" else ta.T
        tb = tb if layout[1] == "n" else tb.T
        for _ in range(2):  # the first call tunes, the second runs the choice
            got = ts.matmul(ta, tb).cpu().numpy()
            want = a.astype(np.float64) @ b.astype(np.float64)
            err = np.abs(got - want).max() / np.abs(want).max()
            assert err < 1e-5, err
    finally:
        ts.cuda.tunable.enable(was)



def test_tuned_gemm_error_is_float32s():
    # Whichever kernel the tuner keeps (cuBLAS's default or a cuBLASLt one), its error against
    # float64 stays that of float32 FFMA (TF32 would be ~3e-4 here).
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2048, 4096)).astype(np.float32)
    b = rng.standard_normal((4096, 1024)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    errs = {}
    was = ts.cuda.tunable.is_enabled()
    try:
        for tuned in (False, True):
            ts.cuda.tunable.enable(tuned)
            ta, tb = ts.asarray(a, device="cuda"), ts.asarray(b, device="cuda")
            for _ in range(2):
                got = ts.matmul(ta, tb).cpu().numpy()
            errs[tuned] = np.abs(got - want).max() / np.abs(want).max()
    finally:
        ts.cuda.tunable.enable(was)
    assert errs[True] < 4 * errs[False] + 1e-7, errs


def test_tuned_gemm_replays_in_a_cuda_graph():
    a = ts.randn(2048, 1024, device="cuda")
    b = ts.randn(1024, 1024, device="cuda")
    ref = ts.matmul(a, b)  # tunes outside the capture
    s = ts.cuda.Stream()
    s.wait_stream(ts.cuda.current_stream())
    with ts.cuda.stream(s):
        ts.matmul(a, b)
    ts.cuda.current_stream().wait_stream(s)
    g = ts.cuda.CUDAGraph()
    with ts.cuda.graph(g):
        out = ts.matmul(a, b)
    a.copy_(a * 2)
    g.replay()
    ts.cuda.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), 2 * ref.cpu().numpy(), rtol=1e-4, atol=1e-3)

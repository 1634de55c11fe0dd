"""cuDNN's fused attention on the CUDA path of flash attention (Note [cuDNN attention] in
csrc/cuda/cudnn_attention.cpp): float16/bfloat16 forward (out, lse) and backward (dq, dk, dv) on
cuDNN against a float64 reference and against tessera's own kernels, causal or not, sequence
lengths off the tiles, L != S, several batch*head counts, strided q/k/v views of one
projection; the lse of either path feeds the other's backward; dropout: the keep rate, the
1/(1-p) scale, independent masks across heads and calls, reproduction under ts.manual_seed,
the backward regenerating the forward's mask (checked against the mask read back from a forward
with an identity V), the backward following the forward's path when the switch flips between
them, capture in a CUDA graph; the path reported by ts.backends.cuda.last_attention_path(), the
switches (enable_cudnn_sdp, ts.backends.cudnn.enabled), fallbacks (float32, head dims off
multiples of 8), and determinism under ts.backends.cudnn.deterministic."""
from __future__ import annotations

import numpy as np
import pytest

import tessera as ts
from tessera import _C
from tessera.nn import functional as F

pytestmark = pytest.mark.skipif(not ts.cuda.is_available(), reason="no CUDA device")

rng = np.random.default_rng(0)
TOL = {"float16": 4e-3, "bfloat16": 3e-2}
DTYPES = list(TOL)
B_ = ts.backends.cuda


@pytest.fixture(autouse=True)
def _restore_switches():
    on, cudnn_on, det = B_.cudnn_sdp_enabled(), ts.backends.cudnn.enabled, \
        ts.backends.cudnn.deterministic
    yield
    B_.enable_cudnn_sdp(on)
    ts.backends.cudnn.enabled = cudnn_on
    ts.backends.cudnn.deterministic = det


def _cudnn_takes_attention() -> bool:
    """Whether cuDNN loads and runs a plain bfloat16 attention problem here."""
    if not ts.backends.cudnn.is_available():
        return False
    q = ts.zeros((1, 2, 64, 64), dtype=ts.bfloat16, device="cuda")
    B_.enable_cudnn_sdp(True)
    _C._flash_attention(q, q, q, 0.125, True)
    return B_.last_attention_path() == "cudnn"


CUDNN = pytest.mark.skipif("not _cudnn_takes_attention()",
                           reason="cuDNN's fused attention does not run here")


def host(t: ts.Tensor) -> np.ndarray:
    return t.to("cpu").astype(ts.float64).numpy()


def close(got: ts.Tensor, want: np.ndarray, dtype: str, what: str = "") -> None:
    a = host(got)
    big = max(float(np.max(np.abs(want))), 1.0)
    np.testing.assert_allclose(a, want, rtol=TOL[dtype], atol=TOL[dtype] * big, err_msg=what)


def reference(q, k, v, g, scale, causal, keep=None, p=0.0):
    """float64 out, lse, dq, dk, dv of dropout(softmax(scale q k^T [causal])) v; keep: the
    boolean dropout mask (B, H, L, S) or None."""
    s = scale * q @ np.swapaxes(k, -1, -2)
    L, S = s.shape[-2:]
    if causal:
        s = np.where(np.tril(np.ones((L, S), dtype=bool)), s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    lse = (m + np.log(e.sum(-1, keepdims=True)))[..., 0]
    P = e / e.sum(-1, keepdims=True)
    f = np.ones_like(P) if keep is None else keep / (1.0 - p)
    Pd = P * f
    out = Pd @ v
    dv = np.swapaxes(Pd, -1, -2) @ g
    dP = (g @ np.swapaxes(v, -1, -2)) * f
    dS = P * (dP - (dP * P).sum(-1, keepdims=True))
    return out, lse, scale * dS @ k, scale * np.swapaxes(dS, -1, -2) @ q, dv


def operands(shape_q, shape_k, shape_v, dtype):
    """Rounded float64 arrays and their CUDA tensors."""
    out = []
    for s in (shape_q, shape_k, shape_v, shape_q[:-1] + shape_v[-1:]):
        t = ts.asarray(rng.standard_normal(s)).astype(getattr(ts, dtype))
        out.append((host(t), t.to("cuda")))
    return out


def run(q, k, v, g, scale, causal, drop=(0.0, 0, 0)):
    out, lse = _C._flash_attention(q, k, v, scale, causal, *drop)
    fwd_path = B_.last_attention_path()
    grads = _C._flash_attention_backward(q, k, v, out, lse, g, scale, causal, *drop)
    return (out, lse) + tuple(grads), fwd_path, B_.last_attention_path()


SHAPES = [(2, 3, 77, 77, 64, 64), (1, 4, 130, 65, 64, 64), (3, 2, 65, 200, 128, 128),
          (2, 2, 100, 100, 32, 32), (4, 6, 256, 256, 64, 64), (1, 1, 1, 1, 64, 64),
          (2, 3, 70, 90, 64, 32)]


@CUDNN
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("B,H,L,S,E,Ev", SHAPES)
def test_cudnn_and_ours_match_reference(B, H, L, S, E, Ev, causal, dtype) -> None:
    """Both paths against the float64 reference on the same rounded inputs; cuDNN takes the
    common shapes (head dim 64, L == S)."""
    (q, qg), (k, kg), (v, vg), (g, gg) = operands((B, H, L, E), (B, H, S, E), (B, H, S, Ev), dtype)
    scale = 1.0 / np.sqrt(E)
    want = reference(q, k, v, g, scale, causal)
    for on in (True, False):
        B_.enable_cudnn_sdp(on)
        got, fwd, bwd = run(qg, kg, vg, gg, scale, causal)
        if not on:
            assert fwd == bwd == "cuda_flash"
        elif E == Ev == 64 and L == S >= 64:
            assert fwd == bwd == "cudnn", B_._cudnn_sdp_status()
        for name, a, b in zip(("out", "lse", "dq", "dk", "dv"), got, want):
            if name == "lse":
                np.testing.assert_allclose(host(a), b, rtol=1e-3, atol=1e-3, err_msg=fwd)
            else:
                close(a, b, dtype, f"{name} on {fwd}/{bwd}")


@CUDNN
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
def test_paths_mix_without_dropout(dtype, causal) -> None:
    """cuDNN's Stats is tessera's lse (natural log of the scaled scores' sum of exponentials):
    a cuDNN forward feeds tessera's backward and the other way round."""
    (q, qg), (k, kg), (v, vg), (g, gg) = operands((2, 3, 96, 64), (2, 3, 96, 64), (2, 3, 96, 64),
                                                  dtype)
    want = reference(q, k, v, g, 0.125, causal)
    for first, second in ((True, False), (False, True)):
        B_.enable_cudnn_sdp(first)
        out, lse = _C._flash_attention(qg, kg, vg, 0.125, causal)
        B_.enable_cudnn_sdp(second)
        grads = _C._flash_attention_backward(qg, kg, vg, out, lse, gg, 0.125, causal)
        assert B_.last_attention_path() == ("cudnn" if second else "cuda_flash")
        for a, b in zip(grads, want[2:]):
            close(a, b, dtype)


@CUDNN
@pytest.mark.parametrize("dtype", DTYPES)
def test_sdpa_strided_views_on_cudnn(dtype) -> None:
    """q/k/v as (B, H, T, E) views of one (B, T, 3 * H * E) projection go to cuDNN in place;
    values and gradients match the reference."""
    Bn, T, H, E = 2, 100, 4, 64
    x = ts.asarray(rng.standard_normal((Bn, T, 3 * H * E))).astype(getattr(ts, dtype))
    xg = x.to("cuda").requires_grad_(True)
    gup = ts.asarray(rng.standard_normal((Bn, H, T, E))).astype(getattr(ts, dtype))
    q, k, v = (xg[..., i * H * E:(i + 1) * H * E].reshape(Bn, T, H, E).permute(0, 2, 1, 3)
               for i in range(3))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert B_.last_attention_path() == "cudnn"
    out.backward(gup.to("cuda"))
    assert B_.last_attention_path() == "cudnn"
    xn = host(x)
    qn, kn, vn = (xn[..., i * H * E:(i + 1) * H * E].reshape(Bn, T, H, E).transpose(0, 2, 1, 3)
                  for i in range(3))
    o, _, dq, dk, dv = reference(qn, kn, vn, host(gup), 1 / 8, True)
    close(out.detach(), o, dtype)
    dx = np.concatenate([d.transpose(0, 2, 1, 3).reshape(Bn, T, H * E) for d in (dq, dk, dv)], -1)
    close(xg.grad, dx, dtype)


def test_switches_and_reported_path() -> None:
    """enable_cudnn_sdp / cudnn_sdp_enabled as PyTorch's; float32 and head dims off multiples
    of 8 stay on tessera's kernels, as does everything with cuDNN switched off."""
    assert B_.cudnn_sdp_enabled() is True  # PyTorch's default
    B_.enable_cudnn_sdp(False)
    assert B_.cudnn_sdp_enabled() is False
    q = ts.zeros((2, 2, 40, 64), dtype=ts.bfloat16, device="cuda")
    F.scaled_dot_product_attention(q, q, q)
    assert B_.last_attention_path() == "cuda_flash"
    B_.enable_cudnn_sdp(True)
    f32 = q.astype(ts.float32)
    F.scaled_dot_product_attention(f32, f32, f32)
    assert B_.last_attention_path() == "cuda_flash"
    odd = ts.zeros((2, 2, 40, 20), dtype=ts.bfloat16, device="cuda")
    F.scaled_dot_product_attention(odd, odd, odd)
    assert B_.last_attention_path() == "cuda_flash"
    if _cudnn_takes_attention():
        F.scaled_dot_product_attention(q, q, q)
        assert B_.last_attention_path() == "cudnn" and B_._cudnn_sdp_status() == ""
        ts.backends.cudnn.enabled = False
        F.scaled_dot_product_attention(q, q, q)
        assert B_.last_attention_path() == "cuda_flash"
    c = q.to("cpu").astype(ts.float32)
    _C._flash_attention(c, c, c, 1.0, False)
    assert B_.last_attention_path() == "cpu"


@CUDNN
def test_fallback_status_names_the_reason() -> None:
    odd = ts.zeros((2, 2, 40, 20), dtype=ts.float16, device="cuda")
    _C._flash_attention(odd, odd, odd, 1.0, False)
    assert B_.last_attention_path() == "cuda_flash"
    assert "multiples of 8" in B_._cudnn_sdp_status()


# ---- dropout

def keep_mask(q, k, scale, causal, p, seed, offset, S, dtype):
    """The dropout mask (B, H, L, S) and factors of the current path, read back from a forward
    with V = I (Ev = the next multiple of 8 above S): out[..., :S] = keep * P / (1 - p)."""
    Bn, H, L, _ = q.shape
    Ev = -(-S // 8) * 8
    eye = np.zeros((Bn, H, S, Ev))
    eye[..., np.arange(S), np.arange(S)] = 1.0
    ident = ts.asarray(eye).astype(getattr(ts, dtype)).to("cuda")
    out, _ = _C._flash_attention(q, k, ident, scale, causal, p, seed, offset)
    return host(out)[..., :S]


@CUDNN
@pytest.mark.parametrize("use_cudnn", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("B,H,L,S", [(2, 3, 64, 64), (1, 4, 50, 50), (2, 2, 100, 40)])
def test_dropout_backward_regenerates_forward_mask(B, H, L, S, causal, dtype, use_cudnn) -> None:
    """With (p, seed, offset) fixed, a forward with V = I reads the mask back; the forward on
    the real V and its backward equal the float64 reference under that mask (a backward with
    another mask would be far off in dv and dq)."""
    B_.enable_cudnn_sdp(use_cudnn)
    p, seed, offset = 0.3, 1234, 77
    Ev = -(-S // 8) * 8
    (q, qg), (k, kg), (v, vg), (g, gg) = operands((B, H, L, 64), (B, H, S, 64), (B, H, S, Ev),
                                                  dtype)
    Pd = keep_mask(qg, kg, 0.125, causal, p, seed, offset, S, dtype)
    path = B_.last_attention_path()
    if use_cudnn and L == S == Ev:
        assert path == "cudnn", B_._cudnn_sdp_status()
    keep = Pd != 0
    got, fwd, bwd = run(qg, kg, vg, gg, 0.125, causal, (p, seed, offset))
    assert fwd == bwd == path
    want = reference(q, k, v, g, 0.125, causal, keep, p)
    for name, a, b in zip(("out", "lse", "dq", "dk", "dv"), got, want):
        if name == "lse":
            np.testing.assert_allclose(host(a), b, rtol=1e-3, atol=1e-3)
        else:
            close(a, b, dtype, f"{name} on {path}")


@CUDNN
@pytest.mark.parametrize("p", [0.2, 0.5])
def test_cudnn_dropout_statistics(p) -> None:
    """Uniform attention (q = 0) over S keys with V = I: the read-back factors are 0 or
    1 / (S (1 - p)), kept at rate 1 - p; masks of different heads, batches and calls are
    independent (they agree on about p^2 + (1 - p)^2 of the entries), one call's mask repeats
    exactly for the same (seed, offset)."""
    Bn, H, L, S = 4, 4, 64, 64
    z = ts.zeros((Bn, H, L, 64), dtype=ts.bfloat16, device="cuda")
    a = keep_mask(z, z, 1.0, False, p, 5, 0, S, "bfloat16")
    assert B_.last_attention_path() == "cudnn"
    nz = a[a != 0]
    np.testing.assert_allclose(nz, 1.0 / (S * (1 - p)), rtol=1e-2)
    rate = (a != 0).mean()
    assert abs(rate - (1 - p)) < 5 * np.sqrt(p * (1 - p) / a.size), rate
    agree = p * p + (1 - p) ** 2
    keep = a != 0
    for x, y in ((keep[0, 0], keep[0, 1]), (keep[0, 0], keep[1, 0]),
                 (keep, keep_mask(z, z, 1.0, False, p, 5, 1, S, "bfloat16") != 0),
                 (keep, keep_mask(z, z, 1.0, False, p, 6, 0, S, "bfloat16") != 0)):
        assert abs((x == y).mean() - agree) < 0.05
    np.testing.assert_array_equal(a, keep_mask(z, z, 1.0, False, p, 5, 0, S, "bfloat16"))


@CUDNN
def test_sdpa_dropout_manual_seed_reproduces_and_calls_differ() -> None:
    q = ts.asarray(rng.standard_normal((2, 3, 64, 64))).astype(ts.bfloat16).to("cuda")
    ts.manual_seed(3)
    a = host(F.scaled_dot_product_attention(q, q, q, dropout_p=0.2))
    b = host(F.scaled_dot_product_attention(q, q, q, dropout_p=0.2))
    assert B_.last_attention_path() == "cudnn"
    ts.manual_seed(3)
    np.testing.assert_array_equal(host(F.scaled_dot_product_attention(q, q, q, dropout_p=0.2)), a)
    assert not np.array_equal(a, b)


@CUDNN
@pytest.mark.parametrize("flip_to", [False, True])
def test_dropout_backward_follows_forward_path(flip_to) -> None:
    """The switch flipped between forward and backward: with dropout the backward still runs
    where the forward ran (only that path regenerates its mask), and the gradients equal the
    reference under the mask read back for the generator's draw."""
    B_.enable_cudnn_sdp(not flip_to)
    (q, qg), (k, kg), (v, vg), (g, gg) = operands((2, 2, 64, 64), (2, 2, 64, 64), (2, 2, 64, 64),
                                                  "float16")
    xs = [x.requires_grad_(True) for x in (qg, kg, vg)]
    ts.manual_seed(11)  # the first draw after manual_seed(s) is (s, 0)
    out = F.scaled_dot_product_attention(*xs, dropout_p=0.25, is_causal=True)
    fwd = B_.last_attention_path()
    assert fwd == ("cuda_flash" if flip_to else "cudnn")
    B_.enable_cudnn_sdp(flip_to)
    out.backward(gg)
    assert B_.last_attention_path() == fwd
    B_.enable_cudnn_sdp(not flip_to)
    keep = keep_mask(qg.detach(), kg.detach(), 0.125, True, 0.25, 11, 0, 64, "float16") != 0
    want = reference(q, k, v, g, 0.125, True, keep, 0.25)
    close(out.detach(), want[0], "float16")
    for x, w in zip(xs, want[2:]):
        close(x.grad, w, "float16")


@CUDNN
def test_double_backward_after_cudnn_dropout_raises() -> None:
    q = ts.asarray(rng.standard_normal((1, 2, 32, 64))).astype(ts.bfloat16).to("cuda")
    q.requires_grad_(True)
    out = F.scaled_dot_product_attention(q, q, q, dropout_p=0.1)
    assert B_.last_attention_path() == "cudnn"
    with pytest.raises(NotImplementedError, match="enable_cudnn_sdp"):
        ts.autograd.grad(out.sum(), q, create_graph=True)


@CUDNN
def test_cudnn_backward_deterministic() -> None:
    """ts.backends.cudnn.deterministic selects cuDNN's deterministic backward: bitwise
    repeatable gradients."""
    ts.backends.cudnn.deterministic = True
    (_, q), (_, k), (_, v), (_, g) = operands((4, 4, 200, 64), (4, 4, 200, 64), (4, 4, 200, 64),
                                              "bfloat16")
    first = run(q, k, v, g, 0.125, True)
    again = run(q, k, v, g, 0.125, True)
    assert first[1] == "cudnn"  # the backward too where cuDNN has a deterministic one
    for a, b in zip(first[0], again[0]):
        np.testing.assert_array_equal(host(a), host(b))


@CUDNN
def test_cudnn_dropout_in_cuda_graph_equals_eager() -> None:
    """Forward and backward with dropout captured in a CUDA graph: each replay draws what the
    eager steps after the same manual_seed draw (the seed words are written on the stream); a
replay with another mask would be far off."""
    (_, q), (_, k), (_, v), (_, g) = operands((2, 2, 64, 64), (2, 2, 64, 64), (2, 2, 64, 64),
                                              "bfloat16")
    xs = [x.requires_grad_(True) for x in (q, k, v)]

    def step():
        out = F.scaled_dot_product_attention(*xs, dropout_p=0.3, is_causal=True)
        return (out.detach(),) + tuple(ts.autograd.grad(out, xs, g))

    ts.manual_seed(1)
    eager = [[host(t) for t in step()] for _ in range(4)]
    path = B_.last_attention_path()
    ts.manual_seed(1)
    side = ts.cuda.Stream()
    side.wait_stream(ts.cuda.current_stream())
    with ts.cuda.stream(side):
        got = [[host(t) for t in step()]]  # warm-up: the first eager step's draw
    ts.cuda.current_stream().wait_stream(side)
    graph = ts.cuda.CUDAGraph()
    state = ts.random.default_generator.get_state()
    with ts.cuda.graph(graph):
        static = step()
    ts.random.default_generator.set_state(state)
    for _ in range(3):
        graph.replay()
        got.append([host(t) for t in static])
    assert B_.last_attention_path() == path
    for a, b in zip(got, eager):
        np.testing.assert_array_equal(a[0], b[0])  # the forward is deterministic
        for x, y in zip(a[1:], b[1:]):  # cuDNN's backward may sum dq in another order
            np.testing.assert_allclose(x, y, rtol=2e-2, atol=2e-2 * np.abs(y).max())

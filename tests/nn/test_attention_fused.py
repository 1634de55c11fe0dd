"""The fused (flash-style) attention kernels (csrc/ops/attention.h) and the flash path of the
scaled_dot_product_attention op (csrc/ops/nn/attention.h, node FlashAttentionBackward), forced onto the CPU reference
kernel: values and q/k/v gradients vs PyTorch's scaled_dot_product_attention (causal or not,
L != S both ways, E != Ev, 1-3 batch dims, four float dtypes, non-contiguous and empty
inputs, explicit scale), finite-difference gradchecks in float64, gradients of gradients
(the composite fallback) and the ops' error paths."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera import _C
from tessera.nn import functional as F
from tessera.nn.functional import attention as A

from harness import close_to_largest, double_backward_pairs, rounded, randn64 as randn


# Relative to the reference's largest magnitude: float64/float32 sum in another order than
# PyTorch; 16-bit inputs are compared with a float64 reference on the same rounded values, so
# only the 16-bit rounding of the outputs (and of PyTorch's own 16-bit path) remains.
TOL = {"float64": 1e-12, "float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}


@pytest.fixture
def fused():
    """Forces the fused kernel on CPU and records the fused paths taken."""
    with A.attention_settings(flash_on_cpu=True), A.attention_trace() as calls:
        yield calls





def run_pair(q, k, v, dtype="float64", g=None, **kw):
    """Forward and backward on tessera (dtype) and PyTorch (float64 on the same values)."""
    q, k, v = (rounded(x, dtype) for x in (q, k, v))
    qs, ks, vs = (ts.asarray(x).astype(getattr(ts, dtype)).requires_grad_(True)
                  for x in (q, k, v))
    qt, kt, vt = (torch.tensor(x, requires_grad=True) for x in (q, k, v))
    os_ = F.scaled_dot_product_attention(qs, ks, vs, **kw)
    ot = TF.scaled_dot_product_attention(qt, kt, vt, **kw)
    assert str(os_.dtype) == dtype
    close_to_largest(os_, ot, TOL[dtype])
    g = randn(*ot.shape) if g is None else g
    g = rounded(g, dtype)
    os_.backward(ts.asarray(g).astype(getattr(ts, dtype)))
    ot.backward(torch.tensor(g))
    for a, b in ((qs, qt), (ks, kt), (vs, vt)):
        assert str(a.grad.dtype) == dtype
        close_to_largest(a.grad, b.grad, TOL[dtype])


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S,E,Ev", [(5, 7, 4, 6), (7, 5, 4, 4), (1, 1, 3, 3), (33, 70, 8, 5),
                                      (130, 65, 16, 16), (64, 64, 64, 64)])
def test_sdpa_fused_vs_torch(fused, L, S, E, Ev, causal, dtype) -> None:
    run_pair(randn(2, 3, L, E), randn(2, 3, S, E), randn(2, 3, S, Ev), dtype, is_causal=causal)
    assert len(fused) == 1


@pytest.mark.parametrize("batch", [(4,), (2, 3), (2, 1, 3)])
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_fused_batch_dims_and_scale(fused, batch, causal) -> None:
    run_pair(randn(*batch, 9, 5), randn(*batch, 11, 5), randn(*batch, 11, 3),
             is_causal=causal, scale=0.123)
    assert len(fused) == 1


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_fused_non_contiguous(fused, causal) -> None:
    """q/k/v viewed as (B, H, T, E) from (B, T, H, E) projections, as attention layers do."""
    B, T, H, E = 2, 10, 3, 4
    raw = [randn(B, T, H, E) for _ in range(3)]
    xs = [ts.asarray(r, requires_grad=True) for r in raw]
    xt = [torch.tensor(r, requires_grad=True) for r in raw]
    os_ = F.scaled_dot_product_attention(*(x.permute(0, 2, 1, 3) for x in xs), is_causal=causal)
    ot = TF.scaled_dot_product_attention(*(x.permute(0, 2, 1, 3) for x in xt), is_causal=causal)
    close_to_largest(os_, ot, TOL["float64"])
    g = randn(*ot.shape)
    os_.backward(ts.asarray(g))
    ot.backward(torch.tensor(g))
    for a, b in zip(xs, xt):
        close_to_largest(a.grad, b.grad, TOL["float64"])
    assert len(fused) == 1


@pytest.mark.parametrize("shape", [(0, 4, 5, 3), (2, 0, 5, 3), (2, 4, 0, 3), (0, 0, 0, 3)])
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_fused_empty(fused, shape, causal) -> None:
    """Empty batch, no queries (L == 0), no keys (S == 0: output and gradients are 0)."""
    N, L, S, E = shape
    run_pair(randn(N, L, E), randn(N, S, E), randn(N, S, 2), is_causal=causal)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 3), L=st.integers(1, 40), S=st.integers(1, 40), E=st.integers(1, 9),
       Ev=st.integers(1, 9), causal=st.booleans(), dtype=st.sampled_from(["float64", "float32"]))
def test_sdpa_fused_hypothesis(n, L, S, E, Ev, causal, dtype) -> None:
    with A.attention_settings(flash_on_cpu=True):
        run_pair(randn(n, L, E), randn(n, S, E), randn(n, S, Ev), dtype, is_causal=causal)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_fused_gradcheck(fused, causal) -> None:
    q, k, v = (ts.asarray(randn(2, *s), requires_grad=True) for s in ((4, 3), (6, 3), (6, 2)))
    fn = lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=causal)  # noqa: E731
    assert ts.autograd.gradcheck(fn, (q, k, v), eps=1e-6, atol=1e-7)


def test_sdpa_fused_double_backward(fused) -> None:
    """create_graph=True differentiates the composite recomputation of the backward."""
    raw = [randn(2, 5, 3), randn(2, 6, 3), randn(2, 6, 4)]
    for a, b in double_backward_pairs(
            lambda *x: F.scaled_dot_product_attention(*x, is_causal=True),
            lambda *x: TF.scaled_dot_product_attention(*x, is_causal=True), raw):
        close_to_largest(a, b, TOL["float64"])


def test_sdpa_cpu_default_keeps_matmul_path() -> None:
    q = ts.asarray(randn(2, 4, 3), requires_grad=True)
    with A.attention_trace() as calls:
        out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert calls == [] and tuple(out.shape) == (2, 4, 3)
    assert out.grad_fn.name().startswith("MatmulBackward")


def test_sdpa_fused_records_one_cpp_node(fused) -> None:
    """The flash path is one C++ node (no Python autograd.Function)."""
    q = ts.asarray(randn(2, 4, 3), requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert out.grad_fn.name() == "FlashAttentionBackward0"
    assert fused == [("flash", "cpu", 0)]


def test_sdpa_fused_not_taken_for_masks_broadcast_2d(fused) -> None:
    # Dropout takes the fused kernel (tests/test_attention_dropout.py); masks do not.
    q = ts.asarray(randn(2, 4, 3))
    F.scaled_dot_product_attention(q, q, q, attn_mask=ts.ones((4, 4), dtype=ts.bool))
    F.scaled_dot_product_attention(q, ts.asarray(randn(1, 4, 3)), ts.asarray(randn(1, 4, 3)))
    F.scaled_dot_product_attention(ts.asarray(randn(4, 3)), ts.asarray(randn(4, 3)),
                                   ts.asarray(randn(4, 3)))
    with pytest.raises(RuntimeError, match="same dtype"):  # mixed dtypes raise, as in torch
        F.scaled_dot_product_attention(q, q.astype(ts.float32), q)
    assert fused == []


def test_flash_op_lse() -> None:
    q, k, v = randn(2, 5, 3), randn(2, 7, 3), randn(2, 7, 4)
    for causal in (False, True):
        out, lse = _C._flash_attention(ts.asarray(q), ts.asarray(k), ts.asarray(v), 0.5, causal)
        s = torch.tensor(q) @ torch.tensor(k).mT * 0.5
        if causal:
            s = s.masked_fill(~torch.ones(5, 7, dtype=torch.bool).tril(), -math.inf)
        np.testing.assert_allclose(lse.numpy(), torch.logsumexp(s, -1).numpy(), rtol=1e-13)
        assert lse.dtype == ts.float64
    for dtype in ("float32", "float16", "bfloat16"):
        x = ts.asarray(q).astype(getattr(ts, dtype))
        out, lse = _C._flash_attention(x, x, x, 1.0, True)
        assert str(out.dtype) == dtype and lse.dtype == ts.float32
    out, lse = _C._flash_attention(ts.asarray(q), ts.asarray(randn(2, 0, 3)),
                                   ts.asarray(randn(2, 0, 4)), 1.0, False)
    assert np.all(out.numpy() == 0) and np.all(lse.numpy() == -np.inf)


def test_flash_op_errors() -> None:
    f = lambda *s: ts.asarray(randn(*s))  # noqa: E731
    q, k, v = f(2, 5, 3), f(2, 7, 3), f(2, 7, 4)
    with pytest.raises(TypeError, match="flash_attention: expected floating-point"):
        _C._flash_attention(ts.ones((2, 5, 3), dtype=ts.int32), k, v, 1.0, False)
    with pytest.raises(TypeError, match="flash_attention: key dtype float32 differs"):
        _C._flash_attention(q, k.astype(ts.float32), v, 1.0, False)
    with pytest.raises(TypeError, match="flash_attention: value dtype"):
        _C._flash_attention(q, k, v.astype(ts.float16), 1.0, False)
    with pytest.raises(ValueError, match=r"flash_attention: expected query of shape \(N, L, E\)"):
        _C._flash_attention(f(5, 3), k, v, 1.0, False)
    with pytest.raises(ValueError, match="flash_attention: expected value"):
        _C._flash_attention(q, k, f(2, 7, 4, 1), 1.0, False)
    for bad_k, bad_v in ((f(2, 7, 4), v), (f(3, 7, 3), f(3, 7, 4)), (k, f(2, 6, 4))):
        with pytest.raises(ValueError, match="flash_attention: query .* do not match"):
            _C._flash_attention(q, bad_k, bad_v, 1.0, False)
    with pytest.raises(ValueError, match="flash_attention: scale must be finite"):
        _C._flash_attention(q, k, v, math.nan, False)
    out, lse = _C._flash_attention(q, k, v, 1.0, False)
    g = f(2, 5, 4)
    bwd = _C._flash_attention_backward
    with pytest.raises(ValueError, match="flash_attention_backward: grad_out of shape"):
        bwd(q, k, v, out, lse, f(2, 5, 3), 1.0, False)
    with pytest.raises(ValueError, match="flash_attention_backward: lse of shape"):
        bwd(q, k, v, out, f(2, 4), g, 1.0, False)
    with pytest.raises(TypeError, match="flash_attention_backward: lse dtype float32"):
        bwd(q, k, v, out, lse.astype(ts.float32), g, 1.0, False)
    with pytest.raises(TypeError, match="flash_attention_backward: grad_out dtype"):
        bwd(q, k, v, out, lse, g.astype(ts.float32), 1.0, False)
    with pytest.raises(TypeError, match="flash_attention_backward: expected floating-point"):
        bwd(*(x.astype(ts.int64) for x in (q, k, v, out)), lse, g, 1.0, False)


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_fused_projection_views_vs_torch(fused, causal) -> None:
    """q/k/v as (B, H, T, E) views of one (B, T, 3 * H * E) projection (the kernels read them
    through their strides), heads merged back by transpose(1, 2).reshape: values and the
    projection's gradient vs PyTorch."""
    B, T, H, E = 2, 37, 3, 8
    raw = randn(B, T, 3 * H * E)

    def run(m, x):
        q, k, v = (x[..., i * H * E:(i + 1) * H * E].reshape(B, T, H, E).transpose(1, 2)
                   for i in range(3))
        f = F if m is ts else TF
        return f.scaled_dot_product_attention(q, k, v, is_causal=causal).transpose(1, 2).reshape(
            B, T, H * E)

    x = ts.asarray(raw).requires_grad_(True)
    y = run(ts, x)
    y.backward(ts.asarray(np.cos(np.arange(y.size)).reshape(tuple(y.shape))))
    tx = torch.tensor(raw, requires_grad=True)
    ty = run(torch, tx)
    ty.backward(torch.tensor(np.cos(np.arange(ty.numel())).reshape(tuple(ty.shape))))
    assert len(fused) == 1
    close_to_largest(y.detach(), ty, TOL["float64"])
    close_to_largest(x.grad, tx.grad, TOL["float64"])


def test_flash_op_four_dims() -> None:
    """(B, H, L, E) inputs give (B, H, L, Ev) out and (B, H, L) lse equal to the 3-D form's."""
    q, k, v = randn(2, 3, 5, 4), randn(2, 3, 7, 4), randn(2, 3, 7, 6)
    out, lse = _C._flash_attention(ts.asarray(q), ts.asarray(k), ts.asarray(v), 0.5, True)
    assert tuple(out.shape) == (2, 3, 5, 6) and tuple(lse.shape) == (2, 3, 5)
    flat = [ts.asarray(a.reshape((6,) + a.shape[2:])) for a in (q, k, v)]
    out3, lse3 = _C._flash_attention(*flat, 0.5, True)
    np.testing.assert_array_equal(out.numpy().reshape(6, 5, 6), out3.numpy())
    np.testing.assert_array_equal(lse.numpy().reshape(6, 5), lse3.numpy())
    g = ts.asarray(randn(2, 3, 5, 6))
    grads = _C._flash_attention_backward(ts.asarray(q), ts.asarray(k), ts.asarray(v), out, lse, g,
                                         0.5, True)
    grads3 = _C._flash_attention_backward(*flat, out3, lse3, ts.reshape(g, (6, 5, 6)), 0.5, True)
    for a, b in zip(grads, grads3):
        np.testing.assert_array_equal(a.numpy().reshape(b.shape), b.numpy())
    with pytest.raises(ValueError, match=r"flash_attention: expected key of shape \(B, H, S, E\)"):
        _C._flash_attention(ts.asarray(q), flat[1], ts.asarray(v), 0.5, True)
    with pytest.raises(ValueError, match="flash_attention: query .* do not match"):
        _C._flash_attention(ts.asarray(q), ts.asarray(randn(2, 4, 7, 4)), ts.asarray(v), 0.5, True)


def test_sdpa_kernel_and_backend_switches_as_torch() -> None:
    """torch.nn.attention.sdpa_kernel and torch.backends.cuda.enable_*_sdp: the same switches
    inside and after the block, the same values, and torch's RuntimeError on CPU when neither
    the math nor the flash backend is left."""
    import torch
    from torch.nn.attention import SDPBackend as TB, sdpa_kernel as t_kernel
    from tessera.nn.attention import SDPBackend as SB, sdpa_kernel as s_kernel
    tc, sc = torch.backends.cuda, ts.backends.cuda

    def switches(c):
        return (c.math_sdp_enabled(), c.flash_sdp_enabled(), c.mem_efficient_sdp_enabled(),
                c.cudnn_sdp_enabled())

    assert {n: int(b) for n, b in SB.__members__.items()} == \
        {n: int(b) for n, b in TB.__members__.items()}
    q = np.random.default_rng(3).standard_normal((1, 2, 3, 4))
    assert switches(sc) == switches(tc)
    for names in (["MATH"], ["FLASH_ATTENTION"], ["MATH", "CUDNN_ATTENTION"],
                  ["EFFICIENT_ATTENTION"], [], ["CUDNN_ATTENTION"]):
        outs = []
        for kernel, B, c, F_, x in ((t_kernel, TB, tc, torch.nn.functional, torch.tensor(q)),
                                    (s_kernel, SB, sc, ts.nn.functional, ts.asarray(q))):
            with kernel([getattr(B, n) for n in names]):
                state = switches(c)
                try:
                    outs.append((state, F_.scaled_dot_product_attention(x, x, x, is_causal=True)))
                except RuntimeError as e:
                    assert "No viable backend" in str(e)
                    outs.append((state, None))
        (ts_state, t_out), (s_state, s_out) = outs
        assert s_state == ts_state and (s_out is None) == (t_out is None), names
        if t_out is not None:
            np.testing.assert_allclose(s_out.numpy(), t_out.numpy(), rtol=1e-12)
    assert switches(sc) == switches(tc)
    sc.enable_math_sdp(False)
    sc.enable_flash_sdp(False)
    try:
        with pytest.raises(RuntimeError, match="No viable backend"):
            ts.nn.functional.scaled_dot_product_attention(ts.asarray(q), ts.asarray(q), ts.asarray(q))
    finally:
        sc.enable_math_sdp(True)
        sc.enable_flash_sdp(True)
    with pytest.raises(AssertionError, match="SDPBackend"):
        with s_kernel("math"):
            pass

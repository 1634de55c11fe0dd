"""Dropout inside the fused attention kernels (Note [Attention dropout] in
csrc/ops/attention.h): the kernels drop probabilities with the mask the dropout op draws over an
(N, L, S) tensor from a generator in state (seed, offset) and regenerate it in the backward, so
no mask is stored. Checked on the CPU kernel (the CUDA kernel against it in
cuda/test_cuda_attention.py): forward and both backward paths (the kernel's, and the composite one
of create_graph) equal the composite softmax * mask @ v with that mask; finite differences
under a fixed seed; keep rate, independence across heads and rows and between calls;
ts.manual_seed reproduces; bad probabilities raise."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tessera as ts
from tessera import _C
from tessera.nn import functional as F
from tessera.nn.functional import attention as A
from tessera._C import _default_generator as _generator  # the C++ generator dropout draws from


@pytest.fixture(autouse=True)
def flash_on_cpu():
    with A.attention_settings(flash_on_cpu=True):
        yield


def composite(q: ts.Tensor, k: ts.Tensor, v: ts.Tensor, mask: ts.Tensor,
              causal: bool) -> ts.Tensor:
    L, S = q.shape[-2], k.shape[-2]
    s = q @ k.mT / math.sqrt(q.shape[-1])
    if causal:
        s = ts.where(ts.tril(ts.ones((L, S), dtype=ts.bool)), s, -math.inf)
    return (ts.softmax(s, dim=-1) * mask) @ v


def leaves(*xs: ts.Tensor) -> list:
    return [x.detach().requires_grad_() for x in xs]


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 2e-5)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 5, 7, 4), (4, 9, 9, 8), (1, 2, 70, 66, 16)])
@pytest.mark.parametrize("p", [0.2, 0.5])
def test_matches_composite_with_regenerated_mask(dtype: str, tol: float, causal: bool,
                                                 shape: tuple, p: float) -> None:
    *lead, L, S, E = shape
    dt = getattr(ts, dtype)
    ts.manual_seed(3)
    q = ts.randn(*lead, L, E, dtype=dt, requires_grad=True)
    k = ts.randn(*lead, S, E, dtype=dt, requires_grad=True)
    v = ts.randn(*lead, S, E + 1, dtype=dt, requires_grad=True)
    seed, offset = _generator().initial_seed(), _generator().get_offset()
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=causal)
    assert _generator().get_offset() == offset + 1  # one draw per call
    n = math.prod(lead)
    mask = A.attention_dropout_mask((n, L, S), p, seed, offset, dtype=dt).reshape(
        tuple(lead) + (L, S))
    qq, kk, vv = leaves(q, k, v)
    ref = composite(qq, kk, vv, mask, causal)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=tol, rtol=tol)
    g = ts.randn(*out.shape, dtype=dt)
    want = ts.autograd.grad(ref, (qq, kk, vv), g)
    got = ts.autograd.grad(out, (q, k, v), g, retain_graph=True)  # the kernel's backward
    got_cg = ts.autograd.grad(out, (q, k, v), g, create_graph=True)  # the composite one
    for a, b, c in zip(got, got_cg, want):
        np.testing.assert_allclose(a.numpy(), c.numpy(), atol=tol, rtol=tol)
        np.testing.assert_allclose(b.detach().numpy(), c.numpy(), atol=tol, rtol=tol)


def test_finite_differences_under_a_fixed_seed() -> None:
    ts.manual_seed(0)
    q, k, v = (ts.randn(2, 4, 3, dtype=ts.float64, requires_grad=True) for _ in range(3))

    def f(q: ts.Tensor, k: ts.Tensor, v: ts.Tensor) -> ts.Tensor:
        _generator().set_state(11, 7)  # the same mask at every evaluation
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.4, is_causal=True)

    assert ts.autograd.gradcheck(f, (q, k, v))
    assert ts.autograd.gradgradcheck(f, (q, k, v))


def effective_probs(B: int, H: int, L: int, S: int, p: float) -> np.ndarray:
    """The kernel's dropped attention matrix: q = k = 0 gives uniform 1/S probabilities and
    v = eye(S) copies them out, so out * S is keep / (1 - p)."""
    q = ts.zeros((B, H, L, 4))
    k = ts.zeros((B, H, S, 4))
    v = ts.broadcast_to(ts.eye(S), (B, H, S, S))
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
    return out.numpy() * S


def test_keep_rate_and_independence() -> None:
    p = 0.2
    ts.manual_seed(1234)
    m = effective_probs(4, 6, 64, 64, p)
    keep = m > 0
    np.testing.assert_allclose(m[keep], 1 / (1 - p), rtol=1e-6)  # kept values are rescaled
    n = keep.size
    rate = keep.mean()
    assert abs(rate - (1 - p)) < 4 * math.sqrt(p * (1 - p) / n)  # 4 sigma
    # Independence across heads, batch entries and rows: correlations near 0.
    flat = keep.reshape(24, -1).astype(np.float64)
    c = np.corrcoef(flat)
    off = c[~np.eye(24, dtype=bool)]
    assert np.abs(off).max() < 6 / math.sqrt(flat.shape[1])
    rows = keep.reshape(-1, 64).astype(np.float64)
    r = np.corrcoef(rows[:200])[~np.eye(200, dtype=bool)]
    assert np.abs(r).mean() < 0.15
    # Between calls (steps): a fresh mask each time.
    m2 = effective_probs(4, 6, 64, 64, p)
    agree = ((m2 > 0) == keep).mean()
    assert abs(agree - ((1 - p) ** 2 + p ** 2)) < 0.02


def test_manual_seed_reproduces_and_p_limits() -> None:
    ts.manual_seed(5)
    a = effective_probs(1, 2, 8, 8, 0.5)
    ts.manual_seed(5)
    b = effective_probs(1, 2, 8, 8, 0.5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(effective_probs(1, 2, 8, 8, 1.0), 0.0)
    np.testing.assert_allclose(effective_probs(1, 2, 8, 8, 0.0), 1.0, rtol=1e-6)


def test_no_mask_tensor_is_saved() -> None:
    q, k, v = (ts.randn(2, 3, 16, 8, requires_grad=True) for _ in range(3))
    shapes = []

    def pack(t: ts.Tensor) -> ts.Tensor:
        shapes.append(tuple(t.shape))
        return t

    with ts.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, is_causal=True)
    out.sum().backward()
    assert q.grad is not None
    assert shapes and (2, 3, 16, 16) not in shapes  # only q, k, v, out and lse


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_bad_probability(p: float) -> None:
    q = ts.randn(1, 2, 4, 4)
    with pytest.raises(ValueError, match="dropout"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=p)
    with pytest.raises(ValueError, match="flash_attention: dropout probability"):
        _C._flash_attention(q, q, q, 0.5, False, p, 0, 0)


def test_composite_cpu_path_still_drops() -> None:
    _C._set_attention_settings(flash_on_cpu=False)  # (the fixture restores it)
    ts.manual_seed(2)
    q = ts.zeros((2, 2, 32, 4))
    v = ts.broadcast_to(ts.eye(32), (2, 2, 32, 32))
    m = F.scaled_dot_product_attention(q, q, v, dropout_p=0.5).numpy() * 32
    assert 0.4 < (m > 0).mean() < 0.6


def _philox4x32_10(block: int, offset: int, seed: int) -> list:
    """Philox4x32-10 in plain Python (Salmon et al. 2011), to pin the mask's definition."""
    m32 = 0xFFFFFFFF
    c = [block & m32, block >> 32, offset & m32, offset >> 32]
    k0, k1 = seed & m32, seed >> 32
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & m32, (p0 >> 32) ^ c[3] ^ k1, p0 & m32]
        k0, k1 = (k0 + 0x9E3779B9) & m32, (k1 + 0xBB67AE85) & m32
    return c


@pytest.mark.parametrize("N,L,S", [(2, 19, 33), (1, 16, 16), (3, 5, 40)])
def test_mask_follows_the_documented_philox_groups(N: int, L: int, S: int) -> None:
    # Note [Attention dropout mask]: element (i, j) of matrix n takes word
    # ((i >> 3) & 1) * 2 + ((j >> 3) & 1) of the Philox block of its group {i0, i0 + 8} x
    # {j0, j0 + 8}; one block decides four elements (what the CUDA kernels rely on).
    p, seed, offset = 0.3, 0x1234_5678_9ABC, 77
    threshold = round(p * 2 ** 32)
    mask = _C._attention_dropout_mask(N, L, S, p, seed, offset, ts.float64).numpy()
    GL, GS = (L + 15) // 16 * 8, (S + 15) // 16 * 8
    want = np.empty((N, L, S))
    for n in range(N):
        for i in range(L):
            for j in range(S):
                block = (n * GL + (i >> 4) * 8 + (i & 7)) * GS + (j >> 4) * 8 + (j & 7)
                w = _philox4x32_10(block, offset, seed)[((i >> 3) & 1) * 2 + ((j >> 3) & 1)]
                want[n, i, j] = 1 / (1 - p) if w >= threshold else 0.0
    np.testing.assert_array_equal(mask, want)
    # Distinct groups use distinct blocks: no two (n, group) pairs share one.
    blocks = {(n * GL + (i >> 4) * 8 + (i & 7)) * GS + (j >> 4) * 8 + (j & 7)
              for n in range(N) for i in range(0, L) for j in range(0, S) if not (i & 8 or j & 8)}
    assert len(blocks) == N * len({(i >> 4, i & 7) for i in range(L) if not i & 8}) * len(
        {(j >> 4, j & 7) for j in range(S) if not j & 8})
    with pytest.raises(ValueError, match="attention_dropout_mask: dropout probability"):
        _C._attention_dropout_mask(1, 2, 2, 1.5, 0, 0)

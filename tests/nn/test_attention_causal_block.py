"""Causal attention through GEMMs on the block lower triangle of the scores
(csrc/ops/attention_causal.h, Note [Causal block attention]) and the causal block path of the
scaled_dot_product_attention op (csrc/ops/nn/attention.h, node CausalBlockAttentionBackward): values and q/k/v
gradients vs PyTorch (L != S both ways, L off the block size, E != Ev, 1-3 batch dims, four
float dtypes, non-contiguous inputs, several block sizes), finite-difference gradchecks in
float64, gradients of gradients, the causal softmax backward ignoring never-computed score
entries, the path selection and the ops' error paths. CUDA cases compare with the CPU."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera import _C
from tessera.nn import functional as F
from tessera.nn.functional import attention as A

from harness import close_to_largest, double_backward_pairs, rounded

rng = np.random.default_rng(1)
TOL = {"float64": 1e-12, "float32": 3e-5, "float16": 4e-3, "bfloat16": 3e-2}


class Blocks:
    """The row blocks of the causal block path calls in an attention trace (live)."""

    def __init__(self, trace) -> None:
        self.trace = trace

    def _list(self) -> list:
        return [b for path, _, b in self.trace if path == "causal_block"]

    def __eq__(self, other: object) -> bool:
        return self._list() == other

    def __bool__(self) -> bool:
        return bool(self._list())

    def __repr__(self) -> str:
        return repr(self._list())


@pytest.fixture
def blocked():
    """Small blocks (so short sequences take the path) and a record of the blocks used."""
    # device mode: 16-bit would take flash
    with A.attention_settings(causal_block=4, flash_on_cuda=False), A.attention_trace() as t:
        yield Blocks(t)




def run_pair(shapes, dtype="float64", transpose=False, scale=None):
    """sdpa(is_causal=True) forward and backward, tessera (dtype) vs PyTorch (float64)."""
    raw = [rounded(rng.standard_normal(s), dtype) for s in shapes]
    if transpose:  # (..., E, L) storage read as (..., L, E): strided rows, as heads are
        raw = [np.ascontiguousarray(np.swapaxes(r, -1, -2)) for r in raw]
    xs = [ts.asarray(r).astype(getattr(ts, dtype)) for r in raw]
    xt = [torch.tensor(r) for r in raw]
    if transpose:
        xs, xt = [x.mT for x in xs], [x.mT for x in xt]
    xs = [x.detach().requires_grad_(True) for x in xs]
    xt = [x.detach().requires_grad_(True) for x in xt]
    out = F.scaled_dot_product_attention(*xs, is_causal=True, scale=scale)
    ref = TF.scaled_dot_product_attention(*xt, is_causal=True, scale=scale)
    assert str(out.dtype) == dtype
    close_to_largest(out, ref, TOL[dtype])
    g = rounded(rng.standard_normal(tuple(ref.shape)), dtype)
    out.backward(ts.asarray(g).astype(getattr(ts, dtype)))
    ref.backward(torch.tensor(g))
    for a, b in zip(xs, xt):
        assert str(a.grad.dtype) == dtype
        close_to_largest(a.grad, b.grad, TOL[dtype])


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("L,S,E,Ev", [(8, 8, 3, 3), (13, 13, 4, 5), (9, 17, 3, 2), (17, 9, 2, 3),
                                      (16, 4, 3, 3), (8, 30, 2, 2), (23, 23, 1, 4)])
def test_causal_block_vs_torch(monkeypatch, blocked, L, S, E, Ev, dtype) -> None:
    A._C._set_attention_settings(causal_dtypes=tuple(TOL))  # the 16-bit dtypes too (the
    # fixture restores the settings)
    run_pair([(2, 3, L, E), (2, 3, S, E), (2, 3, S, Ev)], dtype)
    assert blocked == [4]


@pytest.mark.parametrize("batch", [(5,), (2, 3), (2, 1, 3)])
def test_causal_block_batch_dims_scale_and_strides(blocked, batch) -> None:
    shapes = [batch + (11, 4), batch + (11, 4), batch + (11, 3)]
    run_pair(shapes, scale=0.37)
    run_pair(shapes, "float32", transpose=True)
    assert blocked == [4, 4]


def test_causal_block_gpt_layout(blocked) -> None:
    """q/k/v as the char-GPT model makes them: heads split from one projection and moved to
    (B, H, T, D), so no batch dims merge."""
    B, T, H, D = 2, 12, 3, 4
    raw = rng.standard_normal((B, T, 3 * H * D))
    qkv = ts.asarray(raw, requires_grad=True)
    qkvt = torch.tensor(raw, requires_grad=True)
    outs = []
    for lib, x in ((F, qkv), (TF, qkvt)):
        q, k, v = (x[..., i * H * D:(i + 1) * H * D].reshape(B, T, H, D).transpose(1, 2)
                   for i in range(3))
        outs.append(lib.scaled_dot_product_attention(q, k, v, is_causal=True))
    close_to_largest(outs[0], outs[1], TOL["float64"])
    g = rng.standard_normal((B, H, T, D))
    outs[0].backward(ts.asarray(g))
    outs[1].backward(torch.tensor(g))
    close_to_largest(qkv.grad, qkvt.grad, TOL["float64"])
    assert blocked == [4]


@settings(max_examples=25, deadline=None)
@given(L=st.integers(1, 40), S=st.integers(1, 40), E=st.integers(1, 6), Ev=st.integers(1, 6),
       block=st.integers(1, 9), dtype=st.sampled_from(["float64", "float32"]))
def test_causal_block_op_hypothesis(L, S, E, Ev, block, dtype) -> None:
    """The op itself, any block size (including ones that do not divide L or exceed it)."""
    raw = [rounded(rng.standard_normal(s), dtype) for s in ((2, L, E), (2, S, E), (2, S, Ev))]
    q, k, v = (ts.asarray(r).astype(getattr(ts, dtype)) for r in raw)
    qt, kt, vt = (torch.tensor(r, requires_grad=True) for r in raw)
    out, p = _C._causal_block_attention(q, k, v, 0.5, block)
    ref = TF.scaled_dot_product_attention(qt, kt, vt, is_causal=True, scale=0.5)
    close_to_largest(out, ref, TOL[dtype])
    mask = np.tril(np.ones((L, S), dtype=bool))
    pt = torch.softmax(0.5 * qt @ kt.mT + torch.tensor(np.where(mask, 0.0, -np.inf)), -1)
    # p is defined on each row block's key prefix only (the rest is never written).
    prefix = np.arange(S)[None, :] < ((np.arange(L) // block + 1) * block)[:, None]
    np.testing.assert_allclose(np.where(prefix, p.astype(ts.float64).numpy(), 0.0),
                               np.where(prefix, pt.detach().numpy(), 0.0),
                               rtol=TOL[dtype], atol=TOL[dtype])
    g = rounded(rng.standard_normal((2, L, Ev)), dtype)
    ref.backward(torch.tensor(g))
    grads = _C._causal_block_attention_backward(q, k, v, p, ts.asarray(g).astype(q.dtype), 0.5,
                                                block)
    for a, b in zip(grads, (qt, kt, vt)):
        close_to_largest(a, b.grad, TOL[dtype])


def test_causal_block_gradcheck(blocked) -> None:
    q, k, v = (ts.asarray(rng.standard_normal(s), requires_grad=True)
               for s in ((2, 9, 3), (2, 11, 3), (2, 11, 2)))
    fn = lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True)  # noqa: E731
    assert ts.autograd.gradcheck(fn, (q, k, v), eps=1e-6, atol=1e-7)
    assert blocked


@pytest.mark.parametrize("transposed", [False, True])
def test_causal_block_double_backward(blocked, transposed) -> None:
    """create_graph=True reaches the inputs themselves, also when the kernels ran on
    contiguous copies of them."""
    raw = [rng.standard_normal(s) for s in ((2, 9, 3), (2, 9, 3), (2, 9, 4))]
    if transposed:
        raw = [np.swapaxes(np.ascontiguousarray(np.swapaxes(r, 1, 2)), 1, 2) for r in raw]
        assert not raw[0].flags.c_contiguous
    for a, b in double_backward_pairs(
            lambda *x: F.scaled_dot_product_attention(*x, is_causal=True),
            lambda *x: TF.scaled_dot_product_attention(*x, is_causal=True), raw):
        close_to_largest(a, b, TOL["float64"])


def test_causal_softmax_backward_ignores_masked_entries() -> None:
    """Masked score gradients may be garbage (never computed): the causal backward neither
    reads nor sums them and writes 0 there; the non-causal one does read them."""
    y = _C._attention_softmax(ts.asarray(rng.standard_normal((2, 5, 7))), 1.0, True)
    g = rng.standard_normal((2, 5, 7))
    clean = _C._attention_softmax_backward(y, ts.asarray(g), 0.5, True).numpy()
    g[np.broadcast_to(~np.tril(np.ones((5, 7), dtype=bool)), g.shape)] = np.nan
    got = _C._attention_softmax_backward(y, ts.asarray(g), 0.5, True).numpy()
    np.testing.assert_array_equal(got, clean)
    assert np.all(got[:, ~np.tril(np.ones((5, 7), dtype=bool))] == 0)
    assert np.isnan(_C._attention_softmax_backward(y, ts.asarray(g), 0.5).numpy()).any()


@pytest.mark.parametrize("block", [1, 2, 3, 8])
def test_causal_softmax_block_prefix(block) -> None:
    """With a block, row i's entries below roundup(i + 1, block) equal the full kernel's;
    entries past the visible keys are neither read (NaN there does not matter) nor, past
    the prefix, written."""
    x = rng.standard_normal((3, 6, 7))
    full = _C._attention_softmax(ts.asarray(x), 0.7, True).numpy()
    gy = rng.standard_normal((3, 6, 7))
    gfull = _C._attention_softmax_backward(ts.asarray(full), ts.asarray(gy), 0.7, True).numpy()
    masked = ~np.tril(np.ones((6, 7), dtype=bool))
    x[:, masked] = np.nan
    gy[:, masked] = np.nan
    prefix = np.arange(7)[None, :] < ((np.arange(6) // block + 1) * block)[:, None]
    got = _C._attention_softmax(ts.asarray(x), 0.7, True, block).numpy()
    np.testing.assert_array_equal(got[:, prefix], full[:, prefix])
    ggot = _C._attention_softmax_backward(ts.asarray(full), ts.asarray(gy), 0.7, True,
                                          block).numpy()
    np.testing.assert_array_equal(ggot[:, prefix], gfull[:, prefix])
    with pytest.raises(ValueError, match="block must be >= 0"):
        _C._attention_softmax(ts.asarray(x), 0.7, True, -1)
    # A block beyond the row length (up to the largest int64) writes whole rows.
    huge = _C._attention_softmax(ts.asarray(x), 0.7, True, 2**63 - 1).numpy()
    np.testing.assert_array_equal(huge, _C._attention_softmax(ts.asarray(x), 0.7, True).numpy())


def test_causal_block_selection() -> None:
    with A.attention_trace() as trace:
        _causal_block_selection(Blocks(trace))
    x = ts.zeros((2, 3, 256, 8), requires_grad=True)
    y = F.scaled_dot_product_attention(x, x, x, is_causal=True)
    assert y.grad_fn.name() == "CausalBlockAttentionBackward0"


def _causal_block_selection(calls) -> None:
    x = ts.zeros((2, 3, 256, 8))
    F.scaled_dot_product_attention(x, x, x, is_causal=True)
    F.scaled_dot_product_attention(ts.zeros((1, 1, 1024, 8)), ts.zeros((1, 1, 1024, 8)),
                                   ts.zeros((1, 1, 1024, 8)), is_causal=True)
    assert calls == [64, 128]
    short = ts.zeros((2, 3, 127, 8))
    F.scaled_dot_product_attention(short, short, short, is_causal=True)  # one block: matmul path
    F.scaled_dot_product_attention(x, x, x)  # not causal
    F.scaled_dot_product_attention(x, x, x, is_causal=True, dropout_p=0.5)
    F.scaled_dot_product_attention(x, ts.zeros((1, 3, 256, 8)), ts.zeros((1, 3, 256, 8)),
                                   is_causal=True)  # broadcast batch
    with pytest.raises(RuntimeError, match="same dtype"):  # mixed dtypes raise, as in torch
        F.scaled_dot_product_attention(x, x.astype(ts.float64), x, is_causal=True)
    half = x.astype(ts.bfloat16)
    F.scaled_dot_product_attention(half, half, half, is_causal=True)  # 16-bit: matmul path
    F.scaled_dot_product_attention(ts.zeros((256, 8)), ts.zeros((256, 8)), ts.zeros((256, 8)),
                                   is_causal=True)  # no batch dim
    assert calls == [64, 128]


def test_causal_block_op_errors() -> None:
    q = ts.zeros((2, 8, 4))
    with pytest.raises(TypeError, match="causal_block_attention: .*floating"):
        _C._causal_block_attention(q.astype(ts.int32), q.astype(ts.int32), q.astype(ts.int32),
                                   1.0, 4)
    with pytest.raises(TypeError, match="key dtype float64"):
        _C._causal_block_attention(q, q.astype(ts.float64), q, 1.0, 4)
    with pytest.raises(ValueError, match="equal batch dims"):
        _C._causal_block_attention(q, ts.zeros((3, 8, 4)), q, 1.0, 4)
    with pytest.raises(ValueError, match="do not match"):
        _C._causal_block_attention(q, ts.zeros((2, 8, 5)), q, 1.0, 4)
    with pytest.raises(ValueError, match="L, S > 0"):
        _C._causal_block_attention(ts.zeros((2, 0, 4)), q, q, 1.0, 4)
    with pytest.raises(ValueError, match="block must be positive"):
        _C._causal_block_attention(q, q, q, 1.0, 0)
    big, _ = _C._causal_block_attention(q, q, q, 1.0, 2**63 - 1)  # one block: the whole rows
    np.testing.assert_array_equal(big.numpy(), _C._causal_block_attention(q, q, q, 1.0, 8)[0].numpy())
    with pytest.raises(ValueError, match="scale must be finite"):
        _C._causal_block_attention(q, q, q, float("nan"), 4)
    with pytest.raises(ValueError, match="\\(\\.\\.\\., L, E\\)"):
        _C._causal_block_attention(ts.zeros((8, 4)), ts.zeros((8, 4)), ts.zeros((8, 4)), 1.0, 4)
    out, p = _C._causal_block_attention(q, q, q, 1.0, 4)
    with pytest.raises(ValueError, match="probabilities of shape"):
        _C._causal_block_attention_backward(q, q, q, p.mT, out, 1.0, 4)
    with pytest.raises(ValueError, match="grad_out of shape"):
        _C._causal_block_attention_backward(q, q, q, p, p, 1.0, 4)


cuda = pytest.mark.skipif(not ts.cuda.is_available(), reason="no CUDA device")


@cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64"])
@pytest.mark.parametrize("L,S,block", [(256, 256, 64), (200, 130, 64), (130, 300, 64),
                                       (1024, 1024, 128), (70, 70, 16)])
def test_causal_block_cuda_matches_cpu(L, S, block, dtype) -> None:
    E, Ev = 16, 24
    raw = [rng.standard_normal(s) for s in ((3, L, E), (3, S, E), (3, S, Ev), (3, L, Ev))]
    cpu = [ts.asarray(r).astype(getattr(ts, dtype)) for r in raw]
    gpu = [x.to("cuda") for x in cpu]
    out_c, p_c = _C._causal_block_attention(*cpu[:3], 0.25, block)
    out_g, p_g = _C._causal_block_attention(*gpu[:3], 0.25, block)
    tol = {"float64": 1e-12, "float32": 1e-5, "float16": 4e-3, "bfloat16": 3e-2}[dtype]
    prefix = np.arange(S)[None, :] < ((np.arange(L) // block + 1) * block)[:, None]
    np.testing.assert_allclose(out_g.to("cpu").astype(ts.float64).numpy(),
                               out_c.astype(ts.float64).numpy(), rtol=tol, atol=tol * 4)
    np.testing.assert_allclose(p_g.to("cpu").astype(ts.float64).numpy()[:, prefix],
                               p_c.astype(ts.float64).numpy()[:, prefix], rtol=tol, atol=tol)
    ref = _C._causal_block_attention_backward(*cpu[:3], p_c, cpu[3], 0.25, block)
    got = _C._causal_block_attention_backward(*gpu[:3], p_c.to("cuda"), gpu[3], 0.25, block)
    for a, b in zip(got, ref):
        big = max(float(np.abs(b.astype(ts.float64).numpy()).max()), 1.0)
        np.testing.assert_allclose(a.to("cpu").astype(ts.float64).numpy(),
                                   b.astype(ts.float64).numpy(), rtol=tol, atol=tol * big)


@cuda
def test_causal_block_cuda_sdpa_gpt_layout() -> None:
    B, T, H, D = 4, 256, 6, 64
    raw = rng.standard_normal((B, T, 3 * H * D)).astype(np.float32)
    res = []
    for dev in ("cpu", "cuda"):
        x = ts.asarray(raw).to(dev).requires_grad_(True)
        q, k, v = (x[..., i * H * D:(i + 1) * H * D].reshape(B, T, H, D).transpose(1, 2)
                   for i in range(3))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out.backward(ts.ones(tuple(out.shape), device=dev))
        res.append((out.to("cpu").numpy(), x.grad.to("cpu").numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L", [4, 256])
def test_sdpa_empty_head_dim_matches_torch(L, causal) -> None:
    """E = 0: the scores are all zero, so the weights are uniform (causal: over the visible
    keys), as in PyTorch; the default scale 1/sqrt(0) must not raise."""
    v = rng.standard_normal((2, 1, L, 3))
    got = F.scaled_dot_product_attention(ts.zeros((2, 1, L, 0), dtype=ts.float64),
                                         ts.zeros((2, 1, L, 0), dtype=ts.float64), ts.asarray(v),
                                         is_causal=causal)
    want = TF.scaled_dot_product_attention(torch.zeros(2, 1, L, 0, dtype=torch.float64),
                                           torch.zeros(2, 1, L, 0, dtype=torch.float64),
                                           torch.tensor(v), is_causal=causal)
    close_to_largest(got, want, TOL["float64"])


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_sdpa_fully_masked_rows_match_torch(kind) -> None:
    """Rows a mask hides entirely give 0 and zero gradients, as PyTorch's sdpa does (its
    safe softmax), not NaN; other rows are unaffected."""
    L, S = 5, 4
    keep = rng.random((L, S)) < 0.6
    keep[1] = False
    keep[3] = False
    keep[0, 0] = True
    mask = keep if kind == "bool" else np.where(keep, rng.standard_normal((L, S)), -np.inf)
    raw = [rng.standard_normal(s) for s in ((2, L, 3), (2, S, 3), (2, S, 2))]
    xs = [ts.asarray(r, requires_grad=True) for r in raw]
    xt = [torch.tensor(r, requires_grad=True) for r in raw]
    got = F.scaled_dot_product_attention(*xs, attn_mask=ts.asarray(mask))
    want = TF.scaled_dot_product_attention(*xt, attn_mask=torch.tensor(mask))
    close_to_largest(got, want, TOL["float64"])
    assert np.all(got.numpy()[:, [1, 3]] == 0)
    g = rng.standard_normal((2, L, 2))
    got.backward(ts.asarray(g))
    want.backward(torch.tensor(g))
    for a, b in zip(xs, xt):
        assert np.isfinite(a.grad.numpy()).all()
        close_to_largest(a.grad, b.grad, TOL["float64"])


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_fully_padded_rows_match_torch(need_weights) -> None:
    """MultiheadAttention with a key_padding_mask hiding a whole sequence: NaN with weights
    (PyTorch's softmax path), 0 without (its scaled_dot_product_attention path)."""
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(4, 2, batch_first=True).double()
    sm = ts.nn.MultiheadAttention(4, 2, batch_first=True).double()
    sm.load_state_dict({k: ts.asarray(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = rng.standard_normal((2, 3, 4))
    kpm = np.array([[False, False, True], [True, True, True]])
    want, _ = tm(*(torch.tensor(x),) * 3, key_padding_mask=torch.tensor(kpm),
                 need_weights=need_weights)
    got, _ = sm(*(ts.asarray(x),) * 3, key_padding_mask=ts.asarray(kpm),
                need_weights=need_weights)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert np.isnan(got.numpy()[1]).all() == need_weights

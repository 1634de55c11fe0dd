"""The C++ nn ops (csrc/ops/nn/) on CUDA: each F.* call's value, first and second derivatives
on the GPU equal the CPU's for the same float64 inputs (the ops dispatch to the CUDA kernels
the Python Functions used), and autocast applies each op's policy inside the op."""
from __future__ import annotations

import numpy as np
import pytest

import tessera as ts
from tessera import _C
from tessera.nn import functional as F
from harness import randn64

pytestmark = pytest.mark.skipif(not ts.cuda.is_available(), reason="no CUDA device")


def run(fn, arrays, consts, device):
    xs = [ts.asarray(a.copy(), requires_grad=True).to(device) for a in arrays]
    for x in xs:
        x.retain_grad()
    cs = [ts.asarray(np.asarray(c)).to(device) for c in consts]
    y = fn(*xs, *cs)
    v = ts.asarray(np.random.default_rng(1).standard_normal(tuple(y.shape))).to(device)
    gs = ts.autograd.grad([y], xs, [v], create_graph=True)
    s = ts.sum(ts.stack([ts.sum(g * g) for g in gs]))
    hs = ts.autograd.grad([s], xs, allow_unused=True) if s.requires_grad else [None] * len(xs)
    host = (lambda t: None if t is None else t.detach().to("cpu").numpy())
    return host(y), [host(g) for g in gs], [host(h) for h in hs]


CASES = {
    "softmax dim 1": (lambda x: F.softmax(x, 1), [(3, 5, 4)], []),
    "log_softmax dim -1": (lambda x: F.log_softmax(x, -1), [(6, 33)], []),
    "layer_norm affine": (lambda x, w, b: F.layer_norm(x, (7,), w, b), [(5, 7), (7,), (7,)], []),
    "rms_norm": (lambda x, w: F.rms_norm(x, (7,), w), [(5, 7), (7,)], []),
    "cross_entropy": (lambda x, t, w: F.cross_entropy(x, t, w, ignore_index=2, label_smoothing=0.1),
                      [(6, 5)], [np.array([0, 2, 4, 1, 2, 3]), np.linspace(0.5, 1.5, 5)]),
    "cross_entropy 3-D none": (lambda x, t: F.cross_entropy(x, t, reduction="none"),
                               [(2, 4, 3)], [np.array([[0, 1, 3], [2, 2, 0]])]),
    "cross_entropy probabilities": (lambda x, t: F.cross_entropy(x, t),
                                    [(4, 3)], [np.full((4, 3), 1 / 3)]),
    "nll_loss": (lambda x, t: F.nll_loss(x, t), [(4, 3)], [np.array([0, 2, 1, 2])]),
    "linear": (lambda x, w, b: F.linear(x, w, b), [(2, 3, 4), (5, 4), (5,)], []),
    "gelu": (lambda x: F.gelu(x), [(4, 9)], []),
    "gelu tanh": (lambda x: F.gelu(x, "tanh"), [(4, 9)], []),
    "relu": (lambda x: F.relu(x), [(4, 9)], []),
    "embedding": (lambda w, i: F.embedding(i, w, padding_idx=1), [(6, 3)], [np.array([[0, 1], [5, 1]])]),
    "attention_softmax causal": (lambda s: _C.attention_softmax(s, 0.5, True), [(2, 4, 6)], []),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cuda_matches_cpu(name) -> None:
    fn, shapes, consts = CASES[name]
    arrays = [randn64(*s) for s in shapes]
    yc, gc, hc = run(fn, arrays, consts, "cpu")
    yg, gg, hg = run(fn, arrays, consts, "cuda")
    np.testing.assert_allclose(yg, yc, rtol=1e-10, atol=1e-12)
    for a, b in zip(gg + hg, gc + hc):
        if b is None:
            assert a is None or np.allclose(a, 0)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_cuda_dropout_same_mask_as_cpu() -> None:
    x = np.ones(1000)
    ts.manual_seed(5)
    yc = F.dropout(ts.asarray(x), 0.3).numpy()
    ts.manual_seed(5)
    yg = F.dropout(ts.asarray(x).to("cuda"), 0.3).to("cpu").numpy()
    np.testing.assert_array_equal(yg, yc)


def test_cuda_autocast_policies_inside_the_ops() -> None:
    x = ts.asarray(randn64(4, 10).astype(np.float32)).to("cuda")
    w = ts.asarray(randn64(3, 10).astype(np.float32)).to("cuda")
    x16 = x.astype(ts.float16)
    with ts.autocast("cuda"):
        assert F.linear(x, w).dtype == ts.float16
        assert F.softmax(x16, -1).dtype == ts.float32
        assert F.layer_norm(x16, (10,)).dtype == ts.float32
        assert F.cross_entropy(x16, ts.asarray([0, 1, 2, 3]).to("cuda")).dtype == ts.float32
        assert F.softmax(x16, -1, dtype=ts.float16).dtype == ts.float16
        assert F.gelu(x16).dtype == ts.float16

"""The nn ops that are C++ ops with C++ backward formulas (csrc/ops/nn/, formulas_nn.cpp):
softmax/log_softmax, layer_norm/rms_norm, cross_entropy/nll_loss, linear, gelu, relu.
Values, first and second derivatives against PyTorch in float64 (torch.autograd.grad with
create_graph), finite-difference gradcheck/gradgradcheck, the argument errors, and that the
F.* functions record one C++ node (no Python autograd.Function)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
import tessera.nn.functional as F
from tessera import _C
from harness import randn64, rng


def both(a, grad=True):
    a = np.asarray(a)
    g = grad and a.dtype.kind == "f"
    return ts.asarray(a.copy(), requires_grad=g), torch.tensor(a.copy(), requires_grad=g)


def check(fn_ts, fn_torch, arrays, consts=(), rtol=1e-7, atol=1e-9, second=True):
    """Value, first and second derivatives (through create_graph) of fn against torch."""
    tsx, tox = zip(*(both(a) for a in arrays))
    tsc, toc = zip(*(both(a, grad=False) for a in consts)) if consts else ((), ())
    ys, yt = fn_ts(*tsx, *tsc), fn_torch(*tox, *toc)
    np.testing.assert_allclose(ys.numpy(), yt.detach().numpy(), rtol=rtol, atol=atol)
    assert ys.shape == tuple(yt.shape) and str(ys.dtype) == str(yt.dtype).replace("torch.", "")
    v = randn64(*yt.shape)
    gs = ts.autograd.grad([ys], list(tsx), [ts.asarray(v)], create_graph=second)
    gt = torch.autograd.grad([yt], list(tox), [torch.tensor(v)], create_graph=second)
    for a, b in zip(gs, gt):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)
    if not second:
        return
    # d/dx <grad, u>: the second derivative contracted with random directions.
    us = [randn64(*a.shape) for a in gt]
    ss = ts.sum(ts.stack([ts.sum(a * ts.asarray(u)) for a, u in zip(gs, us)]))
    st = sum((a * torch.tensor(u)).sum() for a, u in zip(gt, us))
    if not (st.requires_grad and ss.requires_grad):
        # The gradient is constant in the inputs (one side may still record a graph of it):
        # the second derivative must be zero.
        pairs = [(ss, tsx), (st, tox)]
        for out, ins in pairs:
            if out.requires_grad:
                for a in (ts if out is ss else torch).autograd.grad([out], list(ins), allow_unused=True):
                    assert a is None or np.allclose(a.detach().numpy(), 0)
        return
    hs = ts.autograd.grad([ss], list(tsx), allow_unused=True)
    ht = torch.autograd.grad([st], list(tox), allow_unused=True)
    for a, b in zip(hs, ht):
        if b is None:
            assert a is None or np.allclose(a.numpy(), 0)
            continue
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------ softmax
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", [((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1), ((2, 3, 4), -1),
                                       ((6,), 0), ((), 0), ((2, 3, 4), None)])
def test_softmax(log, shape, dim) -> None:
    f, tf = (F.log_softmax, TF.log_softmax) if log else (F.softmax, TF.softmax)
    check(lambda x: f(x, dim), lambda x: tf(x, dim), [randn64(*shape)])


def test_softmax_dtype_and_integers() -> None:
    x = randn64(3, 4).astype(np.float32)
    y = F.softmax(ts.asarray(x), -1, dtype=ts.float64)
    assert y.dtype == ts.float64
    np.testing.assert_allclose(y.numpy(), TF.softmax(torch.tensor(x), -1, dtype=torch.float64).numpy())
    z = F.log_softmax(ts.asarray(np.arange(6).reshape(2, 3)), 1)
    assert z.dtype == ts.float32
    np.testing.assert_allclose(z.numpy(), TF.log_softmax(torch.arange(6.).reshape(2, 3), 1).numpy(),
                               rtol=1e-6)
    s = F.softmax(ts.asarray(np.full((2, 3), -np.inf)), 1)  # all -inf rows: NaN as torch
    assert np.isnan(s.numpy()).all() == torch.isnan(TF.softmax(torch.full((2, 3), -np.inf), 1)).all()


def test_softmax_errors() -> None:
    with pytest.raises(IndexError, match=r"softmax: dim 2 is out of range for a 2-D tensor"):
        F.softmax(ts.ones((2, 3)), 2)
    with pytest.raises(TypeError, match=r"log_softmax: expected a real"):
        F.log_softmax(ts.ones((2, 3), dtype=ts.complex64), 1)


# ------------------------------------------------------------------ layer norm / rms norm
@pytest.mark.parametrize("shape,ns", [((4, 6), (6,)), ((2, 3, 4), (3, 4)), ((5,), (5,))])
@pytest.mark.parametrize("affine", ["none", "weight", "both", "bias"])
def test_layer_norm(shape, ns, affine) -> None:
    w, b = 1 + 0.3 * randn64(*ns), 0.3 * randn64(*ns)
    arrays = [randn64(*shape)] + ([w] if affine in ("weight", "both") else []) + \
        ([b] if affine in ("bias", "both") else [])

    def run(fn):
        def f(x, *p):
            ww = p[0] if affine in ("weight", "both") else None
            bb = p[-1] if affine in ("bias", "both") else None
            if fn is TF.layer_norm and affine == "bias":  # torch's double backward fails there
                ww = torch.ones(ns, dtype=torch.float64)
            return fn(x, ns, ww, bb, 1e-5)
        return f
    check(run(F.layer_norm), run(TF.layer_norm), arrays, rtol=1e-6, atol=1e-8)


def test_layer_norm_int_shape_and_errors() -> None:
    x = randn64(3, 4)
    np.testing.assert_allclose(F.layer_norm(ts.asarray(x), 4).numpy(),
                               TF.layer_norm(torch.tensor(x), (4,)).numpy(), rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match=r"layer_norm: normalized_shape \(5,\) does not match .*\(3, 4\)"):
        F.layer_norm(ts.asarray(x), (5,))
    with pytest.raises(ValueError, match=r"layer_norm: weight of shape \(3,\) does not match"):
        F.layer_norm(ts.asarray(x), (4,), ts.ones(3, dtype=ts.float64))
    # mixed dtypes raise like torch (tests/nn/test_nn_operand_dtypes.py covers the rest)
    with pytest.raises(RuntimeError, match=r"layer_norm: weight dtype float64 differs"):
        F.layer_norm(ts.asarray(x.astype(np.float32)), (4,), ts.ones(4, dtype=ts.float64))


@pytest.mark.parametrize("weight", [False, True])
def test_rms_norm(weight) -> None:
    arrays = [randn64(3, 5)] + ([1 + randn64(5)] if weight else [])
    check(lambda x, *w: F.rms_norm(x, (5,), w[0] if w else None, 1e-6),
          lambda x, *w: TF.rms_norm(x, (5,), w[0] if w else None, 1e-6), arrays)
    x = randn64(2, 4).astype(np.float32)
    np.testing.assert_allclose(F.rms_norm(ts.asarray(x), [4]).numpy(),
                               TF.rms_norm(torch.tensor(x), [4]).numpy(), rtol=1e-6)


# ------------------------------------------------------------------ cross entropy / NLL
CE_CASES = [
    dict(shape=(4, 5), target=[1, 0, 4, 2]),
    dict(shape=(4, 5), target=[1, -100, 4, 2], reduction="sum"),
    dict(shape=(4, 5), target=[1, 3, 4, 2], weight=True, label_smoothing=0.2),
    dict(shape=(4, 5), target=[1, 3, 4, 3], weight=True, ignore_index=3, reduction="mean",
         label_smoothing=0.1),
    dict(shape=(2, 3, 2, 2), target=[[[0, 1], [2, 1]], [[1, 1], [0, 2]]], reduction="none",
         label_smoothing=0.3),
    dict(shape=(5,), target=3, label_smoothing=0.1),
    dict(shape=(5,), target=3, reduction="none"),
]


@pytest.mark.parametrize("case", CE_CASES, ids=lambda c: str(sorted(c.items())))
def test_cross_entropy_indices(case) -> None:
    c = dict(case)
    shape, target = c.pop("shape"), np.asarray(c.pop("target"), dtype=np.int64)
    classes = shape[1] if len(shape) > 1 else shape[0]
    w = 0.5 + rng.random(classes) if c.pop("weight", False) else None
    consts = [target] + ([w] if w is not None else [])

    def run(fn):
        return lambda x, t, *ww: fn(x, t, ww[0] if ww else None, **c)
    check(run(F.cross_entropy), run(TF.cross_entropy), [randn64(*shape)], consts)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_cross_entropy_probabilities(reduction, smoothing) -> None:
    p = rng.random((3, 4, 2))
    p /= p.sum(1, keepdims=True)
    w = 0.5 + rng.random(4)
    run = (lambda fn: lambda x, t, ww: fn(x, t, ww, reduction=reduction, label_smoothing=smoothing))
    check(run(F.cross_entropy), run(TF.cross_entropy), [randn64(3, 4, 2)], [p, w])


def test_cross_entropy_mixed_dtype_weight_and_float32() -> None:
    x = randn64(4, 3).astype(np.float32)
    t = np.array([0, 2, 1, 2])
    w = np.array([0.2, 1.0, 2.0])
    # a float64 weight with float32 logits raises like torch (test_nn_operand_dtypes.py)
    with pytest.raises(RuntimeError):
        TF.cross_entropy(torch.tensor(x), torch.tensor(t), torch.tensor(w), label_smoothing=0.1)
    with pytest.raises(RuntimeError, match=r"cross_entropy: input \(float32\) and weight"):
        F.cross_entropy(ts.asarray(x), ts.asarray(t), ts.asarray(w), label_smoothing=0.1)
    got = F.cross_entropy(ts.asarray(x), ts.asarray(t), ts.asarray(w.astype(np.float32)),
                          label_smoothing=0.1)
    want = TF.cross_entropy(torch.tensor(x), torch.tensor(t), torch.tensor(w).float(),
                            label_smoothing=0.1)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)
    got = F.cross_entropy(ts.asarray(x), ts.asarray(t.astype(np.int32)))
    np.testing.assert_allclose(got.numpy(), TF.cross_entropy(torch.tensor(x), torch.tensor(t)).numpy(),
                               rtol=1e-5)


@pytest.mark.cpu_only  # host-side checks: on CUDA bad targets surface at the next sync, as torch's
def test_cross_entropy_errors() -> None:
    x = ts.ones((4, 3))
    with pytest.raises(ValueError, match=r"cross_entropy: 'avg' is not a valid value for reduction"):
        F.cross_entropy(x, ts.asarray([0, 1, 2, 0]), reduction="avg")
    with pytest.raises(ValueError, match=r"cross_entropy: label_smoothing must be in \[0, 1\]"):
        F.cross_entropy(x, ts.asarray([0, 1, 2, 0]), label_smoothing=1.5)
    with pytest.raises(ValueError, match=r"cross_entropy: target shape \(3,\) does not match input shape \(4, 3\)"):
        F.cross_entropy(x, ts.asarray([0, 1, 2]))
    with pytest.raises(IndexError, match=r"cross_entropy: target 3 is out of range \[0, 3\)"):
        F.cross_entropy(x, ts.asarray([0, 1, 3, 0]))
    with pytest.raises(ValueError, match=r"cross_entropy: weight of shape \(4,\) does not match 3 classes"):
        F.cross_entropy(x, ts.asarray([0, 1, 2, 0]), ts.ones(4))
    with pytest.raises(TypeError, match=r"cross_entropy: expected floating-point logits, got int64"):
        F.cross_entropy(ts.asarray([[1, 2]]), ts.asarray([0]))
    with pytest.raises(ValueError, match=r"cross_entropy: target size \(4, 2\) must be the same as input size"):
        F.cross_entropy(x, ts.ones((4, 2)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(reduction, weighted) -> None:
    t = np.array([[1, 0], [2, -100], [0, 2]])
    w = [0.5 + rng.random(3)] if weighted else []
    run = (lambda fn: lambda x, tt, *ww: fn(x, tt, ww[0] if ww else None, reduction=reduction))
    check(run(F.nll_loss), run(TF.nll_loss), [randn64(3, 3, 2)], [t] + w)
    check(run(F.nll_loss), run(TF.nll_loss), [randn64(4)], [np.array(2)] + ([0.5 + rng.random(4)] if weighted else []))


@pytest.mark.cpu_only  # host-side checks: on CUDA bad targets surface at the next sync, as torch's
def test_nll_loss_errors() -> None:
    with pytest.raises(IndexError, match=r"nll_loss: target values must be in \[0, 3\) or ignore_index \(-100\), got 5"):
        F.nll_loss(ts.ones((2, 3)), ts.asarray([0, 5]))
    with pytest.raises(TypeError, match=r"nll_loss: expected integer class indices as target, got float32"):
        F.nll_loss(ts.ones((2, 3)), ts.ones(2))


# ------------------------------------------------------------------ linear
@pytest.mark.parametrize("xshape", [(4, 3), (2, 5, 3), (3,)])
@pytest.mark.parametrize("bias", [False, True])
def test_linear(xshape, bias) -> None:
    arrays = [randn64(*xshape), randn64(6, 3)] + ([randn64(6)] if bias else [])
    check(lambda x, w, *b: F.linear(x, w, b[0] if b else None),
          lambda x, w, *b: TF.linear(x, w, b[0] if b else None), arrays)


@pytest.mark.cpu_only  # host-side checks: on CUDA bad targets surface at the next sync, as torch's
def test_linear_errors_and_general_path() -> None:
    with pytest.raises(ValueError, match=r"linear: input of shape \(4, 3\) does not match weight of shape \(6, 2\)"):
        F.linear(ts.ones((4, 3)), ts.ones((6, 2)))
    with pytest.raises(ValueError, match=r"linear: bias of shape \(5,\) does not match 6 output features"):
        F.linear(ts.ones((4, 3)), ts.ones((6, 3)), ts.ones(5))
    y = F.linear(ts.asarray(np.ones((2, 3), np.int64)), ts.asarray(np.ones((4, 3), np.int64)))
    assert y.dtype == ts.int64 and (y.numpy() == 3).all()


# ------------------------------------------------------------------ activations
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate) -> None:
    x = randn64(4, 5) * 2
    check(lambda a: F.gelu(a, approximate), lambda a: TF.gelu(a, approximate=approximate), [x],
          rtol=1e-6, atol=1e-7)


def test_gelu_third_derivative_and_errors() -> None:
    xs = ts.asarray(np.linspace(-2, 2, 7), requires_grad=True)
    xt = torch.tensor(np.linspace(-2, 2, 7), requires_grad=True)
    for a, fn in ((xs, F.gelu), (xt, TF.gelu)):
        g1 = (ts if a is xs else torch).autograd.grad([fn(a).sum()], [a], create_graph=True)[0]
        g2 = (ts if a is xs else torch).autograd.grad([g1.sum()], [a], create_graph=True)[0]
        g3 = (ts if a is xs else torch).autograd.grad([g2.sum()], [a])[0]
        if a is xs:
            mine = g3.numpy()
        else:
            np.testing.assert_allclose(mine, g3.numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match=r"gelu: approximate must be 'none' or 'tanh', got 'fast'"):
        F.gelu(ts.ones(3), "fast")


def test_relu() -> None:
    x = randn64(3, 4)
    x[0, 0] = 0.0
    check(F.relu, TF.relu, [x])
    n = F.relu(ts.asarray([np.nan, -1.0, 2.0]))
    assert np.isnan(n.numpy()[0]) and n.numpy()[1] == 0
    assert F.relu(ts.asarray([-1, 2])).dtype == ts.int64


# ------------------------------------------------------------------ one C++ node each
@pytest.mark.parametrize("call,node", [
    (lambda x: F.softmax(x, 1), "SoftmaxBackward0"),
    (lambda x: F.log_softmax(x, 1), "LogSoftmaxBackward0"),
    (lambda x: F.layer_norm(x, (4,)), "NativeLayerNormBackward0"),
    (lambda x: F.cross_entropy(x, ts.asarray([0, 1, 3]), reduction="none"), "CrossEntropyLossBackward0"),
    (lambda x: F.linear(x, ts.ones((2, 4), dtype=ts.float64)), "LinearBackward0"),
    (lambda x: F.gelu(x), "GeluBackward0"),
    (lambda x: F.relu(x), "ReluBackward0"),
])
def test_one_cpp_node(call, node) -> None:
    y = call(ts.asarray(randn64(3, 4), requires_grad=True))
    assert y.grad_fn.name() == node


@pytest.mark.parametrize("fn", [
    lambda x: F.softmax(x, 0), lambda x: F.log_softmax(x, 1),
    lambda x: F.layer_norm(x, (3,)), lambda x: F.gelu(x, "tanh"), lambda x: F.gelu(x),
    lambda x: F.cross_entropy(x, ts.asarray([0, 2]), label_smoothing=0.1),
    lambda x: F.cross_entropy(x, ts.asarray([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], dtype=ts.float64)),
    lambda x: F.linear(x, x),
])
def test_gradcheck_finite_differences(fn) -> None:
    x = ts.asarray(randn64(2, 3), requires_grad=True)
    assert ts.autograd.gradcheck(fn, (x,))
    assert ts.autograd.gradgradcheck(fn, (x,))


# ------------------------------------------------------------------ embedding / dropout
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding(padding_idx) -> None:
    idx = np.array([[0, 2, 4], [2, 1, 0]])
    check(lambda w, i: F.embedding(i, w, padding_idx), lambda w, i: TF.embedding(i, w, padding_idx),
          [randn64(5, 3)], [idx])


def test_embedding_node_and_errors() -> None:
    w = ts.asarray(randn64(4, 2), requires_grad=True)
    y = F.embedding(ts.asarray([1, 3]), w)
    assert y.grad_fn.name() == "EmbeddingBackward0"
    with pytest.raises(TypeError, match=r"embedding: indices must be integers, got float32"):
        F.embedding(ts.ones(2), w)
    with pytest.raises(ValueError, match=r"embedding: weight must be 2-D"):
        F.embedding(ts.asarray([0]), ts.ones(3))


def test_dropout_node_and_second_derivative() -> None:
    x = ts.asarray(randn64(50), requires_grad=True)
    ts.manual_seed(0)
    y = F.dropout(x, 0.4)
    assert y.grad_fn.name() == "NativeDropoutBackward0"
    keep = y.detach().numpy() != 0
    (g,) = ts.autograd.grad([(y * y).sum()], [x], create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), np.where(keep, 2 * x.detach().numpy() / 0.36, 0),
                               rtol=1e-12)
    (h,) = ts.autograd.grad([g.sum()], [x])
    np.testing.assert_allclose(h.numpy(), np.where(keep, 2 / 0.36, 0), rtol=1e-12)
    with pytest.raises(ValueError, match=r"dropout: probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)


# ------------------------------------------------------------------ attention softmax
@pytest.mark.parametrize("causal", [False, True])
def test_attention_softmax(causal) -> None:
    L, S, scale = 4, 5, 0.7

    def ref(s):
        if causal:
            s = s.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), -float("inf"))
        return torch.softmax(s * scale, -1)
    check(lambda s: _C.attention_softmax(s, scale, causal), ref, [randn64(2, L, S)])
    y = _C.attention_softmax(ts.asarray(randn64(L, S), requires_grad=True), scale, causal)
    assert y.grad_fn.name() == "AttentionSoftmaxBackward0"

"""ts.nn.functional vs torch.nn.functional (values and gradients), losses with every
reduction and option, attention, padding; nn.init and nn.utils."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
from tessera import nn
from tessera.nn import functional as F
from harness import close, compare_fn, randn64, rng, tt


REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kw", [{}, {"weight": True}, {"ignore_index": 1}, {"label_smoothing": 0.2},
                                {"weight": True, "ignore_index": 2, "label_smoothing": 0.1}])
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5), (4,)])
def test_cross_entropy_class_indices(reduction, kw, shape) -> None:
    x = randn64(*shape)
    c = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    y = rng.integers(0, c, tshape).astype(np.int64)
    if y.ndim:
        y.flat[0] = 1
    w = np.abs(randn64(c)) + 0.5 if kw.get("weight") else None
    opts = {k: v for k, v in kw.items() if k != "weight"}

    def fs(x, y, *w):
        return F.cross_entropy(x, y, weight=w[0] if w else None, reduction=reduction, **opts)

    def ft(x, y, *w):
        return TF.cross_entropy(x, y, weight=w[0] if w else None, reduction=reduction, **opts)
    args = (x, y) + ((w,) if w is not None else ())
    compare_fn(fs, ft, *args, rtol=1e-10, atol=1e-12, grad=[0])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.3}, {"weight": True}])
def test_cross_entropy_probabilities(reduction, kw) -> None:
    x = randn64(5, 4, 3)
    p = np.abs(randn64(5, 4, 3))
    p /= p.sum(axis=1, keepdims=True)
    w = np.abs(randn64(4)) if kw.get("weight") else None
    ls = kw.get("label_smoothing", 0.0)
    compare_fn(lambda a, b: F.cross_entropy(a, b, weight=None if w is None else tt(w), reduction=reduction,
                                            label_smoothing=ls),
               lambda a, b: TF.cross_entropy(a, b, weight=None if w is None else torch.tensor(w),
                                             reduction=reduction, label_smoothing=ls),
               x, p, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction) -> None:
    x = randn64(6, 5)
    y = np.array([0, 4, 2, 2, -100, 1])
    w = np.abs(randn64(5))
    compare_fn(lambda a, b, c: F.nll_loss(a, b, c, reduction=reduction),
               lambda a, b, c: TF.nll_loss(a, b, c, reduction=reduction), x, y, w, grad=[0],
               rtol=1e-10, atol=1e-12)
    with pytest.raises(IndexError, match="nll_loss: target values"):
        F.nll_loss(tt(x), tt(np.array([0, 5, 1, 1, 1, 1])))
    with pytest.raises(TypeError, match="integer class indices"):
        F.nll_loss(tt(x), tt(np.zeros(6)))


POINTWISE = [
    ("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
    ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {}), ("huber_loss", {"delta": 0.3}),
    ("soft_margin_loss", {}),
]


@pytest.mark.parametrize("name,kw", POINTWISE)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_losses(name, kw, reduction) -> None:
    a, b = randn64(4, 5), randn64(4, 5)
    if name == "soft_margin_loss":
        b = np.sign(b)
    compare_fn(lambda x, y: getattr(F, name)(x, y, reduction=reduction, **kw),
               lambda x, y: getattr(TF, name)(x, y, reduction=reduction, **kw), a, b,
               rtol=1e-10, atol=1e-12, grad=[0] if name == "soft_margin_loss" else None)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(reduction, weighted) -> None:
    p = 1 / (1 + np.exp(-randn64(4, 3)))
    p[0, 0], p[0, 1] = 0.0, 1.0  # log clamped at -100 as in PyTorch
    y = rng.uniform(0, 1, (4, 3))
    y[0, 0], y[0, 1] = 1.0, 0.0
    w = np.abs(randn64(4, 3)) if weighted else None
    compare_fn(lambda a, b: F.binary_cross_entropy(a, b, None if w is None else tt(w), reduction=reduction),
               lambda a, b: TF.binary_cross_entropy(a, b, None if w is None else torch.tensor(w),
                                                    reduction=reduction),
               p, y, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("opts", ["", "weight", "pos_weight", "weight+pos_weight"])
def test_bce_with_logits(reduction, opts) -> None:
    x = randn64(4, 3) * 5
    x[0, 0], x[0, 1] = 200.0, -200.0  # stable at extreme logits
    y = rng.uniform(0, 1, (4, 3))
    w = np.abs(randn64(4, 3)) if "weight" in opts.split("+") else None
    pw = np.abs(randn64(3)) + 0.5 if "pos_weight" in opts else None

    def fs(a, b):
        return F.binary_cross_entropy_with_logits(a, b, None if w is None else tt(w),
                                                  reduction=reduction,
                                                  pos_weight=None if pw is None else tt(pw))

    def ft(a, b):
        return TF.binary_cross_entropy_with_logits(a, b, None if w is None else torch.tensor(w),
                                                   reduction=reduction,
                                                   pos_weight=None if pw is None else torch.tensor(pw))
    compare_fn(fs, ft, x, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target) -> None:
    x = np.log(np.abs(randn64(3, 4)) + 0.1)
    t = np.abs(randn64(3, 4))
    t[0, 0] = 0.0
    if log_target:
        t = np.log(t + 0.1)
    # The target gradient at target == 0 is ill-defined (PyTorch gives NaN): input only.
    compare_fn(lambda a, b: F.kl_div(a, b, reduction=reduction, log_target=log_target),
               lambda a, b: TF.kl_div(a, b, reduction=reduction, log_target=log_target),
               x, t, rtol=1e-10, atol=1e-12, grad=[0])


def test_loss_modules_and_errors() -> None:
    x, y = randn64(5, 3), rng.integers(0, 3, 5)
    w = np.abs(randn64(3))
    pairs = [
        (nn.CrossEntropyLoss(weight=tt(w), label_smoothing=0.1),
         torch.nn.CrossEntropyLoss(weight=torch.tensor(w), label_smoothing=0.1), x, y),
        (nn.NLLLoss(reduction="sum"), torch.nn.NLLLoss(reduction="sum"), x, y),
        (nn.MSELoss(), torch.nn.MSELoss(), x, randn64(5, 3)),
        (nn.L1Loss(reduction="none"), torch.nn.L1Loss(reduction="none"), x, randn64(5, 3)),
        (nn.SmoothL1Loss(beta=0.5), torch.nn.SmoothL1Loss(beta=0.5), x, randn64(5, 3)),
        (nn.HuberLoss(delta=2.0), torch.nn.HuberLoss(delta=2.0), x, randn64(5, 3)),
        (nn.BCELoss(), torch.nn.BCELoss(), 1 / (1 + np.exp(-x)), rng.uniform(0, 1, (5, 3))),
        (nn.BCEWithLogitsLoss(pos_weight=tt(w)), torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(w)),
         x, rng.uniform(0, 1, (5, 3))),
        (nn.KLDivLoss(reduction="batchmean"), torch.nn.KLDivLoss(reduction="batchmean"), x, np.abs(x)),
    ]
    for sm, tm, a, b in pairs:
        compare_fn(lambda p, q: sm(p, q), lambda p, q: tm(p, q), a, b, grad=[0], rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="mse_loss: 'avg' is not a valid value for reduction"):
        F.mse_loss(tt(x), tt(x), reduction="avg")
    with pytest.raises(ValueError, match="target size"):
        F.binary_cross_entropy_with_logits(tt(x), tt(x[:2]))
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(tt(x), tt(y), label_smoothing=1.5)


@pytest.mark.parametrize("fn,kw", [("softmax", {"dim": 1}), ("softmax", {"dim": 0}),
                                   ("log_softmax", {"dim": -1}), ("softmin", {"dim": 1}),
                                   ("logsigmoid", {}), ("relu6", {}), ("glu", {"dim": 1})])
def test_activation_functionals(fn, kw) -> None:
    x = randn64(3, 4, 2) * 4
    compare_fn(lambda a: getattr(F, fn)(a, **kw), lambda a: getattr(TF, fn)(a, **kw), x,
               rtol=1e-10, atol=1e-12)


def test_softmax_extremes_and_logsumexp() -> None:
    x = np.array([[1000.0, 0.0, -1000.0], [-np.inf, 0.0, 1.0], [-np.inf, -np.inf, -np.inf]])
    s, t = F.softmax(tt(x[:2]), dim=1), TF.softmax(torch.tensor(x[:2]), dim=1)
    close(s, t, 1e-12, 1e-15)
    close(F.log_softmax(tt(x[:1]), dim=1), TF.log_softmax(torch.tensor(x[:1]), dim=1), 1e-12, 0)
    close(F.logsumexp(tt(x), dim=1), torch.logsumexp(torch.tensor(x), dim=1), 1e-12, 0)
    y = randn64(3, 4, 5)
    compare_fn(lambda a: F.logsumexp(a, dim=(0, 2)), lambda a: torch.logsumexp(a, dim=(0, 2)), y)
    compare_fn(lambda a: F.logsumexp(a, dim=1, keepdim=True),
               lambda a: torch.logsumexp(a, dim=1, keepdim=True), y)
    assert F.softmax(tt(y.astype(np.float32)), dim=-1, dtype=ts.float64).dtype == ts.float64


def test_one_hot() -> None:
    y = np.array([[0, 3], [2, 1]])
    close(F.one_hot(tt(y)), TF.one_hot(torch.tensor(y)), 0, 0)
    close(F.one_hot(tt(y), 6), TF.one_hot(torch.tensor(y), 6), 0, 0)
    assert F.one_hot(tt(y)).dtype == ts.int64
    with pytest.raises(ValueError, match="one_hot: class values"):
        F.one_hot(tt(y), 3)
    with pytest.raises(TypeError, match="one_hot: expected an integer"):
        F.one_hot(tt(np.zeros(2)))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pads", [(1, 2), (2, 0, 1, 1), (0, 1, 2, 0, 1, 1)])
def test_pad(mode, pads) -> None:
    # Non-constant modes in PyTorch need exactly len(pads)//2 spatial dims (plus N, C).
    x = randn64(*(2, 3, 4, 5, 6)[:len(pads) // 2 + 2])
    compare_fn(lambda a: F.pad(a, pads, mode=mode, value=0.5 if mode == "constant" else None),
               lambda a: TF.pad(a, pads, mode=mode, value=0.5 if mode == "constant" else None), x)


def test_pad_negative_and_errors() -> None:
    x = randn64(3, 6)
    compare_fn(lambda a: F.pad(a, (-1, 2, 1, -2)), lambda a: TF.pad(a, (-1, 2, 1, -2)), x)
    with pytest.raises(ValueError, match="reflect padding"):
        F.pad(tt(x), (6, 0), mode="reflect")
    with pytest.raises(ValueError, match="pad: padding length"):
        F.pad(tt(x), (1,))
    with pytest.raises(ValueError, match="unknown mode"):
        F.pad(tt(x), (1, 1), mode="wrap")


@pytest.mark.parametrize("mask", [None, "bool", "float", "causal"])
@pytest.mark.parametrize("shape", [((2, 3, 5, 4), (2, 3, 6, 4)), ((5, 8), (5, 8))])
def test_scaled_dot_product_attention(mask, shape) -> None:
    qs, ks = shape
    q, k, v = randn64(*qs), randn64(*ks), randn64(*ks[:-1], 3)
    L, S = qs[-2], ks[-2]
    m = None
    if mask == "bool":
        m = rng.uniform(0, 1, (L, S)) > 0.3
        m[:, 0] = True
    elif mask == "float":
        m = randn64(L, S)
    causal = mask == "causal"
    extra = (m,) if m is not None else ()

    def fs(q, k, v, *mm):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mm[0] if mm else None,
                                              is_causal=causal, scale=0.3 if mask == "float" else None)

    def ft(q, k, v, *mm):
        return TF.scaled_dot_product_attention(q, k, v, attn_mask=mm[0] if mm else None,
                                               is_causal=causal, scale=0.3 if mask == "float" else None)
    compare_fn(fs, ft, q, k, v, *extra, grad=[0, 1, 2], rtol=1e-10, atol=1e-12)


def test_functional_misc() -> None:
    x = randn64(4, 5)
    compare_fn(lambda a: F.normalize(a), lambda a: TF.normalize(a), x)
    compare_fn(lambda a: F.normalize(a, p=1, dim=0), lambda a: TF.normalize(a, p=1, dim=0), x)
    compare_fn(lambda a, w, b: F.linear(a, w, b), lambda a, w, b: TF.linear(a, w, b),
               x, randn64(3, 5), randn64(3))
    compare_fn(lambda a, w: F.embedding(a, w), lambda a, w: TF.embedding(a, w),
               np.array([[1, 0], [3, 3]]), randn64(4, 2))
    compare_fn(lambda a, b, w: F.bilinear(a, b, w), lambda a, b, w: TF.bilinear(a, b, w),
               randn64(3, 4), randn64(3, 2), randn64(5, 4, 2))
    compare_fn(lambda a, b: F.cosine_similarity(a, b), lambda a, b: TF.cosine_similarity(a, b),
               randn64(3, 4), randn64(3, 4), rtol=1e-7)
    with pytest.raises(IndexError, match="embedding: index out of range"):
        F.embedding(tt(np.array([4])), tt(randn64(4, 2)))
    compare_fn(lambda a: F.conv2d(a, tt(np.ones((2, 3, 2, 2))), stride=2),
               lambda a: TF.conv2d(a, torch.ones(2, 3, 2, 2, dtype=torch.float64), stride=2),
               randn64(1, 3, 5, 5))


def test_init_functions() -> None:
    w = ts.empty((300, 200))
    nn.init.xavier_uniform_(w, gain=2.0)
    a = 2.0 * math.sqrt(6 / 500)
    assert np.abs(w.numpy()).max() <= a and abs(w.numpy().std() - a / math.sqrt(3)) < 0.02 * a
    nn.init.xavier_normal_(w)
    assert abs(w.numpy().std() - math.sqrt(2 / 500)) < 0.03 * math.sqrt(2 / 500)
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.numpy().std() - math.sqrt(2 / 300)) < 0.03 * math.sqrt(2 / 300)
    nn.init.kaiming_uniform_(w, a=0.1)
    bound = math.sqrt(3) * math.sqrt(2 / (1 + 0.01)) / math.sqrt(200)
    assert np.abs(w.numpy()).max() <= bound
    nn.init.trunc_normal_(w, mean=1.0, std=2.0, a=-1.0, b=2.0)
    assert w.numpy().min() >= -1.0 and w.numpy().max() <= 2.0
    nn.init.normal_(w, 3.0, 0.5)
    assert abs(w.numpy().mean() - 3) < 0.01
    nn.init.constant_(w, 0.25)
    assert np.all(w.numpy() == 0.25)
    nn.init.zeros_(w)
    nn.init.ones_(w[:2])
    assert w.numpy().sum() == 400
    e = ts.empty((3, 5))
    nn.init.eye_(e)
    np.testing.assert_array_equal(e.numpy(), np.eye(3, 5))
    o = ts.empty((4, 6))
    nn.init.orthogonal_(o)
    np.testing.assert_allclose(o.numpy() @ o.numpy().T, np.eye(4), atol=1e-5)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain("leaky_relu", 0.2)
    assert nn.init.calculate_gain("tanh") == torch.nn.init.calculate_gain("tanh")
    p = nn.Parameter(ts.ones(3))
    nn.init.uniform_(p, -1, 1)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(ts.ones(3))


def test_clip_grad_and_vector_conversion() -> None:
    ws = [nn.Parameter(tt(randn64(3, 2).astype(np.float32))), nn.Parameter(tt(randn64(4).astype(np.float32)))]
    wt = [torch.nn.Parameter(torch.tensor(w.numpy())) for w in ws]
    gs = [randn64(3, 2).astype(np.float32) * 5, randn64(4).astype(np.float32) * 5]
    for norm_type in (2.0, 1.0, math.inf):
        for a, b, g in zip(ws, wt, gs):
            a.grad, b.grad = tt(g), torch.tensor(g)
        n1 = nn.utils.clip_grad_norm_(ws, 1.5, norm_type=norm_type)
        n2 = torch.nn.utils.clip_grad_norm_(wt, 1.5, norm_type=norm_type)
        close(n1, n2, 1e-6, 1e-6)
        for a, b in zip(ws, wt):
            close(a.grad, b.grad, 1e-6, 1e-6)
    for a, b, g in zip(ws, wt, gs):
        a.grad, b.grad = tt(g), torch.tensor(g)
    nn.utils.clip_grad_value_(ws, 0.7)
    torch.nn.utils.clip_grad_value_(wt, 0.7)
    for a, b in zip(ws, wt):
        close(a.grad, b.grad, 0, 0)
    v = nn.utils.parameters_to_vector(ws)
    close(v, torch.nn.utils.parameters_to_vector(wt), 0, 0)
    nn.utils.vector_to_parameters(v * 2, ws)
    close(ws[1], wt[1].detach().numpy() * 2, 0, 0)
    with pytest.raises(ValueError, match="does not match"):
        nn.utils.vector_to_parameters(v[:3], ws)
    ws[0].grad = tt(np.full((3, 2), np.nan, np.float32))
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(ws[0], 1.0, error_if_nonfinite=True)


# ---------------------------------------------------------------- random configurations
from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def conv_configs(draw):
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cin = groups * draw(st.integers(1, 2))
    cout = groups * draw(st.integers(1, 2))
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 2)))
    dil = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    h = draw(st.integers(dil[0] * (k[0] - 1) + 1 - 2 * pad[0], 9).filter(lambda v: v >= 1))
    w = draw(st.integers(dil[1] * (k[1] - 1) + 1 - 2 * pad[1], 9).filter(lambda v: v >= 1))
    n = draw(st.integers(1, 2))
    return dict(shape=(n, cin, h, w), weight=(cout, cin // groups) + k, stride=stride,
                padding=pad, dilation=dil, groups=groups, bias=draw(st.booleans()))


@settings(max_examples=25, deadline=None)
@given(conv_configs())
def test_conv2d_random_configs(cfg) -> None:
    r = np.random.default_rng(0)
    x = r.standard_normal(cfg["shape"])
    w = r.standard_normal(cfg["weight"])
    args = [x, w] + ([r.standard_normal(cfg["weight"][0])] if cfg["bias"] else [])
    kw = dict(stride=cfg["stride"], padding=cfg["padding"], dilation=cfg["dilation"], groups=cfg["groups"])
    compare_fn(lambda a, b, *c: F.conv2d(a, b, c[0] if c else None, **kw),
               lambda a, b, *c: TF.conv2d(a, b, c[0] if c else None, **kw), *args,
               rtol=1e-10, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.integers(1, 2), st.booleans(),
       st.booleans(), st.integers(3, 9), st.integers(3, 9))
def test_pool2d_random_configs(k, s, p, d, ceil, include_pad, h, w) -> None:
    p = min(p, k // 2)
    if d * (k - 1) + 1 > min(h, w) + 2 * p:
        return
    x = np.random.default_rng(1).standard_normal((2, 2, h, w))
    compare_fn(lambda a: F.max_pool2d(a, k, s, p, d, ceil_mode=ceil),
               lambda a: TF.max_pool2d(a, k, s, p, d, ceil_mode=ceil), x)
    compare_fn(lambda a: F.avg_pool2d(a, k, s, p, ceil_mode=ceil, count_include_pad=include_pad),
               lambda a: TF.avg_pool2d(a, k, s, p, ceil_mode=ceil, count_include_pad=include_pad), x)

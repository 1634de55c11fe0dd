"""ts.nn / ts.nn.functional called the way PyTorch code calls them: positional arguments
bind to torch's parameters (legacy size_average/reduce slots included), keyword names are
torch's (input=, ...), and the values match torch's."""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
from tessera import nn
from tessera.nn import functional as F
from harness import close, compare_fn, randn64, rng, tt


def _params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


# ------------------------------------------------------------------ signatures

LOSS_CLASSES = sorted(n for n in dir(torch.nn) if n.endswith("Loss") and hasattr(nn, n)
                      and n != "AdaptiveLogSoftmaxWithLoss")
LOSS_FUNCTIONS = sorted(n for n in dir(TF) if (n.endswith("_loss") or n in (
    "cross_entropy", "kl_div", "binary_cross_entropy", "binary_cross_entropy_with_logits"))
    and not n.startswith("_") and hasattr(F, n))


def test_every_loss_is_covered() -> None:
    assert {"MSELoss", "CrossEntropyLoss", "NLLLoss", "BCEWithLogitsLoss", "HuberLoss",
            "KLDivLoss", "CTCLoss", "TripletMarginLoss"} <= set(LOSS_CLASSES)
    assert {"mse_loss", "cross_entropy", "nll_loss", "kl_div", "huber_loss",
            "binary_cross_entropy_with_logits", "ctc_loss"} <= set(LOSS_FUNCTIONS)


@pytest.mark.parametrize("name", LOSS_CLASSES)
def test_loss_module_signature(name) -> None:
    assert _params(getattr(nn, name).__init__) == _params(getattr(torch.nn, name).__init__)


@pytest.mark.parametrize("name", LOSS_FUNCTIONS)
def test_loss_function_signature(name) -> None:
    assert _params(getattr(F, name)) == _params(getattr(TF, name))


# F functions whose parameter names (first one: input) must be torch's. torch's C builtins
# have no inspectable signature: their names come from the docstring's first line.
NAMED = ["softmax", "log_softmax", "softmin", "pad", "embedding", "dropout", "dropout2d",
         "batch_norm", "layer_norm", "group_norm", "rms_norm", "normalize", "glu", "sigmoid",
         "tanh", "softsign", "tanhshrink", "max_unpool2d", "lp_pool2d", "adaptive_avg_pool2d",
         "adaptive_avg_pool3d"]
BUILTINS = ["linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
            "conv_transpose2d", "conv_transpose3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
            "adaptive_avg_pool1d", "gelu", "logsigmoid", "softplus", "one_hot",
            "cosine_similarity", "pairwise_distance"]


@pytest.mark.parametrize("name", NAMED)
def test_functional_parameter_names(name) -> None:
    torch_names = [n for n, _, _ in _params(getattr(TF, name)) if n != "out"]
    assert [n for n, _, _ in _params(getattr(F, name))] == torch_names


@pytest.mark.parametrize("name", BUILTINS)
def test_functional_builtin_parameter_names(name) -> None:
    doc = getattr(TF, name).__doc__.strip().split("\n")[0]
    inner = doc[doc.index("(") + 1:doc.rindex(")")]
    torch_names = [a.split("=")[0].strip() for a in inner.split(",")]
    if name == "one_hot":  # the docstring says `tensor`; the binding takes input=
        torch_names[0] = "input"
    ours = [n for n, _, _ in _params(getattr(F, name))]
    assert ours[:len(torch_names)] == torch_names


# ------------------------------------------------------------------ legacy reduction

LEGACY = [(None, None), (True, None), (False, None), (None, True), (None, False),
          (True, True), (False, True), (True, False), (False, False)]


def _run(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, any("size_average and reduce" in str(x.message) for x in w)


def _cmp(fs, ft, rtol=1e-10, atol=1e-12):
    ys, ws = _run(fs)
    yt, wt = _run(ft)
    close(ys, yt, rtol, atol)
    assert ws == wt


@pytest.mark.parametrize("sa,red", LEGACY)
def test_cross_entropy_positional_legacy(sa, red) -> None:
    x, t = randn64(5, 4), rng.integers(0, 4, 5)
    t[0] = 1
    w = np.abs(randn64(4)) + 0.5
    # (input, target, weight, size_average, ignore_index, reduce, reduction, label_smoothing)
    _cmp(lambda: F.cross_entropy(tt(x), tt(t), tt(w), sa, 1, red, "sum", 0.1),
         lambda: TF.cross_entropy(torch.tensor(x), torch.tensor(t), torch.tensor(w), sa, 1, red,
                                  "sum", 0.1))
    _cmp(lambda: F.nll_loss(tt(x), tt(t), tt(w), sa, 1, red, "none"),
         lambda: TF.nll_loss(torch.tensor(x), torch.tensor(t), torch.tensor(w), sa, 1, red,
                             "none"))
    _cmp(lambda: F.cross_entropy(tt(x), tt(t), None, sa, reduce=red),
         lambda: TF.cross_entropy(torch.tensor(x), torch.tensor(t), None, sa, reduce=red))


def test_cross_entropy_fourth_positional_is_size_average() -> None:
    x, t = randn64(6, 3), np.array([0, 1, 1, 2, 1, 0])
    _cmp(lambda: F.cross_entropy(tt(x), tt(t), None, True),
         lambda: TF.cross_entropy(torch.tensor(x), torch.tensor(t), None, True))
    _cmp(lambda: F.cross_entropy(tt(x), tt(t), None, False),
         lambda: TF.cross_entropy(torch.tensor(x), torch.tensor(t), None, False))
    # ignore_index is the fifth positional
    _cmp(lambda: F.nll_loss(tt(x), tt(t), None, None, 1),
         lambda: TF.nll_loss(torch.tensor(x), torch.tensor(t), None, None, 1))


def _pair(shape=(4, 3)):
    return randn64(*shape), randn64(*shape)


POINTWISE = {
    "mse_loss": lambda x, y: (x, y),
    "l1_loss": lambda x, y: (x, y),
    "smooth_l1_loss": lambda x, y: (x, y),
    "soft_margin_loss": lambda x, y: (x, np.sign(y)),
    "binary_cross_entropy": lambda x, y: (1 / (1 + np.exp(-x)), 1 / (1 + np.exp(-y))),
    "binary_cross_entropy_with_logits": lambda x, y: (x, 1 / (1 + np.exp(-y))),
    "kl_div": lambda x, y: (x, np.abs(y)),
    "multilabel_soft_margin_loss": lambda x, y: (x, (y > 0).astype(np.float64)),
    "hinge_embedding_loss": lambda x, y: (x, np.sign(y)),
    "poisson_nll_loss": lambda x, y: (x, np.abs(y)),
}


@pytest.mark.parametrize("sa,red", LEGACY)
@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise_loss_legacy_keywords(name, sa, red) -> None:
    x, y = POINTWISE[name](*_pair())
    fs, ft = getattr(F, name), getattr(TF, name)
    compare_fn(lambda a, b: fs(a, b, size_average=sa, reduce=red, reduction="sum"),
               lambda a, b: ft(a, b, size_average=sa, reduce=red, reduction="sum"),
               x, y, rtol=1e-9, atol=1e-12, grad=[0])


@pytest.mark.parametrize("sa,red", [(False, None), (None, False), (True, True)])
def test_pointwise_loss_legacy_positional(sa, red) -> None:
    x, y = _pair()
    p, q = 1 / (1 + np.exp(-x)), 1 / (1 + np.exp(-y))
    w = np.abs(randn64(4, 3))
    a, b = torch.tensor(x), torch.tensor(y)
    for fs, ft in [(F.mse_loss, TF.mse_loss), (F.l1_loss, TF.l1_loss),
                   (F.smooth_l1_loss, TF.smooth_l1_loss), (F.kl_div, TF.kl_div)]:
        # (input, target, size_average, reduce, reduction); kl_div's target positive
        _cmp(lambda: fs(tt(x), tt(np.abs(y)), sa, red, "none"),
             lambda: ft(a, b.abs(), sa, red, "none"))
    _cmp(lambda: F.smooth_l1_loss(tt(x), tt(y), sa, red, "mean", 0.5),
         lambda: TF.smooth_l1_loss(a, b, sa, red, "mean", 0.5))
    _cmp(lambda: F.kl_div(tt(x), tt(np.abs(y)), sa, red, "sum", True),
         lambda: TF.kl_div(a, b.abs(), sa, red, "sum", True))
    _cmp(lambda: F.binary_cross_entropy(tt(p), tt(q), tt(w), sa, red, "sum"),
         lambda: TF.binary_cross_entropy(torch.tensor(p), torch.tensor(q), torch.tensor(w), sa,
                                         red, "sum"))
    pw = np.abs(randn64(3)) + 0.5
    _cmp(lambda: F.binary_cross_entropy_with_logits(tt(x), tt(q), tt(w), sa, red, "mean",
                                                    tt(pw)),
         lambda: TF.binary_cross_entropy_with_logits(a, torch.tensor(q), torch.tensor(w), sa,
                                                     red, "mean", torch.tensor(pw)))


def test_reduction_string_in_legacy_slot_is_refused() -> None:
    # The old tessera order (reduction third) must not silently become 'mean'.
    x = tt(randn64(3))
    with pytest.raises(TypeError, match="reduction="):
        F.mse_loss(x, x, "sum")
    with pytest.raises(TypeError, match="reduction="):
        nn.L1Loss("none")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_weighted_pointwise_losses(name, reduction) -> None:
    x, y = _pair()
    w = np.abs(randn64(4, 3)) + 0.1
    fs, ft = getattr(F, name), getattr(TF, name)
    compare_fn(lambda a, b, c: fs(a, b, reduction=reduction, weight=c),
               lambda a, b, c: ft(a, b, reduction=reduction, weight=c),
               x, y, w, rtol=1e-10, atol=1e-12)
    if name == "huber_loss":  # (input, target, reduction, delta, weight)
        compare_fn(lambda a, b, c: fs(a, b, reduction, 0.5, c),
                   lambda a, b, c: ft(a, b, reduction, 0.5, c), x, y, w, rtol=1e-10, atol=1e-12)
    else:  # (input, target, size_average, reduce, reduction, weight)
        compare_fn(lambda a, b, c: fs(a, b, None, None, reduction, c),
                   lambda a, b, c: ft(a, b, None, None, reduction, c), x, y, w, rtol=1e-10,
                   atol=1e-12)
    with pytest.raises(ValueError, match="same size"):
        fs(tt(x), tt(y), weight=tt(w[:, :1]))


# ------------------------------------------------------------------ loss modules

def _inputs(name):
    """(tessera args, torch args) for one forward of the loss class `name`."""
    x, y = _pair()
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    cls = rng.integers(0, 3, 4)
    one = {
        "MSELoss": (x, y), "L1Loss": (x, y), "SmoothL1Loss": (x, y), "HuberLoss": (x, y),
        "BCELoss": (sig(x), sig(y)), "BCEWithLogitsLoss": (x, sig(y)),
        "KLDivLoss": (x, np.abs(y)), "SoftMarginLoss": (x, np.sign(y)),
        "HingeEmbeddingLoss": (x, np.sign(y)), "PoissonNLLLoss": (x, np.abs(y)),
        "MultiLabelSoftMarginLoss": (x, (y > 0) * 1.0),
        "CrossEntropyLoss": (x, cls), "NLLLoss": (x, cls), "MultiMarginLoss": (x, cls),
        "MultiLabelMarginLoss": (x, np.array([[0, 1, -1], [2, -1, 0], [1, 2, 0], [0, -1, 1]])),
        "MarginRankingLoss": (x[:, 0], y[:, 0], np.sign(randn64(4))),
        "CosineEmbeddingLoss": (x, y, np.sign(randn64(4))),
        "TripletMarginLoss": (x, y, randn64(4, 3)),
        "GaussianNLLLoss": (x, y, np.abs(randn64(4, 3)) + 0.1),
    }[name]
    return [tt(a) for a in one], [torch.tensor(a) for a in one]


# Positional constructor calls, exactly as written for torch (legacy slots included).
CTOR = {
    "MSELoss": [(False,), (None, False), (None, None, "sum"), (True, True, "none")],
    "L1Loss": [(False,), (None, False), (None, None, "sum")],
    "SmoothL1Loss": [(False,), (None, None, "sum", 0.3)],
    "HuberLoss": [("sum",), ("none", 0.4)],
    "BCELoss": [(None, False), (None, None, False), (None, None, None, "sum")],
    "BCEWithLogitsLoss": [(None, False), (None, None, None, "sum")],
    "KLDivLoss": [(False,), (None, None, "batchmean"), (None, None, "sum", True)],
    "SoftMarginLoss": [(False,), (None, None, "sum")],
    "HingeEmbeddingLoss": [(0.5, False), (0.5, None, None, "sum")],
    "PoissonNLLLoss": [(False, True, False), (True, False, None, 1e-6, None, "sum")],
    "MultiLabelSoftMarginLoss": [(None, False), (None, None, None, "sum")],
    "CrossEntropyLoss": [(None, False), (None, None, 1), (None, None, -100, False),
                         (None, None, 2, None, "sum", 0.2)],
    "NLLLoss": [(None, False), (None, None, 1), (None, None, -100, None, "none")],
    "MultiMarginLoss": [(2, 0.5, None, False), (1, 1.0, None, None, None, "sum")],
    "MultiLabelMarginLoss": [(False,), (None, None, "none")],
    "MarginRankingLoss": [(0.2, False), (0.2, None, None, "none")],
    "CosineEmbeddingLoss": [(0.1, False), (0.1, None, None, "sum")],
    "TripletMarginLoss": [(0.5, 1.0, 1e-6, True, False), (1.0, 2.0, 1e-6, False, None, None,
                                                          "none")],
}


@pytest.mark.parametrize("name,args", [(n, a) for n, v in sorted(CTOR.items()) for a in v])
def test_loss_module_positional_constructor(name, args) -> None:
    ms, ws = _run(lambda: getattr(nn, name)(*args))
    mt, wt = _run(lambda: getattr(torch.nn, name)(*args))
    assert ws == wt
    assert ms.reduction == mt.reduction
    for attr in ("ignore_index", "label_smoothing", "beta", "delta", "log_target", "margin",
                 "p", "swap", "log_input", "full", "eps"):
        if hasattr(mt, attr):
            assert getattr(ms, attr) == getattr(mt, attr), attr
    xs, xt = _inputs(name)
    if name == "PoissonNLLLoss" and not mt.log_input:
        xs[0], xt[0] = ts.abs(xs[0]) + 0.1, xt[0].abs() + 0.1
    close(ms(*xs), mt(*xt), 1e-9, 1e-12)


def test_weighted_loss_modules_positional() -> None:
    w = np.abs(randn64(3)) + 0.5
    x = randn64(5, 3)
    t = np.array([0, 2, 1, 1, 0])
    for name in ("CrossEntropyLoss", "NLLLoss"):
        ms = getattr(nn, name)(tt(w), None, 2)
        mt = getattr(torch.nn, name)(torch.tensor(w), None, 2)
        assert ms.ignore_index == mt.ignore_index == 2
        close(ms(tt(x), tt(t)), mt(torch.tensor(x), torch.tensor(t)), 1e-10, 1e-12)
    y = 1 / (1 + np.exp(-randn64(5, 3)))
    pw = np.abs(randn64(3)) + 0.5
    ms = nn.BCEWithLogitsLoss(tt(w), None, None, "sum", tt(pw))
    mt = torch.nn.BCEWithLogitsLoss(torch.tensor(w), None, None, "sum", torch.tensor(pw))
    close(ms(tt(x), tt(y)), mt(torch.tensor(x), torch.tensor(y)), 1e-10, 1e-12)
    close(ms.pos_weight, mt.pos_weight)


def test_ctc_and_gaussian_keywords() -> None:
    assert nn.CTCLoss(3, "sum", True).blank == 3
    m = nn.CTCLoss(3, "sum", True)
    assert (m.reduction, m.zero_infinity) == ("sum", True)
    g = nn.GaussianNLLLoss(full=True, eps=1e-3, reduction="sum")
    assert (g.full, g.eps, g.reduction) == (True, 1e-3, "sum")


# ------------------------------------------------------------------ softmax family

@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_stacklevel_and_dtype_positional(name) -> None:
    x = randn64(3, 4).astype(np.float32)
    fs, ft = getattr(F, name), getattr(TF, name)
    # (input, dim, _stacklevel, dtype)
    ys = fs(tt(x), 1, 3, ts.float64)
    yt = ft(torch.tensor(x), 1, 3, torch.float64)
    assert ys.dtype == ts.float64
    close(ys, yt, 1e-12, 1e-12)
    close(fs(tt(x), 0, 5), ft(torch.tensor(x), 0, 5), 1e-6, 1e-7)
    close(fs(input=tt(x), dim=-1, dtype=ts.float64),
          ft(input=torch.tensor(x), dim=-1, dtype=torch.float64), 1e-12, 1e-12)


# ------------------------------------------------------------------ input= keyword

def test_input_keyword_forms() -> None:
    x = randn64(2, 3, 8)
    w1 = randn64(4, 3, 3)
    xt, w1t = torch.tensor(x), torch.tensor(w1)
    close(F.conv1d(input=tt(x), weight=tt(w1), padding=1),
          TF.conv1d(input=xt, weight=w1t, padding=1), 1e-10, 1e-10)
    x2, w2 = randn64(1, 3, 5, 5), randn64(2, 3, 3, 3)
    close(F.conv2d(input=tt(x2), weight=tt(w2), stride=2),
          TF.conv2d(input=torch.tensor(x2), weight=torch.tensor(w2), stride=2), 1e-10, 1e-10)
    x3, w3 = randn64(1, 2, 4, 4, 4), randn64(3, 2, 2, 2, 2)
    close(F.conv3d(input=tt(x3), weight=tt(w3)),
          TF.conv3d(input=torch.tensor(x3), weight=torch.tensor(w3)), 1e-10, 1e-10)
    wl, bl = randn64(5, 8), randn64(5)
    close(F.linear(input=tt(x), weight=tt(wl), bias=tt(bl)),
          TF.linear(input=xt, weight=torch.tensor(wl), bias=torch.tensor(bl)), 1e-10, 1e-10)
    close(F.pad(input=tt(x), pad=(1, 2), mode="constant", value=3.0),
          TF.pad(input=xt, pad=(1, 2), mode="constant", value=3.0))
    idx, emb = np.array([[0, 2], [1, 1]]), randn64(3, 4)
    close(F.embedding(input=tt(idx), weight=tt(emb)),
          TF.embedding(input=torch.tensor(idx), weight=torch.tensor(emb)))
    close(F.dropout(input=tt(x), p=0.3, training=False),
          TF.dropout(input=xt, p=0.3, training=False))
    close(F.layer_norm(input=tt(x), normalized_shape=(8,)),
          TF.layer_norm(input=xt, normalized_shape=(8,)), 1e-9, 1e-10)
    close(F.gelu(input=tt(x)), TF.gelu(input=xt), 1e-9, 1e-10)
    close(F.softplus(input=tt(x), beta=2.0), TF.softplus(input=xt, beta=2.0), 1e-9, 1e-10)
    close(F.avg_pool1d(input=tt(x), kernel_size=2), TF.avg_pool1d(input=xt, kernel_size=2))
    close(F.max_pool1d(input=tt(x), kernel_size=2), TF.max_pool1d(input=xt, kernel_size=2))
    close(F.one_hot(input=tt(idx), num_classes=4), TF.one_hot(input=torch.tensor(idx),
                                                              num_classes=4))
    a, b, wb = randn64(4, 3), randn64(4, 2), randn64(5, 3, 2)
    close(F.bilinear(input1=tt(a), input2=tt(b), weight=tt(wb)),
          TF.bilinear(input1=torch.tensor(a), input2=torch.tensor(b), weight=torch.tensor(wb)),
          1e-10, 1e-10)


def test_positional_calls_still_bind() -> None:
    x, wl = randn64(3, 4), randn64(2, 4)
    close(F.linear(tt(x), tt(wl)), TF.linear(torch.tensor(x), torch.tensor(wl)), 1e-12, 1e-12)
    close(F.pad(tt(x), (1, 1), "constant", 2.0), TF.pad(torch.tensor(x), (1, 1), "constant", 2.0))
    close(F.dropout(tt(x), 0.5, False), TF.dropout(torch.tensor(x), 0.5, False))


# ------------------------------------------------------------------ cosine_similarity

@pytest.mark.parametrize("s1,s2,dim", [((1, 2, 3), (2, 1, 3), -2), ((1, 2, 3), (2, 1, 3), -1),
                                       ((4, 1), (1, 5), 0), ((3,), (2, 3), -1),
                                       ((2, 3, 4), (2, 3, 4), 1), ((1, 4), (3, 1), 1)])
def test_cosine_similarity_broadcast(s1, s2, dim) -> None:
    a, b = randn64(*s1), randn64(*s2)
    compare_fn(lambda x, y: F.cosine_similarity(x, y, dim),
               lambda x, y: TF.cosine_similarity(x, y, dim), a, b, rtol=1e-10, atol=1e-12)
    out = F.cosine_similarity(tt(a), tt(b), dim=dim).numpy()
    assert np.all(np.abs(out) <= 1 + 1e-12)


def test_cosine_similarity_reported_case() -> None:
    a = np.array([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]])
    b = np.array([[[1.0, 0.5, 2.0]], [[3.0, 1.0, 1.0]]])
    close(F.cosine_similarity(tt(a), tt(b), dim=-2),
          TF.cosine_similarity(torch.tensor(a), torch.tensor(b), dim=-2), 1e-12, 1e-12)


# ------------------------------------------------------------------ ReLU6

def test_relu6_is_a_hardtanh() -> None:
    m, mt = nn.ReLU6(), torch.nn.ReLU6()
    assert isinstance(m, nn.Hardtanh)
    assert (m.min_val, m.max_val, m.inplace) == (mt.min_val, mt.max_val, mt.inplace)
    assert repr(m) == repr(mt) == "ReLU6()"
    assert repr(nn.ReLU6(True)) == repr(torch.nn.ReLU6(True))
    assert nn.ReLU6(True).inplace is True
    x = randn64(4, 5) * 5
    compare_fn(lambda v: m(v), lambda v: mt(v), x, rtol=1e-12, atol=0)
    m.max_val, mt.max_val = 3.0, 3.0  # torch's forward reads the attributes
    close(m(tt(x)), mt(torch.tensor(x)))


def test_hardtanh_deprecated_value_keywords() -> None:
    with pytest.warns(FutureWarning):
        m = nn.Hardtanh(min_value=-2.0, max_value=2.0)
    assert (m.min_val, m.max_val) == (-2.0, 2.0)

"""Losses beyond the basic set (margin/ranking/triplet/multilabel/Gaussian/Poisson)
vs torch.nn.functional and torch.nn: values, gradients of every floating input (float32
and float64), reductions, broadcasting, unbatched forms, gradcheck, modules and errors.
CTC has its own file, test_ctc_loss.py."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn
from tessera.nn import functional as F
from harness import close, compare_fn, tt

TF = torch.nn.functional
REDUCTIONS = ["mean", "sum", "none"]
DTYPES = [np.float32, np.float64]


def _tol(dt):
    return dict(rtol=1e-5, atol=1e-6) if dt == np.float32 else dict(rtol=1e-10, atol=1e-12)


def _pm1(rng, shape):
    return rng.choice([-1.0, 1.0], size=shape)


def _both(name, *args, **kw):
    """(tessera fn, torch fn) of F.<name> with the non-tensor arguments bound."""
    return (lambda *xs: getattr(F, name)(*xs, *args, **kw),
            lambda *xs: getattr(TF, name)(*xs, *args, **kw))


def _gradcheck(fn, *arrays, grad=None):
    ins = [tt(a, requires_grad=(grad is None or i in grad) and a.dtype == np.float64)
           for i, a in enumerate(arrays)]
    assert ts.testing.gradcheck(fn, ins)


# ----------------------------------------------------------------------------- pointwise
PAIR_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 3), (4, 3)), ((), ()), ((0, 3), (0, 3)),
               ((5,), (1,))]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("shapes", PAIR_SHAPES)
def test_hinge_and_soft_margin(shapes, red, dt) -> None:
    rng = np.random.default_rng(len(shapes[0]))
    x = rng.standard_normal(shapes[0]).astype(dt)
    y = rng.choice([-1.0, 1.0, 0.5], size=shapes[1]).astype(dt)  # hinge: other y add both terms
    compare_fn(*_both("hinge_embedding_loss", margin=0.7, reduction=red), x, y, **_tol(dt), grad=[0])
    y = _pm1(rng, shapes[1]).astype(dt)
    if np.broadcast_shapes(x.shape, y.shape) == x.shape:
        compare_fn(*_both("soft_margin_loss", reduction=red), x, y, **_tol(dt), grad=[0])
    else:  # torch's output takes the input's shape: the target must broadcast to it
        with pytest.raises(RuntimeError):
            TF.soft_margin_loss(torch.tensor(x), torch.tensor(y))
        with pytest.raises(ValueError, match="does not broadcast"):
            F.soft_margin_loss(tt(x), tt(y))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("shapes", [((3, 4), (1, 4), (3, 1)), ((5,), (5,), (5,)), ((), (), ()),
                                    ((0,), (0,), (0,)), ((2, 3), (2, 3), (2, 3))])
def test_margin_ranking(shapes, red, dt) -> None:
    rng = np.random.default_rng(1)
    x1, x2 = (rng.standard_normal(s).astype(dt) for s in shapes[:2])
    y = _pm1(rng, shapes[2]).astype(dt)
    compare_fn(*_both("margin_ranking_loss", margin=0.3, reduction=red), x1, x2, y, **_tol(dt),
               grad=[0, 1])


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("red", REDUCTIONS)
def test_poisson_nll(red, log_input, full, dt) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5)).astype(dt)
    if not log_input:
        x = np.abs(x) + 0.1
    y = rng.choice([0.0, 0.5, 1.0, 2.0, 3.5, 7.0], size=(4, 5)).astype(dt)
    # (with full, torch's target gradient is NaN where the target is 0; tessera's is finite)
    compare_fn(*_both("poisson_nll_loss", log_input=log_input, full=full, reduction=red),
               x, y, **_tol(dt), grad=[0] if full else [0, 1])
    compare_fn(*_both("poisson_nll_loss", log_input=log_input, full=full, reduction=red),
               x, y[0], **_tol(dt), grad=[0])


VAR_SHAPES = [(3, 4), (3,), (3, 1), (1, 4)]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("vshape", VAR_SHAPES)
def test_gaussian_nll(vshape, red, full, dt) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4)).astype(dt)
    y = rng.standard_normal((3, 4)).astype(dt)
    var = np.abs(rng.standard_normal(vshape)).astype(dt)
    var.flat[0] = 1e-8  # below eps: clamped, gradient passes through as in torch
    compare_fn(*_both("gaussian_nll_loss", full=full, reduction=red), x, y, var, **_tol(dt))


def test_gaussian_nll_float_var_and_errors() -> None:
    x = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    close(F.gaussian_nll_loss(tt(x), tt(x * 0), 0.5), TF.gaussian_nll_loss(torch.tensor(x), torch.tensor(x * 0), 0.5))
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(tt(x), tt(x), -1.0)
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(tt(x), tt(x), ts.full((3, 4), -1.0))
    with pytest.raises(ValueError, match="incorrect size"):
        F.gaussian_nll_loss(tt(x), tt(x), ts.ones((2, 4)))
    with pytest.raises(ValueError, match="not valid"):
        F.gaussian_nll_loss(tt(x), tt(x), ts.ones((3, 4)), reduction="max")


# ----------------------------------------------------------------------------- embeddings
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("n", [None, 0, 1, 5])
def test_cosine_embedding(n, red, dt) -> None:
    rng = np.random.default_rng(5)
    shape = (7,) if n is None else (n, 7)
    x1, x2 = rng.standard_normal(shape).astype(dt), rng.standard_normal(shape).astype(dt)
    y = rng.choice([-1.0, 1.0, 0.0], size=() if n is None else (n,)).astype(dt)
    compare_fn(*_both("cosine_embedding_loss", margin=0.2, reduction=red), x1, x2, y, **_tol(dt),
               grad=[0, 1])


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("kw", [dict(), dict(margin=0.5, p=1.0), dict(p=3.0, swap=True),
                                dict(margin=2.0, eps=1e-3, swap=True)])
@pytest.mark.parametrize("shape", [(6,), (4, 6), (2, 3, 5)])
def test_triplet_margin(shape, kw, red, dt) -> None:
    rng = np.random.default_rng(6)
    a, p, n = (rng.standard_normal(shape).astype(dt) for _ in range(3))
    # (p=3: torch's norm gradient differs from the exact one by ~1e-7 relative in float64)
    tol = _tol(dt) if kw.get("p", 2) in (1, 2) else dict(rtol=1e-6, atol=1e-7)
    compare_fn(*_both("triplet_margin_loss", reduction=red, **kw), a, p, n, **tol)
    dist_ts = lambda u, v: 1 - F.cosine_similarity(u, v, dim=-1)  # noqa: E731
    dist_th = lambda u, v: 1 - TF.cosine_similarity(u, v, dim=-1)  # noqa: E731
    swap = kw.get("swap", False)
    compare_fn(lambda *xs: F.triplet_margin_with_distance_loss(*xs, distance_function=dist_ts,
                                                                swap=swap, reduction=red),
               lambda *xs: TF.triplet_margin_with_distance_loss(*xs, distance_function=dist_th,
                                                                 swap=swap, reduction=red),
               a, p, n, **_tol(dt))
    compare_fn(lambda *xs: F.triplet_margin_with_distance_loss(*xs, margin=0.4, reduction=red),
               lambda *xs: TF.triplet_margin_with_distance_loss(*xs, margin=0.4, reduction=red),
               a, p, n, **_tol(dt))


# ----------------------------------------------------------------------------- multi-class
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(4, 5), (5,), (0, 5), (3, 1)])
def test_multilabel_soft_margin(shape, weighted, red, dt) -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(dt) * 3
    y = rng.integers(0, 2, shape).astype(dt)
    arrays = [x, y] + ([np.abs(rng.standard_normal(shape[-1:])).astype(dt)] if weighted else [])
    compare_fn(lambda *a: F.multilabel_soft_margin_loss(*a[:2], *a[2:], reduction=red),
               lambda *a: TF.multilabel_soft_margin_loss(*a[:2], *a[2:], reduction=red),
               *arrays, **_tol(dt), grad=[0])


def _multilabel_targets(rng, n, c):
    rows = []
    for _ in range(n):
        k = rng.integers(0, c + 1)
        row = list(rng.choice(c, size=k, replace=False)) + [-1] * (c - k)
        if k < c - 1 and rng.random() < 0.5:
            row[k + 1] = rng.integers(0, c)  # entries after the first -1 are ignored
        rows.append(row)
    return np.array(rows, dtype=np.int64).reshape(n, c)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("n", [None, 0, 1, 6])
def test_multilabel_margin(n, red, dt) -> None:
    rng = np.random.default_rng(8)
    c = 5
    x = rng.standard_normal((1 if n is None else n, c)).astype(dt)
    y = _multilabel_targets(rng, x.shape[0], c)
    if n is None:
        x, y = x[0], y[0]
    if n == 6:
        y[0] = [2, 2, -1, 0, 0]  # a repeated target counts twice, as in torch
    if n == 0 and red != "none":  # torch reduces uninitialized memory here
        out = F.multilabel_margin_loss(tt(x), tt(y), reduction=red).item()
        assert np.isnan(out) if red == "mean" else out == 0
        return
    compare_fn(*_both("multilabel_margin_loss", reduction=red), x, y, **_tol(dt), grad=[0])


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("kw", [dict(), dict(p=2), dict(margin=0.3), dict(p=2, margin=1.5)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n", [None, -1, 0, 7])
def test_multi_margin(n, weighted, kw, red, dt) -> None:
    rng = np.random.default_rng(9)
    c = 4
    x = rng.standard_normal((1 if n in (None, -1) else n, c)).astype(dt)
    y = rng.integers(0, c, x.shape[0]).astype(np.int64)
    if n is None:
        x, y = x[0], y[0]  # (C,) with a 0-d target
    elif n == -1:
        x = x[0]  # (C,) with a (1,) target
    arrays = [x, y] + ([np.abs(rng.standard_normal(c)).astype(dt)] if weighted else [])
    if n == 0 and red != "none":  # torch reduces uninitialized memory here
        out = F.multi_margin_loss(tt(x), tt(y), reduction=red).item()
        assert np.isnan(out) if red == "mean" else out == 0
        return
    compare_fn(lambda *a: F.multi_margin_loss(*a[:2], weight=a[2] if weighted else None,
                                              reduction=red, **kw),
               lambda *a: TF.multi_margin_loss(*a[:2], weight=a[2] if weighted else None,
                                               reduction=red, **kw),
               *arrays, **_tol(dt), grad=[0])


# ----------------------------------------------------------------------------- gradcheck
def test_gradcheck_float64() -> None:
    rng = np.random.default_rng(10)
    x = rng.standard_normal((3, 4))
    y = _pm1(rng, (3, 4))
    _gradcheck(lambda a, b: F.soft_margin_loss(a, b), x, y)
    _gradcheck(lambda a: F.hinge_embedding_loss(a, tt(y), margin=5.0), x)
    _gradcheck(lambda a, b: F.margin_ranking_loss(a, b, tt(y), margin=5.0), x, x[::-1].copy())
    _gradcheck(lambda a, b: F.poisson_nll_loss(a, b, full=True), x, np.abs(x) * 3)
    _gradcheck(lambda a, b: F.poisson_nll_loss(a, b, log_input=False), np.abs(x) + 0.5, np.abs(x))
    _gradcheck(lambda a, b, v: F.gaussian_nll_loss(a, b, v, full=True), x, x.T.copy().T * 0.5,
               np.abs(x) + 0.1)
    _gradcheck(lambda a, b: F.cosine_embedding_loss(a, b, tt(y[:, 0]), margin=-2.0), x, x[::-1].copy())
    _gradcheck(lambda a, b, c: F.triplet_margin_loss(a, b, c, margin=20.0, swap=True), x, -x, 2 * x)
    _gradcheck(lambda a, w: F.multilabel_soft_margin_loss(a, tt((y > 0) * 1.0), w), x, np.abs(x[0]))
    t_ml = np.array([[0, 2, -1, 1], [3, -1, 0, 0], [1, 0, 3, 2]])
    _gradcheck(lambda a: F.multilabel_margin_loss(a * 0.01, tt(t_ml)), x)
    _gradcheck(lambda a, w: F.multi_margin_loss(a * 0.01, tt(np.array([0, 3, 1])), p=2, weight=w),
               x, np.abs(x[0]))


# ----------------------------------------------------------------------------- modules
MODULES = [  # name, options, inputs whose gradients are compared
    ("MarginRankingLoss", dict(margin=0.2), [0, 1]),
    ("HingeEmbeddingLoss", dict(margin=0.5, reduction="sum"), [0]),
    ("SoftMarginLoss", dict(reduction="none"), [0]),
    ("CosineEmbeddingLoss", dict(margin=0.1), [0, 1]),
    ("PoissonNLLLoss", dict(full=True), [0, 1]),
    ("GaussianNLLLoss", dict(full=True, eps=1e-3), [0, 1, 2]),
    ("MultiLabelSoftMarginLoss", dict(), [0, 1]),
    ("MultiLabelMarginLoss", dict(reduction="none"), [0]),
    ("MultiMarginLoss", dict(p=2, margin=0.5), [0]),
    ("TripletMarginLoss", dict(margin=0.5, p=1.0, swap=True), [0, 1, 2]),
    ("TripletMarginWithDistanceLoss", dict(margin=0.5, swap=True), [0, 1, 2]),
]


def _module_inputs(name, rng):
    x = rng.standard_normal((4, 5)).astype(np.float32)
    if name in ("MarginRankingLoss",):
        return [x[:, 0], x[:, 1], _pm1(rng, 4).astype(np.float32)]
    if name == "CosineEmbeddingLoss":
        return [x, x[::-1].copy(), _pm1(rng, 4).astype(np.float32)]
    if name in ("HingeEmbeddingLoss", "SoftMarginLoss"):
        return [x, _pm1(rng, (4, 5)).astype(np.float32)]
    if name == "PoissonNLLLoss":
        return [x, np.abs(x) * 3]
    if name == "GaussianNLLLoss":
        return [x, x[::-1].copy(), np.abs(x[:, 0])]
    if name == "MultiLabelSoftMarginLoss":
        return [x, (x > 0).astype(np.float32)]
    if name == "MultiLabelMarginLoss":
        return [x, _multilabel_targets(rng, 4, 5)]
    if name == "MultiMarginLoss":
        return [x, rng.integers(0, 5, 4)]
    return [x, x[::-1].copy(), rng.standard_normal((4, 5)).astype(np.float32)]


@pytest.mark.parametrize("case", range(len(MODULES)))
def test_modules_match_torch(case: int) -> None:
    name, kw, grad = MODULES[case]
    arrays = _module_inputs(name, np.random.default_rng(case))
    m_ts, m_th = getattr(nn, name)(**kw), getattr(torch.nn, name)(**kw)
    compare_fn(m_ts, m_th, *arrays, grad=grad)
    assert m_ts.reduction == m_th.reduction


def test_weighted_modules_and_legacy_reduction_args() -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    w = np.abs(rng.standard_normal(5)).astype(np.float32)
    y = rng.integers(0, 5, 4)
    m = nn.MultiMarginLoss(weight=tt(w), margin=0.7)
    assert "weight" in dict(m.named_buffers())
    close(m(tt(x), tt(y)), torch.nn.MultiMarginLoss(weight=torch.tensor(w), margin=0.7)(
        torch.tensor(x), torch.tensor(y)))
    m = nn.MultiLabelSoftMarginLoss(weight=tt(w))
    close(m(tt(x), tt((x > 0) * 1.0)), torch.nn.MultiLabelSoftMarginLoss(weight=torch.tensor(w))(
        torch.tensor(x), torch.tensor((x > 0) * 1.0)))
    for sa, rd in [(None, False), (False, None), (True, True), (False, True)]:
        assert nn.SoftMarginLoss(size_average=sa, reduce=rd).reduction == \
            torch.nn.SoftMarginLoss(size_average=sa, reduce=rd).reduction
        compare_fn(lambda a, b: F.margin_ranking_loss(a, b, tt(np.ones(5, np.float32)),
                                                      size_average=sa, reduce=rd),
                   lambda a, b: TF.margin_ranking_loss(a, b, torch.ones(5), size_average=sa,
                                                       reduce=rd), x[0], x[1])


def test_errors() -> None:
    x = ts.ones((3, 4))
    with pytest.raises(ValueError, match="same number of dimensions"):
        F.margin_ranking_loss(x, x, ts.ones(4))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.hinge_embedding_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match="0D or 1D target"):
        F.cosine_embedding_loss(x, x, x)
    with pytest.raises(ValueError, match="expects 2D input"):
        F.cosine_embedding_loss(ts.ones((3, 4, 2)), ts.ones((3, 4, 2)), ts.ones(3))
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_loss(x, x, x, margin=0)
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(x, x, x, margin=-1)
    with pytest.raises(ValueError, match="same number of dimensions"):
        F.triplet_margin_loss(x, x, ts.ones(4))
    with pytest.raises(ValueError, match="not a valid value"):
        F.triplet_margin_with_distance_loss(x, x, x, reduction="avg")
    with pytest.raises(ValueError, match="greater than 0"):
        nn.TripletMarginLoss(margin=0)
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        F.multi_margin_loss(x, ts.zeros(3, dtype=ts.int64), p=3)
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(IndexError, match="target values"):
        F.multi_margin_loss(x, ts.asarray([0, 4, 1]))
    with pytest.raises(ValueError, match="inconsistent target size"):
        F.multi_margin_loss(x, ts.asarray([0, 1]))
    with pytest.raises(ValueError, match="weight must be a 1-D"):
        F.multi_margin_loss(x, ts.asarray([0, 1, 2]), weight=ts.ones(3))
    with pytest.raises(TypeError, match="integer class indices"):
        F.multi_margin_loss(x, ts.asarray([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="vector or matrix"):
        F.multi_margin_loss(ts.ones((2, 3, 4)), ts.asarray([0, 1]))
    with pytest.raises(IndexError, match="target values"):
        F.multilabel_margin_loss(x, ts.full((3, 4), 4, dtype=ts.int64))
    with pytest.raises(IndexError, match="target values"):
        F.multilabel_margin_loss(x, ts.full((3, 4), -2, dtype=ts.int64))
    with pytest.raises(ValueError, match="inconsistent target size"):
        F.multilabel_margin_loss(x, ts.zeros((3, 3), dtype=ts.int64))
    with pytest.raises(TypeError, match="floating-point input"):
        F.multilabel_margin_loss(ts.ones((3, 4), dtype=ts.int64), ts.zeros((3, 4), dtype=ts.int64))


def _strided(a: np.ndarray) -> ts.Tensor:
    """A non-contiguous view holding a's values: a transposed, negatively strided copy."""
    if a.ndim == 0:
        return tt(a)
    base = tt(np.ascontiguousarray(np.flip(a, axis=0).T))
    return ts.flip(base.mT if a.ndim == 2 else ts.permute_dims(base, tuple(range(a.ndim))[::-1]), axis=0)


@pytest.mark.parametrize("name", ["soft_margin_loss", "hinge_embedding_loss", "poisson_nll_loss",
                                  "multilabel_soft_margin_loss", "margin_ranking_loss",
                                  "cosine_embedding_loss", "triplet_margin_loss",
                                  "gaussian_nll_loss", "multi_margin_loss",
                                  "multilabel_margin_loss"])
def test_non_contiguous_inputs(name: str) -> None:
    rng = np.random.default_rng(12)
    x = rng.standard_normal((5, 4))
    args = {"soft_margin_loss": [x, _pm1(rng, (5, 4))],
            "hinge_embedding_loss": [x, _pm1(rng, (5, 4))],
            "poisson_nll_loss": [x, np.abs(x) * 2],
            "multilabel_soft_margin_loss": [x, (x > 0) * 1.0],
            "margin_ranking_loss": [x, -x, _pm1(rng, (5, 4))],
            "cosine_embedding_loss": [x, x[::-1].copy(), _pm1(rng, 5)],
            "triplet_margin_loss": [x, -x, x * 2],
            "gaussian_nll_loss": [x, -x, np.abs(x) + 0.1],
            "multi_margin_loss": [x, rng.integers(0, 4, 5)],
            "multilabel_margin_loss": [x, _multilabel_targets(rng, 5, 4)]}[name]
    views = [_strided(a) for a in args]
    assert not any(v.is_contiguous() for v in views if v.ndim)
    for red in REDUCTIONS:
        ours = getattr(F, name)(*views, reduction=red)
        theirs = getattr(TF, name)(*[torch.tensor(a) for a in args], reduction=red)
        close(ours, theirs, 1e-10, 1e-12)


# ----------------------------------------------------------------------------- hypothesis
from hypothesis import given, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

_vals = st.floats(-5, 5, width=32)


@st.composite
def _broadcast_pair(draw):
    """Two float64 arrays whose shapes broadcast (incl. 0-d and empty), the first having
    the broadcast shape (torch's rule for several losses: the target broadcasts to input)."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    other = tuple(draw(st.sampled_from([s, 1])) for s in shape)[draw(st.integers(0, len(shape))):]
    a = draw(hnp.arrays(np.float64, shape, elements=_vals))
    b = draw(hnp.arrays(np.float64, other, elements=_vals))
    return a, b


@given(_broadcast_pair(), st.sampled_from(REDUCTIONS))
def test_pointwise_losses_hypothesis(pair, red) -> None:
    x, y = pair
    sign = np.where(y >= 0, 1.0, -1.0)
    compare_fn(*_both("soft_margin_loss", reduction=red), x, sign, rtol=1e-10, atol=1e-12, grad=[0])
    compare_fn(*_both("hinge_embedding_loss", margin=0.5, reduction=red), x, sign,
               rtol=1e-10, atol=1e-12, grad=[0])
    compare_fn(*_both("poisson_nll_loss", full=True, reduction=red), x, np.abs(y) * 3,
               rtol=1e-10, atol=1e-12, grad=[0])
    compare_fn(*_both("margin_ranking_loss", margin=0.1, reduction=red), x,
               np.broadcast_to(y, x.shape).copy() if x.ndim else y.reshape(()), np.ones_like(x),
               rtol=1e-10, atol=1e-12)
    compare_fn(*_both("gaussian_nll_loss", reduction=red), x, y + 0.0 * x, np.abs(x) + 0.5,
               rtol=1e-10, atol=1e-12)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=5),
                  elements=_vals), st.sampled_from(REDUCTIONS), st.integers(0, 2 ** 31))
def test_class_losses_hypothesis(x, red, seed) -> None:
    rng = np.random.default_rng(seed)
    n, c = x.shape
    y = rng.integers(0, c, n)
    compare_fn(*_both("multi_margin_loss", reduction=red, p=int(rng.integers(1, 3))), x, y,
               rtol=1e-10, atol=1e-12, grad=[0])
    compare_fn(*_both("multilabel_margin_loss", reduction=red), x, _multilabel_targets(rng, n, c),
               rtol=1e-10, atol=1e-12, grad=[0])
    compare_fn(*_both("multilabel_soft_margin_loss", reduction=red), x,
               rng.integers(0, 2, (n, c)).astype(np.float64), rtol=1e-10, atol=1e-12, grad=[0])


# ----------------------------------------------------------------------------- adaptive softmax
def _asm_pair(head_bias=True, div_value=2.0, cutoffs=(4, 9, 15), n_classes=20, seed=0):
    torch.manual_seed(seed)
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(16, n_classes, list(cutoffs), div_value=div_value,
                                             head_bias=head_bias)
    sm = nn.AdaptiveLogSoftmaxWithLoss(16, n_classes, list(cutoffs), div_value=div_value,
                                       head_bias=head_bias)
    assert list(sm.state_dict()) == list(tm.state_dict())
    sm.load_state_dict(tm.state_dict())
    return sm, tm


@pytest.mark.parametrize("cfg", [dict(), dict(head_bias=False, div_value=4.0, cutoffs=(10,)),
                                 dict(cutoffs=(2, 3), n_classes=6)])
@pytest.mark.parametrize("n", [12, 1, 0])
def test_adaptive_log_softmax_matches_torch(cfg, n) -> None:
    sm, tm = _asm_pair(**cfg)
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 16)).astype(np.float32)
    y = rng.integers(0, tm.n_classes, n)
    xs, xt = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    os_, ot = sm(xs, tt(y)), tm(xt, torch.tensor(y))
    close(os_.output, ot.output)
    close(os_.loss, ot.loss)
    if n == 0:
        return
    os_.loss.backward()
    ot.loss.backward()
    close(xs.grad, xt.grad)
    tparams = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        if tparams[name].grad is None:
            assert p.grad is None or not np.any(p.grad.numpy())
        else:
            close(p.grad, tparams[name].grad)
    close(sm.log_prob(tt(x)), tm.log_prob(torch.tensor(x)))
    close(sm.predict(tt(x)), tm.predict(torch.tensor(x)), 0, 0)
    # Unbatched input with a 0-d target.
    o1, o2 = sm(tt(x[0]), tt(y[0])), tm(torch.tensor(x[0]), torch.tensor(y[0]))
    close(o1.output, o2.output)
    close(o1.loss, o2.loss)
    # (torch's log_prob fails on one row; tessera's gives the batched row)
    close(sm.log_prob(tt(x[0])), tm.log_prob(torch.tensor(x[:1]))[0])


def test_adaptive_log_softmax_predict_branches_and_errors() -> None:
    sm, tm = _asm_pair()
    x = np.random.default_rng(1).standard_normal((40, 16)).astype(np.float32) * 4
    with torch.no_grad():  # steer the head: every row, no row, and some rows to the tail
        for bias in (-50.0, 50.0, 0.0):
            tm.head.bias[4:] = bias
            sm.load_state_dict(tm.state_dict())
            close(sm.predict(tt(x)), tm.predict(torch.tensor(x)), 0, 0)
    # (torch's predict takes batches only; tessera's also takes one row)
    assert int(sm.predict(tt(x[3])).item()) == int(tm.predict(torch.tensor(x[3:4]))[0])
    with pytest.raises(ValueError, match="sorted in an increasing order"):
        nn.AdaptiveLogSoftmaxWithLoss(16, 20, [9, 4])
    with pytest.raises(ValueError, match="between 1 and n_classes-1"):
        nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 20])
    with pytest.raises(ValueError, match="larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(16, 20, [])
    with pytest.raises(IndexError, match="target values should be in"):
        sm(tt(x[:2]), ts.asarray([0, 20]))
    with pytest.raises(ValueError, match=r"got \(2, 16\) and \(3,\)"):
        sm(tt(x[:2]), ts.asarray([0, 1, 2]))
    with pytest.raises(ValueError, match="AdaptiveLogSoftmaxWithLoss: expected input"):
        sm(tt(x[0]), ts.zeros(16, dtype=ts.int64))
    with pytest.raises(ValueError, match="AdaptiveLogSoftmaxWithLoss: expected input"):
        sm(tt(x[:2]), ts.asarray(1))
    with pytest.raises(ValueError, match="AdaptiveLogSoftmaxWithLoss: expected input"):
        sm(tt(x[:2]), ts.zeros((2, 1), dtype=ts.int64))


@pytest.mark.parametrize("name", ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
                                  "multilabel_soft_margin_loss", "poisson_nll_loss",
                                  "triplet_margin_loss", "multi_margin_loss", "ctc_loss",
                                  "gaussian_nll_loss"])
def test_autocast_dtypes_follow_torch(name: str) -> None:
    """Under CPU autocast, bfloat16 inputs give float32 losses where torch's fp32 list has
    the op, and stay bfloat16 for torch's Python composites (multilabel_soft_margin,
    gaussian_nll)."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    extra = {"margin_ranking_loss": [x, np.ones((4, 5), np.float32)],
             "triplet_margin_loss": [x, x],
             "multi_margin_loss": [rng.integers(0, 5, 4)],
             "ctc_loss": [np.array([[1, 2]]), np.array([4]), np.array([2])],
             "gaussian_nll_loss": [x, np.abs(x) + 0.5]}.get(name, [x])
    first = x.reshape(4, 1, 5) if name == "ctc_loss" else x
    ins_ts = [tt(first).astype(ts.bfloat16)] + [tt(a).astype(ts.bfloat16) if a.dtype == np.float32
                                                 else tt(a) for a in extra]
    ins_th = [torch.tensor(first).bfloat16()] + [torch.tensor(a).bfloat16() if a.dtype == np.float32
                                                  else torch.tensor(a) for a in extra]
    with ts.autocast("cpu", dtype=ts.bfloat16):
        ours = getattr(F, name)(*ins_ts)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        theirs = getattr(TF, name)(*ins_th)
    composite = name in ("multilabel_soft_margin_loss", "gaussian_nll_loss")
    assert ours.dtype == (ts.bfloat16 if composite else ts.float32)
    assert theirs.dtype == (torch.bfloat16 if composite else torch.float32)
    close(ours.astype(ts.float32), theirs.float(), 2e-2 if composite else 1e-5, 1e-6)


# ------------------------------------------------- the pointwise losses as C++ ops (issue 17)
POINTWISE = {  # name: (input in (0, 1)?, extra keywords)
    "mse_loss": (False, {}), "l1_loss": (False, {}), "smooth_l1_loss": (False, {"beta": 0.7}),
    "huber_loss": (False, {"delta": 0.6}), "binary_cross_entropy": (True, {}),
    "binary_cross_entropy_with_logits": (False, {}), "kl_div": (False, {}),
}


@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise_loss_is_the_cpp_op(name) -> None:
    # One definition: F.<name> is the binding itself, with torch's signature and a docstring.
    import inspect
    from tessera import _C
    assert getattr(F, name) is getattr(_C, name)
    params = [(p.name, p.kind, p.default)
              for f in (getattr(F, name), getattr(TF, name))
              for p in inspect.signature(f).parameters.values()]
    assert params[:len(params) // 2] == params[len(params) // 2:]
    assert "csrc/ops/nn/loss.h" in getattr(F, name).__doc__


@pytest.mark.parametrize("red", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise_loss_gradcheck(name, red) -> None:
    # float64 gradients of every floating input (gradcheck), and second derivatives vs torch.
    rng = np.random.default_rng(5)
    prob, kw = POINTWISE[name]
    x = rng.uniform(0.05, 0.95, (3, 4)) if prob else rng.standard_normal((3, 4))
    y = rng.uniform(0.05, 0.95, (3, 4))
    _gradcheck(lambda a, b: getattr(F, name)(a, b, reduction=red, **kw), x, y)
    assert ts.autograd.gradgradcheck(lambda a, b: getattr(F, name)(a, b, reduction=red, **kw),
                                     [tt(x, requires_grad=True), tt(y, requires_grad=True)])
    compare_fn(*_both(name, reduction=red, **kw), x, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("red", REDUCTIONS)
def test_bce_with_logits_weight_and_pos_weight_grads(red) -> None:
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((3, 4)), rng.uniform(0, 1, (3, 4))
    w, pw = rng.uniform(0.5, 2, (4,)), rng.uniform(0.5, 2, (4,))
    compare_fn(lambda a, b, c, d: F.binary_cross_entropy_with_logits(a, b, c, reduction=red,
                                                                      pos_weight=d),
               lambda a, b, c, d: TF.binary_cross_entropy_with_logits(a, b, c, reduction=red,
                                                                       pos_weight=d),
               x, y, w, pw, rtol=1e-10, atol=1e-12, grad=[0, 1])  # torch: none for weights
    _gradcheck(lambda a, b, c, d: F.binary_cross_entropy_with_logits(a, b, c, reduction=red,
                                                                      pos_weight=d), x, y, w, pw)


def test_bce_gradient_at_the_clamped_ends() -> None:
    # PyTorch's derivative (p - y) / max(p (1 - p), eps) stays finite where the clamped logs
    # are flat (eps: the float 1e-12 of PyTorch's kernel, 4e-9 from the double 1e-12 the Python
    # version used); the node is PyTorch's.
    p, y = np.array([0.0, 0.3, 1.0]), np.array([1.0, 0.5, 0.0])
    compare_fn(lambda a, b: F.binary_cross_entropy(a, b, reduction="none"),
               lambda a, b: TF.binary_cross_entropy(a, b, reduction="none"), p, y,
               rtol=1e-10, atol=1e-12, grad=[0])
    out = F.binary_cross_entropy(tt(p, requires_grad=True), tt(y), reduction="none")
    assert out.grad_fn.name() == "BinaryCrossEntropyBackward0"


@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise_loss_reduction_errors(name) -> None:
    x = tt(np.full((2, 3), 0.5))
    for bad in (2, None, "avg"):  # torch's _Reduction.get_enum: ValueError for each
        with pytest.raises(ValueError, match="not a valid value for reduction"):
            getattr(F, name)(x, x, reduction=bad)
        with pytest.raises(ValueError):
            getattr(TF, name)(torch.full((2, 3), 0.5), torch.full((2, 3), 0.5), reduction=bad)


def test_legacy_reduction_warning_points_at_the_caller() -> None:
    x = tt(randn_pair := np.ones((2, 2)))
    with pytest.warns(UserWarning, match="reduction='sum'") as rec:
        F.mse_loss(x, x, size_average=False)
    assert rec[0].filename == __file__
    assert randn_pair.shape == (2, 2)


@pytest.mark.parametrize("name", ["soft_margin_loss", "margin_ranking_loss",
                                  "hinge_embedding_loss"])
def test_margin_losses_are_the_cpp_ops(name) -> None:
    # One definition (issue 17): the bindings themselves, torch's parameters, float64
    # gradients, torch's ValueError for a reduction that is not a string.
    import inspect
    from tessera import _C
    fn = getattr(F, name)
    assert fn is getattr(_C, name)
    assert [(p.name, p.default) for p in inspect.signature(fn).parameters.values()] == \
        [(p.name, p.default) for p in inspect.signature(getattr(TF, name)).parameters.values()]
    rng = np.random.default_rng(7)
    ys = _pm1(rng, (3, 4))
    xs = [rng.standard_normal((3, 4))] * (2 if name == "margin_ranking_loss" else 1)
    xs = [x + 0.01 * i for i, x in enumerate(xs)]
    for red in REDUCTIONS:
        _gradcheck(lambda *a: fn(*a, reduction=red), *xs, ys, grad=list(range(len(xs))))
        if name == "soft_margin_loss":  # (the others are piecewise linear)
            assert ts.autograd.gradgradcheck(lambda *a: fn(*a, ts.asarray(ys), reduction=red),
                                             [tt(x, requires_grad=True) for x in xs])
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        fn(*[tt(x) for x in xs], tt(ys), reduction=1)

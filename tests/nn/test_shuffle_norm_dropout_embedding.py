"""PixelShuffle/PixelUnshuffle/ChannelShuffle, BatchNorm3d, InstanceNorm1d/2d/3d,
LocalResponseNorm, Dropout1d/3d, AlphaDropout/FeatureAlphaDropout, CosineSimilarity,
PairwiseDistance, EmbeddingBag vs PyTorch (same weights): outputs, gradients, buffers, reprs,
errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
from tessera import nn
from tessera.testing import gradcheck
from harness import close, compare_fn, compare_module, randn, rng, tt

F = nn.functional


LAYERS = [
    (lambda m: m.PixelShuffle(2), (2, 8, 3, 4)),
    (lambda m: m.PixelShuffle(3), (9, 2, 3)),
    (lambda m: m.PixelShuffle(2), (2, 2, 4, 3, 4)),
    (lambda m: m.PixelUnshuffle(2), (2, 3, 4, 6)),
    (lambda m: m.PixelUnshuffle(3), (2, 6, 9)),
    (lambda m: m.ChannelShuffle(2), (2, 6, 3, 4)),
    (lambda m: m.ChannelShuffle(3), (2, 6, 5)),
    (lambda m: m.BatchNorm3d(3), (4, 3, 2, 3, 2)),
    (lambda m: m.BatchNorm3d(3, affine=False, momentum=None), (4, 3, 2, 3, 2)),
    (lambda m: m.InstanceNorm1d(3), (4, 3, 5)),
    (lambda m: m.InstanceNorm1d(3, affine=True), (3, 5)),
    (lambda m: m.InstanceNorm2d(3, affine=True, track_running_stats=True), (4, 3, 5, 2)),
    (lambda m: m.InstanceNorm2d(3, affine=True, bias=False, momentum=0.3), (4, 3, 5, 2)),
    (lambda m: m.InstanceNorm2d(3, track_running_stats=True), (3, 5, 2)),
    (lambda m: m.InstanceNorm3d(2, affine=True, track_running_stats=True), (2, 2, 3, 2, 4)),
    (lambda m: m.LocalResponseNorm(3), (2, 5, 4)),
    (lambda m: m.LocalResponseNorm(2, alpha=0.1, beta=0.6, k=2.0), (2, 5, 4, 3)),
    (lambda m: m.LocalResponseNorm(4, alpha=0.2), (2, 6, 2, 3, 2)),
]


@pytest.mark.parametrize("case", range(len(LAYERS)))
@pytest.mark.parametrize("train", [True, False])
def test_layers_match_torch(case: int, train: bool) -> None:
    make, shape = LAYERS[case]
    torch.manual_seed(case)
    tm, sm = make(torch.nn), make(nn)
    assert repr(sm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in sm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    if train:
        # two steps so running statistics move twice
        compare_module(sm, tm, randn(*shape), train=True)
    # eval after a training step: the running statistics normalize where tracked
    compare_module(sm, tm, randn(*shape), train=train)
    for p in list(sm.parameters()) + list(tm.parameters()):
        p.grad = None  # float32 accumulations differ in rounding
    compare_module(sm.to(ts.float64), tm.double(), randn(*shape, dtype=np.float64), rtol=1e-10,
                   atol=1e-10, train=train)


def test_functional_gradchecks() -> None:
    x = tt(randn(2, 4, 3, 2, dtype=np.float64), requires_grad=True)
    w = tt(randn(4, dtype=np.float64), requires_grad=True)
    b = tt(randn(4, dtype=np.float64), requires_grad=True)
    assert gradcheck(lambda v, ww, bb: F.instance_norm(v, weight=ww, bias=bb), (x, w, b))
    assert gradcheck(lambda v: F.local_response_norm(v, 3, 0.5, 0.7, 1.5), (x,))
    assert gradcheck(lambda v: F.pixel_shuffle(v, 2), (x,))
    assert gradcheck(lambda v: F.pixel_unshuffle(v, 1), (x,))
    assert gradcheck(lambda v: F.channel_shuffle(v, 2), (x,))
    y = tt(randn(2, 4, 3, 2, dtype=np.float64), requires_grad=True)
    assert gradcheck(lambda u, v: F.cosine_similarity(u, v, dim=1), (x, y))
    assert gradcheck(lambda u, v: F.pairwise_distance(u, v, 3.0), (x, y))


def test_instance_norm_functional_running_stats() -> None:
    x = randn(3, 4, 5)
    rm, rv = tt(np.zeros(4, np.float32)), tt(np.ones(4, np.float32))
    rmt, rvt = torch.zeros(4), torch.ones(4)
    close(F.instance_norm(tt(x), rm, rv, momentum=0.2),
          TF.instance_norm(torch.tensor(x), rmt, rvt, momentum=0.2), 1e-5, 1e-5)
    close(rm, rmt, 1e-6, 1e-6)
    close(rv, rvt, 1e-6, 1e-6)
    close(F.instance_norm(tt(x), rm, rv, use_input_stats=False),
          TF.instance_norm(torch.tensor(x), rmt, rvt, use_input_stats=False), 1e-5, 1e-5)


def test_shuffle_and_norm_errors() -> None:
    with pytest.raises(ValueError, match=r"pixel_shuffle: .*upscale_factor\^2 = 4.*\(2, 6, 3, 4\)"):
        nn.PixelShuffle(2)(tt(randn(2, 6, 3, 4)))
    with pytest.raises(ValueError, match=r"pixel_shuffle: .*\(4, 4\)"):
        F.pixel_shuffle(tt(randn(4, 4)), 2)
    with pytest.raises(ValueError, match=r"pixel_unshuffle: .*\(2, 3, 5, 6\)"):
        nn.PixelUnshuffle(2)(tt(randn(2, 3, 5, 6)))
    with pytest.raises(ValueError, match=r"channel_shuffle: .*groups 4.*\(2, 6, 3\)"):
        nn.ChannelShuffle(4)(tt(randn(2, 6, 3)))
    with pytest.raises(ValueError, match=r"InstanceNorm2d: expected a 3-D or 4-D input"):
        nn.InstanceNorm2d(3)(tt(randn(2, 3)))
    with pytest.raises(ValueError, match=r"InstanceNorm1d: .*num_features \(4\)"):
        nn.InstanceNorm1d(4, affine=True)(tt(randn(2, 3, 5)))
    with pytest.raises(ValueError, match="instance_norm: expected more than 1 spatial"):
        nn.InstanceNorm1d(3)(tt(randn(2, 3, 1)))
    with pytest.raises(ValueError, match=r"BatchNorm3d: expected 5-D input"):
        nn.BatchNorm3d(3)(tt(randn(2, 3, 4, 5)))
    with pytest.raises(ValueError, match="local_response_norm: expected a 3-D or higher"):
        nn.LocalResponseNorm(2)(tt(randn(2, 3)))


@pytest.mark.parametrize("name,shape,nsp", [("Dropout1d", (40, 30, 7), 1),
                                            ("Dropout1d", (300, 7), 1),
                                            ("Dropout3d", (20, 30, 2, 3, 2), 3),
                                            ("Dropout3d", (300, 2, 3, 2), 3)])
def test_feature_dropout(name: str, shape, nsp: int) -> None:
    m = getattr(nn, name)(0.4)
    assert repr(m) == repr(getattr(torch.nn, name)(0.4))
    x = np.abs(randn(*shape)) + 1.0
    a = tt(x, requires_grad=True)
    y = m(a)
    y.sum().backward()
    yn = y.numpy()
    ratio = yn / x
    flat = ratio.reshape(shape[:len(shape) - nsp] + (-1,))
    # each channel is all dropped or all kept (scaled by 1/(1-p))
    assert np.allclose(flat, flat[..., :1])
    kept = flat[..., 0]
    assert np.all((kept == 0) | np.isclose(kept, 1 / 0.6, rtol=1e-6))
    assert 0.3 < (kept == 0).mean() < 0.5
    np.testing.assert_allclose(a.grad.numpy(), ratio, rtol=1e-6)
    m.eval()
    assert m(a) is a
    with pytest.raises(ValueError, match=rf"{name.lower()}: expected"):
        m.train()(tt(randn(*shape[-nsp:])))


@pytest.mark.parametrize("name,feature", [("AlphaDropout", False), ("FeatureAlphaDropout", True)])
def test_alpha_dropout_statistics(name: str, feature: bool) -> None:
    m = getattr(nn, name)(0.2)
    assert repr(m) == repr(getattr(torch.nn, name)(0.2))
    x = randn(100, 50, 20)
    y = m(tt(x)).numpy()
    assert abs(y.mean()) < 0.05 and abs(y.std() - 1) < 0.05  # SELU statistics preserved
    dropped = np.isclose(y, -1.7580993408473766 * (1 / np.sqrt((1.7580993408473766 ** 2 * 0.2 + 1) * 0.8)) * 0.8)
    assert 0.17 < dropped.mean() < 0.23
    if feature:
        whole = dropped.all(-1)  # channels dropped as a whole; elsewhere only chance matches
        assert 0.17 < whole.mean() < 0.23 and dropped[~whole].mean() < 1e-3
    m.eval()
    close(m(tt(x)), x, 0, 0)
    assert np.all(F.alpha_dropout(tt(x), 1.0, training=True).numpy() == 0)


def test_distance_modules() -> None:
    for kw in ({}, {"dim": 0}, {"dim": -1, "eps": 1e-3}):
        tm, sm = torch.nn.CosineSimilarity(**kw), nn.CosineSimilarity(**kw)
        assert repr(sm) == repr(tm)
        compare_fn(sm, tm, randn(4, 5), randn(4, 5))
    compare_fn(nn.CosineSimilarity(dim=-1), torch.nn.CosineSimilarity(dim=-1), randn(4, 1, 5),
               randn(1, 3, 5))
    for kw in ({}, {"p": 1.0}, {"p": 3.0, "keepdim": True}, {"p": float("inf")}, {"eps": 0.1}):
        tm, sm = torch.nn.PairwiseDistance(**kw), nn.PairwiseDistance(**kw)
        assert repr(sm) == repr(tm)
        compare_fn(sm, tm, randn(4, 5), randn(4, 5))
    close(nn.PairwiseDistance(p=0.0)(tt(randn(3, 4)), tt(randn(3, 4))), np.full(3, 4.0), 0, 0)


def _bag_case(sm, tm, x, off=None, psw=None, tol=1e-6) -> None:
    sm.load_state_dict(tm.state_dict())
    ys = sm(ts.asarray(x), None if off is None else ts.asarray(off),
            None if psw is None else tt(psw, requires_grad=True))
    yt = tm(torch.tensor(x), None if off is None else torch.tensor(off),
            None if psw is None else torch.tensor(psw))
    close(ys, yt, tol, tol)
    g = randn(*yt.shape)
    ys.backward(tt(g))
    yt.backward(torch.tensor(g))
    close(sm.weight.grad, tm.weight.grad, tol, tol)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 0])
def test_embedding_bag(mode: str, padding_idx) -> None:
    torch.manual_seed(0)
    tm = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx)
    sm = nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx)
    assert repr(sm) == repr(tm)
    x = np.array([1, 0, 3, 4, 0, 2, 9, 9, 5, 0])
    _bag_case(sm, tm, x, np.array([0, 2, 2, 5, 9]))  # an empty bag and a padding-only bag
    sm2 = nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx, include_last_offset=True)
    tm2 = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx,
                                include_last_offset=True)
    _bag_case(sm2, tm2, x, np.array([0, 3, 3, 7, 10]))
    sm3 = nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx)
    tm3 = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=padding_idx)
    _bag_case(sm3, tm3, rng.integers(0, 10, (4, 6)))
    if mode == "sum":
        _bag_case(sm3, tm3, x, np.array([0, 4, 6]), psw=randn(10))


def test_embedding_bag_init_and_errors() -> None:
    m = nn.EmbeddingBag(1000, 8, padding_idx=3)
    w = m.weight.numpy()
    assert np.all(w[3] == 0) and abs(w.std() - 1) < 0.05
    x = ts.asarray(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="embedding_bag: offsets are required"):
        m(x)
    with pytest.raises(ValueError, match="embedding_bag: offsets must be None"):
        m(ts.asarray(np.array([[1, 2]])), ts.asarray(np.array([0])))
    with pytest.raises(ValueError, match="offsets must start at 0"):
        m(x, ts.asarray(np.array([1, 2])))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported"):
        m(x, ts.asarray(np.array([0])), tt(randn(3)))
    with pytest.raises(ValueError, match="mode must be one of"):
        nn.EmbeddingBag(5, 2, mode="median")(x, ts.asarray(np.array([0])))
    with pytest.raises(TypeError, match="indices must be integers"):
        m(tt(randn(3)), ts.asarray(np.array([0])))
    pre = nn.EmbeddingBag.from_pretrained(tt(randn(4, 2)), mode="sum")
    assert not pre.weight.requires_grad
    close(pre(ts.asarray(np.array([[0, 1]]))), pre.weight.numpy()[:2].sum(0, keepdims=True), 1e-6, 1e-6)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("channels", [1, 3, 6, 9])
def test_cross_map_lrn2d(size: int, channels: int) -> None:
    tm = torch.nn.CrossMapLRN2d(size, 0.3, 0.75, 1.5)
    sm = nn.CrossMapLRN2d(size, 0.3, 0.75, 1.5)
    assert repr(sm) == repr(tm)
    x = randn(2, channels, 3, 2, dtype=np.float64)
    close(sm(tt(x)), tm(torch.tensor(x)), 1e-12, 1e-12)
    # PyTorch's legacy hand-written backward is not the derivative of its forward (and fails
    # for size 1); tessera differentiates the forward exactly.
    xs = tt(x[:1, :, :2, :1].copy(), requires_grad=True)
    assert gradcheck(sm, (xs,))
    with pytest.raises(ValueError, match=r"CrossMapLRN2d: expected a 4-D input"):
        sm(tt(randn(2, 3, 4)))


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 2), (2, 3, 2, 2, 2)])
def test_sync_batchnorm_single_process(shape) -> None:
    tm, sm = torch.nn.SyncBatchNorm(3), nn.SyncBatchNorm(3)
    assert repr(sm) == repr(tm)
    compare_module(sm, tm, randn(*shape), train=True)
    compare_module(sm, tm, randn(*shape), train=False)
    with pytest.raises(ValueError, match="SyncBatchNorm: expected at least 2-D input"):
        sm(tt(randn(3)))


def test_convert_sync_batchnorm() -> None:
    m = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm1d(3)))
    w = m[1].weight
    c = nn.SyncBatchNorm.convert_sync_batchnorm(m)
    tm = torch.nn.SyncBatchNorm.convert_sync_batchnorm(torch.nn.Sequential(
        torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3),
        torch.nn.Sequential(torch.nn.BatchNorm1d(3))))
    assert repr(c) == repr(tm)
    assert c[1].weight is w and isinstance(c[2][0], nn.SyncBatchNorm)


REPRS = ["MaxPool1d(2)", "MaxPool2d((2, 3), stride=1, padding=1)", "MaxPool3d(2)", "AvgPool1d(2)",
         "AvgPool1d(3, 1, 1)", "AvgPool2d(3, 2, 1, True, False, 2)", "AvgPool3d(2)",
         "AdaptiveAvgPool1d(3)", "AdaptiveAvgPool2d((2, 3))", "AdaptiveMaxPool2d(2)",
         "AdaptiveMaxPool1d(2, True)", "Embedding(5, 3, padding_idx=1)", "Flatten()",
         "Unflatten(1, (2, 3))", "Identity()", "Softmax(1)", "LogSoftmax(dim=1)", "Softplus()",
         "GELU()", "ELU(0.5)", "SELU()", "Mish()", "SiLU()", "LayerNorm(4)", "RMSNorm(4)",
         "GroupNorm(2, 4)", "BatchNorm1d(3, affine=False)", "Dropout2d(0.2)", "Linear(2, 3)",
         "Conv1d(2, 3, 3)", "Conv2d(2, 3, 3, padding='same')",
         "ConvTranspose2d(2, 3, 3, stride=2, output_padding=1)", "MultiheadAttention(8, 2)",
         "MultiheadAttention(8, 2, kdim=3, vdim=5)", "LPPool2d(2, 3)", "Hardtanh()",
         "LeakyReLU()", "Softmin(1)", "CELU()", "Hardswish()", "ReLU6()", "GLU()",
         "TransformerDecoderLayer(8, 2, 16)", "LSTM(3, 4, 2, bidirectional=True)",
         "GRUCell(3, 4, bias=False)", "Upsample(size=(3, 4), mode='bilinear')",
         "EmbeddingBag(10, 3, mode='sum')", "PReLU(3)", "InstanceNorm3d(2)", "Fold(4, 2)"]


@pytest.mark.parametrize("expr", REPRS)
def test_reprs_match_torch(expr: str) -> None:
    assert repr(eval("nn." + expr)) == repr(eval("torch.nn." + expr))


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_embedding_max_norm(norm_type: float) -> None:
    torch.manual_seed(0)
    w = randn(6, 3) * 3
    tm = torch.nn.Embedding(6, 3, max_norm=1.5, norm_type=norm_type, _weight=torch.tensor(w))
    sm = nn.Embedding(6, 3, max_norm=1.5, norm_type=norm_type, _weight=tt(w))
    assert repr(sm) == repr(tm)
    x = np.array([[0, 2], [2, 5]])
    ys, yt = sm(ts.asarray(x)), tm(torch.tensor(x))
    close(ys, yt, 1e-6, 1e-6)
    close(sm.weight, tm.weight, 1e-6, 1e-6)  # only the looked-up rows were clipped
    g = randn(2, 2, 3)
    ys.backward(tt(g))
    yt.backward(torch.tensor(g))
    close(sm.weight.grad, tm.weight.grad, 1e-6, 1e-6)
    tb = torch.nn.EmbeddingBag(6, 3, max_norm=1.0, mode="sum", _weight=torch.tensor(w))
    sb = nn.EmbeddingBag(6, 3, max_norm=1.0, mode="sum", _weight=tt(w))
    assert repr(sb) == repr(tb)
    close(sb(ts.asarray(x)), tb(torch.tensor(x)), 1e-6, 1e-6)


def test_embedding_scale_grad_by_freq() -> None:
    torch.manual_seed(0)
    tm = torch.nn.Embedding(6, 3, scale_grad_by_freq=True, padding_idx=0)
    sm = nn.Embedding(6, 3, scale_grad_by_freq=True, padding_idx=0)
    assert repr(sm) == repr(tm)
    sm.load_state_dict(tm.state_dict())
    x = np.array([[0, 2, 2], [2, 5, 1]])
    ys, yt = sm(ts.asarray(x)), tm(torch.tensor(x))
    g = randn(2, 3, 3)
    ys.backward(tt(g))
    yt.backward(torch.tensor(g))
    close(sm.weight.grad, tm.weight.grad, 1e-6, 1e-6)
    # PyTorch's EmbeddingBag applies the counts to the wrong rows (index 5 below gets 1/3);
    # tessera follows the documented rule: each occurrence's gradient / its index's count.
    sb = nn.EmbeddingBag(6, 1, mode="sum", scale_grad_by_freq=True)
    sb(ts.asarray(x)).sum().backward()
    np.testing.assert_allclose(sb.weight.grad.numpy().ravel(), [1, 1, 1, 0, 0, 1], rtol=1e-6)

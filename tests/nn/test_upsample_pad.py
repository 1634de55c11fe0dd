"""ts.nn interpolate/Upsample*, Bilinear and the padding layers vs PyTorch (same weights):
outputs, input and parameter gradients, reprs, float64 gradchecks and error cases."""
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


INTERP = [
    ((2, 3, 7), dict(size=12, mode="nearest")),
    ((2, 3, 7), dict(scale_factor=0.6, mode="nearest")),
    ((2, 3, 7, 5), dict(scale_factor=1.7, mode="nearest")),
    ((2, 3, 7, 5), dict(scale_factor=2, mode="nearest")),
    ((1, 2, 9, 9), dict(scale_factor=0.5, mode="nearest")),
    ((2, 3, 4, 5, 6), dict(size=(3, 7, 9), mode="nearest")),
    ((2, 3, 7), dict(size=12, mode="nearest-exact")),
    ((2, 3, 7, 5), dict(scale_factor=(1.7, 0.8), mode="nearest-exact")),
    ((2, 3, 4, 5, 6), dict(size=(3, 7, 9), mode="nearest-exact")),
    ((2, 3, 7), dict(size=12, mode="area")),
    ((2, 3, 7, 5), dict(scale_factor=1.7, mode="area")),
    ((2, 3, 8, 9), dict(size=(3, 4), mode="area")),
    ((2, 3, 4, 5, 6), dict(size=(3, 7, 2), mode="area")),
    ((2, 3, 7, 5), dict(scale_factor=1.3, mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 7, 5), dict(scale_factor=1.3, mode="nearest", recompute_scale_factor=True)),
]
for _ac in (False, True):
    INTERP += [
        ((2, 3, 7), dict(size=12, mode="linear", align_corners=_ac)),
        ((2, 3, 7), dict(size=1, mode="linear", align_corners=_ac)),
        ((2, 3, 7), dict(scale_factor=0.45, mode="linear", align_corners=_ac)),
        ((2, 3, 7, 5), dict(scale_factor=(1.7, 2.3), mode="bilinear", align_corners=_ac)),
        ((2, 3, 7, 5), dict(size=(3, 2), mode="bilinear", align_corners=_ac)),
        ((2, 3, 7, 5), dict(scale_factor=2.5, mode="bicubic", align_corners=_ac)),
        ((2, 3, 7, 5), dict(size=(4, 3), mode="bicubic", align_corners=_ac)),
        ((2, 3, 4, 5, 6), dict(size=(3, 7, 9), mode="trilinear", align_corners=_ac)),
        ((1, 2, 3, 3, 2), dict(scale_factor=2, mode="trilinear", align_corners=_ac)),
    ]


@pytest.mark.parametrize("case", range(len(INTERP)))
def test_interpolate_matches_torch(case: int) -> None:
    shape, kw = INTERP[case]
    compare_fn(lambda x: F.interpolate(x, **kw), lambda x: TF.interpolate(x, **kw), randn(*shape),
               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode,shape", [("nearest", (1, 2, 3, 4)), ("bilinear", (1, 2, 3, 4)),
                                        ("bicubic", (1, 1, 3, 4)), ("linear", (1, 2, 5)),
                                        ("trilinear", (1, 1, 2, 3, 2)), ("area", (1, 2, 5, 4)),
                                        ("nearest-exact", (1, 2, 5))])
def test_interpolate_gradcheck(mode: str, shape) -> None:
    x = tt(randn(*shape, dtype=np.float64), requires_grad=True)
    size = tuple(s + 2 for s in shape[2:])
    assert gradcheck(lambda v: F.interpolate(v, size=size, mode=mode), (x,))


def test_interpolate_float64_and_integer_nearest() -> None:
    x = randn(2, 3, 5, 4, dtype=np.float64)
    close(F.interpolate(tt(x), scale_factor=1.5, mode="bicubic", align_corners=False),
          TF.interpolate(torch.tensor(x), scale_factor=1.5, mode="bicubic"), 1e-12, 1e-12)
    xi = rng.integers(0, 255, (1, 2, 3, 4)).astype(np.uint8)
    ys = F.interpolate(tt(xi), scale_factor=2)
    assert ys.dtype == ts.uint8
    close(ys, TF.interpolate(torch.tensor(xi), scale_factor=2), 0, 0)


def test_interpolate_errors() -> None:
    x = tt(randn(1, 2, 4, 4))
    with pytest.raises(ValueError, match="exactly one of size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="exactly one"):
        F.interpolate(x, size=3, scale_factor=2)
    # a mode's input rank, an unknown mode, an unsupported rank: NotImplementedError, as torch
    with pytest.raises(NotImplementedError, match="interpolate: mode 'linear' needs a 3-D input"):
        F.interpolate(x, size=3, mode="linear")
    with pytest.raises(NotImplementedError, match="trilinear"):
        F.interpolate(x, size=3, mode="trilinear")
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(x, size=3, mode="nearest", align_corners=True)
    with pytest.raises(NotImplementedError, match="unknown mode"):
        F.interpolate(x, size=3, mode="cubic")
    with pytest.raises(NotImplementedError, match=r"3-D, 4-D or 5-D input.*\(4, 4\)"):
        F.interpolate(tt(randn(4, 4)), size=3)
    with pytest.raises(ValueError, match="length 3"):
        F.interpolate(x, size=(2, 3, 4))
    with pytest.raises(ValueError, match="greater than 0"):
        F.interpolate(x, scale_factor=0.1)
    with pytest.raises(ValueError, match="recompute_scale_factor"):
        F.interpolate(x, size=3, recompute_scale_factor=True)
    with pytest.raises(TypeError, match="floating-point"):
        F.interpolate(tt(np.ones((1, 1, 2, 2), np.int32)), size=3, mode="bilinear")


def test_upsample_helpers() -> None:
    x = randn(2, 3, 4, 5)
    close(F.upsample_bilinear(tt(x), scale_factor=2),
          TF.upsample_bilinear(torch.tensor(x), scale_factor=2), 1e-5, 1e-6)
    close(F.upsample_nearest(tt(x), size=(7, 3)),
          TF.upsample_nearest(torch.tensor(x), size=(7, 3)), 0, 0)
    close(F.upsample(tt(x), size=(7, 3), mode="bilinear"),
          TF.upsample(torch.tensor(x), size=(7, 3), mode="bilinear"), 1e-5, 1e-6)


UPSAMPLE = [
    (lambda m: m.Upsample(scale_factor=2), (2, 3, 4, 5)),
    (lambda m: m.Upsample(size=(5, 7), mode="bilinear"), (2, 3, 4, 5)),
    (lambda m: m.Upsample(scale_factor=(1.5, 2.0), mode="bicubic", align_corners=True), (2, 3, 4, 5)),
    (lambda m: m.Upsample(scale_factor=2, mode="linear"), (2, 3, 4)),
    (lambda m: m.Upsample(size=(3, 4, 5), mode="trilinear"), (1, 2, 2, 3, 3)),
    (lambda m: m.UpsamplingNearest2d(scale_factor=3), (2, 3, 4, 5)),
    (lambda m: m.UpsamplingBilinear2d(size=(6, 9)), (2, 3, 4, 5)),
    (lambda m: m.Bilinear(4, 5, 3), None),
    (lambda m: m.Bilinear(4, 5, 3, bias=False), None),
]


@pytest.mark.parametrize("case", range(len(UPSAMPLE)))
def test_upsample_modules_match_torch(case: int) -> None:
    make, shape = UPSAMPLE[case]
    torch.manual_seed(case)
    tm, sm = make(torch.nn), make(nn)
    assert repr(sm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in sm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    if shape is not None:
        compare_module(sm, tm, randn(*shape))
        return
    sm.load_state_dict(tm.state_dict())
    x1, x2 = randn(2, 6, 4), randn(2, 6, 5)
    compare_fn(lambda a, b: sm(a, b), lambda a, b: tm(a, b), x1, x2, rtol=1e-5, atol=1e-5)
    # parameter gradients
    for p in sm.parameters():
        p.grad = None
    tm.zero_grad()
    sm(tt(x1), tt(x2)).sum().backward()
    tm(torch.tensor(x1), torch.tensor(x2)).sum().backward()
    tp = dict(tm.named_parameters())
    for k, p in sm.named_parameters():
        close(p.grad, tp[k].grad, 1e-5, 1e-5)


def test_bilinear_init_and_errors() -> None:
    m = nn.Bilinear(16, 3, 4)
    w = m.weight.numpy()
    assert np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.2  # U(-1/sqrt(16), 1/sqrt(16))
    assert np.abs(m.bias.numpy()).max() <= 0.25
    with pytest.raises(ValueError, match=r"Bilinear: .*\(2, 5\) and \(2, 3\)"):
        m(tt(randn(2, 5)), tt(randn(2, 3)))
    with pytest.raises(ValueError, match="Bilinear"):
        m(tt(randn(2, 16)), tt(randn(3, 3)))
    x1 = tt(randn(3, 2, dtype=np.float64), requires_grad=True)
    x2 = tt(randn(3, 4, dtype=np.float64), requires_grad=True)
    w = tt(randn(5, 2, 4, dtype=np.float64), requires_grad=True)
    b = tt(randn(5, dtype=np.float64), requires_grad=True)
    assert gradcheck(F.bilinear, (x1, x2, w, b))


PADS = [
    ("ZeroPad1d", (2,), (2, 3, 4)), ("ZeroPad1d", ((1, 3),), (3, 4)),
    ("ZeroPad2d", (2,), (2, 3, 4, 5)), ("ZeroPad2d", ((1, 0, 2, 3),), (3, 4, 5)),
    ("ZeroPad2d", ((-1, 2, 1, -2),), (2, 3, 4, 5)),
    ("ZeroPad3d", ((1, 0, 2, 3, 0, 1),), (1, 2, 3, 4, 5)),
    ("ConstantPad1d", (2, 3.5), (2, 3, 4)), ("ConstantPad2d", ((1, 0, 2, 3), -1.0), (2, 3, 4, 5)),
    ("ConstantPad3d", (1, 2.0), (2, 3, 4, 5)), ("ConstantPad2d", (1, 2.0), (4, 5)),
    ("ReflectionPad1d", (2,), (2, 3, 4)), ("ReflectionPad1d", ((3, 1),), (3, 4)),
    ("ReflectionPad2d", ((1, 3, 2, 0),), (2, 3, 4, 5)), ("ReflectionPad2d", (2,), (3, 4, 5)),
    ("ReflectionPad3d", (1,), (1, 2, 3, 4, 5)), ("ReflectionPad3d", ((1, 2, 0, 1, 2, 1),), (2, 3, 4, 5)),
    ("ReplicationPad1d", ((3, 1),), (2, 3, 4)), ("ReplicationPad2d", ((5, 1, 0, 2),), (2, 3, 4, 5)),
    ("ReplicationPad3d", (2,), (1, 2, 3, 4, 5)), ("ReplicationPad2d", (2,), (3, 4, 5)),
    ("CircularPad1d", ((3, 1),), (2, 3, 4)), ("CircularPad2d", ((1, 4, 2, 0),), (2, 3, 4, 5)),
    ("CircularPad3d", (1,), (1, 2, 3, 4, 5)), ("CircularPad2d", (2,), (3, 4, 5)),
]


@pytest.mark.parametrize("case", range(len(PADS)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_padding_layers_match_torch(case: int, dtype) -> None:
    name, args, shape = PADS[case]
    tm, sm = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    assert repr(sm) == repr(tm)
    assert sm.padding == tm.padding
    compare_module(sm, tm, randn(*shape, dtype=dtype), rtol=1e-6, atol=1e-6)


def test_padding_gradcheck_and_errors() -> None:
    x = tt(randn(1, 2, 3, 4, dtype=np.float64), requires_grad=True)
    for mode in ("reflect", "replicate", "circular", "constant"):
        assert gradcheck(lambda v: F.pad(v, (2, 1, 1, 2), mode=mode), (x,))
    with pytest.raises(ValueError, match=r"ReflectionPad2d: expected a 3-D or 4-D input, got shape \(4, 5\)"):
        nn.ReflectionPad2d(1)(tt(randn(4, 5)))
    with pytest.raises(ValueError, match="ReplicationPad3d"):
        nn.ReplicationPad3d(1)(tt(randn(4, 5)))
    with pytest.raises(ValueError, match=r"ZeroPad2d: padding must be an int or 4 values"):
        nn.ZeroPad2d((1, 2))
    with pytest.raises(ValueError, match="reflect padding"):
        nn.ReflectionPad1d(4)(tt(randn(2, 3, 4)))
    with pytest.raises(ValueError, match="circular padding"):
        nn.CircularPad1d(5)(tt(randn(2, 3, 4)))
    with pytest.raises(ValueError, match="ConstantPad3d"):
        nn.ConstantPad3d(1, 0.0)(tt(randn(4, 5)))


@pytest.mark.parametrize("mode,kw", [("nearest", {}), ("nearest-exact", {}),
                                     ("bilinear", dict(align_corners=False)),
                                     ("bicubic", dict(align_corners=True))])
def test_interpolate_long_axes_gather_path(mode: str, kw) -> None:
    # axes longer than the dense-matmul limit resample by gather + index_add
    x = randn(1, 2, 3, 300)
    compare_fn(lambda v: F.interpolate(v, size=(5, 451), mode=mode, **kw),
               lambda v: TF.interpolate(v, size=(5, 451), mode=mode, **kw), x,
               rtol=1e-5, atol=1e-5)


def test_interpolate_gather_path_gradcheck() -> None:
    # a width over the dense-matmul limit (256) resamples by gather; the height by matmul
    for mode in ("nearest", "bilinear", "bicubic"):
        x = tt(randn(1, 1, 2, 260, dtype=np.float64), requires_grad=True)
        assert gradcheck(lambda v: F.interpolate(v, size=(3, 7), mode=mode), (x,))
    x = randn(2, 3, 7, 270)
    compare_fn(lambda v: F.interpolate(v, scale_factor=1.7, mode="bilinear"),
               lambda v: TF.interpolate(v, scale_factor=1.7, mode="bilinear"), x,
               rtol=1e-5, atol=1e-5)


AA_SIZES = [((13, 9), (5, 4)), ((7, 31), (3, 12)), ((8, 8), (17, 3)), ((5, 6), (5, 6)),
            ((20, 3), (2, 7)), ((300, 4), (37, 2))]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("case", range(len(AA_SIZES)))
@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolate_antialias(mode: str, case: int, align_corners: bool) -> None:
    # (PyTorch's antialias with align_corners=True misbehaves for output sides of 1: not used)
    src, dst = AA_SIZES[case]
    kw = dict(size=dst, mode=mode, antialias=True, align_corners=align_corners)
    compare_fn(lambda v: F.interpolate(v, **kw), lambda v: TF.interpolate(v, **kw),
               randn(2, 3, *src), rtol=1e-5, atol=2e-6)
    x64 = randn(1, 2, *src, dtype=np.float64)
    close(F.interpolate(tt(x64), **kw), TF.interpolate(torch.tensor(x64), **kw), 1e-12, 1e-12)


def test_interpolate_antialias_scale_factor_gradcheck_and_errors() -> None:
    kw = dict(scale_factor=0.4, mode="bicubic", antialias=True)
    compare_fn(lambda v: F.interpolate(v, **kw), lambda v: TF.interpolate(v, **kw),
               randn(1, 2, 11, 9), rtol=1e-5, atol=2e-6)
    x = tt(randn(1, 1, 6, 5, dtype=np.float64), requires_grad=True)
    assert gradcheck(lambda v: F.interpolate(v, size=(3, 2), mode="bilinear", antialias=True), (x,))
    with pytest.raises(ValueError, match="antialias=True is only supported for the bilinear"):
        F.interpolate(tt(randn(1, 1, 4, 4)), size=2, mode="nearest", antialias=True)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_interpolate_nonfinite_stays_local(mode: str) -> None:
    x = randn(1, 2, 6, 5)
    x[0, 0, 2, 3] = np.inf
    x[0, 1, 4, 1] = np.nan
    ys = F.interpolate(tt(x), size=(9, 8), mode=mode).numpy()
    yt = TF.interpolate(torch.tensor(x), size=(9, 8), mode=mode).numpy()
    np.testing.assert_array_equal(np.isnan(ys), np.isnan(yt))
    np.testing.assert_array_equal(np.isinf(ys), np.isinf(yt))
    fin = np.isfinite(yt)
    np.testing.assert_allclose(ys[fin], yt[fin], rtol=1e-5, atol=1e-5)


# ---- the C++ op (csrc/ops/nn/resample.cpp) against torch: drawn sizes, scales, modes, layouts
from hypothesis import given, settings, strategies as st  # noqa: E402

_MODE_RANK = {"nearest": (3, 4, 5), "nearest-exact": (3, 4, 5), "area": (3, 4, 5),
              "linear": (3,), "bilinear": (4,), "bicubic": (4,), "trilinear": (5,)}


@settings(max_examples=60, deadline=None)
@given(mode=st.sampled_from(sorted(_MODE_RANK)), data=st.data(),
       f64=st.booleans(), by_size=st.booleans(), ac=st.booleans())
def test_interpolate_drawn_vs_torch(mode: str, data, f64: bool, by_size: bool, ac: bool) -> None:
    nd = data.draw(st.sampled_from(_MODE_RANK[mode]))
    batch = data.draw(st.integers(0, 2))
    spatial = [data.draw(st.integers(1, 6)) for _ in range(nd - 2)]
    x = randn(batch, 2, *spatial, dtype=np.float64 if f64 else np.float32)
    if by_size:
        kw: dict = dict(size=[data.draw(st.integers(1, 9)) for _ in spatial])
    else:
        scales = [data.draw(st.sampled_from([0.5, 0.75, 1.0, 1.3, 2.0, 2.5, 3.0]))
                  for _ in spatial]
        if any(int(n * s) == 0 for n, s in zip(spatial, scales)):
            scales = [max(s, 1.0) for s in scales]
        kw = dict(scale_factor=scales, recompute_scale_factor=data.draw(st.booleans()))
    kw["mode"] = mode
    if mode in ("linear", "bilinear", "bicubic", "trilinear"):
        kw["align_corners"] = ac
    tol = 1e-10 if f64 else 2e-5
    compare_fn(lambda v: F.interpolate(v, **kw), lambda v: TF.interpolate(v, **kw), x,
               rtol=tol, atol=tol)


@pytest.mark.parametrize("mode,kw", [("nearest", {}), ("nearest-exact", {}),
                                     ("bilinear", dict(align_corners=False)),
                                     ("bicubic", dict(align_corners=True)), ("area", {})])
@pytest.mark.parametrize("layout", ["channels_last", "transposed", "sliced"])
def test_interpolate_noncontiguous_inputs(mode: str, kw, layout: str) -> None:
    base = randn(2, 3, 6, 7)
    xt = torch.tensor(base)
    xs = tt(base)
    if layout == "channels_last":
        xt = xt.contiguous(memory_format=torch.channels_last)
        xs = xs.to(memory_format=ts.channels_last)
    elif layout == "transposed":
        xt, xs = xt.transpose(2, 3), xs.transpose(2, 3)
    else:
        xt, xs = xt[:, ::2, 1:, ::2], xs[:, ::2, 1:, ::2]
    for size in ((9, 5), (3, 2)):
        close(F.interpolate(xs, size=size, mode=mode, **kw),
              TF.interpolate(xt, size=size, mode=mode, **kw), 1e-5, 1e-5)


@pytest.mark.parametrize("mode,shape", [("bilinear", (2, 2, 3, 4)), ("bicubic", (1, 2, 4, 3)),
                                        ("nearest", (2, 1, 3, 4)), ("trilinear", (1, 1, 2, 3, 2)),
                                        ("nearest-exact", (1, 2, 3, 4, 2))])
def test_interpolate_float64_grads_and_double_backward_vs_torch(mode: str, shape) -> None:
    x = randn(*shape, dtype=np.float64)
    size = tuple(s * 2 - 1 for s in shape[2:])
    xs = tt(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    gs = ts.autograd.grad((F.interpolate(xs, size=size, mode=mode) ** 2).sum(), xs,
                          create_graph=True)[0]
    gt = torch.autograd.grad((TF.interpolate(xt, size=size, mode=mode) ** 2).sum(), xt,
                             create_graph=True)[0]
    close(gs, gt, 1e-12, 1e-12)
    close(ts.autograd.grad(gs.sum(), xs)[0], torch.autograd.grad(gt.sum(), xt)[0], 1e-12, 1e-12)
    assert gradcheck(lambda v: F.interpolate(v, size=size, mode=mode), (xs,))


def test_interpolate_empty_batch_and_signature() -> None:
    import inspect
    for mode in ("nearest", "bilinear", "bicubic", "area"):
        x = randn(0, 3, 4, 5)
        close(F.interpolate(tt(x), size=(6, 3), mode=mode),
              TF.interpolate(torch.tensor(x), size=(6, 3), mode=mode), 0, 0)
    def params(f):
        return [(p.name, p.default, p.kind) for p in inspect.signature(f).parameters.values()]
    assert params(F.interpolate) == params(TF.interpolate)
    assert list(inspect.signature(F.upsample_bilinear).parameters) == ["input", "size",
                                                                       "scale_factor"]


@pytest.mark.parametrize("nd", [3, 4, 5])
@pytest.mark.parametrize("scale", [1.2, 2.2, 1.0, 2.0])
def test_interpolate_nearest_same_or_double_size_by_scale(nd: int, scale: float) -> None:
    # an output as long as (or twice) the input with another scale_factor: torch's 2-D
    # nearest copies (halves) the index, its 1-D and 3-D nearest and nearest-exact use the scale
    x = randn(1, 2, *(4,) * (nd - 2))
    for mode in ("nearest-exact", "nearest"):
        close(F.interpolate(tt(x), scale_factor=scale, mode=mode),
              TF.interpolate(torch.tensor(x), scale_factor=scale, mode=mode), 0, 0)


def test_interpolate_errors_as_torch() -> None:
    x = randn(1, 2, 4, 4)
    same = [lambda m: m.nn.functional.interpolate(m.asarray(x) if m is ts else m.tensor(x), **kw)
            for kw in (dict(), dict(size=3, scale_factor=2.0), dict(size=3, mode="linear"),
                       dict(size=3, mode="trilinear"), dict(size=3, mode="cubic"),
                       dict(size=3, align_corners=True), dict(size=(2, 3, 4)),
                       dict(scale_factor=0.1), dict(size=2, mode="nearest", antialias=True),
                       dict(size=3, recompute_scale_factor=True), dict(size=3.5))]
    from harness import same_as_torch
    for f in same:
        same_as_torch(f)
    with pytest.raises(TypeError, match="interpolate: size must be an int"):
        F.interpolate(tt(x), size=3.5)
    with pytest.raises(TypeError, match=r"interpolate: mode 'bilinear' needs a floating-point "
                                        r"input, got int32"):
        F.interpolate(tt(np.ones((1, 1, 2, 2), np.int32)), size=3, mode="bilinear")

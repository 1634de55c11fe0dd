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
    with pytest.raises(ValueError, match="interpolate: mode 'linear' needs a 3-D input"):
        F.interpolate(x, size=3, mode="linear")
    with pytest.raises(ValueError, match="trilinear"):
        F.interpolate(x, size=3, mode="trilinear")
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(x, size=3, mode="nearest", align_corners=True)
    with pytest.raises(ValueError, match="unknown mode"):
        F.interpolate(x, size=3, mode="cubic")
    with pytest.raises(ValueError, match=r"3-D, 4-D or 5-D input.*\(4, 4\)"):
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


def test_interpolate_gather_path_gradcheck(monkeypatch) -> None:
    from tessera.nn.functional import interp
    monkeypatch.setattr(interp, "_DENSE_MAX", 0)
    for mode in ("nearest", "bilinear", "bicubic"):
        x = tt(randn(1, 1, 3, 4, dtype=np.float64), requires_grad=True)
        assert gradcheck(lambda v: F.interpolate(v, size=(5, 3), mode=mode), (x,))
    x = randn(2, 3, 7, 5)
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

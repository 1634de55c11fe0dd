"""ts.nn 3-D/adaptive/LP pooling, pooling indices, max_unpool and Fold/Unfold vs PyTorch:
outputs, gradients, indices, reprs, float64 gradchecks and error cases."""
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
    (lambda m: m.MaxPool3d(2), (2, 3, 4, 5, 6)),
    (lambda m: m.MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=1), (2, 2, 4, 5, 6)),
    (lambda m: m.MaxPool3d(2, dilation=2, ceil_mode=True), (1, 2, 5, 6, 7)),
    (lambda m: m.MaxPool3d(2), (3, 4, 5, 6)),
    (lambda m: m.AvgPool3d(2), (2, 3, 4, 5, 6)),
    (lambda m: m.AvgPool3d(3, stride=2, padding=1, count_include_pad=False), (2, 2, 5, 6, 7)),
    (lambda m: m.AvgPool3d(3, stride=2, ceil_mode=True), (1, 2, 5, 6, 8)),
    (lambda m: m.AvgPool3d(2, divisor_override=3), (1, 2, 4, 4, 4)),
    (lambda m: m.AdaptiveAvgPool3d((2, 3, 4)), (2, 3, 5, 7, 9)),
    (lambda m: m.AdaptiveAvgPool3d((2, None, 1)), (2, 3, 5, 7, 9)),
    (lambda m: m.AdaptiveAvgPool3d(1), (3, 4, 5, 6)),
    (lambda m: m.AdaptiveMaxPool1d(3), (2, 3, 7)),
    (lambda m: m.AdaptiveMaxPool1d(4), (3, 8)),
    (lambda m: m.AdaptiveMaxPool2d((3, 2)), (2, 3, 7, 5)),
    (lambda m: m.AdaptiveMaxPool3d((2, 3, 2)), (2, 2, 5, 7, 3)),
    (lambda m: m.LPPool1d(2, 3), (2, 3, 9)),
    (lambda m: m.LPPool1d(1.5, 3, stride=2), (2, 3, 9)),
    (lambda m: m.LPPool2d(2, 2), (2, 3, 6, 8)),
    (lambda m: m.LPPool2d(3, (2, 3), stride=(1, 2), ceil_mode=True), (2, 3, 6, 8)),
    (lambda m: m.LPPool3d(2, 2), (1, 2, 4, 4, 6)),
    (lambda m: m.Unfold(2), (2, 3, 4, 5)),
    (lambda m: m.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 3, 6, 7)),
    (lambda m: m.Unfold(3, padding=1), (3, 5, 5)),
    (lambda m: m.Fold((4, 5), 2), (2, 12, 12)),
    (lambda m: m.Fold((6, 7), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), (2, 18, 20)),
    (lambda m: m.Fold(5, 3, padding=1), (18, 25)),
]


@pytest.mark.parametrize("case", range(len(LAYERS)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pool_layers_match_torch(case: int, dtype) -> None:
    make, shape = LAYERS[case]
    tm, sm = make(torch.nn), make(nn)
    assert repr(sm) == repr(tm)
    x = randn(*shape, dtype=dtype)
    if "LPPool" in repr(tm):
        x = np.abs(x) + 0.1  # fractional powers of negatives are NaN in both
    tol = 1e-5 if dtype == np.float32 else 1e-10
    compare_module(sm, tm, x, rtol=tol, atol=tol)


@pytest.mark.parametrize("fn,nsp,kw", [
    ("max_pool1d", 1, dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", 2, dict(kernel_size=(2, 3), stride=2, padding=1, dilation=(1, 2))),
    ("max_pool2d", 2, dict(kernel_size=3, stride=2, ceil_mode=True)),
    ("max_pool3d", 3, dict(kernel_size=2)),
    ("max_pool3d", 3, dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=1, dilation=(1, 2, 1))),
    ("max_pool3d", 3, dict(kernel_size=3, stride=2, ceil_mode=True)),
])
def test_max_pool_indices_and_unpool(fn: str, nsp: int, kw) -> None:
    x = randn(2, 3, *([7, 6, 5][:nsp]))
    x[0, 0].flat[:4] = 1.0  # ties: the first maximum wins
    ys, ids = getattr(F, fn)(tt(x), return_indices=True, **kw)
    yt, idt = getattr(TF, fn)(torch.tensor(x), return_indices=True, **kw)
    close(ys, yt, 0, 0)
    assert ids.dtype == ts.int64
    np.testing.assert_array_equal(ids.numpy(), idt.numpy())
    ys2, ids2 = getattr(F, fn + "_with_indices")(tt(x), **kw)
    np.testing.assert_array_equal(ids2.numpy(), idt.numpy())
    if "dilation" in kw:
        return  # max_unpool has no dilation: its default output size is too small (PyTorch too)
    un = f"max_unpool{nsp}d"
    ukw = {k: v for k, v in kw.items() if k in ("kernel_size", "stride", "padding")}
    ukw["output_size"] = x.shape[2:]
    compare_fn(lambda v: getattr(F, un)(v, ids, **ukw), lambda v: getattr(TF, un)(v, idt, **ukw),
               yt.numpy(), rtol=0, atol=0)


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_max_unpool_modules(nsp: int) -> None:
    x = randn(2, 3, *([8, 6, 4][:nsp]))
    pool = getattr(torch.nn, f"MaxPool{nsp}d")(2, return_indices=True)
    yt, idt = pool(torch.tensor(x))
    tm, sm = getattr(torch.nn, f"MaxUnpool{nsp}d")(2), getattr(nn, f"MaxUnpool{nsp}d")(2)
    assert repr(sm) == repr(tm)
    close(sm(tt(yt.numpy()), ts.asarray(idt.numpy())), tm(yt, idt), 0, 0)
    size = tuple(s + 1 for s in x.shape[2:])
    close(sm(tt(yt.numpy()), ts.asarray(idt.numpy()), output_size=size),
          tm(yt, idt, output_size=size), 0, 0)
    ys, ids = getattr(nn, f"MaxPool{nsp}d")(2, return_indices=True)(tt(x))
    np.testing.assert_array_equal(ids.numpy(), idt.numpy())


@pytest.mark.parametrize("nsp,out", [(1, 3), (2, (3, 2)), (3, (2, 3, 2))])
def test_adaptive_max_pool_indices(nsp: int, out) -> None:
    x = randn(2, 3, *([7, 5, 4][:nsp]))
    fn = f"adaptive_max_pool{nsp}d"
    ys, ids = getattr(F, fn)(tt(x), out, return_indices=True)
    yt, idt = getattr(TF, fn)(torch.tensor(x), out, return_indices=True)
    close(ys, yt, 0, 0)
    np.testing.assert_array_equal(ids.numpy(), idt.numpy())
    compare_fn(lambda v: getattr(F, fn)(v, out, return_indices=True)[0],
               lambda v: getattr(TF, fn)(v, out, return_indices=True)[0], x)


@pytest.mark.parametrize("name,args", [
    ("max_pool3d", (2,)), ("avg_pool3d", (2,)), ("adaptive_avg_pool3d", ((2, 1, 3),)),
    ("adaptive_max_pool3d", ((2, 1, 3),)), ("lp_pool3d", (2.0, 2)),
])
def test_pool3d_gradcheck(name: str, args) -> None:
    x = tt(np.abs(randn(1, 2, 4, 3, 5, dtype=np.float64)) + 0.5, requires_grad=True)
    assert gradcheck(lambda v: getattr(F, name)(v, *args), (x,))


def test_fold_unfold_gradcheck_and_roundtrip() -> None:
    x = tt(randn(1, 2, 4, 5, dtype=np.float64), requires_grad=True)
    assert gradcheck(lambda v: F.unfold(v, (2, 3), padding=1, stride=(1, 2)), (x,))
    c = tt(randn(1, 8, 6, dtype=np.float64), requires_grad=True)
    assert gradcheck(lambda v: F.fold(v, (3, 4), 2), (c,))
    # float16 takes the composite col2im path
    c32 = randn(2, 12, 12)
    close(F.fold(tt(c32).astype(ts.float16), (4, 5), 2).astype(ts.float32),
          TF.fold(torch.tensor(c32), (4, 5), 2), 2e-2, 2e-2)


def test_pool_errors() -> None:
    with pytest.raises(ValueError, match=r"max_pool3d: expected a 4-D or 5-D input"):
        F.max_pool3d(tt(randn(2, 3, 4)), 2)
    with pytest.raises(ValueError, match=r"adaptive_avg_pool3d: expected a 4-D or 5-D input"):
        nn.AdaptiveAvgPool3d(2)(tt(randn(2, 3, 4)))
    with pytest.raises(ValueError, match="adaptive_max_pool1d: output_size"):
        F.adaptive_max_pool1d(tt(randn(2, 3, 4)), (2, 2))
    with pytest.raises(ValueError, match=r"max_unpool2d: .*same shape"):
        F.max_unpool2d(tt(randn(1, 2, 2, 2)), ts.zeros((1, 2, 2), dtype=ts.int64), 2)
    with pytest.raises(ValueError, match="max_unpool2d: invalid output_size"):
        F.max_unpool2d(tt(randn(1, 2, 2, 2)), ts.zeros((1, 2, 2, 2), dtype=ts.int64), 2,
                       output_size=(9, 9))
    with pytest.raises(IndexError, match="max_unpool1d: found an invalid max index"):
        F.max_unpool1d(tt(randn(1, 2, 2)), ts.full((1, 2, 2), 7, dtype=ts.int64), 2)
    with pytest.raises(ValueError, match=r"unfold: expected a 3-D or 4-D input"):
        nn.Unfold(2)(tt(randn(4, 5)))
    with pytest.raises(ValueError, match="unfold: kernel"):
        nn.Unfold(6)(tt(randn(1, 1, 4, 5)))
    with pytest.raises(ValueError, match=r"fold: input of shape \(2, 10, 12\)"):
        nn.Fold((4, 5), 2)(tt(randn(2, 10, 12)))
    with pytest.raises(ValueError, match=r"fold: input of shape \(2, 12, 11\)"):
        nn.Fold((4, 5), 2)(tt(randn(2, 12, 11)))
    with pytest.raises(ValueError, match="fold: expected a 2-D or 3-D input"):
        F.fold(tt(randn(12)), (4, 5), 2)


@pytest.mark.parametrize("nsp,out", [(1, 3), (2, (3, 2)), (3, (2, 3, 2))])
def test_adaptive_max_pool_with_indices_aliases(nsp: int, out) -> None:
    x = randn(2, 3, *([7, 5, 4][:nsp]))
    fn = f"adaptive_max_pool{nsp}d_with_indices"
    ys, ids = getattr(F, fn)(tt(x), out)
    yt, idt = getattr(TF, fn)(torch.tensor(x), out)
    close(ys, yt, 0, 0)
    np.testing.assert_array_equal(ids.numpy(), idt.numpy())


FRACTIONAL = [(2, (2, 3, 11, 9), dict(kernel_size=(3, 2), output_size=(5, 4))),
              (2, (2, 3, 10, 10), dict(kernel_size=2, output_ratio=(0.6, 0.6))),
              (2, (3, 10, 12), dict(kernel_size=3, output_size=(4, 8))),
              (2, (1, 2, 6, 6), dict(kernel_size=2, output_size=1)),
              (3, (1, 2, 7, 8, 9), dict(kernel_size=(2, 3, 2), output_size=(4, 3, 5))),
              (3, (2, 5, 6, 7), dict(kernel_size=2, output_ratio=(0.5, 0.7, 0.4)))]


@pytest.mark.parametrize("case", range(len(FRACTIONAL)))
def test_fractional_max_pool_matches_torch(case: int) -> None:
    nsp, shape, kw = FRACTIONAL[case]
    n = 1 if len(shape) == nsp + 1 else shape[0]
    s = rng.uniform(0, 1, (n, shape[-nsp - 1], nsp)).astype(np.float32)
    fn = f"fractional_max_pool{nsp}d"
    x = randn(*shape)
    ys, ids = getattr(F, fn)(tt(x), return_indices=True, _random_samples=tt(s), **kw)
    yt, idt = getattr(TF, fn)(torch.tensor(x), return_indices=True,
                              _random_samples=torch.tensor(s), **kw)
    close(ys, yt, 0, 0)
    np.testing.assert_array_equal(ids.numpy(), idt.numpy())
    compare_fn(lambda v: getattr(F, fn)(v, _random_samples=tt(s), **kw),
               lambda v: getattr(TF, fn)(v, _random_samples=torch.tensor(s), **kw), x)
    cls = f"FractionalMaxPool{nsp}d"
    sm = getattr(nn, cls)(_random_samples=tt(s), **kw)
    tm = getattr(torch.nn, cls)(_random_samples=torch.tensor(s), **kw)
    assert repr(sm) == repr(tm)
    close(sm(tt(x)), tm(torch.tensor(x)), 0, 0)


def test_fractional_max_pool_random_and_errors() -> None:
    x = tt(randn(4, 3, 20, 20))
    y = F.fractional_max_pool2d(x, 2, output_size=10)
    assert tuple(y.shape) == (4, 3, 10, 10)
    # every output is one of its plane's inputs and no smaller than a 1x1 sample would be
    assert np.isin(y.numpy(), x.numpy()).all()
    with pytest.raises(ValueError, match="either an output size, or a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="too large"):
        F.fractional_max_pool2d(tt(randn(1, 1, 4, 4)), 3, output_size=3)
    with pytest.raises(ValueError, match=r"_random_samples must have shape \(1, 1, 2\)"):
        F.fractional_max_pool2d(tt(randn(1, 1, 4, 4)), 2, output_size=2,
                                _random_samples=tt(randn(1, 2, 2)))
    with pytest.raises(ValueError, match=r"fractional_max_pool3d: expected a 4-D or 5-D"):
        F.fractional_max_pool3d(tt(randn(4, 4)), 2, output_size=2)

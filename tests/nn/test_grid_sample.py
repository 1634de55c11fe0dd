"""F.affine_grid and F.grid_sample vs PyTorch: every mode, padding mode and align_corners,
4-D and 5-D, gradients of the input, grid and theta; float64 gradchecks; errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch.nn.functional as TF

from tessera import nn
from tessera.testing import gradcheck
from harness import compare_fn, randn, rng, tt

F = nn.functional


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 4, 2), (1, 2, 1, 3)])
def test_affine_grid(align_corners: bool, size) -> None:
    k = len(size) - 2
    theta = randn(size[0], k, k + 1)
    compare_fn(lambda th: F.affine_grid(th, size, align_corners),
               lambda th: TF.affine_grid(th, size, align_corners), theta)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_4d(mode: str, padding_mode: str, align_corners: bool) -> None:
    x = randn(2, 3, 5, 6)
    grid = rng.uniform(-1.6, 1.6, (2, 4, 7, 2)).astype(np.float32)  # some points outside
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    # nearest has no grid gradient (PyTorch returns zeros); compare the input gradient only
    # bicubic grid gradients cancel terms of size ~10: float32 leaves ~1e-5 absolute error
    compare_fn(lambda a, g: F.grid_sample(a, g, **kw), lambda a, g: TF.grid_sample(a, g, **kw),
               x, grid, rtol=1e-4, atol=5e-5 if mode == "bicubic" else 1e-5,
               grad=[0] if mode == "nearest" else None)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_5d(mode: str, padding_mode: str, align_corners: bool) -> None:
    x = randn(2, 2, 3, 4, 5)
    grid = rng.uniform(-1.4, 1.4, (2, 2, 3, 4, 3)).astype(np.float32)
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    compare_fn(lambda a, g: F.grid_sample(a, g, **kw), lambda a, g: TF.grid_sample(a, g, **kw),
               x, grid, rtol=1e-4, atol=1e-5, grad=[0] if mode == "nearest" else None)


def test_spatial_transformer_roundtrip_and_gradcheck() -> None:
    # identity theta reproduces the input; gradients flow to theta through the grid
    x = randn(2, 3, 4, 5)
    theta = np.tile(np.array([[1.0, 0, 0], [0, 1.0, 0]], np.float32), (2, 1, 1))
    y = F.grid_sample(tt(x), F.affine_grid(tt(theta), x.shape, False), align_corners=False)
    np.testing.assert_allclose(y.numpy(), x, rtol=1e-5, atol=1e-5)
    compare_fn(lambda a, th: F.grid_sample(a, F.affine_grid(th, (2, 3, 6, 3), True),
                                           align_corners=True),
               lambda a, th: TF.grid_sample(a, TF.affine_grid(th, (2, 3, 6, 3), True),
                                            align_corners=True),
               x, theta + randn(2, 2, 3) * 0.2, rtol=1e-4, atol=1e-5)
    xs = tt(randn(1, 2, 3, 4, dtype=np.float64), requires_grad=True)
    gs = tt(rng.uniform(-0.9, 0.9, (1, 2, 3, 2)), requires_grad=True)
    for mode in ("bilinear", "bicubic"):
        for pm in ("zeros", "border", "reflection"):
            assert gradcheck(lambda a, g: F.grid_sample(a, g, mode=mode, padding_mode=pm,
                                                        align_corners=False), (xs, gs))


def test_grid_sample_errors() -> None:
    x = tt(randn(1, 2, 3, 4))
    with pytest.raises(ValueError, match="grid_sample: mode must be"):
        F.grid_sample(x, tt(randn(1, 2, 2, 2)), mode="area")
    with pytest.raises(ValueError, match="grid_sample: padding_mode must be"):
        F.grid_sample(x, tt(randn(1, 2, 2, 2)), padding_mode="circular")
    with pytest.raises(ValueError, match=r"grid_sample: expected input .* got \(1, 2, 3, 4\) and "
                                         r"\(1, 2, 2, 3\)"):
        F.grid_sample(x, tt(randn(1, 2, 2, 3)))
    with pytest.raises(ValueError, match="bicubic"):
        F.grid_sample(tt(randn(1, 1, 2, 2, 2)), tt(randn(1, 1, 1, 1, 3)), mode="bicubic")
    with pytest.raises(ValueError, match=r"affine_grid: expected theta of shape \(2, 2, 3\)"):
        F.affine_grid(tt(randn(2, 3, 4)), (2, 1, 3, 3))
    with pytest.raises(ValueError, match="affine_grid: size must have 4 or 5"):
        F.affine_grid(tt(randn(2, 2, 3)), (2, 3, 3))


# ---- the C++ ops (csrc/ops/nn/grid_sample.cpp) against torch: float64 gradients of the input
# and the grid to second order, empty batches, non-contiguous layouts, signatures, errors
import torch  # noqa: E402

import tessera as ts  # noqa: E402
from harness import close, same_as_torch  # noqa: E402


@pytest.mark.cpu_only  # in device mode the PyTorch reference raises (grid_sampler_2d_backward: no derivative)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_float64_double_backward_vs_torch(mode: str, padding_mode: str) -> None:
    x = randn(2, 2, 4, 5, dtype=np.float64)
    grid = rng.uniform(-1.3, 1.3, (2, 3, 2, 2))
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=False)
    xs, gs = tt(x, requires_grad=True), tt(grid, requires_grad=True)
    xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(grid, requires_grad=True)
    ys, yt = F.grid_sample(xs, gs, **kw), TF.grid_sample(xt, gt, **kw)
    close(ys, yt, 1e-12, 1e-12)
    dxs = ts.autograd.grad((ys ** 2).sum(), xs, create_graph=True)[0]
    dxt = torch.autograd.grad((yt ** 2).sum(), xt, create_graph=True)[0]
    close(dxs, dxt, 1e-10, 1e-10)
    close(ts.autograd.grad(dxs.sum(), xs)[0], torch.autograd.grad(dxt.sum(), xt)[0], 1e-10, 1e-10)


@pytest.mark.parametrize("layout", ["channels_last", "transposed"])
def test_grid_sample_noncontiguous_and_empty(layout: str) -> None:
    x = randn(2, 3, 5, 6)
    grid = rng.uniform(-1.2, 1.2, (2, 6, 4, 2)).astype(np.float32)
    xt, gt = torch.tensor(x), torch.tensor(grid)
    xs, gs = tt(x), tt(grid)
    if layout == "channels_last":
        xt = xt.contiguous(memory_format=torch.channels_last)
        xs = xs.to(memory_format=ts.channels_last)
    else:
        xt, xs, gt, gs = xt.transpose(2, 3), xs.transpose(2, 3), gt.transpose(1, 2), gs.transpose(1, 2)
    for mode in ("bilinear", "nearest", "bicubic"):
        close(F.grid_sample(xs, gs, mode=mode, align_corners=True),
              TF.grid_sample(xt, gt, mode=mode, align_corners=True), 1e-5, 1e-5)
    e = randn(0, 3, 5, 6)
    eg = np.zeros((0, 2, 2, 2), np.float32)
    close(F.grid_sample(tt(e), tt(eg), align_corners=False),
          TF.grid_sample(torch.tensor(e), torch.tensor(eg), align_corners=False), 0, 0)
    # an empty batch in affine_grid's size: ValueError, as torch's (any size <= 0)
    same_as_torch(lambda m: m.nn.functional.affine_grid(
        (ts.zeros if m is ts else torch.zeros)((0, 2, 3)), (0, 1, 3, 4), False))


def test_grid_sample_signatures_and_errors_as_torch() -> None:
    import inspect
    assert list(inspect.signature(F.grid_sample).parameters) == \
        list(inspect.signature(TF.grid_sample).parameters)
    assert list(inspect.signature(F.affine_grid).parameters) == \
        list(inspect.signature(TF.affine_grid).parameters)
    x, g = randn(1, 2, 4, 4), rng.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32)

    def t(m):
        return m.asarray if m is ts else m.tensor
    for kw in (dict(mode="foo"), dict(padding_mode="foo")):
        same_as_torch(lambda m: m.nn.functional.grid_sample(t(m)(x), t(m)(g), **kw))
    same_as_torch(lambda m: m.nn.functional.grid_sample(t(m)(x), t(m)(np.ones((2, 3, 3, 2),
                                                                          np.float32))))
    same_as_torch(lambda m: m.nn.functional.grid_sample(t(m)(randn(1, 1, 2, 2, 2)),
                                                        t(m)(randn(1, 1, 1, 1, 3)),
                                                        mode="bicubic"))
    for th, size in ((randn(1, 2, 4), (1, 1, 2, 2)), (randn(1, 2, 3), (1, 1, 0, 2))):
        same_as_torch(lambda m: m.nn.functional.affine_grid(t(m)(th), size, False))
    with pytest.raises(TypeError, match="affine_grid: size must be an int"):
        F.affine_grid(tt(randn(1, 2, 3)), (1, 1, 2.5, 2))

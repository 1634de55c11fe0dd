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

"""The CPU's Winograd F(2x2, 3x3) convolutions (cpu/conv_winograd.cpp): 3x3 stride-1 2-D
convolutions with at least 16 input and output channels and an output of at least 4x4 take
that path. Forward, input and weight gradients against PyTorch, float64 gradchecks, and the
geometries next to it (stride 2, dilation, groups, few channels) that stay on im2col."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
import tessera.nn.functional as F
from tessera.testing import gradcheck, gradgradcheck


def run_both(x: np.ndarray, w: np.ndarray, b, **kw):
    """(tessera y, gx, gw, gb), (torch ...) for conv2d(x, w, b, **kw) and a random gy."""
    rng = np.random.default_rng(1)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tb = None if b is None else torch.tensor(b, requires_grad=True)
    ty = TF.conv2d(tx, tw, tb, **kw)
    gy = rng.standard_normal(tuple(ty.shape)).astype(x.dtype)
    ty.backward(torch.tensor(gy))
    sx, sw = ts.tensor(x, requires_grad=True), ts.tensor(w, requires_grad=True)
    sb = None if b is None else ts.tensor(b, requires_grad=True)
    sy = F.conv2d(sx, sw, sb, **kw)
    sy.backward(ts.tensor(gy))
    got = [sy.numpy(), sx.grad.numpy(), sw.grad.numpy()] + ([] if b is None else [sb.grad.numpy()])
    want = [ty.detach().numpy(), tx.grad.numpy(), tw.grad.numpy()] + (
        [] if b is None else [tb.grad.numpy()])
    return got, want


def assert_close(got, want, dtype) -> None:
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for g, w in zip(got, want):
        assert g.shape == w.shape
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=0, atol=tol * scale * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n,c,o,h,w,p", [
    (2, 16, 16, 4, 4, 1),     # the smallest that takes the path: one block of 2x2 tiles
    (3, 32, 16, 7, 9, 1),     # odd sizes: partial tiles at the bottom and right
    (2, 16, 24, 6, 5, 0),     # no padding
    (1, 16, 20, 5, 6, 2),     # padding 2 (output larger than the input)
    (2, 17, 33, 8, 8, (1, 0)),  # per-dim padding, channel counts off the vector width
    (4, 64, 64, 16, 16, 1),   # several images per block
])
def test_winograd_matches_torch(dtype, n, c, o, h, w, p) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    wt = rng.standard_normal((o, c, 3, 3)).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    got, want = run_both(x, wt, b, padding=p)
    assert_close(got, want, dtype)


def test_winograd_many_images_and_blocks() -> None:
    # 24 images of 8x8, 64 -> 128 channels: three blocks, so the weight gradient accumulates
    # across blocks in the GEMMs
    rng = np.random.default_rng(2)
    x = rng.standard_normal((24, 64, 8, 8)).astype(np.float32)
    w = (rng.standard_normal((128, 64, 3, 3)) * 0.1).astype(np.float32)
    got, want = run_both(x, w, None, padding=1)
    assert_close(got, want, np.float32)


def test_winograd_noncontiguous_and_channels_last() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 8, 8, 32)).astype(np.float32)
    w = rng.standard_normal((16, 32, 3, 3)).astype(np.float32)
    sx = ts.tensor(x).permute(0, 3, 1, 2)  # (2, 32, 8, 8), not contiguous
    want = TF.conv2d(torch.tensor(x).permute(0, 3, 1, 2), torch.tensor(w), padding=1)
    np.testing.assert_allclose(F.conv2d(sx, ts.tensor(w), padding=1).numpy(), want.numpy(),
                               atol=1e-4, rtol=1e-5)
    scl = ts.tensor(np.ascontiguousarray(x.transpose(0, 3, 1, 2))).contiguous(
        memory_format=ts.channels_last)
    y = F.conv2d(scl, ts.tensor(w), padding=1)
    assert y.is_contiguous(memory_format=ts.channels_last)
    np.testing.assert_allclose(y.numpy(), want.numpy(), atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1), dict(dilation=2, padding=2),
                                dict(groups=2, padding=1), dict(padding=3)])
def test_neighbouring_geometries_stay_exact(kw) -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 32, 9, 9)).astype(np.float64)
    w = rng.standard_normal((32, 32 // kw.get("groups", 1), 3, 3)).astype(np.float64)
    got, want = run_both(x, w, None, **kw)
    assert_close(got, want, np.float64)


def test_winograd_gradcheck_float64() -> None:
    rng = np.random.default_rng(5)
    x = ts.tensor(rng.standard_normal((1, 16, 5, 4)), requires_grad=True)
    w = ts.tensor(rng.standard_normal((16, 16, 3, 3)) * 0.2, requires_grad=True)
    b = ts.tensor(rng.standard_normal(16), requires_grad=True)
    assert gradcheck(lambda a, c, d: F.conv2d(a, c, d, padding=1), (x, w, b))
    # second order: the gradients are the other two ops, on the same path
    xs = ts.tensor(rng.standard_normal((1, 16, 4, 4)), requires_grad=True)
    assert gradgradcheck(lambda a, c: F.conv2d(a, c, padding=1), (xs, w))


def test_winograd_float16_and_bfloat16() -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 16, 6, 6)).astype(np.float32)
    w = (rng.standard_normal((16, 16, 3, 3)) * 0.1).astype(np.float32)
    want = TF.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    for dt in (ts.float16, ts.bfloat16):
        y = F.conv2d(ts.tensor(x).astype(dt), ts.tensor(w).astype(dt), padding=1)
        assert y.dtype == dt
        np.testing.assert_allclose(y.astype(ts.float32).numpy(), want, atol=0.1, rtol=0.05)

"""The native grid_sample kernels (Note [Native grid sampling], csrc/cpu/grid_sample_kernels.cpp)
against torch: hypothesis over batch, channels, input and output sizes (4-D and 5-D), every
mode, padding mode and align_corners, grids reaching beyond [-1, 1]; float64 values and
gradients of the input and the grid; finite differences; the clip bounds' zero gradient;
double backward through the composite fallback; far coordinates; 16-bit inputs; threads."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
from harness import close, compare_grads, randn, rng, tt
from tessera.testing import gradcheck

F = ts.nn.functional
MODES2 = ["bilinear", "nearest", "bicubic"]
PADS = ["zeros", "border", "reflection"]


def _kw(mode: str, pad: str, ac: bool) -> dict:
    return dict(mode=mode, padding_mode=pad, align_corners=ac)


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 4), k=st.sampled_from([2, 3]),
       sizes=st.lists(st.integers(1, 6), min_size=3, max_size=3),
       out=st.lists(st.integers(1, 5), min_size=3, max_size=3),
       mode=st.sampled_from(MODES2), pad=st.sampled_from(PADS), ac=st.booleans(),
       reach=st.sampled_from([0.9, 1.3, 3.0]), seed=st.integers(0, 2**31 - 1))
def test_grid_sample_matches_torch_float64(n, c, k, sizes, out, mode, pad, ac, reach, seed) -> None:
    if k == 3 and mode == "bicubic":
        mode = "bilinear"
    g = np.random.default_rng(seed)
    x = g.standard_normal((n, c, *sizes[:k]))
    grid = g.uniform(-reach, reach, (n, *out[:k], k))
    kw = _kw(mode, pad, ac)
    # values, then the gradients of the input and the grid for one random cotangent
    compare_grads(lambda a, b: F.grid_sample(a, b, **kw), lambda a, b: TF.grid_sample(a, b, **kw),
                  [x, grid], rtol=1e-9, generator=g)


@settings(max_examples=40, deadline=None)
@given(k=st.sampled_from([2, 3]), mode=st.sampled_from(MODES2), pad=st.sampled_from(PADS),
       ac=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_grid_sample_float32_values_and_grads(k, mode, pad, ac, seed) -> None:
    if k == 3 and mode == "bicubic":
        mode = "nearest"
    g = np.random.default_rng(seed)
    x = g.standard_normal((2, 3, *([5] * k))).astype(np.float32)
    grid = g.uniform(-1.4, 1.4, (2, *([4] * k), k)).astype(np.float32)
    kw = _kw(mode, pad, ac)
    xs, gs = tt(x, requires_grad=True), tt(grid, requires_grad=True)
    xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(grid, requires_grad=True)
    ys, yt = F.grid_sample(xs, gs, **kw), TF.grid_sample(xt, gt, **kw)
    close(ys, yt, 1e-5, 1e-5)
    cot = g.standard_normal(tuple(yt.shape)).astype(np.float32)
    ys.backward(tt(cot))
    yt.backward(torch.tensor(cot))
    close(xs.grad, xt.grad, 1e-5, 1e-5)
    close(gs.grad, gt.grad, 1e-4, 5e-4 if mode == "bicubic" else 1e-4)
    assert ys.grad_fn.name() == f"GridSampler{k}DBackward0"


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("ac", [False, True])
def test_grid_sample_finite_differences(k: int, pad: str, ac: bool) -> None:
    x = tt(randn(1, 2, *([3] * k), dtype=np.float64), requires_grad=True)
    # inside the image, off the pixel lines, so the sampled map is smooth around each point
    grid = tt(rng.uniform(-0.85, 0.85, (1, *([2] * k), k)), requires_grad=True)
    modes = ["bilinear", "bicubic"] if k == 2 else ["bilinear"]
    for mode in modes:
        assert gradcheck(lambda a, b: F.grid_sample(a, b, **_kw(mode, pad, ac)), (x, grid))


@pytest.mark.parametrize("k", [2, 3])
def test_grid_sample_clip_bounds_pass_no_grid_gradient(k: int) -> None:
    # torch's clip_coordinates_set_grad: a coordinate on (or beyond) a border bound has a zero
    # gradient (the composite's clip passed it); reflection's sign flips past the edge
    x = randn(1, 2, *([4] * k), dtype=np.float64)
    pts = np.array([-1.0, 1.0, -1.2, 1.3, 0.2, -2.7, 3.1, 0.0])
    grid = np.stack(np.meshgrid(*([pts] * k), indexing="ij"), -1)[None]
    for pad in PADS:
        for ac in (False, True):
            for mode in (["bilinear", "bicubic"] if k == 2 else ["bilinear"]):
                kw = _kw(mode, pad, ac)
                compare_grads(lambda a, b: F.grid_sample(a, b, **kw),
                              lambda a, b: TF.grid_sample(a, b, **kw), [x, grid], rtol=1e-9)


@pytest.mark.cpu_only  # torch's CUDA grid_sampler has no double backward
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("mode", MODES2)
def test_grid_sample_double_backward_vs_torch(k: int, mode: str) -> None:
    if k == 3 and mode == "bicubic":
        pytest.skip("bicubic is 2-D only")
    x = randn(2, 2, *([4] * k), dtype=np.float64)
    grid = rng.uniform(-1.2, 1.2, (2, *([3] * k), k))
    kw = _kw(mode, "reflection", True)
    xs, gs = tt(x, requires_grad=True), tt(grid, requires_grad=True)
    xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(grid, requires_grad=True)
    ys, yt = F.grid_sample(xs, gs, **kw), TF.grid_sample(xt, gt, **kw)
    dxs, dgs = ts.autograd.grad((ys ** 2).sum(), (xs, gs), create_graph=True)
    dxt, dgt = torch.autograd.grad((yt ** 2).sum(), (xt, gt), create_graph=True)
    close(dxs, dxt, 1e-10, 1e-10)
    close(dgs, dgt, 1e-9, 1e-9)
    hs = ts.autograd.grad((dxs.sum() + (dgs * dgs).sum()), (xs, gs), allow_unused=True)
    ht = torch.autograd.grad((dxt.sum() + (dgt * dgt).sum()), (xt, gt), allow_unused=True)
    for a, b in zip(hs, ht):
        if b is None:
            assert a is None or not np.any(a.numpy())
        else:
            close(a, b, 1e-9, 1e-9)


# (torch has no double backward of grid_sample on CUDA: the reference is the CPU)
@pytest.mark.cpu_only
def test_grid_sample_double_backward_of_a_non_leaf_input() -> None:
    # the nested backward under create_graph stops at the saved (non-leaf) input and grid
    w = tt(randn(1, 2, 3, 4, dtype=np.float64), requires_grad=True)
    th = tt(rng.uniform(-1, 1, (1, 2, 2, 2)), requires_grad=True)
    wt, tht = torch.tensor(w.numpy(), requires_grad=True), torch.tensor(th.numpy(), requires_grad=True)
    ys = F.grid_sample(w * 2.0, th * 0.9, align_corners=False)
    yt = TF.grid_sample(wt * 2.0, tht * 0.9, align_corners=False)
    dws = ts.autograd.grad((ys ** 3).sum(), w, create_graph=True)[0]
    dwt = torch.autograd.grad((yt ** 3).sum(), wt, create_graph=True)[0]
    close(dws, dwt, 1e-10, 1e-10)
    close(ts.autograd.grad(dws.sum(), th)[0], torch.autograd.grad(dwt.sum(), tht)[0], 1e-9, 1e-9)


@pytest.mark.parametrize("k", [2, 3])
def test_grid_sample_far_coordinates(k: int) -> None:
    # coordinates far outside (no overflowing index casts): zeros padding samples nothing,
    # border the edge, reflection somewhere inside; as torch
    x = randn(1, 2, *([3] * k), dtype=np.float64)
    grid = rng.choice([-1e12, 1e12, -3e5, 4e7, 0.5], (1, *([3] * k), k))
    for mode in (["bilinear", "nearest", "bicubic"] if k == 2 else ["bilinear", "nearest"]):
        for pad in ("zeros", "border"):
            kw = _kw(mode, pad, False)
            close(F.grid_sample(tt(x), tt(grid), **kw),
                  TF.grid_sample(torch.tensor(x), torch.tensor(grid), **kw), 1e-12, 1e-12)
    y = F.grid_sample(tt(x), tt(grid), padding_mode="reflection", align_corners=True)
    assert np.all(np.isfinite(y.numpy()))


@pytest.mark.cpu_only
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_grid_sample_16_bit_inputs_on_the_cpu(dtype: str) -> None:
    x, grid = randn(2, 3, 5, 5), rng.uniform(-1.1, 1.1, (2, 3, 4, 2)).astype(np.float32)
    xs = tt(x).astype(getattr(ts, dtype)).requires_grad_(True)
    gs = tt(grid).astype(getattr(ts, dtype)).requires_grad_(True)
    y = F.grid_sample(xs, gs, align_corners=False)
    assert y.dtype == getattr(ts, dtype)
    want = F.grid_sample(xs.astype(ts.float32), gs.astype(ts.float32), align_corners=False)
    close(y.astype(ts.float32), want.numpy().astype(np.float32), 1e-2, 1e-2)
    y.sum().backward()
    assert xs.grad.dtype == xs.dtype and gs.grad.dtype == gs.dtype


@pytest.mark.parametrize("k", [2, 3])
def test_grid_sample_noncontiguous_and_input_only_gradients(k: int) -> None:
    x = randn(2, 3, *([6] * k), dtype=np.float64)
    grid = rng.uniform(-1.2, 1.2, (2, *([5] * k), k))
    xt, gt = torch.tensor(x).transpose(-1, -2), torch.tensor(grid).transpose(1, 2)
    xs, gs = tt(x).transpose(-1, -2), tt(grid).transpose(1, 2)
    xs.requires_grad_(True)
    xt.requires_grad_(True)
    ys, yt = F.grid_sample(xs, gs, align_corners=True), TF.grid_sample(xt, gt, align_corners=True)
    close(ys, yt, 1e-12, 1e-12)
    ys.sum().backward()
    yt.sum().backward()
    close(xs.grad, xt.grad, 1e-12, 1e-12)
    # only the grid requires grad
    gs2 = tt(grid, requires_grad=True)
    gt2 = torch.tensor(grid, requires_grad=True)
    F.grid_sample(tt(x), gs2, mode="bilinear", align_corners=False).sum().backward()
    TF.grid_sample(torch.tensor(x), gt2, mode="bilinear", align_corners=False).sum().backward()
    close(gs2.grad, gt2.grad, 1e-10, 1e-10)


@pytest.mark.cpu_only
def test_grid_sample_results_do_not_depend_on_threads() -> None:
    x = tt(randn(4, 8, 24, 24), requires_grad=True)
    grid = tt(rng.uniform(-1.2, 1.2, (4, 40, 40, 2)).astype(np.float32), requires_grad=True)
    before = ts.get_num_threads()
    outs = []
    try:
        for t in (1, 2):
            ts.set_num_threads(t)
            x.grad = grid.grad = None
            y = F.grid_sample(x, grid, mode="bicubic", padding_mode="reflection", align_corners=False)
            (y * y).sum().backward()
            outs.append((y.numpy(), x.grad.numpy(), grid.grad.numpy()))
    finally:
        ts.set_num_threads(before)
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_grid_sample_grid_of_another_dtype_gets_its_gradient() -> None:
    # the grid is cast to the input's dtype by a recorded cast (it used to be an unrecorded
    # one, which cut the grid's gradient off)
    x = randn(1, 2, 4, 4)
    grid = rng.uniform(-1, 1, (1, 3, 3, 2))
    gs = tt(grid, requires_grad=True)
    F.grid_sample(tt(x), gs, align_corners=False).sum().backward()
    gt = torch.tensor(grid.astype(np.float32), requires_grad=True)
    TF.grid_sample(torch.tensor(x), gt, align_corners=False).sum().backward()
    assert gs.grad.dtype == ts.float64
    close(gs.grad, gt.grad.double(), 1e-5, 1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grid_sample_nearest_rounds_half_to_even(dtype) -> None:
    # align_corners=True, W=5: position = 2 (g + 1), so g = v / 2 - 1 samples at v exactly
    v = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997, 2.5000002, -0.0, 1e20, -1e20])
    x = np.arange(1.0, 6.0)[None, None, None, :].astype(dtype)
    grid = np.stack([v / 2.0 - 1.0, np.zeros_like(v)], -1)[None, None].astype(dtype)
    for pad in PADS:
        kw = _kw("nearest", pad, True)
        close(F.grid_sample(tt(x), tt(grid), **kw),
              TF.grid_sample(torch.tensor(x), torch.tensor(grid), **kw), 0, 0)

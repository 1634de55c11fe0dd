"""max_unpool{1,2,3}d and lp_pool{1,2,3}d as C++ ops (ops/pool.h, cpu/pool_kernels.cpp):
values and gradients against PyTorch, float64 gradchecks (first and second order), every
dtype for unpooling, and the errors (bad shapes, out-of-range indices, never a write out of
bounds)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
import tessera.nn.functional as F
from tessera.testing import gradcheck, gradgradcheck


def pooled(nsp: int, shape, k, s, p, seed: int = 0, dtype=np.float32):
    """(x values, indices) of torch's max_pool over a random input of `shape`."""
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal(shape).astype(dtype))
    y, i = getattr(TF, f"max_pool{nsp}d")(x, k, s, p, return_indices=True)
    return y.numpy(), i.numpy()


@pytest.mark.parametrize("nsp,shape,k,s,p,osz", [
    (1, (2, 3, 9), 2, None, 0, None),
    (1, (3, 10), 3, 2, 1, [10]),               # unbatched, output_size restores the size
    (2, (2, 3, 7, 6), 2, None, 0, None),
    (2, (2, 3, 7, 6), 2, None, 0, (7, 6)),     # odd input: output_size restores it
    (2, (1, 2, 8, 8), 3, 2, 1, [1, 2, 8, 8]),  # overlapping windows, repeated indices
    (2, (2, 5, 5), (2, 3), (1, 2), 0, None),   # unbatched, per-dim geometry
    (3, (1, 2, 4, 5, 6), 2, None, 0, (4, 5, 6)),
    (3, (2, 2, 5, 4, 4), (2, 2, 1), (2, 1, 1), 0, (5, 4, 4)),
])
def test_max_unpool_matches_torch(nsp, shape, k, s, p, osz) -> None:
    y, idx = pooled(nsp, shape, k, s, p)
    fn = f"max_unpool{nsp}d"
    want = getattr(TF, fn)(torch.tensor(y, requires_grad=True), torch.tensor(idx), k, s, p, osz)
    sy = ts.tensor(y, requires_grad=True)
    got = getattr(F, fn)(sy, ts.tensor(idx), k, s, p, osz)
    np.testing.assert_array_equal(got.numpy(), want.detach().numpy())
    g = np.random.default_rng(1).standard_normal(tuple(want.shape)).astype(np.float32)
    ty = torch.tensor(y, requires_grad=True)
    getattr(TF, fn)(ty, torch.tensor(idx), k, s, p, osz).backward(torch.tensor(g))
    got.backward(ts.tensor(g))
    np.testing.assert_array_equal(sy.grad.numpy(), ty.grad.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int32", "int64", "uint8",
                                   "bool", "complex64"])
def test_max_unpool_any_dtype(dtype) -> None:
    # PyTorch unpools floating types only; the values are copied, so tessera takes any dtype
    # (what its former composition through scatter did)
    idx = np.array([[[0, 3, 5]]], dtype=np.int64)
    vals = np.array([[[1, 2, 3]]])
    got = F.max_unpool1d(ts.tensor(vals).astype(getattr(ts, dtype)), ts.tensor(idx), 2)
    assert got.dtype == getattr(ts, dtype)
    want = np.zeros((1, 1, 6))
    want[0, 0, [0, 3, 5]] = [1, 2, 3]
    np.testing.assert_array_equal(got.astype(ts.float64).numpy(), want.astype(
        np.float64 if dtype != "bool" else bool).astype(np.float64))
    if dtype.startswith(("float", "bfloat")):
        tw = TF.max_unpool1d(torch.tensor(vals).to(getattr(torch, dtype)), torch.tensor(idx), 2)
        np.testing.assert_array_equal(got.astype(ts.float64).numpy(),
                                      tw.to(torch.float64).numpy())


def test_max_unpool_int32_indices_and_noncontiguous() -> None:
    y, idx = pooled(2, (2, 3, 6, 6), 2, None, 0)
    want = TF.max_unpool2d(torch.tensor(y), torch.tensor(idx), 2)
    got = F.max_unpool2d(ts.tensor(y), ts.tensor(idx.astype(np.int32)), 2)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # channels-first views of channels-last data
    yt = ts.tensor(np.ascontiguousarray(y.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    it = ts.tensor(np.ascontiguousarray(idx.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    np.testing.assert_array_equal(F.max_unpool2d(yt, it, 2).numpy(), want.numpy())


def test_max_unpool_empty() -> None:
    got = F.max_unpool2d(ts.zeros((0, 3, 2, 2)), ts.zeros((0, 3, 2, 2), dtype=ts.int64), 2)
    assert tuple(got.shape) == (0, 3, 4, 4)
    got = F.max_unpool2d(ts.zeros((1, 0, 2, 2)), ts.zeros((1, 0, 2, 2), dtype=ts.int64), 2)
    assert tuple(got.shape) == (1, 0, 4, 4)


def test_max_unpool_gradcheck_float64() -> None:
    y, idx = pooled(2, (1, 2, 4, 6), 2, None, 0, dtype=np.float64)
    x = ts.tensor(y, requires_grad=True)
    i = ts.tensor(idx)
    assert gradcheck(lambda a: F.max_unpool2d(a, i, 2), (x,))
    # the gradient is a gather; its own gradient the unpooling again
    g = ts.tensor(np.random.default_rng(2).standard_normal((1, 2, 4, 6)), requires_grad=True)
    (gx,) = ts.autograd.grad(F.max_unpool2d(x, i, 2), x, g, create_graph=True)
    (gg,) = ts.autograd.grad(gx.sum(), g)
    want = TF.max_unpool2d(torch.ones(1, 2, 2, 3, dtype=torch.float64), torch.tensor(idx), 2)
    np.testing.assert_array_equal(gg.numpy(), want.numpy())


@pytest.mark.parametrize("bad", [-1, 16, 1 << 40])
def test_max_unpool_rejects_out_of_range_indices(bad) -> None:
    idx = np.zeros((1, 2, 2, 2), dtype=np.int64)
    idx[0, 1, 1, 0] = bad
    with pytest.raises(IndexError, match="max_unpool2d: found an invalid max index"):
        F.max_unpool2d(ts.ones((1, 2, 2, 2)), ts.tensor(idx), 2)
    with pytest.raises(RuntimeError):  # PyTorch refuses them too
        TF.max_unpool2d(torch.ones(1, 2, 2, 2), torch.tensor(idx), 2)


def test_max_unpool_errors() -> None:
    x = ts.ones((1, 2, 2, 2))
    i = ts.zeros((1, 2, 2, 2), dtype=ts.int64)
    with pytest.raises(ValueError, match=r"max_unpool2d: .*same shape"):
        F.max_unpool2d(x, ts.zeros((1, 2, 2), dtype=ts.int64), 2)
    with pytest.raises(TypeError, match="max_unpool2d: expected integer indices"):
        F.max_unpool2d(x, ts.zeros((1, 2, 2, 2)), 2)
    with pytest.raises(ValueError, match="max_unpool2d: invalid output_size"):
        F.max_unpool2d(x, i, 2, output_size=(9, 9))
    with pytest.raises(ValueError, match="max_unpool2d: output_size should have 2"):
        F.max_unpool2d(x, i, 2, output_size=(4,))
    with pytest.raises(ValueError, match="max_unpool2d: expected a 3-D or 4-D input"):
        F.max_unpool2d(ts.ones((2, 2)), ts.zeros((2, 2), dtype=ts.int64), 2)
    with pytest.raises(ValueError, match="max_unpool1d: kernel_size .* must be positive"):
        F.max_unpool1d(ts.ones((1, 1, 2)), ts.zeros((1, 1, 2), dtype=ts.int64), 0)
    with pytest.raises(ValueError, match="max_unpool1d: .*too large"):
        F.max_unpool1d(ts.ones((1, 1, 2)), ts.zeros((1, 1, 2), dtype=ts.int64), 1 << 62,
                       stride=1 << 61)


@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, 0.5, 1.5])
@pytest.mark.parametrize("ceil_mode,k,s", [(False, 2, None), (True, 2, None), (True, 3, 2),
                                           (False, (3, 1, 2), 1)])
def test_lp_pool_matches_torch(nsp, p, ceil_mode, k, s) -> None:
    rng = np.random.default_rng(4)
    x = np.abs(rng.standard_normal((2, 3) + (5,) * nsp)).astype(np.float64) + 0.1
    if p in (1.0, 2.0, 3.0):
        x = rng.standard_normal((2, 3) + (5,) * nsp)  # signed input where the power allows
    x[..., :2] = 0.0  # all-zero windows: the gradient there is 0, not NaN
    kk = k if isinstance(k, int) else (k[-1] if nsp == 1 else k[-nsp:])  # torch's 1-D: an int
    fn = f"lp_pool{nsp}d"
    tx = torch.tensor(x, requires_grad=True)
    want = getattr(TF, fn)(tx, p, kk, s, ceil_mode)
    sx = ts.tensor(x, requires_grad=True)
    got = getattr(F, fn)(sx, p, kk, s, ceil_mode)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12,
                               equal_nan=True)
    g = rng.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(g))
    got.backward(ts.tensor(g))
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12,
                               equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, "float16", "bfloat16"])
def test_lp_pool_lower_precision(dtype) -> None:
    x = np.random.default_rng(5).standard_normal((2, 3, 6, 6)).astype(np.float32)
    want = TF.lp_pool2d(torch.tensor(x), 2.0, 2).numpy()
    sx = ts.tensor(x) if dtype is np.float32 else ts.tensor(x).astype(getattr(ts, dtype))
    got = F.lp_pool2d(sx, 2.0, 2)
    assert got.dtype == sx.dtype
    tol = 1e-6 if dtype is np.float32 else 2e-2
    np.testing.assert_allclose(got.astype(ts.float32).numpy(), want, rtol=tol, atol=tol)


def test_lp_pool_gradchecks_float64() -> None:
    rng = np.random.default_rng(6)
    x = ts.tensor(np.abs(rng.standard_normal((1, 2, 5, 4))) + 0.2, requires_grad=True)
    for p in (2.0, 1.5, 3.0):
        assert gradcheck(lambda a: F.lp_pool2d(a, p, 2, 1, True), (x,))
        assert gradgradcheck(lambda a: F.lp_pool2d(a, p, 2, 1, True), (x,))
    x1 = ts.tensor(np.abs(rng.standard_normal((2, 7))) + 0.2, requires_grad=True)
    assert gradgradcheck(lambda a: F.lp_pool1d(a, 3.0, 3, 2, True), (x1,))


def test_lp_pool_zero_windows_and_infinite_norms() -> None:
    sx = ts.zeros((1, 1, 4, 4), requires_grad=True)
    F.lp_pool2d(sx, 2.0, 2).sum().backward()
    assert (sx.grad.numpy() == 0).all()
    x = np.array([[[1.0, -3.0, 2.0, 0.5]]], dtype=np.float32)
    for p in (float("inf"), -float("inf")):
        np.testing.assert_array_equal(F.lp_pool1d(ts.tensor(x), p, 2).numpy(),
                                      TF.lp_pool1d(torch.tensor(x), p, 2).numpy())


def test_lp_pool_errors() -> None:
    with pytest.raises(ValueError, match="lp_pool2d: expected a 3-D or 4-D input"):
        F.lp_pool2d(ts.ones((4, 4)), 2.0, 2)
    with pytest.raises(TypeError, match="lp_pool2d: expected a floating-point input"):
        F.lp_pool2d(ts.ones((1, 4, 4), dtype=ts.int64), 2.0, 2)
    with pytest.raises(ValueError, match="lp_pool1d: kernel_size"):
        F.lp_pool1d(ts.ones((1, 1, 4)), 2.0, 0)
    with pytest.raises(ValueError, match="lp_pool2d: .*too small"):
        F.lp_pool2d(ts.ones((1, 1, 2, 2)), 2.0, 3)
    with pytest.raises(ValueError, match="lp_pool1d: norm_type must be a number"):
        F.lp_pool1d(ts.ones((1, 1, 4)), float("nan"), 2)

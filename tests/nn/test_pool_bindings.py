"""The adaptive pools, max_unpool and lp_pool as C++ bindings (csrc/python/bind_pool.cpp): one
definition each, PyTorch's signatures, values and float64 gradients against torch (odd window
splits, None sizes, empty batches, strided inputs), and the errors naming the op."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
import tessera.nn.functional as F
from tessera import _C
from harness import compare_grads, randn, to_np

NAMES = [f"{kind}{n}d{suffix}" for n in (1, 2, 3)
         for kind, suffix in (("adaptive_avg_pool", ""), ("adaptive_max_pool", ""),
                              ("adaptive_max_pool", "_with_indices"), ("max_unpool", ""),
                              ("lp_pool", ""))]


@pytest.mark.parametrize("name", NAMES)
def test_the_binding_is_the_function(name) -> None:
    assert getattr(F, name) is getattr(_C, name)
    params = list(inspect.signature(getattr(F, name)).parameters)
    want = {"adaptive_avg_pool": ["input", "output_size"],
            "adaptive_max_pool": ["input", "output_size", "return_indices"],
            "max_unpool": ["input", "indices", "kernel_size", "stride", "padding", "output_size"],
            "lp_pool": ["input", "norm_type", "kernel_size", "stride", "ceil_mode"]}
    assert params == want[name[:name.index("pool") + 4]]


@pytest.mark.parametrize("nsp,shape,out", [
    (1, (2, 3, 7), 3), (1, (3, 10), (4,)), (1, (2, 3, 5), 5), (1, (0, 3, 6), 2),
    (2, (2, 3, 7, 5), (3, 2)), (2, (3, 6, 6), 4), (2, (2, 2, 5, 9), (None, 4)),
    (3, (1, 2, 5, 4, 7), (2, 3, None)), (3, (2, 4, 4, 3), 2),
])
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pools_match_torch(nsp, shape, out, kind) -> None:
    name = f"adaptive_{kind}_pool{nsp}d"
    compare_grads(lambda x: getattr(F, name)(x, out), lambda x: getattr(TF, name)(x, out),
                  [randn(*shape)])
    if kind == "max":
        x = randn(*shape)
        got = getattr(F, name)(ts.asarray(x), out, return_indices=True)
        want = getattr(TF, name)(torch.tensor(x), out, return_indices=True)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(to_np(a), to_np(b))
        got_i = getattr(F, name + "_with_indices")(ts.asarray(x), out)
        np.testing.assert_array_equal(to_np(got_i[1]), to_np(want[1]))


@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pool_strided_input(kind) -> None:
    x = randn(2, 3, 9, 12)
    name = f"adaptive_{kind}_pool2d"
    got = getattr(F, name)(ts.asarray(x)[:, :, ::2, 1::3], (3, 2))
    want = getattr(TF, name)(torch.tensor(x)[:, :, ::2, 1::3], (3, 2))
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-6, atol=1e-6)
    got = getattr(F, name)(ts.asarray(x).permute(0, 1, 3, 2), 4)
    want = getattr(TF, name)(torch.tensor(x).permute(0, 1, 3, 2), 4)
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_adaptive_pool_dtypes(dtype) -> None:
    x = randn(2, 3, 6, 5)
    for name in ("adaptive_avg_pool2d", "adaptive_max_pool2d"):
        got = getattr(F, name)(ts.asarray(x).astype(getattr(ts, dtype)), (4, 3))
        want = getattr(TF, name)(torch.tensor(x).to(getattr(torch, dtype)), (4, 3))
        assert got.dtype == getattr(ts, dtype)
        np.testing.assert_allclose(to_np(got.astype(ts.float32)), want.float().numpy(),
                                   rtol=1e-2, atol=1e-2)


def test_adaptive_pool_errors_name_the_op() -> None:
    # torch: NotImplementedError for integer input; tessera's op a TypeError (a RuntimeError too)
    with pytest.raises(TypeError, match="adaptive_avg_pool2d.*floating"):
        F.adaptive_avg_pool2d(ts.arange(16).reshape(1, 4, 4), 2)
    with pytest.raises(RuntimeError, match="adaptive_max_pool1d"):
        F.adaptive_max_pool1d(ts.arange(8).reshape(1, 8), 2)
    with pytest.raises(ValueError, match=r"adaptive_avg_pool2d: output_size .* must have 2"):
        F.adaptive_avg_pool2d(ts.ones((1, 4, 4)), (1, 2, 3))
    with pytest.raises(ValueError, match="adaptive_max_pool3d: expected a 4-D or 5-D input"):
        F.adaptive_max_pool3d(ts.ones((4, 4)), 2)
    with pytest.raises(ValueError, match="adaptive_avg_pool1d"):
        F.adaptive_avg_pool1d(ts.ones((1, 4)), -1)
    with pytest.raises(TypeError, match="adaptive_avg_pool2d: output_size"):
        F.adaptive_avg_pool2d(ts.ones((1, 4, 4)), (2.5, 2))
    with pytest.raises(TypeError):
        F.adaptive_avg_pool2d(ts.ones((1, 4, 4)))


def test_max_unpool_and_lp_pool_keywords() -> None:
    x = randn(2, 3, 8, 8)
    y, i = TF.max_pool2d(torch.tensor(x), 2, return_indices=True)
    got = F.max_unpool2d(ts.asarray(y.numpy()), indices=ts.asarray(i.numpy()), kernel_size=2,
                         stride=[], padding=0, output_size=(8, 8))
    want = TF.max_unpool2d(y, i, kernel_size=2, output_size=(8, 8))
    np.testing.assert_array_equal(to_np(got), want.numpy())
    compare_grads(lambda a: F.lp_pool2d(a, norm_type=2, kernel_size=(2, 3), stride=None,
                                        ceil_mode=True),
                  lambda a: TF.lp_pool2d(a, norm_type=2, kernel_size=(2, 3), ceil_mode=True),
                  [np.abs(x) + 0.1])
    with pytest.raises(ValueError, match="max_unpool2d"):
        F.max_unpool2d(ts.asarray(y.numpy()), ts.asarray(i.numpy())[:, :1], 2)
    with pytest.raises(ValueError, match="lp_pool1d: expected a 2-D or 3-D input"):
        F.lp_pool1d(ts.ones((4,)), 2, 2)


def test_top_level_forms() -> None:
    x = randn(2, 3, 9)
    vals, idx = ts.adaptive_max_pool1d(ts.asarray(x), 4)
    tv, ti = torch.adaptive_max_pool1d(torch.tensor(x), 4)
    np.testing.assert_array_equal(to_np(vals), tv.numpy())
    np.testing.assert_array_equal(to_np(idx), ti.numpy())
    np.testing.assert_allclose(to_np(ts.adaptive_avg_pool1d(ts.asarray(x), 4)),
                               torch.adaptive_avg_pool1d(torch.tensor(x), 4).numpy(), rtol=1e-6)
    x4 = randn(1, 2, 5, 5)
    np.testing.assert_array_equal(to_np(ts.max_pool2d(ts.asarray(x4), 2, ())),
                                  torch.max_pool2d(torch.tensor(x4), 2, ()).numpy())
    got = ts.max_pool1d_with_indices(ts.asarray(x), 2)
    want = torch.max_pool1d_with_indices(torch.tensor(x), 2)
    np.testing.assert_array_equal(to_np(got[1]), want[1].numpy())
    assert ts.max_pool2d is F.max_pool2d and ts.avg_pool1d is F.avg_pool1d


@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 5, 6), {"kernel_size": (2, 3), "padding": 1, "stride": (1, 2)}),
    ((3, 5, 5), {"kernel_size": 3, "dilation": 2, "padding": (2, 1)}),
    ((0, 2, 4, 4), {"kernel_size": 2}),
    ((1, 1, 4, 4), {"kernel_size": [4, 1], "stride": [1, 3]}),
])
def test_unfold_fold_match_torch(shape, kw) -> None:
    assert F.unfold is _C.unfold and F.fold is _C.fold
    compare_grads(lambda x: F.unfold(x, **kw), lambda x: TF.unfold(x, **kw), [randn(*shape)])
    cols = TF.unfold(torch.tensor(randn(*shape)), **kw)
    osz = shape[-2:]
    compare_grads(lambda c: F.fold(c, osz, **kw), lambda c: TF.fold(c, osz, **kw),
                  [cols.numpy()])


def test_unfold_fold_second_order_strided_and_dtypes() -> None:
    from tessera.testing import gradgradcheck
    x = ts.asarray(randn(1, 2, 4, 5).astype(np.float64), requires_grad=True)
    assert gradgradcheck(lambda v: F.unfold(v, 2, padding=1) ** 2, (x,))
    c = ts.asarray(randn(1, 8, 6).astype(np.float64), requires_grad=True)
    assert gradgradcheck(lambda v: F.fold(v, (3, 4), 2) ** 2, (c,))
    big = randn(2, 3, 9, 10)
    got = F.unfold(ts.asarray(big)[:, :, ::2, 1::2], 2, stride=2)
    want = TF.unfold(torch.tensor(big)[:, :, ::2, 1::2], 2, stride=2)
    np.testing.assert_array_equal(to_np(got), want.numpy())
    for dt in ("float16", "bfloat16"):
        got = F.fold(F.unfold(ts.asarray(big).astype(getattr(ts, dt)), 3), (9, 10), 3)
        want = TF.fold(TF.unfold(torch.tensor(big).to(getattr(torch, dt)), 3), (9, 10), 3)
        assert got.dtype == getattr(ts, dt)
        np.testing.assert_allclose(to_np(got.astype(ts.float32)), want.float().numpy(),
                                   rtol=1e-2, atol=1e-2)
    # integers (torch: NotImplementedError) stay exact, in their dtype
    xi = ts.arange(2 * 16).reshape(2, 4, 4)
    got = F.unfold(xi, 2)
    assert got.dtype == ts.int64
    np.testing.assert_array_equal(
        to_np(got), TF.unfold(torch.arange(32.).reshape(2, 4, 4), 2).numpy().astype(np.int64))


def test_unfold_fold_errors_name_the_op() -> None:
    with pytest.raises(ValueError, match=r"unfold: kernel_size \(0, 2\).*must be positive"):
        F.unfold(ts.ones((1, 1, 4, 4)), (0, 2))
    with pytest.raises(ValueError, match="unfold: kernel_size must be an int or a pair"):
        F.unfold(ts.ones((1, 1, 4, 4)), (1, 2, 3))
    with pytest.raises(ValueError, match=r"fold: input of shape \(1, 7, 9\) does not match"):
        F.fold(ts.ones((1, 7, 9)), (4, 4), 2)
    with pytest.raises(TypeError):
        F.fold(ts.ones((1, 8, 9)), (4, 4))

"""The CPU window-maximum kernel of fractional max pooling against PyTorch: values and indices
with ties, -inf windows and several NaNs in a window (PyTorch keeps the first maximum and the
last NaN), float32/float64/16-bit inputs, 2-D and 3-D, and the gradient."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from harness import to_np, tt

F = ts.nn.functional
TF = torch.nn.functional


def _input(shape, dtype) -> np.ndarray:
    g = np.random.default_rng(7)
    x = np.round(g.standard_normal(shape) * 2)  # many ties
    flat = x.reshape(-1)
    flat[g.random(flat.size) < 0.1] = np.nan
    flat[g.random(flat.size) < 0.05] = -np.inf
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nsp,shape,k,out", [(2, (2, 3, 11, 9), 3, (5, 4)), (2, (3, 8, 8), 2, 4),
                                             (3, (2, 2, 7, 8, 9), 2, (3, 4, 5))])
def test_values_and_indices_match_torch(dtype, nsp, shape, k, out) -> None:
    x = _input(shape, dtype)
    batch = shape[:-nsp]
    samples = np.random.default_rng(8).random((1,) * (len(shape) == nsp + 1) + batch + (nsp,))
    f = getattr(F, f"fractional_max_pool{nsp}d")
    tf = getattr(TF, f"fractional_max_pool{nsp}d")
    y, i = f(tt(x), k, output_size=out, return_indices=True,
             _random_samples=tt(samples.astype(dtype)))
    yt, it = tf(torch.tensor(x), k, output_size=out, return_indices=True,
                _random_samples=torch.tensor(samples.astype(dtype)))
    np.testing.assert_array_equal(to_np(i), it.numpy())
    np.testing.assert_array_equal(to_np(y), yt.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_floats_pick_as_float32(dtype) -> None:
    # (PyTorch builds the 16-bit windows in 16-bit arithmetic, tessera in float32, as before
    # this kernel: the reference is tessera's float32 result on the rounded input)
    x = tt(np.random.default_rng(9).standard_normal((2, 3, 10, 10)).astype(np.float32))
    x16 = x.to(getattr(ts, dtype))
    s = tt(np.random.default_rng(10).random((2, 3, 2)).astype(np.float32))
    y, i = F.fractional_max_pool2d(x16, 3, output_size=5, return_indices=True,
                                   _random_samples=s.to(getattr(ts, dtype)))
    y32, i32 = F.fractional_max_pool2d(x16.to(ts.float32), 3, output_size=5, return_indices=True,
                                       _random_samples=s.to(getattr(ts, dtype)).to(ts.float32))
    np.testing.assert_array_equal(to_np(i), to_np(i32))
    np.testing.assert_array_equal(to_np(y.to(ts.float32)), to_np(y32))


def test_gradient_matches_torch() -> None:
    x = np.random.default_rng(11).standard_normal((2, 2, 6, 7, 8))
    s = np.random.default_rng(12).random((2, 2, 3))
    xs, xt = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    cot = np.random.default_rng(13).standard_normal((2, 2, 3, 4, 5))
    (F.fractional_max_pool3d(xs, 2, output_size=(3, 4, 5), _random_samples=tt(s)) * tt(cot)).sum().backward()
    (TF.fractional_max_pool3d(xt, 2, output_size=(3, 4, 5), _random_samples=torch.tensor(s))
     * torch.tensor(cot)).sum().backward()
    np.testing.assert_allclose(to_np(xs.grad), xt.grad.numpy(), rtol=1e-12, atol=1e-12)

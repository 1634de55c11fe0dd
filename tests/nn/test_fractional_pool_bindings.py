"""F.fractional_max_pool2d/3d (and the _with_indices forms) are the C++ op itself
(csrc/ops/nn/fractional_pool.h, bound in csrc/python/bind_fractional_pool.cpp): values, indices
and gradients against torch's for the same _random_samples (hypothesis over shapes, kernels,
output sizes / ratios, dtypes, layouts and empty batches), float64 gradcheck, and errors."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera import _C
from tessera.nn import functional as F
from harness import strided_views

NAMES = ["fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
         "fractional_max_pool3d_with_indices"]


@pytest.mark.parametrize("name", NAMES)
def test_is_the_binding(name: str) -> None:
    assert getattr(F, name) is getattr(_C, name)
    assert list(inspect.signature(getattr(F, name)).parameters) == \
        list(inspect.signature(getattr(TF, name[:21] + "_with_indices")).parameters)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from([2, 3]), st.sampled_from(["float32", "float64"]),
       st.booleans(), st.booleans())
def test_values_indices_and_gradients_match_torch(data, nsp: int, dtype: str, batched: bool,
                                                  by_ratio: bool) -> None:
    n = data.draw(st.integers(0, 2)) if batched else 1
    c = data.draw(st.integers(1, 3))
    k = tuple(data.draw(st.integers(1, 3)) for _ in range(nsp))
    slack = nsp == 3  # torch: output + kernel - 1 < input in 3-D, <= in 2-D
    in_sp = tuple(data.draw(st.integers(kk + slack, kk + 5)) for kk in k)
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    x = rng.standard_normal(((n,) if batched else ()) + (c,) + in_sp).astype(dtype)
    x = strided_views(data.draw, x)
    s = rng.uniform(0, 1, (n, c, nsp)).astype(dtype)
    if by_ratio:
        ratio = tuple(data.draw(st.floats(0.3, 1.0)) for _ in range(nsp))
        if any(int(i * r) <= 0 or int(i * r) + kk - 1 + slack > i
               for i, r, kk in zip(in_sp, ratio, k)):
            return
        kw = dict(output_ratio=ratio)
    else:
        kw = dict(output_size=tuple(data.draw(st.integers(1, i - kk + 1 - slack))
                                    for i, kk in zip(in_sp, k)))
    name = f"fractional_max_pool{nsp}d"
    xs = ts.asarray(x, requires_grad=True)
    xt = torch.tensor(np.ascontiguousarray(x), requires_grad=True)
    y, i = getattr(F, name)(xs, k, return_indices=True, _random_samples=ts.asarray(s), **kw)
    yt, it = getattr(TF, name)(xt, k, return_indices=True, _random_samples=torch.tensor(s), **kw)
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(i.numpy(), it.numpy())
    assert y.dtype.name == dtype and i.dtype.name == "int64"
    if yt.numel() == 0:
        return
    cot = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    (y * ts.asarray(cot)).sum().backward()
    (yt * torch.tensor(cot)).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("nsp", [2, 3])
def test_gradcheck_float64_and_with_indices_form(nsp: int) -> None:
    rng = np.random.default_rng(5)
    x = ts.asarray(rng.standard_normal((2, 2) + (6,) * nsp), requires_grad=True)
    # 3-D needs output + kernel - 1 < input (torch's bound); the Python version allowed ==
    with pytest.raises(ValueError, match="too large"):
        getattr(F, f"fractional_max_pool{nsp}d")(x, 2, output_size=6 if nsp == 2 else 5)
    s = ts.asarray(rng.uniform(0, 1, (2, 2, nsp)))
    f = getattr(F, f"fractional_max_pool{nsp}d")
    assert ts.autograd.gradcheck(lambda v: f(v, 2, output_size=3, _random_samples=s), (x,))
    y, i = getattr(F, f"fractional_max_pool{nsp}d_with_indices")(x, 2, output_size=3,
                                                                _random_samples=s)
    y2, i2 = f(x, 2, output_size=3, return_indices=True, _random_samples=s)
    np.testing.assert_array_equal(y.detach().numpy(), y2.detach().numpy())
    np.testing.assert_array_equal(i.numpy(), i2.numpy())


def test_random_windows_without_samples() -> None:
    ts.manual_seed(3)
    x = ts.asarray(np.random.default_rng(0).standard_normal((2, 3, 9, 9)).astype("float32"))
    y = F.fractional_max_pool2d(x, 2, output_ratio=0.5)
    assert tuple(y.shape) == (2, 3, 4, 4) and np.isin(y.numpy(), x.numpy()).all()


def test_errors_name_the_op() -> None:
    x = ts.zeros((1, 1, 4, 4))
    with pytest.raises(ValueError, match="fractional_max_pool2d: requires specifying either"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(ValueError, match=r"fractional_max_pool2d: output size \(3, 3\) with "
                                         r"kernel size \(3, 3\) is too large for input size "
                                         r"\(4, 4\)"):
        F.fractional_max_pool2d(x, 3, output_size=3)
    with pytest.raises(ValueError, match=r"_random_samples must have shape \(1, 1, 2\), got "
                                         r"\(1, 2, 2\)"):
        F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=ts.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match=r"fractional_max_pool3d: expected a 4-D or 5-D input, "
                                         r"got shape \(4, 4\)"):
        F.fractional_max_pool3d(ts.zeros((4, 4)), 2, output_size=2)
    with pytest.raises(TypeError, match="fractional_max_pool2d: expected a floating-point input, "
                                        "got int64"):
        F.fractional_max_pool2d(ts.zeros((1, 1, 4, 4), dtype=ts.int64), 2, output_size=2)
    with pytest.raises(ValueError, match="kernel_size must be an int or 2 ints"):
        F.fractional_max_pool2d(x, (2, 2, 2), output_size=2)

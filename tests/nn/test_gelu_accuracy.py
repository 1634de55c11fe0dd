"""Exact GELU in float32 (Note [Exact GELU in float32]): ulp errors of the forward and the
backward against a float64 reference built from math.erfc (PyTorch's float64 GELU,
0.5 x (1 + erf(x / sqrt 2)), cancels to 0 below x = -6, so it cannot serve in the tails),
over a dense grid of [-16, 16] and tiny magnitudes; the special values; the 16-bit floats."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import tessera as ts
from harness import tt

F = ts.nn.functional
FLT_MIN = float(np.finfo(np.float32).tiny)
_erfc = np.vectorize(math.erfc)


def _grid() -> np.ndarray:
    g = np.geomspace(1e-30, 16, 4001)
    return np.concatenate([np.linspace(-16, 16, 64001), g, -g]).astype(np.float32)


def _ulps(got: np.ndarray, want: np.ndarray, scale: np.ndarray, tiny: float) -> np.ndarray:
    """|got - want| in ulps of float32 at |scale|; where |scale| < tiny, in units of tiny / 8:
    beyond |x| = 13.2 the kernel flushes to zero (true values below 6e-39, and below 1e-37
    for the derivative)."""
    err = np.abs(got.astype(np.float64) - want)
    ulp = np.spacing(np.abs(scale).astype(np.float32)).astype(np.float64)
    return np.where(np.abs(scale) >= tiny, err / np.maximum(ulp, 2.0**-149), err / (tiny / 8))


def test_forward_and_backward_ulp_errors() -> None:
    x = _grid()
    xd = x.astype(np.float64)
    cdf = 0.5 * _erfc(-xd / math.sqrt(2))
    pdf = np.exp(-0.5 * xd * xd) / math.sqrt(2 * math.pi)
    xs = tt(x, requires_grad=True)
    y = F.gelu(xs)
    y.sum().backward()
    e = _ulps(np.asarray(y), xd * cdf, xd * cdf, FLT_MIN)
    assert e.max() <= 8, (e.max(), x[e.argmax()])
    # the derivative cdf + x pdf cancels near its zero (x = -0.75): ulps of the larger term
    dref = cdf + xd * pdf
    e = _ulps(np.asarray(xs.grad), dref, np.abs(cdf) + np.abs(xd * pdf), 1e-37)
    assert e.max() <= 8, (e.max(), x[e.argmax()])


def test_special_values_match_float64_formula() -> None:
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 13.0, -13.0, -13.3, -14.0, -30.0, 30.0],
                 np.float32)
    got = np.asarray(F.gelu(tt(x)))
    want = np.asarray(F.gelu(tt(x.astype(np.float64)))).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    ok = ~np.isnan(got)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-6, atol=FLT_MIN)
    xs = tt(x, requires_grad=True)
    F.gelu(xs).sum().backward()
    xq = torch.tensor(x, requires_grad=True)
    torch.nn.functional.gelu(xq).sum().backward()
    np.testing.assert_allclose(np.asarray(xs.grad), xq.grad.numpy(), rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("dtype,tdtype", [(ts.bfloat16, torch.bfloat16), (ts.float16, torch.float16)])
def test_16_bit_floats_round_the_float32_result(dtype, tdtype) -> None:
    x = np.linspace(-8, 8, 4001).astype(np.float32)
    got = np.asarray(F.gelu(tt(x).to(dtype)).to(ts.float32))
    xr = torch.tensor(x).to(tdtype).double().numpy()  # the 16-bit input, exactly
    ref = xr * 0.5 * _erfc(-xr / math.sqrt(2))
    want = torch.tensor(ref).to(tdtype).float().numpy()
    eps = float(torch.finfo(tdtype).eps)
    np.testing.assert_allclose(got, want, rtol=eps, atol=1e-30)

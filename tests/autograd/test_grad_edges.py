"""Gradients of C++ autograd formulas at their edge points, against PyTorch: clip/clamp at and
beyond its bounds (tensor and scalar bounds, crossed bounds, NaN/inf), std of constant data
and atan2 at the origin."""
from __future__ import annotations

import numpy as np
import pytest

import tessera as ts

torch = pytest.importorskip("torch")

XS = [-1.0, 0.0, 0.5, 1.0, 2.0, float("nan"), float("inf"), float("-inf")]
WEIGHTS = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]


def _clamp_grads(m, lo, hi, lo_tensor: bool, hi_tensor: bool):
    x = m.tensor(XS, dtype=m.float64, requires_grad=True)
    lo_ = m.tensor(lo, dtype=m.float64, requires_grad=True) if lo_tensor else lo
    hi_ = m.tensor(hi, dtype=m.float64, requires_grad=True) if hi_tensor else hi
    y = m.clamp(x, lo_, hi_)
    (y * m.tensor(WEIGHTS, dtype=m.float64)).sum().backward()
    out = [y.detach().tolist(), x.grad.tolist()]
    out += [b.grad.tolist() if t else None for b, t in ((lo_, lo_tensor), (hi_, hi_tensor))]
    return out


@pytest.mark.parametrize("lo,hi,lo_tensor,hi_tensor", [
    (0.0, 1.0, False, False), (0.0, None, False, False), (None, 1.0, False, False),
    (1.0, 0.0, False, False),  # crossed bounds: everything is hi
    ([0.0] * 8, [1.0] * 8, True, True),
    ([0.0, 0, 0, 2, 2, 0, 0, 0], [1.0] * 8, True, True),  # some crossed elementwise
    ([0.0] * 8, None, True, False), (None, [1.0] * 8, False, True),
    ([0.5], [0.7], True, True),  # broadcast bounds: their gradients sum
])
def test_clamp_gradient_matches_torch(lo, hi, lo_tensor, hi_tensor):
    want = _clamp_grads(torch, lo, hi, lo_tensor, hi_tensor)
    got = _clamp_grads(ts, lo, hi, lo_tensor, hi_tensor)
    for w, g in zip(want, got):
        if w is None:
            assert g is None
        else:
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), equal_nan=True)


def test_clamp_bounds_get_the_full_gradient_not_half():
    x = ts.asarray([0.0, 1.0], requires_grad=True)
    x.clamp(0, 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_clamp_double_backward_and_gradcheck():
    x = ts.asarray([-0.7, 0.2, 0.9, 1.6], dtype=ts.float64, requires_grad=True)
    lo = ts.asarray([0.0, 0.1, -1.0, 0.3], dtype=ts.float64, requires_grad=True)
    hi = ts.asarray([0.5, 0.8, 0.95, 1.0], dtype=ts.float64, requires_grad=True)
    assert ts.autograd.gradcheck(lambda a, b, c: ts.clip(a, b, c) ** 2, (x, lo, hi))
    assert ts.autograd.gradgradcheck(lambda a, b, c: ts.clip(a, b, c) ** 2, (x, lo, hi))


@pytest.mark.parametrize("data,dim", [([1.0, 1.0, 1.0], None), ([[1.0, 1.0], [1.0, 2.0]], 1),
                                      ([[3.0, 3.0], [3.0, 3.0]], 0)])
def test_std_of_constant_data_has_zero_gradient(data, dim):
    grads = []
    for m in (torch, ts):
        x = m.tensor(data, dtype=m.float64, requires_grad=True)
        (x.std() if dim is None else x.std(dim)).sum().backward()
        grads.append(np.asarray(x.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0])
    assert np.isfinite(grads[1]).all()


def test_atan2_gradient_at_the_origin_is_zero():
    grads = []
    for m in (torch, ts):
        y = m.tensor([0.0, 1.0, 0.0], dtype=m.float64, requires_grad=True)
        x = m.tensor([0.0, 0.0, -2.0], dtype=m.float64, requires_grad=True)
        m.atan2(y, x).sum().backward()
        grads.append((y.grad.tolist(), x.grad.tolist()))
    assert grads[1] == grads[0]


@pytest.mark.parametrize("data", [[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]],
                                  [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]]])
def test_det_gradient_of_singular_matrices_matches_torch(data):
    grads = []
    for m in (torch, ts):
        a = m.tensor(data, dtype=m.float64, requires_grad=True)
        m.linalg.det(a).sum().backward()
        grads.append(np.asarray(a.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-12)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
@pytest.mark.parametrize("lo,hi", [(None, 1.5), (0.5, 2.5), (0.5, None), (0, 1), ("t", None)])
def test_clamp_promotes_integers_with_float_bounds_like_torch(dtype, lo, hi):
    data = np.array([0, 1, 2, 3], dtype=dtype)
    out = []
    for m in (torch, ts):
        x = m.asarray(data) if m is ts else torch.from_numpy(data)
        lo_ = m.asarray([0.5, 0.5, 1.5, 1.5], dtype=m.float64) if lo == "t" else lo
        r = m.clamp(x, lo_, hi)
        out.append((str(r.dtype).split(".")[-1], np.asarray(r.tolist())))
    assert out[1][0] == out[0][0]
    np.testing.assert_allclose(out[1][1], out[0][1])

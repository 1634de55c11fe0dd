"""PReLU, Threshold, Hardshrink, Softshrink, Softmax2d, RReLU, the in-place activation forms
(inplace=True modules, F.relu_ & co.) vs PyTorch: values, gradients, reprs, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
from tessera import nn
from tessera.testing import gradcheck
from harness import close, compare_fn, compare_module, randn, tt

F = nn.functional


MODULES = [
    (lambda m: m.PReLU(), (2, 3, 4)),
    (lambda m: m.PReLU(3, init=0.1), (2, 3, 4, 2)),
    (lambda m: m.PReLU(3), (2, 3)),
    (lambda m: m.PReLU(), (5,)),
    (lambda m: m.Threshold(0.1, 20.0), (3, 4)),
    (lambda m: m.Hardshrink(), (3, 4)),
    (lambda m: m.Hardshrink(1.2), (3, 4)),
    (lambda m: m.Softshrink(), (3, 4)),
    (lambda m: m.Softshrink(0.8), (3, 4)),
    (lambda m: m.Softmax2d(), (2, 3, 4, 5)),
    (lambda m: m.Softmax2d(), (3, 4, 5)),
    (lambda m: m.RReLU(), (3, 4)),
    (lambda m: m.RReLU(0.2, 0.4), (3, 4)),
    (lambda m: m.GLU(1), (3, 4)),
]


@pytest.mark.parametrize("case", range(len(MODULES)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_modules_match_torch(case: int, dtype) -> None:
    make, shape = MODULES[case]
    tm, sm = make(torch.nn), make(nn)
    assert repr(sm) == repr(tm)
    assert [(k, tuple(v.shape)) for k, v in sm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    tol = 1e-6 if dtype == np.float32 else 1e-12
    # RReLU is deterministic only in eval mode; its training mode is tested below.
    compare_module(sm.to(ts.float64) if dtype == np.float64 else sm,
                   tm.double() if dtype == np.float64 else tm, randn(*shape, dtype=dtype),
                   rtol=tol, atol=tol, train="RReLU" not in repr(tm))


def test_prelu_init_and_errors() -> None:
    m = nn.PReLU(4, init=0.3)
    np.testing.assert_allclose(m.weight.numpy(), np.full(4, 0.3, np.float32))
    with pytest.raises(ValueError, match=r"prelu: weight of 4 elements .* 3 channels of input "
                                         r"shape \(2, 3\)"):
        m(tt(randn(2, 3)))
    with pytest.raises(ValueError, match=r"prelu: .*1 channels of input shape \(4,\)"):
        m(tt(randn(4)))
    with pytest.raises(ValueError, match="prelu: weight must be 0-D or 1-D"):
        F.prelu(tt(randn(2, 3)), tt(randn(3, 1)))
    with pytest.raises(ValueError, match="Softmax2d: expected a 3-D or 4-D input"):
        nn.Softmax2d()(tt(randn(3, 4)))
    with pytest.raises(ValueError, match="softshrink: lambda must be non-negative"):
        F.softshrink(tt(randn(3)), -1.0)
    with pytest.raises(ValueError, match="Hardtanh: min_val"):
        nn.Hardtanh(2.0, 1.0)
    with pytest.raises(ValueError, match="rrelu: expected 0 <= lower <= upper"):
        F.rrelu(tt(randn(3)), 0.5, 0.1, training=True)


def test_functional_gradcheck() -> None:
    x = randn(2, 3, 4, dtype=np.float64)
    x[np.abs(np.abs(x) - 0.5) < 0.05] = 1.0  # keep finite differences off the kinks
    xs = tt(x, requires_grad=True)
    w = tt(np.array([0.2, -0.3, 0.5]), requires_grad=True)
    assert gradcheck(F.prelu, (xs, w))
    assert gradcheck(lambda v: F.threshold(v, 0.5, -2.0), (xs,))
    assert gradcheck(F.hardshrink, (xs,))
    assert gradcheck(F.softshrink, (xs,))
    assert gradcheck(lambda v: F.rrelu(v, 0.1, 0.3), (xs,))
    assert gradcheck(F.softmax2d, (xs,))


def test_rrelu_training_slopes() -> None:
    x = randn(200, 50)
    x[0, 0] = 0.0
    for inplace in (False, True):
        a = tt(x, requires_grad=True)
        v = a * 1.0
        y = F.rrelu(v, 0.1, 0.3, training=True, inplace=inplace)
        assert (y is v) == inplace
        y.sum().backward()
        yn, g = y.detach().numpy(), a.grad.numpy()
        neg = x < 0
        np.testing.assert_array_equal(yn[~neg], x[~neg])
        slopes = yn[neg] / x[neg]
        assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.04
        np.testing.assert_allclose(g[neg], slopes, rtol=1e-6)
        np.testing.assert_array_equal(g[x > 0], 1.0)
    m = nn.RReLU(0.1, 0.3)
    m.eval()
    close(m(tt(x)), TF.leaky_relu(torch.tensor(x), 0.2), 1e-6, 1e-6)


INPLACE = [
    lambda m: m.ReLU(inplace=True), lambda m: m.ReLU6(inplace=True),
    lambda m: m.ELU(0.7, inplace=True), lambda m: m.CELU(0.6, inplace=True),
    lambda m: m.SELU(inplace=True), lambda m: m.LeakyReLU(0.2, inplace=True),
    lambda m: m.Hardtanh(-0.5, 2.0, inplace=True), lambda m: m.SiLU(inplace=True),
    lambda m: m.Mish(inplace=True), lambda m: m.Hardsigmoid(inplace=True),
    lambda m: m.Hardswish(inplace=True), lambda m: m.Threshold(0.3, -1.0, inplace=True),
    lambda m: m.RReLU(inplace=True), lambda m: m.Dropout(0.0, inplace=True),
]


@pytest.mark.parametrize("case", range(len(INPLACE)))
def test_inplace_modules(case: int) -> None:
    make = INPLACE[case]
    tm, sm = make(torch.nn), make(nn)
    assert repr(sm) == repr(tm)
    tm.eval()
    sm.eval()
    x = randn(3, 4, dtype=np.float64) * 3
    a, at = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    v, vt = a * 1.0, at * 1.0
    y, yt = sm(v), tm(vt)
    assert y is v
    close(v, vt, 1e-12, 1e-12)
    g = randn(3, 4, dtype=np.float64)
    (y * tt(g)).sum().backward()
    (yt * torch.tensor(g)).sum().backward()
    # PyTorch's CELU and Hardsigmoid backward kernels use float32 constants even for float64.
    close(a.grad, at.grad, 1e-7, 1e-9)
    # without autograd the input is simply overwritten
    b = tt(x)
    with ts.no_grad():
        assert sm(b) is b
    close(b, vt, 1e-12, 1e-12)


@pytest.mark.parametrize("name,args", [
    ("relu_", ()), ("elu_", (0.5,)), ("celu_", (0.5,)), ("selu_", ()), ("leaky_relu_", (0.3,)),
    ("hardtanh_", (-0.5, 0.5)), ("threshold_", (0.2, 5.0)), ("rrelu_", (0.1, 0.2)),
])
def test_trailing_underscore_forms(name: str, args) -> None:
    x = randn(4, 5, dtype=np.float64)
    a, at = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    v, vt = a * 2.0, at * 2.0
    assert getattr(F, name)(v, *args) is v
    getattr(TF, name)(vt, *args)
    close(v, vt, 1e-12, 1e-12)
    v.sum().backward()
    vt.sum().backward()
    close(a.grad, at.grad, 1e-12, 1e-12)
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(F, name)(tt(x, requires_grad=True), *args)


@pytest.mark.parametrize("name,args", [
    ("relu", ()), ("elu", (0.5,)), ("leaky_relu", (0.3,)), ("hardtanh", (-0.5, 0.5)),
    ("threshold", (0.2, 5.0)), ("silu", ()), ("hardswish", ()), ("relu6", ()),
])
def test_functional_inplace_flag(name: str, args) -> None:
    x = randn(4, 5) * 4
    b = tt(x)
    out = getattr(F, name)(b, *args, inplace=True)
    assert out is b
    close(b, getattr(TF, name)(torch.tensor(x), *args), 1e-6, 1e-6)
    compare_fn(lambda v: getattr(F, name)(v, *args), lambda v: getattr(TF, name)(v, *args), x)

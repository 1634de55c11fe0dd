"""nn.utils.fusion (conv/linear + batch norm folding) and nn.utils.stateless.functional_call
vs PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn
from harness import close, randn, rng, tt


def _trained_bn(tbn, x: np.ndarray):
    tbn.train()
    for _ in range(3):
        tbn(torch.tensor(x * rng.uniform(0.5, 2.0) + rng.standard_normal()))
    tbn.eval()
    return tbn


@pytest.mark.parametrize("make,bn,shape,transpose", [
    (lambda m: m.Conv2d(3, 4, 3, bias=False), "BatchNorm2d", (2, 3, 6, 5), False),
    (lambda m: m.Conv1d(3, 4, 2), "BatchNorm1d", (2, 3, 7), False),
    (lambda m: m.ConvTranspose2d(3, 4, 2), "BatchNorm2d", (2, 3, 3, 3), True),
])
def test_fuse_conv_bn_eval(make, bn: str, shape, transpose: bool) -> None:
    torch.manual_seed(0)
    tconv, tbn = make(torch.nn).eval(), getattr(torch.nn, bn)(4)
    x = randn(*shape)
    with torch.no_grad():
        _trained_bn(tbn, tconv(torch.tensor(x)).numpy())
    sconv, sbn = make(nn), getattr(nn, bn)(4)
    sconv.load_state_dict(tconv.state_dict())
    sbn.load_state_dict(tbn.state_dict())
    sconv.eval()
    sbn.eval()
    fs = nn.utils.fuse_conv_bn_eval(sconv, sbn, transpose)
    ft = torch.nn.utils.fuse_conv_bn_eval(tconv, tbn, transpose)
    close(fs.weight, ft.weight, 1e-5, 1e-6)
    close(fs.bias, ft.bias, 1e-5, 1e-6)
    close(fs(tt(x)), sbn(sconv(tt(x))), 1e-4, 1e-5)
    with pytest.raises(ValueError, match="eval mode"):
        nn.utils.fuse_conv_bn_eval(sconv.train(), sbn)


def test_fuse_linear_bn_eval() -> None:
    torch.manual_seed(0)
    tl, tbn = torch.nn.Linear(5, 4).eval(), torch.nn.BatchNorm1d(4)
    x = randn(8, 5)
    with torch.no_grad():
        _trained_bn(tbn, tl(torch.tensor(x)).numpy())
    sl, sbn = nn.Linear(5, 4), nn.BatchNorm1d(4)
    sl.load_state_dict(tl.state_dict())
    sbn.load_state_dict(tbn.state_dict())
    sl.eval()
    sbn.eval()
    fs, ft = nn.utils.fuse_linear_bn_eval(sl, sbn), torch.nn.utils.fuse_linear_bn_eval(tl, tbn)
    close(fs.weight, ft.weight, 1e-5, 1e-6)
    close(fs.bias, ft.bias, 1e-5, 1e-6)
    close(fs(tt(x)), sbn(sl(tt(x))), 1e-4, 1e-5)
    with pytest.raises(ValueError, match="out_features"):
        nn.utils.fuse_linear_bn_eval(sl, nn.BatchNorm1d(3).eval())


def test_functional_call() -> None:
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    m.eval()
    x = tt(randn(5, 3))
    before = m(x).numpy()
    w = tt(randn(4, 3), requires_grad=True)
    rm = ts.asarray(randn(4))
    y = nn.utils.stateless.functional_call(m, {"0.weight": w, "1.running_mean": rm}, (x,))
    # the swap is for the call only
    np.testing.assert_array_equal(m(x).numpy(), before)
    ref = nn.functional.linear(x, w, m[0].bias)
    ref = (ref - rm) / ts.sqrt(m[1].running_var + 1e-5) * m[1].weight + m[1].bias
    close(y, m[2](ref), 1e-5, 1e-6)
    y.sum().backward()
    assert w.grad is not None and m[0].weight.grad is None
    with pytest.raises(KeyError, match="not a parameter or buffer"):
        nn.utils.stateless.functional_call(m, {"0.kernel": w}, (x,))
    with pytest.raises(RuntimeError, match="missing keys"):
        nn.utils.stateless.functional_call(m, {"0.weight": w}, (x,), strict=True)
    np.testing.assert_array_equal(m(x).numpy(), before)


def test_data_parallel_wrapper() -> None:
    tm = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    sm = nn.DataParallel(nn.Linear(3, 2))
    assert repr(sm) == repr(tm)
    assert list(sm.state_dict()) == list(tm.state_dict()) == ["module.weight", "module.bias"]
    sm.load_state_dict(tm.state_dict())
    x = randn(4, 3)
    close(sm(tt(x)), tm(torch.tensor(x)), 1e-6, 1e-6)

"""Edge cases of batch_norm / group_norm / instance_norm against PyTorch: empty batches and
channels, the 'more than 1 value per channel' check PyTorch applies (only to exactly one
value), running statistics left untouched by an empty batch, and the error types."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
from tessera.nn import functional as F

rng = np.random.default_rng(5)


def opt(lib, a):
    return None if a is None else (torch.tensor(a) if lib is torch else ts.asarray(a))


@pytest.mark.parametrize("shape", [(0, 3, 2), (3, 1, 0, 0), (0, 2), (2, 3, 4)])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_training_empty_and_running_stats(shape, affine) -> None:
    C = shape[1]
    x = rng.standard_normal(shape)
    w, b = (rng.standard_normal(C), rng.standard_normal(C)) if affine else (None, None)
    rm, rv = rng.standard_normal(C), rng.random(C) + 0.5
    trm, trv, srm, srv = torch.tensor(rm), torch.tensor(rv), ts.asarray(rm.copy()), ts.asarray(rv.copy())
    want = TF.batch_norm(torch.tensor(x), trm, trv, opt(torch, w), opt(torch, b), True, 0.3)
    got = F.batch_norm(ts.asarray(x), srm, srv, opt(ts, w), opt(ts, b), True, 0.3)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(srm.numpy(), trm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(srv.numpy(), trv.numpy(), rtol=1e-12)


@pytest.mark.parametrize("shape", [(1, 3), (1, 2, 1)])
def test_batch_norm_one_value_per_channel_raises(shape) -> None:
    x = rng.standard_normal(shape)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        TF.batch_norm(torch.tensor(x), None, None, training=True)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(ts.asarray(x), None, None, training=True)
    F.batch_norm(ts.asarray(x), ts.zeros(shape[1], dtype=ts.float64),
                 ts.ones(shape[1], dtype=ts.float64), training=False)  # eval: fine


@pytest.mark.parametrize("shape,groups", [((0, 3, 2), 3), ((0, 4), 2), ((2, 0, 3), 1),
                                          ((1, 4, 3), 2), ((1, 3), 1)])
def test_group_norm_empty_and_small_match_torch(shape, groups) -> None:
    x = rng.standard_normal(shape)
    C = shape[1]
    w, b = rng.standard_normal(C), rng.standard_normal(C)
    xs, xt = ts.asarray(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ws, wt = ts.asarray(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    got = F.group_norm(xs, groups, ws, ts.asarray(b))
    want = TF.group_norm(xt, groups, wt, torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-10)
    g = rng.standard_normal(shape)
    got.backward(ts.asarray(g))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ws.grad.numpy(), wt.grad.numpy(), rtol=1e-9, atol=1e-9)


def test_group_norm_errors_match_torch() -> None:
    one = rng.standard_normal((1, 3))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        TF.group_norm(torch.tensor(one), 3)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.group_norm(ts.asarray(one), 3)
    bad = rng.standard_normal((2, 3, 2))
    with pytest.raises(RuntimeError):
        TF.group_norm(torch.tensor(bad), 2)
    for exc in (RuntimeError, ValueError):  # both, as PyTorch / the argument error
        with pytest.raises(exc, match="not divisible into 2 groups"):
            F.group_norm(ts.asarray(bad), 2)
    # instance_norm keeps its own rules: one position per channel is allowed through here.
    assert tuple(F.instance_norm(ts.asarray(rng.standard_normal((2, 3, 4)))).shape) == (2, 3, 4)

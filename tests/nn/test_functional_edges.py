"""Edge cases of nn.functional against PyTorch, found by differential fuzzing: batch_norm /
group_norm with empty batches and channels, the 'more than 1 value per channel' check
PyTorch applies (only to exactly one value), running statistics left untouched by an empty
batch; pad with negative pads in every mode; one_hot of an empty tensor; interpolate's area
mode with empty outputs; the error types."""
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


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pad", [(2, -2), (-2, 2), (3, -2), (-3, 3), (2, -3), (-1, -1), (1, -1),
                                 (1, 2, -1, 0), (-1, 0, 2, -1)])
def test_pad_negative_pads_match_torch(mode, pad) -> None:
    """Negative pads crop; reflect/replicate index the whole input (PyTorch's mapping),
    circular wraps what the crop leaves; the same cases raise."""
    x = rng.standard_normal((2, 3, 4))
    if mode == "circular" and any(
            max(p, 0) > x.shape[-1 - k // 2] - max(-pad[k ^ 1], 0) - max(-p, 0)
            for k, p in enumerate(pad)):
        # A wrap longer than what the crop leaves: PyTorch reads uninitialized memory there
        # (or raises, depending on the layout); tessera raises.
        with pytest.raises(RuntimeError, match="circular padding"):
            F.pad(ts.asarray(x), pad, mode=mode)
        return
    try:
        want = TF.pad(torch.tensor(x), pad, mode=mode).numpy()
    except RuntimeError:
        with pytest.raises(RuntimeError):
            F.pad(ts.asarray(x), pad, mode=mode)
        return
    xs = ts.asarray(x, requires_grad=True)
    got = F.pad(xs, pad, mode=mode)
    np.testing.assert_array_equal(got.numpy(), want)
    xt = torch.tensor(x, requires_grad=True)
    g = rng.standard_normal(want.shape)
    got.backward(ts.asarray(g))
    TF.pad(xt, pad, mode=mode).backward(torch.tensor(g))
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_pad_crop_past_the_size_raises() -> None:
    x = rng.standard_normal((2, 3))
    with pytest.raises(RuntimeError):
        TF.pad(torch.tensor(x), (-2, -2))
    for exc in (RuntimeError, ValueError):
        with pytest.raises(exc, match="crops more than"):
            F.pad(ts.asarray(x), (-2, -2))


def test_one_hot_empty_and_out_of_range() -> None:
    assert tuple(F.one_hot(ts.asarray(np.zeros(0, dtype=np.int64)), 4).shape) == (0, 4)
    with pytest.raises(RuntimeError, match="empty tensor"):
        TF.one_hot(torch.zeros(0, dtype=torch.int64))
    for exc in (RuntimeError, ValueError):
        with pytest.raises(exc, match="empty tensor"):
            F.one_hot(ts.asarray(np.zeros(0, dtype=np.int64)))
        with pytest.raises(exc, match=r"in \[0, 3\)"):
            F.one_hot(ts.asarray(np.array([0, 3])), 3)


def test_interpolate_area_allows_empty_outputs() -> None:
    """area mode is adaptive average pooling: PyTorch lets it produce empty dims; the other
    modes raise (RuntimeError in PyTorch; ValueError as well here)."""
    x = rng.standard_normal((2, 1, 4, 1))
    want = TF.interpolate(torch.tensor(x), scale_factor=0.7, mode="area")
    got = F.interpolate(ts.asarray(x), scale_factor=0.7, mode="area")
    assert tuple(got.shape) == tuple(want.shape) == (2, 1, 2, 0)
    with pytest.raises(RuntimeError):
        TF.interpolate(torch.ones(2, 2, 1), scale_factor=0.5, mode="nearest")
    for exc in (RuntimeError, ValueError):
        with pytest.raises(exc, match="must be greater than 0"):
            F.interpolate(ts.ones((2, 2, 1)), scale_factor=0.5, mode="nearest")

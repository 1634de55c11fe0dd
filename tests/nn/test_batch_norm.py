"""The fused C++ batch_norm op (csrc/ops/batch_norm.h) against PyTorch: training with the
running-statistic update (momentum and the cumulative average of momentum=None), eval,
gradients of first and second order, 16-bit inputs, channels-last, empty batches; and the
memory-format API (to / contiguous / is_contiguous / Module.to)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
import tessera.nn as nn
import tessera.nn.functional as F
from harness import double_backward_pairs, to_np

TF = torch.nn.functional


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (3, 2, 4, 5), (2, 2, 3, 2, 2)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_matches_torch(shape, training, affine):
    rng = np.random.default_rng(sum(shape))
    C = shape[1]
    x = rng.standard_normal(shape) * 3 + 1
    w, b = rng.standard_normal(C), rng.standard_normal(C)
    rm, rv = rng.standard_normal(C), rng.random(C) + 0.5
    trm, trv, srm, srv = torch.tensor(rm), torch.tensor(rv), ts.tensor(rm), ts.tensor(rv)
    tx, sx = torch.tensor(x, requires_grad=True), ts.tensor(x, requires_grad=True)
    tw, sw = torch.tensor(w, requires_grad=True), ts.tensor(w, requires_grad=True)
    tb, sb = torch.tensor(b, requires_grad=True), ts.tensor(b, requires_grad=True)
    ty = TF.batch_norm(tx, trm, trv, tw if affine else None, tb if affine else None, training,
                       0.3, 1e-4)
    sy = F.batch_norm(sx, srm, srv, sw if affine else None, sb if affine else None, training,
                      0.3, 1e-4)
    np.testing.assert_allclose(to_np(sy), to_np(ty), atol=1e-12)
    np.testing.assert_allclose(srm.numpy(), trm.numpy(), atol=1e-12)
    np.testing.assert_allclose(srv.numpy(), trv.numpy(), atol=1e-12)
    g = rng.standard_normal(shape)
    ty.backward(torch.tensor(g))
    sy.backward(ts.tensor(g))
    for a, b_ in [(sx, tx)] + ([(sw, tw), (sb, tb)] if affine else []):
        np.testing.assert_allclose(to_np(a.grad), to_np(b_.grad), atol=1e-10)


def test_batch_norm_double_backward():
    rng = np.random.default_rng(1)
    raw = [rng.standard_normal((3, 2, 4)), rng.standard_normal(2)]
    pairs = double_backward_pairs(lambda x, w: F.batch_norm(x, None, None, w, None, True) ** 3,
                                  lambda x, w: TF.batch_norm(x, None, None, w, None, True) ** 3,
                                  raw)
    for a, b in pairs:
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-8, atol=1e-8)
    x = ts.tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
    assert ts.autograd.gradcheck(lambda x: F.batch_norm(x, None, None, None, None, True), (x,))


def test_batchnorm_module_cumulative_average_and_eval():
    rng = np.random.default_rng(2)
    tm, sm = torch.nn.BatchNorm2d(3, momentum=None), nn.BatchNorm2d(3, momentum=None)
    for _ in range(3):
        x = rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
        np.testing.assert_allclose(sm(ts.tensor(x)).numpy(), tm(torch.tensor(x)).detach().numpy(),
                                   atol=1e-5)
    np.testing.assert_allclose(sm.running_mean.numpy(), tm.running_mean.numpy(), atol=1e-6)
    np.testing.assert_allclose(sm.running_var.numpy(), tm.running_var.numpy(), atol=1e-6)
    assert int(sm.num_batches_tracked.item()) == 3
    sm.eval()
    tm.eval()
    x = rng.standard_normal((2, 3, 2, 2)).astype(np.float32)
    np.testing.assert_allclose(sm(ts.tensor(x)).numpy(), tm(torch.tensor(x)).detach().numpy(),
                               atol=1e-5)


def test_batch_norm_bfloat16_stats_in_float32():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((8, 4, 3, 3)) * 10 + 100).astype(np.float32)
    ty = TF.batch_norm(torch.tensor(x).bfloat16(), None, None, None, None, True)
    sy = F.batch_norm(ts.tensor(x).astype(ts.bfloat16), None, None, None, None, True)
    assert str(sy.dtype) == "bfloat16"
    np.testing.assert_allclose(to_np(sy), to_np(ty), atol=0.1)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_16bit_input_float32_parameters(training):
    # Autocast's case (a bfloat16 conv output into a float32 BatchNorm), as PyTorch: the
    # output keeps the input's dtype, the parameter gradients the parameters'.
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    w, b = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    tx = torch.tensor(x).bfloat16().requires_grad_()
    tw, tb = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    trm, trv = torch.zeros(3), torch.ones(3)
    sx = ts.tensor(x).astype(ts.bfloat16).detach().requires_grad_(True)
    sw, sb = ts.tensor(w, requires_grad=True), ts.tensor(b, requires_grad=True)
    srm, srv = ts.zeros(3), ts.ones(3)
    ty = TF.batch_norm(tx, trm, trv, tw, tb, training=training)
    sy = F.batch_norm(sx, srm, srv, sw, sb, training=training)
    assert str(sy.dtype) == "bfloat16"
    np.testing.assert_allclose(to_np(sy), to_np(ty), atol=0.02)
    (ty.float() ** 2).sum().backward()
    (sy.float() ** 2).sum().backward()
    assert str(sw.grad.dtype) == "float32" and str(sx.grad.dtype) == "bfloat16"
    for s_, t_ in ((sw, tw), (sb, tb), (sx, tx)):
        np.testing.assert_allclose(to_np(s_.grad), to_np(t_.grad), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(srm.numpy(), trm.numpy(), atol=1e-3)
    np.testing.assert_allclose(srv.numpy(), trv.numpy(), atol=1e-3)
    with pytest.raises(TypeError, match="weight/bias dtype float64"):
        F.batch_norm(sx, None, None, ts.ones(3, dtype=ts.float64), training=True)


def test_batch_norm_channels_last_empty_and_errors():
    x = np.random.default_rng(4).standard_normal((2, 3, 4, 4)).astype(np.float32)
    sx = ts.tensor(x).to(memory_format=ts.channels_last)
    sy = F.batch_norm(sx, None, None, None, None, True)
    assert sy.is_contiguous(memory_format=ts.channels_last)
    np.testing.assert_allclose(sy.numpy(), TF.batch_norm(torch.tensor(x), None, None, None, None,
                                                         True).numpy(), atol=1e-5)
    rm = ts.zeros(3)
    assert F.batch_norm(ts.zeros((0, 3, 2)), rm, ts.ones(3), training=True).shape == (0, 3, 2)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(ts.zeros((1, 3)), None, None, training=True)
    with pytest.raises(ValueError, match=r"batch_norm: weight of shape \(2,\)"):
        F.batch_norm(ts.zeros((2, 3)), None, None, ts.ones(2), training=True)
    with pytest.raises(ValueError, match="required in eval mode"):
        F.batch_norm(ts.zeros((2, 3)), None, None, training=False)


def test_elementwise_results_keep_channels_last_as_torch():
    # A channels-last network stays channels-last between its convolutions (PyTorch keeps the
    # first full-shape operand's layout in elementwise results).
    x = np.random.default_rng(6).standard_normal((2, 3, 4, 5)).astype(np.float32)
    tx, ty = torch.tensor(x).to(memory_format=torch.channels_last), torch.tensor(x + 1)
    sx, sy = ts.tensor(x).to(memory_format=ts.channels_last), ts.tensor(x + 1)
    tb, sb = torch.ones((1, 3, 1, 1)), ts.ones((1, 3, 1, 1))
    cases = [(lambda a, b, c: F.relu(a), lambda a, b, c: TF.relu(a)),
             (lambda a, b, c: a + b, None), (lambda a, b, c: b + a, None),
             (lambda a, b, c: c * a, None), (lambda a, b, c: a * 2.0, None),
             (lambda a, b, c: -a, None)]
    for sfn, tfn in cases:
        tfn = tfn or sfn
        t, s_ = tfn(tx, ty, tb), sfn(sx, sy, sb)
        assert s_.is_contiguous(memory_format=ts.channels_last) == t.is_contiguous(
            memory_format=torch.channels_last)
        assert s_.is_contiguous() == t.is_contiguous()
        np.testing.assert_allclose(s_.numpy(), t.numpy(), rtol=1e-6)
    # A channels-last result is a fresh tensor, not a view: in-place ops and gradients as torch.
    tx.requires_grad_(True)
    sx.requires_grad_(True)
    ty2, sy2 = tx * 2, sx * 2
    ty2.relu_()
    sy2.relu_()
    (ty2 * ty2).sum().backward()
    (sy2 * sy2).sum().backward()
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_dtype_casts_keep_channels_last_as_torch():
    # x.to(dtype) preserves a channels-last layout (PyTorch's preserve_format), so autocast's
    # casts in a channels-last network copy no layouts; the gradient through the cast too.
    x = np.random.default_rng(7).standard_normal((2, 3, 4, 5)).astype(np.float32)
    tx = torch.tensor(x).to(memory_format=torch.channels_last).requires_grad_(True)
    sx = ts.tensor(x).to(memory_format=ts.channels_last).requires_grad_(True)
    for name in ["bfloat16", "float16", "float64"]:
        t, s_ = tx.to(getattr(torch, name)), sx.to(getattr(ts, name))
        assert s_.stride() == t.stride(), (name, s_.stride(), t.stride())
        assert sx.astype(getattr(ts, name)).stride() == t.stride()
        np.testing.assert_allclose(s_.astype(ts.float32).numpy(), t.float().detach().numpy())
    (tx.to(torch.bfloat16).float() * 3).sum().backward()
    (sx.to(ts.bfloat16).astype(ts.float32) * 3).sum().backward()
    assert sx.grad.stride() == tx.grad.stride()
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy())
    with ts.autocast("cpu"):
        w = ts.nn.Parameter(ts.tensor(np.ones((4, 3, 3, 3), np.float32)).to(
            memory_format=ts.channels_last))
        y = F.conv2d(sx.detach(), w, padding=1)
    assert y.dtype == ts.bfloat16 and y.is_contiguous(memory_format=ts.channels_last)


def test_layouts_through_a_channels_last_backward_as_torch():
    # ReLU/GELU backward, the pools and batch norm keep channels-last gradients; a channels-last
    # leaf's .grad is channels-last (PyTorch's gradient layout contract).
    x = np.random.default_rng(8).standard_normal((2, 4, 6, 6)).astype(np.float32)
    cases = [lambda f, v: f.relu(v), lambda f, v: f.gelu(v),
             lambda f, v: f.max_pool2d(f.relu(v), 2), lambda f, v: f.adaptive_avg_pool2d(v, 1),
             lambda f, v: f.avg_pool2d(f.gelu(v) * 2, 3, 1, 1)]
    for fn in cases:
        tx = torch.tensor(x).to(memory_format=torch.channels_last).requires_grad_(True)
        sx = ts.tensor(x).to(memory_format=ts.channels_last).requires_grad_(True)
        (fn(TF, tx) ** 2).sum().backward()
        (fn(F, sx) ** 2).sum().backward()
        assert sx.grad.stride() == tx.grad.stride(), (sx.grad.stride(), tx.grad.stride())
        np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_memory_format_api():
    x = ts.tensor(np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5))
    t = torch.arange(120, dtype=torch.float32).reshape(2, 3, 4, 5)
    for fmt, tfmt in [(ts.channels_last, torch.channels_last),
                      (ts.contiguous_format, torch.contiguous_format)]:
        y, ty = x.to(memory_format=fmt), t.to(memory_format=tfmt)
        assert y.stride() == ty.stride()
        assert y.contiguous(memory_format=fmt).stride() == ty.contiguous(memory_format=tfmt).stride()
        assert y.is_contiguous(memory_format=ts.channels_last) == \
            ty.is_contiguous(memory_format=torch.channels_last)
        assert y.is_contiguous() == ty.is_contiguous()
        np.testing.assert_array_equal(y.numpy(), ty.numpy())
    x5 = ts.zeros((1, 2, 3, 4, 5)).to(memory_format=ts.channels_last_3d)
    assert x5.stride() == torch.zeros(1, 2, 3, 4, 5).to(memory_format=torch.channels_last_3d).stride()
    with pytest.raises(ValueError, match="required rank 4"):
        ts.zeros((2, 3)).to(memory_format=ts.channels_last)
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2))
    m.to(memory_format=ts.channels_last)
    assert m[0].weight.is_contiguous(memory_format=ts.channels_last)
    out = m(ts.ones((2, 3, 8, 8)))
    assert out.shape == (2, 4, 3, 3)


@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4, 2, 3), 2), ((2, 4, 3), 4),
                                          ((1, 6, 2, 2, 2), 1)])
def test_group_and_instance_norm_on_the_batch_norm_path(shape, groups):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape) * 2 + 0.5
    C = shape[1]
    w, b = rng.standard_normal(C), rng.standard_normal(C)
    tx, sx = torch.tensor(x, requires_grad=True), ts.tensor(x, requires_grad=True)
    tw, sw = torch.tensor(w, requires_grad=True), ts.tensor(w, requires_grad=True)
    ty = TF.group_norm(tx, groups, tw, torch.tensor(b), 1e-5)
    sy = F.group_norm(sx, groups, sw, ts.tensor(b), 1e-5)
    np.testing.assert_allclose(sy.detach().numpy(), ty.detach().numpy(), atol=1e-10)
    g = rng.standard_normal(shape)
    ty.backward(torch.tensor(g))
    sy.backward(ts.tensor(g))
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(sw.grad.numpy(), tw.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(F.instance_norm(ts.tensor(x)).numpy(),
                               TF.instance_norm(torch.tensor(x)).numpy(), atol=1e-10)

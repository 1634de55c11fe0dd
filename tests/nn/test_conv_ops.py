"""The C++ convolution ops (csrc/ops/conv.h) against PyTorch: conv1d/2d/3d and
conv_transpose1d/2d/3d over shapes, strides, padding (ints, 'same', 'valid', padding modes),
dilation, groups (depthwise included), dtypes, memory formats, empty batches and
non-contiguous inputs; gradients (first and second order) and the errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
import tessera.nn as nn
import tessera.nn.functional as F
from harness import double_backward_pairs

TF = torch.nn.functional


def _close(got, want, tol):
    want = want.detach().float().numpy() if want.dtype == torch.bfloat16 else want.detach().numpy()
    got = np.asarray(got.detach().float().numpy() if str(got.dtype) == "bfloat16"
                     else got.detach().numpy())
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@st.composite
def conv_cases(draw, transposed=False):
    nsp = draw(st.integers(1, 3))
    groups = draw(st.sampled_from([1, 2, 3]))
    cin = groups * draw(st.integers(1, 2))
    cout = groups * draw(st.integers(1, 2))
    n = draw(st.integers(0 if not transposed else 1, 2))
    k = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    s = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    d = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    p = tuple(draw(st.integers(0, 2)) for _ in range(nsp))
    lo = [dd * (kk - 1) + 1 for kk, dd in zip(k, d)]
    size = tuple(draw(st.integers(max(1, lo[i] - 2 * p[i]), lo[i] + 4)) for i in range(nsp))
    if transposed:
        p = tuple(min(pi, (size[i] - 1) * s[i] // 2) for i, pi in enumerate(p))
        op = tuple(draw(st.integers(0, max(s[i], d[i]) - 1)) for i in range(nsp))
        return nsp, groups, (n, cin) + size, (cin, cout // groups) + k, s, p, d, op
    return nsp, groups, (n, cin) + size, (cout, cin // groups) + k, s, p, d, None


@settings(max_examples=20, deadline=None)
@given(conv_cases(), st.booleans(), st.integers(0, 2 ** 31))
def test_conv_matches_torch(case, with_bias, seed):
    nsp, groups, xs, ws, s, p, d, _ = case
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[0]) if with_bias else None
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    sx, sw = ts.tensor(x, requires_grad=True), ts.tensor(w, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True) if with_bias else None
    sb = ts.tensor(b, requires_grad=True) if with_bias else None
    ty = getattr(TF, f"conv{nsp}d")(tx, tw, tb, s, p, d, groups)
    sy = getattr(F, f"conv{nsp}d")(sx, sw, sb, s, p, d, groups)
    _close(sy, ty, 1e-10)
    g = rng.standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    sy.backward(ts.tensor(g))
    _close(sx.grad, tx.grad, 1e-10)
    _close(sw.grad, tw.grad, 1e-10)
    if with_bias:
        _close(sb.grad, tb.grad, 1e-10)


@settings(max_examples=25, deadline=None)
@given(conv_cases(transposed=True), st.booleans(), st.integers(0, 2 ** 31))
def test_conv_transpose_matches_torch(case, with_bias, seed):
    nsp, groups, xs, ws, s, p, d, op = case
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[1] * groups) if with_bias else None
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    sx, sw = ts.tensor(x, requires_grad=True), ts.tensor(w, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True) if with_bias else None
    sb = ts.tensor(b, requires_grad=True) if with_bias else None
    try:
        ty = getattr(TF, f"conv_transpose{nsp}d")(tx, tw, tb, s, p, op, groups, d)
    except RuntimeError:
        with pytest.raises(ValueError):
            getattr(F, f"conv_transpose{nsp}d")(sx, sw, sb, s, p, op, groups, d)
        return
    sy = getattr(F, f"conv_transpose{nsp}d")(sx, sw, sb, s, p, op, groups, d)
    _close(sy, ty, 1e-10)
    g = rng.standard_normal(tuple(ty.shape))
    ty.backward(torch.tensor(g))
    sy.backward(ts.tensor(g))
    _close(sx.grad, tx.grad, 1e-10)
    _close(sw.grad, tw.grad, 1e-10)
    if with_bias:
        _close(sb.grad, tb.grad, 1e-10)


@pytest.mark.parametrize("padding", ["same", "valid", (1, 2)])
@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv_module_padding_modes(padding, mode):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 7, 8)).astype(np.float32)
    tm = torch.nn.Conv2d(4, 6, (3, 4), padding=padding, padding_mode=mode, dilation=(1, 2),
                         groups=2)
    sm = nn.Conv2d(4, 6, (3, 4), padding=padding, padding_mode=mode, dilation=(1, 2), groups=2)
    sm.weight = nn.Parameter(ts.tensor(tm.weight.detach().numpy()))
    sm.bias = nn.Parameter(ts.tensor(tm.bias.detach().numpy()))
    _close(sm(ts.tensor(x)), tm(torch.tensor(x)), 1e-5)


def test_depthwise_and_pointwise_float32():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 8, 10, 9)).astype(np.float32)
    for ws, kw in [((16, 1, 3, 3), dict(groups=8, padding=1, stride=2)),
                   ((8, 1, 5, 5), dict(groups=8, padding=2)),
                   ((5, 8, 1, 1), {}), ((8, 2, 1, 1), dict(groups=4))]:
        w = rng.standard_normal(ws).astype(np.float32)
        tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
        sx, sw = ts.tensor(x, requires_grad=True), ts.tensor(w, requires_grad=True)
        ty, sy = TF.conv2d(tx, tw, **kw), F.conv2d(sx, sw, **kw)
        _close(sy, ty, 1e-4)
        ty.square().sum().backward()
        sy.square().sum().backward()
        _close(sx.grad, tx.grad, 1e-3)
        _close(sw.grad, tw.grad, 1e-3)


def test_conv_bfloat16_and_autocast():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    ty = TF.conv2d(torch.tensor(x).bfloat16(), torch.tensor(w).bfloat16(), padding=1)
    sy = F.conv2d(ts.tensor(x).astype(ts.bfloat16), ts.tensor(w).astype(ts.bfloat16), padding=1)
    assert str(sy.dtype) == "bfloat16"
    _close(sy, ty, 5e-2)
    with ts.autocast("cpu"):
        ay = F.conv2d(ts.tensor(x), ts.tensor(w), padding=1)
    with torch.autocast("cpu"):
        aty = TF.conv2d(torch.tensor(x), torch.tensor(w), padding=1)
    assert str(ay.dtype) == str(aty.dtype).replace("torch.", "")


def test_conv_channels_last_and_noncontiguous():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 6, 7)).astype(np.float32)
    w = rng.standard_normal((5, 4, 3, 3)).astype(np.float32)
    tx = torch.tensor(x).to(memory_format=torch.channels_last)
    sx = ts.tensor(x).to(memory_format=ts.channels_last)
    ty, sy = TF.conv2d(tx, torch.tensor(w), padding=1), F.conv2d(sx, ts.tensor(w), padding=1)
    assert ty.is_contiguous(memory_format=torch.channels_last)
    assert sy.is_contiguous(memory_format=ts.channels_last)
    _close(sy, ty, 1e-4)
    # a strided (sliced) input
    xs = rng.standard_normal((2, 4, 12, 7)).astype(np.float32)
    _close(F.conv2d(ts.tensor(xs)[:, :, ::2], ts.tensor(w)),
           TF.conv2d(torch.tensor(xs)[:, :, ::2], torch.tensor(w)), 1e-4)


def test_conv_empty_batch_and_unbatched():
    w = np.ones((3, 2, 2), np.float32)
    _close(F.conv1d(ts.zeros((0, 2, 5)), ts.tensor(w)), TF.conv1d(torch.zeros(0, 2, 5),
                                                                   torch.tensor(w)), 0)
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    _close(F.conv1d(ts.tensor(x), ts.tensor(w)), TF.conv1d(torch.tensor(x), torch.tensor(w)), 1e-5)


@pytest.mark.parametrize("fn,tfn,xs,ws,kw", [
    (F.conv2d, TF.conv2d, (2, 4, 5, 6), (6, 2, 3, 2), dict(stride=2, padding=1, groups=2)),
    (F.conv1d, TF.conv1d, (2, 3, 7), (3, 1, 3), dict(groups=3, dilation=2)),
    (F.conv_transpose2d, TF.conv_transpose2d, (2, 4, 3, 3), (4, 3, 3, 2),
     dict(stride=2, padding=1, output_padding=1)),
])
def test_conv_double_backward(fn, tfn, xs, ws, kw):
    rng = np.random.default_rng(4)
    raw = [rng.standard_normal(xs), rng.standard_normal(ws)]
    for a, b in double_backward_pairs(lambda x, w: fn(x, w, **kw) ** 2,
                                      lambda x, w: tfn(x, w, **kw) ** 2, raw):
        _close(a, b, 1e-9)


def test_conv_gradcheck_finite_differences():
    rng = np.random.default_rng(5)
    x = ts.tensor(rng.standard_normal((1, 2, 4, 5)), requires_grad=True)
    w = ts.tensor(rng.standard_normal((2, 1, 2, 3)), requires_grad=True)
    b = ts.tensor(rng.standard_normal(2), requires_grad=True)
    f = lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=1, groups=2)  # noqa: E731
    assert ts.autograd.gradcheck(f, (x, w, b))
    assert ts.autograd.gradgradcheck(lambda x, w: f(x, w, None), (x, w))
    g = lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, groups=1)  # noqa: E731
    w2 = ts.tensor(rng.standard_normal((2, 2, 2, 2)), requires_grad=True)
    assert ts.autograd.gradcheck(g, (x, w2, b))


def test_conv_errors_name_op_and_shapes():
    x = ts.zeros((1, 4, 3, 3))
    with pytest.raises(ValueError, match=r"conv2d: kernel size \(5, 5\).*larger than the padded"):
        F.conv2d(x, ts.zeros((2, 4, 5, 5)))
    with pytest.raises(ValueError, match=r"conv2d: input with 4 channels, weight \(2, 3, 1, 1\)"):
        F.conv2d(x, ts.zeros((2, 3, 1, 1)))
    with pytest.raises(ValueError, match=r"groups=3"):
        F.conv2d(x, ts.zeros((3, 1, 1, 1)), groups=3)
    with pytest.raises(ValueError, match="conv2d: stride must be positive"):
        F.conv2d(x, ts.zeros((2, 4, 1, 1)), stride=0)
    with pytest.raises(ValueError, match="'same' is not supported for strided"):
        F.conv2d(x, ts.zeros((2, 4, 1, 1)), stride=2, padding="same")
    with pytest.raises(ValueError, match="invalid padding string"):
        F.conv2d(x, ts.zeros((2, 4, 1, 1)), padding="full")
    with pytest.raises(ValueError, match=r"conv2d: bias of shape \(3,\)"):
        F.conv2d(x, ts.zeros((2, 4, 1, 1)), ts.zeros(3))
    with pytest.raises(TypeError, match="conv2d: input .* same dtype"):
        F.conv2d(x, ts.zeros((2, 4, 1, 1), dtype=ts.float64))
    with pytest.raises(RuntimeError):  # PyTorch users catch RuntimeError
        F.conv2d(x, ts.zeros((2, 4, 5, 5)))

"""The fused nn kernels (csrc/ops/nn_fused.h) and what is built on them, vs PyTorch:
softmax/log_softmax, layer_norm, GELU (values, gradients, 16-bit dtypes, gradients of
gradients), conv_transpose1d/2d and ConvTranspose modules, max pooling with indices."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera import nn
from tessera.nn import functional as F
from harness import close, compare_fn, compare_module, randn, randn64, rng, tt


# ---------------------------------------------------------------- row-wise kernels
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-6)])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((5, 7), 1), ((5, 7), 0), ((2, 3, 4), -2), ((6,), 0),
                                       ((3, 0), 1), ((0, 4), 1), ((2, 3, 300), -1)])
def test_softmax_family(fn, shape, dim, dtype, tol) -> None:
    compare_fn(lambda a: getattr(F, fn)(a, dim=dim), lambda a: getattr(TF, fn)(a, dim=dim),
               randn(*shape, dtype=dtype) * 3, rtol=tol, atol=tol)


def test_softmax_non_contiguous_and_extremes() -> None:
    x = randn64(4, 6)
    compare_fn(lambda a: F.softmax(a.mT, dim=1), lambda a: TF.softmax(a.mT, dim=1), x)
    compare_fn(lambda a: F.log_softmax(a[::-1, ::2], dim=-1),
               lambda a: TF.log_softmax(a.flip(0)[:, ::2], dim=-1), x)
    big = np.array([[1e4, 0.0, -1e4], [-np.inf, 0.0, 1.0]])
    for fn in ("softmax", "log_softmax"):
        close(getattr(F, fn)(tt(big), dim=1), getattr(TF, fn)(torch.tensor(big), dim=1))
    # A row of -inf is NaN in both (0/0), and +inf gives NaN too.
    odd = np.array([[-np.inf, -np.inf], [np.inf, 0.0]])
    assert np.isnan(F.softmax(tt(odd), dim=1).numpy()).all() == np.isnan(
        TF.softmax(torch.tensor(odd), dim=1).numpy()).all()
    with pytest.raises(IndexError, match="softmax: dim 2 is out of range"):
        F.softmax(tt(x), dim=2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fused_kernels_16bit(dtype) -> None:
    """16-bit inputs compute in float32 inside the kernels, as PyTorch's CPU kernels do."""
    x = randn(4, 8, 16, dtype=np.float32)
    w, b = randn(16, dtype=np.float32), randn(16, dtype=np.float32)
    tol = 2e-3 if dtype == "float16" else 2e-2
    xs, xt = ts.asarray(x).astype(getattr(ts, dtype)), torch.tensor(x).to(getattr(torch, dtype))
    ws, wt = ts.asarray(w).astype(getattr(ts, dtype)), torch.tensor(w).to(getattr(torch, dtype))
    bs, bt = ts.asarray(b).astype(getattr(ts, dtype)), torch.tensor(b).to(getattr(torch, dtype))
    pairs = [(F.softmax(xs, dim=-1), TF.softmax(xt, dim=-1)),
             (F.log_softmax(xs, dim=1), TF.log_softmax(xt, dim=1)),
             (F.gelu(xs), TF.gelu(xt)), (F.gelu(xs, approximate="tanh"), TF.gelu(xt, approximate="tanh")),
             (F.layer_norm(xs, (16,), ws, bs), TF.layer_norm(xt, (16,), wt, bt))]
    for a, b_ in pairs:
        assert str(a.dtype) == dtype
        close(a.astype(ts.float32), b_.float(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
@pytest.mark.parametrize("shape,ns", [((6, 10), (10,)), ((2, 3, 4, 5), (4, 5)), ((3, 1), (1,))])
def test_layer_norm(shape, ns, affine, dtype, tol) -> None:
    args = [randn(*shape, dtype=dtype) * 2 + 1]
    if affine != "none":
        args.append(randn(*ns, dtype=dtype))
    if affine == "both":
        args.append(randn(*ns, dtype=dtype))
    compare_fn(lambda x, *p: F.layer_norm(x, ns, *p, eps=1e-4),
               lambda x, *p: TF.layer_norm(x, ns, *p, eps=1e-4), *args, rtol=tol, atol=tol)


def test_layer_norm_errors_and_bias_only() -> None:
    x = tt(randn64(3, 4))
    with pytest.raises(ValueError, match="does not match normalized_shape"):
        F.layer_norm(x, (4,), tt(randn64(3)))
    with pytest.raises(ValueError, match="normalized_shape"):
        F.layer_norm(x, (5,))
    b = randn64(4)
    compare_fn(lambda a, c: F.layer_norm(a, (4,), None, c), lambda a, c: TF.layer_norm(a, (4,), None, c),
               randn64(3, 4), b)


# float32: the tanh form's gradient is all cancellation in the tails (PyTorch's own is -0.0
# where the true value is about -1e-6), hence the absolute 1e-5.
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_gelu(approximate, dtype, tol) -> None:
    x = np.concatenate([randn(200, dtype=dtype) * 4, np.array([0, -0.0, 30, -30, 1e-3], dtype)])
    compare_fn(lambda a: F.gelu(a, approximate=approximate),
               lambda a: TF.gelu(a, approximate=approximate), x, rtol=tol, atol=tol)
    compare_fn(lambda a: F.gelu(a.mT), lambda a: TF.gelu(a.mT), randn(3, 5, dtype=dtype),
               rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_relu_values_and_gradient_at_zero_and_nan(dtype) -> None:
    x = np.concatenate([randn(50, dtype=dtype), np.array([0.0, -0.0, np.nan, np.inf, -np.inf], dtype)])
    xs, xt = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    g = randn(x.size, dtype=dtype)
    F.relu(xs).backward(tt(g))
    TF.relu(xt).backward(torch.tensor(g))
    close(F.relu(xs.detach()), TF.relu(xt.detach()), 0, 0)
    close(xs.grad, xt.grad, 0, 0)
    h = ts.asarray(x).astype(ts.bfloat16)
    assert F.relu(h).dtype == ts.bfloat16
    close(F.relu(h).astype(ts.float64), np.where(np.isnan(x), np.nan,
                                                 np.maximum(x.astype(np.float64), 0)), 1e-2, 0)
    _second_order(lambda a: F.relu(a) ** 2, lambda a: TF.relu(a) ** 2, randn64(4, 3))


def _second_order(fs, ft, *arrays, tol=1e-9) -> None:
    """Gradients of (grad . grad) through create_graph=True match PyTorch's."""
    xs = [tt(a, requires_grad=True) for a in arrays]
    xt = [torch.tensor(a, requires_grad=True) for a in arrays]
    c = np.random.default_rng(5).standard_normal(np.shape(ft(*xt).detach().numpy()))
    gs = ts.autograd.grad((fs(*xs) * tt(c)).sum(), xs, create_graph=True)
    gt = torch.autograd.grad((ft(*xt) * torch.tensor(c)).sum(), xt, create_graph=True)
    sum(((g * g).sum() for g in gs), tt(np.zeros(()))).backward()
    sum((g * g).sum() for g in gt).backward()
    for a, b in zip(xs, xt):
        if b.grad is None:  # e.g. a bias: its gradient does not depend on it
            assert a.grad is None or not np.any(a.grad.numpy())
        else:
            close(a.grad, b.grad, tol, tol)


def test_gradients_of_gradients_through_fused_ops() -> None:
    x, w, b = randn64(3, 5), randn64(5), randn64(5)
    _second_order(lambda a: F.softmax(a, dim=1), lambda a: TF.softmax(a, dim=1), x)
    _second_order(lambda a: F.log_softmax(a, dim=0), lambda a: TF.log_softmax(a, dim=0), x)
    _second_order(lambda a: F.gelu(a), lambda a: TF.gelu(a), x, tol=1e-5)
    _second_order(lambda a: F.gelu(a, approximate="tanh"), lambda a: TF.gelu(a, approximate="tanh"), x)
    _second_order(lambda a, c, d: F.layer_norm(a, (5,), c, d),
                  lambda a, c, d: TF.layer_norm(a, (5,), c, d), x, w, b)
    xi, wi = randn64(2, 2, 5, 5), randn64(3, 2, 3, 3)
    _second_order(lambda a, c: F.conv2d(a, c, stride=2, padding=1),
                  lambda a, c: TF.conv2d(a, c, stride=2, padding=1), xi, wi)
    _second_order(lambda a: F.max_pool2d(a * a, 2, 1), lambda a: TF.max_pool2d(a * a, 2, 1), xi)
    _second_order(lambda a, c: F.conv_transpose2d(a, c, stride=2),
                  lambda a, c: TF.conv_transpose2d(a, c, stride=2), randn64(1, 3, 3, 4), wi)


# ---------------------------------------------------------------- convolution (GEMM per image)
@st.composite
def conv_configs(draw, nsp):
    """groups=1 takes the fused per-image GEMM kernel; groups > 1 the grouped matmul path."""
    groups = draw(st.sampled_from([1, 1, 1, 2]))
    cin, cout = groups * draw(st.integers(1, 3)), groups * draw(st.integers(1, 3))
    k = tuple(draw(st.integers(1, 4)) for _ in range(nsp))
    dil = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    same = draw(st.booleans())
    stride = (1,) * nsp if same else tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    pad = "same" if same else tuple(draw(st.integers(0, 2)) for _ in range(nsp))
    ins = tuple(draw(st.integers(1, 4)) + d * (kk - 1) for kk, d in zip(k, dil))
    return dict(shape=(draw(st.integers(1, 3)), cin) + ins, weight=(cout, cin // groups) + k,
                stride=stride, padding=pad, dilation=dil, groups=groups,
                bias=draw(st.booleans()), grads=draw(st.sampled_from([None, [1], [0], [0, 1]])))


@pytest.mark.parametrize("nsp", [1, 2])
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_conv_random_configs(nsp, dtype, tol, data) -> None:
    """Odd sizes, strides, dilations, 'same' (asymmetric for even kernels) and explicit
    padding, with or without bias, every subset of input/weight gradients."""
    cfg = data.draw(conv_configs(nsp))
    r = np.random.default_rng(1)
    x, w = r.standard_normal(cfg["shape"]).astype(dtype), r.standard_normal(cfg["weight"]).astype(dtype)
    args = [x, w] + ([r.standard_normal(cfg["weight"][0]).astype(dtype)] if cfg["bias"] else [])
    grads = cfg["grads"] if cfg["grads"] is None else cfg["grads"] + ([2] if cfg["bias"] else [])
    kw = {k: cfg[k] for k in ("stride", "padding", "dilation", "groups")}
    fs, ft = getattr(F, f"conv{nsp}d"), getattr(TF, f"conv{nsp}d")
    compare_fn(lambda a, b, *c: fs(a, b, c[0] if c else None, **kw),
               lambda a, b, *c: ft(a, b, c[0] if c else None, **kw), *args, rtol=tol, atol=tol,
               grad=grads)


def test_conv_modules_padding_modes_unbatched_and_16bit() -> None:
    torch.manual_seed(0)
    for mode in ("zeros", "reflect", "circular"):
        tm = torch.nn.Conv2d(3, 5, 3, padding=1, padding_mode=mode).double()
        sm = nn.Conv2d(3, 5, 3, padding=1, padding_mode=mode).to(ts.float64)
        sm.load_state_dict({k: tt(v.detach().numpy()) for k, v in tm.state_dict().items()})
        compare_module(sm, tm, randn64(2, 3, 6, 7), rtol=1e-10, atol=1e-10)
    compare_fn(lambda a, b: F.conv2d(a, b, padding=1), lambda a, b: TF.conv2d(a, b, padding=1),
               randn64(3, 5, 4), randn64(2, 3, 3, 3), rtol=1e-10, atol=1e-10)
    # Non-contiguous input and weight (transposed views, negative steps).
    compare_fn(lambda a, b: F.conv2d(a.mT, b[:, :, ::-1], stride=(2, 1), padding=(1, 2)),
               lambda a, b: TF.conv2d(a.mT, b.flip(2), stride=(2, 1), padding=(1, 2)),
               randn64(2, 3, 7, 6), randn64(4, 3, 3, 2), rtol=1e-10, atol=1e-10)
    # 16-bit inputs keep the im2col + matmul path.
    x, w = randn64(2, 3, 5, 5), randn64(4, 3, 3, 3)
    y = F.conv2d(ts.asarray(x).astype(ts.bfloat16), ts.asarray(w).astype(ts.bfloat16), padding=1)
    assert y.dtype == ts.bfloat16
    close(y.astype(ts.float64), TF.conv2d(torch.tensor(x), torch.tensor(w), padding=1), 5e-2, 5e-2)


@pytest.mark.parametrize("threads", [1, 2])
def test_conv_several_chunks(threads) -> None:
    """Batches larger than one GEMM chunk (~1024 output columns: 3 images of 20x20 here), the
    last chunk partial, with the chunks shared among threads."""
    old = ts.get_num_threads()
    ts.set_num_threads(threads)
    try:
        # float32 weight gradients sum 3200 terms of magnitude ~50: atol covers the rounding.
        for dtype, rtol, atol in ((np.float64, 1e-10, 1e-10), (np.float32, 1e-4, 1e-3)):
            compare_fn(lambda a, b, c: F.conv2d(a, b, c, padding=1),
                       lambda a, b, c: TF.conv2d(a, b, c, padding=1), randn(8, 3, 20, 20, dtype=dtype),
                       randn(4, 3, 3, 3, dtype=dtype), randn(4, dtype=dtype), rtol=rtol, atol=atol)
    finally:
        ts.set_num_threads(old)


def test_conv_zero_sizes() -> None:
    compare_fn(lambda a, b, c: F.conv2d(a, b, c), lambda a, b, c: TF.conv2d(a, b, c),
               randn64(0, 2, 4, 4), randn64(3, 2, 3, 3), randn64(3), rtol=1e-12, atol=1e-12)
    # No input channels: the output is the bias (PyTorch returns a 0-channel output here).
    b = tt(randn64(3), requires_grad=True)
    y = F.conv2d(tt(randn64(2, 0, 4, 4)), tt(randn64(3, 0, 3, 3)), b)
    close(y, np.broadcast_to(b.detach().numpy()[:, None, None], (2, 3, 2, 2)), 0, 0)
    y.sum().backward()
    close(b.grad, np.full(3, 8.0), 0, 0)


def test_conv_kernel_entry_point_errors() -> None:
    from tessera import _C
    x, w = tt(randn64(1, 2, 5, 5)), tt(randn64(3, 2, 3, 3))
    win = ((3, 3), (1, 1), (0, 0), (1, 1))
    with pytest.raises(TypeError, match="conv2d"):
        _C._conv2d(x.astype(ts.float32), w, None, *win)
    with pytest.raises(TypeError, match="conv2d"):
        _C._conv2d(x.astype(ts.float16), w.astype(ts.float16), None, *win)
    with pytest.raises(ValueError, match="conv2d: weight"):
        _C._conv2d(x, tt(randn64(3, 4, 3, 3)), None, *win)
    with pytest.raises(ValueError, match="conv2d: bias"):
        _C._conv2d(x, w, tt(randn64(2)), *win)
    with pytest.raises(ValueError, match="does not fit"):
        _C._conv2d(tt(randn64(1, 2, 2, 2)), w, None, *win)
    y = _C._conv2d(x, w, None, *win)
    with pytest.raises(ValueError, match="conv2d_backward"):
        _C._conv2d_backward(y[:, :2], x, w, *win, True, True, True)
    gx, gw, gb = _C._conv2d_backward(y, x, w, *win, False, True, False)
    assert gx is None and gb is None and tuple(gw.shape) == (3, 2, 3, 3)


# ---------------------------------------------------------------- transposed convolution
@st.composite
def conv_t_configs(draw, nsp):
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    k = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    dil = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    opad = tuple(draw(st.integers(0, s - 1)) for s in stride)
    pad = tuple(draw(st.integers(0, 2)) for _ in range(nsp))
    ins = tuple(draw(st.integers(1, 5)) for _ in range(nsp))
    outs = [(i - 1) * s - 2 * p + d * (kk - 1) + o + 1
            for i, s, p, d, kk, o in zip(ins, stride, pad, dil, k, opad)]
    if min(outs) <= 0:
        pad = (0,) * nsp
    return dict(shape=(draw(st.integers(1, 2)), cin) + ins, weight=(cin, cout // groups) + k,
                stride=stride, padding=pad, output_padding=opad, dilation=dil, groups=groups,
                bias=draw(st.booleans()))


@pytest.mark.parametrize("nsp", [1, 2])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_conv_transpose_random_configs(nsp, data) -> None:
    cfg = data.draw(conv_t_configs(nsp))
    r = np.random.default_rng(0)
    x, w = r.standard_normal(cfg["shape"]), r.standard_normal(cfg["weight"])
    args = [x, w] + ([r.standard_normal(cfg["weight"][1] * cfg["groups"])] if cfg["bias"] else [])
    kw = {k: cfg[k] for k in ("stride", "padding", "output_padding", "groups", "dilation")}
    fs, ft = getattr(F, f"conv_transpose{nsp}d"), getattr(TF, f"conv_transpose{nsp}d")
    compare_fn(lambda a, b, *c: fs(a, b, c[0] if c else None, **kw),
               lambda a, b, *c: ft(a, b, c[0] if c else None, **kw), *args, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("nsp", [1, 2])
def test_conv_transpose_modules(nsp) -> None:
    torch.manual_seed(0)
    cls = f"ConvTranspose{nsp}d"
    kw = dict(stride=2, padding=1, output_padding=1, groups=2, dilation=2)
    tm, sm = getattr(torch.nn, cls)(4, 6, 3, **kw).double(), getattr(nn, cls)(4, 6, 3, **kw)
    assert tuple(sm.weight.shape) == tuple(tm.weight.shape) and tuple(sm.bias.shape) == (6,)
    assert set(sm.state_dict()) == set(tm.state_dict())
    sm = sm.to(ts.float64)
    compare_module(sm, tm, randn64(*((2, 4) + (5,) * nsp)), rtol=1e-10, atol=1e-10)
    # Unbatched input, no bias, float32 module.
    tm2, sm2 = getattr(torch.nn, cls)(3, 2, 2, bias=False), getattr(nn, cls)(3, 2, 2, bias=False)
    compare_module(sm2, tm2, randn(*((3,) + (4,) * nsp), dtype=np.float32), rtol=1e-5, atol=1e-5)
    # output_size picks the output padding.
    x = randn64(*((1, 4) + (5,) * nsp))
    size = (12,) * nsp
    close(sm(tt(x), output_size=size), tm(torch.tensor(x), output_size=size), 1e-10, 1e-10)
    assert "output_padding" in repr(sm)


def test_conv_transpose_errors() -> None:
    x, w = tt(randn64(1, 4, 5, 5)), tt(randn64(4, 2, 3, 3))
    with pytest.raises(ValueError, match="output_padding .* must be smaller than stride"):
        F.conv_transpose2d(x, w, stride=1, output_padding=1)
    with pytest.raises(ValueError, match="does not match weight"):
        F.conv_transpose2d(x, tt(randn64(3, 2, 3, 3)))
    with pytest.raises(ValueError, match="non-positive output size"):
        F.conv_transpose2d(x, w, padding=5)
    with pytest.raises(ValueError, match="expected a 3-D or 4-D input"):
        F.conv_transpose2d(tt(randn64(4, 5)), w)
    with pytest.raises(TypeError, match="floating-point"):
        F.conv_transpose2d(ts.ones((1, 4, 5, 5), dtype=ts.int64), w)
    with pytest.raises(ValueError, match="valid sizes range"):
        nn.ConvTranspose2d(4, 2, 3)(x, output_size=(20, 20))


# ---------------------------------------------------------------- max pooling with indices
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.integers(1, 2), st.booleans(),
       st.integers(3, 9), st.integers(3, 9), st.booleans())
def test_max_pool_indices_random_configs(k, s, p, d, ceil, h, w, ties) -> None:
    p = min(p, k // 2)
    if d * (k - 1) + 1 > min(h, w) + 2 * p:
        return
    r = np.random.default_rng(1)
    # Integer-valued inputs have ties: the first maximum's index wins in both.
    x = r.integers(0, 3, (2, 2, h, w)).astype(np.float64) if ties else r.standard_normal((2, 2, h, w))
    ys, ids = F.max_pool2d(tt(x), k, s, p, d, ceil_mode=ceil, return_indices=True)
    yt, idt = TF.max_pool2d(torch.tensor(x), k, s, p, d, ceil_mode=ceil, return_indices=True)
    close(ys, yt, 0, 0)
    assert ids.dtype == ts.int64 and np.array_equal(ids.numpy(), idt.numpy())
    compare_fn(lambda a: F.max_pool2d(a, k, s, p, d, ceil_mode=ceil),
               lambda a: TF.max_pool2d(a, k, s, p, d, ceil_mode=ceil), x)
    x1 = x[:, :, 0]
    y1, i1 = F.max_pool1d(tt(x1), k, s, p, d, ceil_mode=ceil, return_indices=True)
    y1t, i1t = TF.max_pool1d(torch.tensor(x1), k, s, p, d, ceil_mode=ceil, return_indices=True)
    close(y1, y1t, 0, 0)
    assert np.array_equal(i1.numpy(), i1t.numpy())
    compare_fn(lambda a: F.max_pool1d(a, k, s, p, d, ceil_mode=ceil),
               lambda a: TF.max_pool1d(a, k, s, p, d, ceil_mode=ceil), x1)


def test_max_pool_modules_with_indices_and_special_values() -> None:
    x = randn(2, 3, 7, 6, dtype=np.float32)
    x[0, 0, 1, 1] = np.nan
    for cls, inp in (("MaxPool2d", x), ("MaxPool1d", x[:, :, 0])):
        sm = getattr(nn, cls)(3, stride=2, padding=1, return_indices=True, ceil_mode=True)
        tm = getattr(torch.nn, cls)(3, stride=2, padding=1, return_indices=True, ceil_mode=True)
        (ys, i_s), (yt, i_t) = sm(tt(inp)), tm(torch.tensor(inp))
        np.testing.assert_array_equal(ys.numpy(), yt.numpy())
        np.testing.assert_array_equal(i_s.numpy(), i_t.numpy())
        # Unbatched (C, H, W) / (C, L).
        (ys, i_s), (yt, i_t) = sm(tt(inp[0])), tm(torch.tensor(inp[0]))
        np.testing.assert_array_equal(i_s.numpy(), i_t.numpy())
    # The unrolled 2x2 path: ties pick the first maximum, NaN wins wherever it sits.
    z = rng.integers(0, 2, (2, 3, 6, 8)).astype(np.float32)
    z[0, 0, 0, 1] = z[1, 2, 5, 7] = np.nan
    for stride in (2, 1):
        (ys, i_s), (yt, i_t) = (F.max_pool2d(tt(z), 2, stride, return_indices=True),
                                TF.max_pool2d(torch.tensor(z), 2, stride, return_indices=True))
        np.testing.assert_array_equal(ys.numpy(), yt.numpy())
        np.testing.assert_array_equal(i_s.numpy(), i_t.numpy())
    xi = ts.ones((1, 1, 4, 4), dtype=ts.int32)
    assert F.max_pool2d(xi, 2).dtype == ts.int32
    # Integer input takes return_indices as PyTorch's CPU kernel does (values and indices).
    zi = np.arange(32, dtype=np.int32).reshape(1, 2, 4, 4)[..., ::-1].copy()
    (vs, js), (vt, jt) = (F.max_pool2d(ts.tensor(zi), 2, return_indices=True),
                          TF.max_pool2d(torch.tensor(zi), 2, return_indices=True))
    np.testing.assert_array_equal(vs.numpy(), vt.numpy())
    np.testing.assert_array_equal(js.numpy(), jt.numpy())


def test_pool_kernel_entry_point_errors() -> None:
    from tessera import _C
    with pytest.raises(ValueError, match="max_pool2d: expected a 4-D"):
        _C._max_pool2d(ts.ones((2, 3)), (2, 2), (1, 1), (0, 0), (1, 1), 1, 1)
    with pytest.raises(ValueError, match="windows past the input"):
        _C._max_pool2d(ts.ones((1, 1, 3, 3)), (2, 2), (2, 2), (0, 0), (1, 1), 3, 1)
    with pytest.raises(IndexError, match="outside a"):
        _C._max_pool2d_backward(ts.ones((1, 1, 1, 1)), ts.asarray([[[[9]]]]), 2, 2)
    with pytest.raises(ValueError, match="col2im: columns of shape"):
        _C._col2im(ts.ones((1, 5, 4)), 1, 3, 3, (2, 2), (1, 1), (0, 0), (1, 1))
    with pytest.raises(ValueError, match="im2col: kernel"):
        _C._im2col(ts.ones((1, 1, 2, 2)), (3, 3), (1, 1), (0, 0), (1, 1))
    with pytest.raises(ValueError, match="must be positive"):
        _C._im2col(ts.ones((1, 1, 2, 2)), (1, 1), (0, 1), (0, 0), (1, 1))
    with pytest.raises(TypeError, match="gelu: expected a floating-point"):
        _C._gelu(ts.ones(3, dtype=ts.int32), False)
    with pytest.raises(ValueError, match="softmax_backward: shapes"):
        _C._softmax_last_backward(ts.ones(3), ts.ones(4), False)


def test_cross_entropy_label_smoothing_extra_dims_float32() -> None:
    """label_smoothing with weight and ignore_index over (N, C, d1, d2), float32."""
    x = randn(3, 5, 2, 4, dtype=np.float32)
    y = rng.integers(0, 5, (3, 2, 4))
    y[0, 0, :2] = 3
    w = (np.abs(randn64(5)) + 0.5).astype(np.float32)
    for red in ("mean", "sum", "none"):
        compare_fn(lambda a, b, c: F.cross_entropy(a, b, c, ignore_index=3, label_smoothing=0.25,
                                                   reduction=red),
                   lambda a, b, c: TF.cross_entropy(a, b, c, ignore_index=3, label_smoothing=0.25,
                                                    reduction=red), x, y, w, grad=[0],
                   rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("opt_name,kw", [("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
                                         ("AdamW", dict(lr=0.01, amsgrad=True))])
def test_small_convnet_trains_in_lockstep_with_torch(opt_name, kw) -> None:
    """Every fused piece at once (im2col conv, ReLU, max pool, GELU, layer norm, linear,
    log_softmax cross entropy, fused optimizer step): 6 training steps in float64 track
    PyTorch's parameters."""
    def make(lib):
        m = lib.nn
        return m.Sequential(m.Conv2d(2, 4, 3, padding=1), m.ReLU(), m.MaxPool2d(2),
                            m.Conv2d(4, 6, 3, stride=2, padding=1), m.GELU(), m.Flatten(),
                            m.LayerNorm(24), m.Linear(24, 5))
    torch.manual_seed(0)
    tm = make(torch).double()
    sm = make(ts).to(ts.float64)
    sm.load_state_dict(tm.state_dict())
    x = randn64(8, 2, 8, 8)
    y = rng.integers(0, 5, 8)
    opt_t = getattr(torch.optim, opt_name)(tm.parameters(), **kw)
    opt_s = getattr(ts.optim, opt_name)(sm.parameters(), **kw)
    for _ in range(6):
        for opt, m, xx, yy, lib_f in ((opt_t, tm, torch.tensor(x), torch.tensor(y), TF),
                                      (opt_s, sm, tt(x), tt(y), F)):
            opt.zero_grad()
            lib_f.cross_entropy(m(xx), yy, label_smoothing=0.1).backward()
            opt.step()
    tparams = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        close(p, tparams[name], 1e-9, 1e-9)

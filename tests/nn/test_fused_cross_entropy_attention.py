"""The fused cross entropy and attention softmax (csrc/ops/nn_fused.h) and the functions built
on them (F.cross_entropy with class indices, F.scaled_dot_product_attention) vs PyTorch:
values, gradients, 16-bit dtypes, gradients of gradients (the composite fallback) and
error paths."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera import _C
from tessera.nn import functional as F
from harness import close, randn, randn64, rng, tt


def targets(shape, classes, ignore=None, frac=0.25):
    t = rng.integers(0, classes, shape)
    if ignore is not None and t.size:
        t.flat[rng.random(t.size) < frac] = ignore
        t.flat[0] = ignore
    return t


def _ce_pair(x, t, w, **kw):
    """(tessera loss, torch loss, tessera input, torch input) with gradients enabled."""
    xs, xt = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ws = None if w is None else tt(w)
    wt = None if w is None else torch.tensor(w)
    return (F.cross_entropy(xs, ts.asarray(t), ws, **kw),
            TF.cross_entropy(xt, torch.tensor(t), wt, **kw), xs, xt)


# ---------------------------------------------------------------- cross entropy
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 3e-6)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape,ignore_index", [((6, 5), -100), ((6, 5), 2), ((3, 4, 2, 3), -100),
                                                ((7,), -100), ((1, 1), -100), ((0, 4), -100)])
def test_cross_entropy_matches_torch(shape, ignore_index, weighted, smoothing, reduction, dtype,
                                     tol) -> None:
    classes = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    x = randn(*shape, dtype=dtype, scale=2)
    t = targets(tshape, classes, ignore_index if len(shape) > 1 and shape[0] > 1 else None)
    w = rng.random(classes).astype(dtype) + 0.1 if weighted else None
    ys, yt, xs, xt = _ce_pair(x, t, w, ignore_index=ignore_index, reduction=reduction,
                              label_smoothing=smoothing)
    assert ys.dtype == xs.dtype and tuple(ys.shape) == tuple(yt.shape)
    close(ys, yt, tol, tol)
    if x.size == 0:
        return
    g = randn(*yt.shape, dtype=dtype, scale=2)
    ys.backward(tt(g))
    yt.backward(torch.tensor(g))
    close(xs.grad, xt.grad, tol, tol)


def test_cross_entropy_non_contiguous_and_integer_dtypes() -> None:
    x = randn64(5, 6, scale=2)
    t = targets((6,), 5)
    ys = F.cross_entropy(tt(x).mT, ts.asarray(t.astype(np.int32)))
    close(ys, TF.cross_entropy(torch.tensor(x).mT, torch.tensor(t)), 1e-12, 1e-12)
    x4 = randn64(2, 3, 4, 5, scale=2)
    t4 = targets((2, 4, 5), 3)
    ys = F.cross_entropy(tt(x4)[:, :, ::-1], ts.asarray(t4.astype(np.uint8))[:, ::-1],
                         reduction="none")
    close(ys, TF.cross_entropy(torch.tensor(x4).flip(2), torch.tensor(t4).flip(1),
                               reduction="none"), 1e-12, 1e-12)


def test_cross_entropy_extremes_and_all_ignored() -> None:
    x = np.array([[1e4, 0.0, -1e4], [-np.inf, 0.0, 1.0], [50.0, 50.0, 50.0]])
    t = np.array([1, 2, 0])
    for sm in (0.0, 0.1):
        ys, yt, _, _ = _ce_pair(x, t, None, reduction="none", label_smoothing=sm)
        close(ys, yt, 1e-12, 1e-12)
    # Every target ignored: 'mean' is 0/0 = NaN in both; 'sum' is 0.
    t_ign = np.full(3, -100)
    x2 = randn64(3, 3, scale=2)
    assert np.isnan(F.cross_entropy(tt(x2), ts.asarray(t_ign)).item())
    assert math.isnan(TF.cross_entropy(torch.tensor(x2), torch.tensor(t_ign)).item())
    assert F.cross_entropy(tt(x2), ts.asarray(t_ign), reduction="sum").item() == 0.0


@pytest.mark.parametrize("dtype,tol", [("float16", 5e-3), ("bfloat16", 4e-2)])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_16bit(dtype, tol, smoothing) -> None:
    """16-bit logits compute in float32 inside the kernels; compare with float32 PyTorch."""
    x = randn(8, 65, dtype=np.float32, scale=2)
    t = targets((8,), 65, -100)
    w = rng.random(65).astype(np.float32) + 0.5
    xh = ts.asarray(x).astype(getattr(ts, dtype))
    xh.requires_grad_(True)
    wh = ts.asarray(w).astype(getattr(ts, dtype))
    x_ref = torch.tensor(xh.astype(ts.float32).numpy(), requires_grad=True)
    w_ref = torch.tensor(wh.astype(ts.float32).numpy())
    for red in ("mean", "none"):
        ys = F.cross_entropy(xh, ts.asarray(t), wh, reduction=red, label_smoothing=smoothing)
        yt = TF.cross_entropy(x_ref, torch.tensor(t), w_ref, reduction=red,
                              label_smoothing=smoothing)
        assert str(ys.dtype) == dtype
        close(ys.astype(ts.float32), yt, tol, tol)
    g = randn(8, dtype=np.float32, scale=2)
    ys.backward(ts.asarray(g).astype(getattr(ts, dtype)))
    yt.backward(torch.tensor(g))
    assert str(xh.grad.dtype) == dtype
    close(xh.grad.astype(ts.float32), x_ref.grad, tol, tol)


def test_cross_entropy_op_returns_lse_and_row_weights() -> None:
    x, t, w = randn64(4, 6, scale=2), np.array([0, 5, -100, 2]), rng.random(6) + 0.1
    loss, lse, rw = _C._cross_entropy(tt(x), ts.asarray(t), tt(w), -100, 0.0)
    close(lse, torch.logsumexp(torch.tensor(x), dim=1), 1e-12, 1e-12)
    close(rw, np.where(t == -100, 0.0, w[np.where(t == -100, 0, t)]), 0, 0)
    close(loss, TF.cross_entropy(torch.tensor(x), torch.tensor(t), torch.tensor(w),
                                 reduction="none"), 1e-12, 1e-12)
    _, lse32, _ = _C._cross_entropy(tt(x.astype(np.float16)), ts.asarray(t), None, -100, 0.0)
    assert lse32.dtype == ts.float32


def test_cross_entropy_gradcheck_and_double_backward() -> None:
    """Finite differences of the fused path in float64, and gradients of gradients (the
    backward's composite fallback under create_graph) against PyTorch's."""
    x, t, w = randn64(4, 5, scale=2), np.array([1, -100, 4, 0]), rng.random(5) + 0.2
    for sm in (0.0, 0.3):
        f = lambda a: F.cross_entropy(a, ts.asarray(t), tt(w), label_smoothing=sm)
        xs = tt(x, requires_grad=True)
        f(xs).backward()
        eps = 1e-6
        num = np.zeros_like(x)
        for i in np.ndindex(*x.shape):
            xp, xm = x.copy(), x.copy()
            xp[i] += eps
            xm[i] -= eps
            num[i] = (f(tt(xp)).item() - f(tt(xm)).item()) / (2 * eps)
        close(xs.grad, num, 1e-6, 1e-8)
        for red in ("mean", "none"):
            c = randn64(4, scale=2)
            xs, xt = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            ls = F.cross_entropy(xs, ts.asarray(t), tt(w), reduction=red, label_smoothing=sm)
            lt = TF.cross_entropy(xt, torch.tensor(t), torch.tensor(w), reduction=red,
                                  label_smoothing=sm)
            if red == "none":
                ls, lt = (ls * tt(c)).sum(), (lt * torch.tensor(c)).sum()
            (gs,) = ts.autograd.grad(ls, [xs], create_graph=True)
            (gt,) = torch.autograd.grad(lt, [xt], create_graph=True)
            close(gs, gt, 1e-12, 1e-12)
            (gs * gs).sum().backward()
            (gt * gt).sum().backward()
            close(xs.grad, xt.grad, 1e-10, 1e-12)


def test_cross_entropy_weight_requiring_grad_gets_no_gradient() -> None:
    """PyTorch refuses a weight that requires grad; here it simply gets none."""
    x, t, w = randn64(4, 3, scale=2), np.array([0, 2, 1, 1]), rng.random(3) + 0.1
    xs, ws = tt(x, requires_grad=True), tt(w, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    F.cross_entropy(xs, ts.asarray(t), ws).backward()
    TF.cross_entropy(xt, torch.tensor(t), torch.tensor(w)).backward()
    close(xs.grad, xt.grad, 1e-12, 1e-12)
    assert ws.grad is None


def test_cross_entropy_errors() -> None:
    x = tt(randn64(4, 3, scale=2))
    with pytest.raises(IndexError, match="cross_entropy: target 3 is out of range"):
        F.cross_entropy(x, ts.asarray([0, 1, 3, 2]))
    with pytest.raises(IndexError, match="target -1 is out of range"):
        F.cross_entropy(x, ts.asarray([0, -1, 1, 2]), reduction="none")
    with pytest.raises(ValueError, match="target shape"):
        F.cross_entropy(x, ts.asarray([0, 1, 2]))
    with pytest.raises(ValueError, match="target shape"):
        F.cross_entropy(x, ts.asarray([[0, 1, 2, 0]]))
    with pytest.raises(TypeError, match="integer class indices"):
        F.cross_entropy(x, ts.asarray([True, False, True, True]))
    with pytest.raises(ValueError, match="target size"):  # probabilities of the wrong shape
        F.cross_entropy(x, tt(randn64(4, 2, scale=2)))
    with pytest.raises(TypeError, match="floating-point logits"):
        F.cross_entropy(ts.asarray([[1, 2], [3, 4]]), ts.asarray([0, 1]))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.cross_entropy(x, ts.asarray([0, 1, 2, 0]), reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(x, ts.asarray([0, 1, 2, 0]), label_smoothing=1.5)
    with pytest.raises(ValueError, match="at least one dimension"):
        F.cross_entropy(tt(np.float64(1.0)), ts.asarray(0))
    # The op's own checks.
    with pytest.raises(TypeError, match="int64 class indices"):
        _C._cross_entropy(x, ts.asarray([0, 1, 2, 0], dtype=ts.int32), None, -100, 0.0)
    with pytest.raises(TypeError, match="floating-point"):
        _C._cross_entropy(ts.asarray([[1, 2]]), ts.asarray([0]), None, -100, 0.0)
    with pytest.raises(ValueError, match="weight of shape"):
        _C._cross_entropy(x, ts.asarray([0, 1, 2, 0]), tt(randn64(4, scale=2)), -100, 0.0)
    with pytest.raises(TypeError, match="weight dtype"):
        _C._cross_entropy(x, ts.asarray([0, 1, 2, 0]), tt(randn64(3, scale=2).astype(np.float32)), -100, 0.0)
    with pytest.raises(ValueError, match="logits of shape"):
        _C._cross_entropy(tt(randn64(2, 2, 2, scale=2)), ts.asarray([0, 1]), None, -100, 0.0)
    with pytest.raises(ValueError, match="label_smoothing"):
        _C._cross_entropy(x, ts.asarray([0, 1, 2, 0]), None, -100, -0.5)
    loss, lse, _ = _C._cross_entropy(x, ts.asarray([0, 1, 2, 0]), None, -100, 0.0)
    with pytest.raises(ValueError, match="loss gradient"):
        _C._cross_entropy_backward(tt(randn64(3, scale=2)), x, ts.asarray([0, 1, 2, 0]), None, lse, -100, 0.0)
    with pytest.raises(ValueError, match="lse must be"):
        _C._cross_entropy_backward(loss, x, ts.asarray([0, 1, 2, 0]), None, lse[:3], -100, 0.0)
    with pytest.raises(IndexError, match="out of range"):
        _C._cross_entropy_backward(loss, x, ts.asarray([0, 1, 9, 0]), None, lse, -100, 0.0)


# ---------------------------------------------------------------- attention softmax
def _ref_attention_softmax(s: np.ndarray, scale: float, causal: bool) -> torch.Tensor:
    st = torch.tensor(s, requires_grad=True) if not isinstance(s, torch.Tensor) else s
    z = st * scale
    if causal:
        L, S = s.shape[-2:]
        z = z.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), -math.inf)
    return torch.softmax(z, dim=-1)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-6)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", [(5, 7), (7, 5), (2, 3, 4, 4), (1, 1), (3, 1), (2, 0, 3),
                                   (2, 3, 0), (4, 300)])
def test_attention_softmax_op(shape, causal, dtype, tol) -> None:
    s = randn(*shape, dtype=dtype, scale=2)
    scale = 0.37
    ys = _C._attention_softmax(tt(s), scale, causal)
    st = torch.tensor(s, requires_grad=True)
    yt = _ref_attention_softmax(st, scale, causal)
    close(ys, yt, tol, tol)
    g = randn(*shape, dtype=dtype, scale=2)
    yt.backward(torch.tensor(g))
    close(_C._attention_softmax_backward(ys, tt(g), scale), st.grad, tol, tol)


def test_attention_softmax_non_contiguous_16bit_and_errors() -> None:
    s = randn64(4, 6, scale=2)
    close(_C._attention_softmax(tt(s).mT, 1.0, True),
          _ref_attention_softmax(s.T.copy(), 1.0, True), 1e-12, 1e-12)
    for dtype, tol in (("float16", 2e-3), ("bfloat16", 2e-2)):
        sh = ts.asarray(s).astype(getattr(ts, dtype))
        y = _C._attention_softmax(sh, 0.5, True)
        assert str(y.dtype) == dtype
        close(y.astype(ts.float64), _ref_attention_softmax(sh.astype(ts.float64).numpy(), 0.5,
                                                           True), tol, tol)
    with pytest.raises(ValueError, match="attention_softmax: expected scores"):
        _C._attention_softmax(tt(randn64(4, scale=2)), 1.0, False)
    with pytest.raises(TypeError, match="attention_softmax: expected a floating-point"):
        _C._attention_softmax(ts.ones((2, 2), dtype=ts.int32), 1.0, False)
    with pytest.raises(ValueError, match="shapes"):
        _C._attention_softmax_backward(tt(randn64(2, 3, scale=2)), tt(randn64(3, 2, scale=2)), 1.0)


# ---------------------------------------------------------------- SDPA
def _sdpa_pair(q, k, v, **kw):
    qs, ks, vs = (tt(a, requires_grad=True) for a in (q, k, v))
    qt, kt, vt = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    return (F.scaled_dot_product_attention(qs, ks, vs, **kw),
            TF.scaled_dot_product_attention(qt, kt, vt, **kw), (qs, ks, vs), (qt, kt, vt))


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-11), (np.float32, 1e-5)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S", [(5, 5), (3, 7), (7, 3), (1, 4)])
@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_sdpa_matches_torch(batch, L, S, causal, dtype, tol) -> None:
    q, k, v = randn(*batch, L, 4, dtype=dtype, scale=2), randn(*batch, S, 4, dtype=dtype, scale=2), \
        randn(*batch, S, 6, dtype=dtype, scale=2)
    for scale in (None, 0.3):
        ys, yt, ins, int_ = _sdpa_pair(q, k, v, is_causal=causal, scale=scale)
        close(ys, yt, tol, tol)
        g = randn(*yt.shape, dtype=dtype, scale=2)
        ys.backward(tt(g))
        yt.backward(torch.tensor(g))
        for a, b in zip(ins, int_):
            close(a.grad, b.grad, tol, tol)


def test_sdpa_composite_paths_still_work() -> None:
    q, k, v = randn64(2, 3, 4, scale=2), randn64(2, 5, 4, scale=2), randn64(2, 5, 2, scale=2)
    mask = rng.random((3, 5)) > 0.3
    mask[:, 0] = True
    for m in (mask, randn64(3, 5, scale=2)):
        qs, ks, vs = (tt(a) for a in (q, k, v))
        close(F.scaled_dot_product_attention(qs, ks, vs, attn_mask=ts.asarray(m)),
              TF.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)),
                                               attn_mask=torch.tensor(m)), 1e-12, 1e-12)
    with pytest.raises(ValueError, match="either attn_mask or is_causal"):
        F.scaled_dot_product_attention(tt(q), tt(k), tt(v), attn_mask=tt(mask), is_causal=True)
    # dropout_p > 0 takes the composite path: every output row is a combination of v rows.
    y = F.scaled_dot_product_attention(tt(q), tt(k), tt(v), dropout_p=0.5)
    assert tuple(y.shape) == (2, 3, 2)
    # The function is still exported from misc and the package: the C++ op itself.
    from tessera.nn.functional import misc
    assert F.scaled_dot_product_attention is misc.scaled_dot_product_attention \
        is ts._C.scaled_dot_product_attention


def test_sdpa_16bit_and_double_backward() -> None:
    q, k, v = randn(2, 6, 8, dtype=np.float32, scale=2), randn(2, 6, 8, dtype=np.float32, scale=2), \
        randn(2, 6, 8, dtype=np.float32, scale=2)
    for dtype, tol in (("float16", 1e-2), ("bfloat16", 6e-2)):
        conv = [ts.asarray(a).astype(getattr(ts, dtype)) for a in (q, k, v)]
        ys = F.scaled_dot_product_attention(*conv, is_causal=True)
        assert str(ys.dtype) == dtype
        ref = TF.scaled_dot_product_attention(*(torch.tensor(c.astype(ts.float32).numpy())
                                                for c in conv), is_causal=True)
        close(ys.astype(ts.float32), ref, tol, tol)
    # Gradients of gradients (the composite backward under create_graph) match PyTorch's.
    q, k, v = randn64(2, 3, 4, scale=2), randn64(2, 5, 4, scale=2), randn64(2, 5, 3, scale=2)
    for causal in (False, True):
        _, _, ins, int_ = _sdpa_pair(q, k, v)
        c = randn64(2, 3, 3, scale=2)
        ys = F.scaled_dot_product_attention(*ins, is_causal=causal)
        yt = TF.scaled_dot_product_attention(*int_, is_causal=causal)
        gs = ts.autograd.grad((ys * tt(c)).sum(), list(ins), create_graph=True)
        gt = torch.autograd.grad((yt * torch.tensor(c)).sum(), list(int_), create_graph=True)
        for a, b in zip(gs, gt):
            close(a, b, 1e-11, 1e-12)
        sum(((g * g).sum() for g in gs), tt(np.zeros(()))).backward()
        sum((g * g).sum() for g in gt).backward()
        for a, b in zip(ins, int_):
            close(a.grad, b.grad, 1e-10, 1e-11)


# ---------------------------------------------------------------- random configurations
@settings(deadline=None, max_examples=60)
@given(data=st.data())
def test_cross_entropy_random_configs(data) -> None:
    """Random (N, C, d...) / unbatched shapes incl. empty ones, strided (transposed) logits,
    any ignore_index, weights, smoothing and reduction: values and gradients."""
    nd = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.lists(st.integers(0 if nd > 1 else 1, 4), min_size=nd,
                                     max_size=nd)))
    if nd > 1 and shape[1] == 0:
        shape = (shape[0], 1) + shape[2:]
    classes = shape[1] if nd > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if nd > 1 else ()
    ignore = data.draw(st.sampled_from([-100, 0, classes - 1]))
    r = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = r.standard_normal(shape[::-1]).T  # a transposed (non-contiguous) array
    t = r.integers(0, classes, tshape)
    if t.size and data.draw(st.booleans()):
        t.flat[r.random(t.size) < 0.3] = ignore
    w = r.random(classes) + 0.1 if data.draw(st.booleans()) else None
    kw = dict(ignore_index=ignore, reduction=data.draw(st.sampled_from(["mean", "sum", "none"])),
              label_smoothing=data.draw(st.sampled_from([0.0, 0.15])))
    xs, xt = ts.asarray(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ys = F.cross_entropy(xs, ts.asarray(t), None if w is None else tt(w), **kw)
    yt = TF.cross_entropy(xt, torch.tensor(t), None if w is None else torch.tensor(w), **kw)
    close(ys, yt, 1e-12, 1e-12)
    if yt.numel() and np.all(np.isfinite(yt.detach().numpy())):
        g = r.standard_normal(tuple(yt.shape))
        ys.backward(tt(g))
        yt.backward(torch.tensor(g))
        close(xs.grad, xt.grad, 1e-12, 1e-12)


@settings(deadline=None, max_examples=40)
@given(data=st.data())
def test_attention_softmax_random_shapes(data) -> None:
    shape = tuple(data.draw(st.lists(st.integers(0, 6), min_size=2, max_size=4)))
    causal = data.draw(st.booleans())
    scale = data.draw(st.sampled_from([1.0, 0.125, 3.0]))
    r = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    s = r.standard_normal(shape)
    st_ = torch.tensor(s, requires_grad=True)
    yt = _ref_attention_softmax(st_, scale, causal)
    ys = _C._attention_softmax(tt(s), scale, causal)
    close(ys, yt, 1e-12, 1e-12)
    if s.size:
        g = r.standard_normal(shape)
        yt.backward(torch.tensor(g))
        close(_C._attention_softmax_backward(ys, tt(g), scale), st_.grad, 1e-12, 1e-12)

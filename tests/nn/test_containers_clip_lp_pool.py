"""Differential tests against torch for nn gaps: Sequential/ModuleList list operations and
ModuleList's compact repr, forward's `input` keyword, Embedding.from_pretrained's full
signature, clip_grad_norm_ for p = 0 / fractional / inf, the argmax gradient of adaptive max
pooling without indices, and LP pooling's zero-window gradient and p = +-inf."""
import inspect
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tessera as ts  # noqa: E402
from tessera import nn  # noqa: E402
from harness import to_np


def _pair(*names):
    """The same modules (by constructor) in torch and tessera."""
    make = {"relu": lambda m: m.ReLU(), "tanh": lambda m: m.Tanh(), "sig": lambda m: m.Sigmoid(),
            "lin": lambda m: m.Linear(1, 1), "lin2": lambda m: m.Linear(2, 3),
            "elu": lambda m: m.ELU()}
    return [make[n](torch.nn) for n in names], [make[n](nn) for n in names]


def _keys(m):
    return list(m._modules.keys())


def _kinds(m):
    return [type(c).__name__ for c in m]


def _same(tm, sm):
    assert _keys(sm) == _keys(tm)
    assert _kinds(sm) == _kinds(tm)
    assert list(sm.state_dict().keys()) == list(tm.state_dict().keys())
    assert repr(sm) == repr(tm)


# ------------------------------------------------------------------ Sequential
def test_sequential_insert_extend_pop():
    (a, b, c), (sa, sb, sc) = _pair("relu", "lin", "tanh")
    t, s = torch.nn.Sequential(a, b), nn.Sequential(sa, sb)
    assert t.insert(0, c) is t and s.insert(0, sc) is s
    _same(t, s)
    (d,), (sd,) = _pair("sig")
    t.insert(-1, d)
    s.insert(-1, sd)
    _same(t, s)
    (e,), (se,) = _pair("elu")
    t.insert(len(t), e)
    s.insert(len(s), se)
    _same(t, s)
    t.extend(torch.nn.Sequential(*_pair("lin2")[0]))
    s.extend(nn.Sequential(*_pair("lin2")[1]))
    _same(t, s)
    assert type(t.pop(1)).__name__ == type(s.pop(1)).__name__
    _same(t, s)
    tp, sp = t.pop(slice(1, 3)), s.pop(slice(1, 3))
    assert type(sp) is nn.Sequential and _kinds(sp) == _kinds(tp)
    _same(t, s)


def test_sequential_insert_errors():
    t, s = torch.nn.Sequential(torch.nn.ReLU()), nn.Sequential(nn.ReLU())
    for idx in (2, -2):
        with pytest.raises(IndexError) as te:
            t.insert(idx, torch.nn.Tanh())
        with pytest.raises(IndexError) as se:
            s.insert(idx, nn.Tanh())
        assert str(se.value) == str(te.value)
    with pytest.raises(AssertionError):
        t.insert(0, 3)
    with pytest.raises(AssertionError):
        s.insert(0, 3)


def test_sequential_add_iadd():
    (a, b, c), (sa, sb, sc) = _pair("relu", "lin", "tanh")
    t1, t2 = torch.nn.Sequential(a, b), torch.nn.Sequential(c)
    s1, s2 = nn.Sequential(sa, sb), nn.Sequential(sc)
    t3, s3 = t1 + t2, s1 + s2
    assert type(s3) is nn.Sequential and s3 is not s1
    _same(t3, s3)
    assert s3[1] is sb  # modules are shared, not copied
    _same(t1, s1)  # operands untouched
    t1 += t2
    s1_id = id(s1)
    s1 += s2
    assert id(s1) == s1_id
    _same(t1, s1)
    # Named keys: + renumbers, += appends numbered keys after the names.
    from collections import OrderedDict
    tn = torch.nn.Sequential(OrderedDict(a=torch.nn.ReLU()))
    sn = nn.Sequential(OrderedDict(a=nn.ReLU()))
    _same(tn + torch.nn.Sequential(torch.nn.Tanh()), sn + nn.Sequential(nn.Tanh()))
    tn += torch.nn.Sequential(torch.nn.Tanh())
    sn += nn.Sequential(nn.Tanh())
    _same(tn, sn)
    for bad_t, bad_s in ((torch.nn.ModuleList(), nn.ModuleList()), ([], [])):
        with pytest.raises(ValueError):
            t1 + bad_t
        with pytest.raises(ValueError):
            s1 + bad_s
        with pytest.raises(ValueError):
            s1 += bad_s


def test_sequential_mul():
    (a, b), (sa, sb) = _pair("relu", "lin")
    t, s = torch.nn.Sequential(a, b), nn.Sequential(sa, sb)
    _same(t * 3, s * 3)
    _same(2 * t, 2 * s)
    assert (s * 2)[2] is sa  # repeats share the module objects, as torch
    _same(t, s)
    t *= 2
    s_id = id(s)
    s *= 2
    assert id(s) == s_id
    _same(t, s)
    assert s[0] is s[2]
    for bad in (0, -1):
        with pytest.raises(ValueError):
            t * bad
        with pytest.raises(ValueError):
            s * bad
        with pytest.raises(ValueError):
            s *= bad
    with pytest.raises(TypeError):
        t * 1.5
    with pytest.raises(TypeError):
        s * 1.5
    with pytest.raises(TypeError):
        s *= 1.5


def test_sequential_repr_does_not_collapse():
    t = torch.nn.Sequential(*[torch.nn.Linear(1, 1) for _ in range(3)])
    s = nn.Sequential(*[nn.Linear(1, 1) for _ in range(3)])
    assert "(0-2)" not in repr(t)
    assert repr(s) == repr(t)


# ------------------------------------------------------------------ ModuleList
def test_modulelist_delitem_pop_renumbers():
    names = ("relu", "lin", "tanh", "sig", "elu", "lin2")
    for idx in (0, 2, -1, slice(1, 3), slice(None, None, 2), slice(-2, None), slice(4, 1, -1)):
        tm, sm = _pair(*names)
        t, s = torch.nn.ModuleList(tm), nn.ModuleList(sm)
        del t[idx]
        del s[idx]
        _same(t, s)
    tm, sm = _pair(*names)
    t, s = torch.nn.ModuleList(tm), nn.ModuleList(sm)
    assert type(t.pop(1)).__name__ == type(s.pop(1)).__name__
    _same(t, s)
    tp, sp = t.pop(slice(0, 2)), s.pop(slice(0, 2))
    assert type(sp) is nn.ModuleList and _kinds(sp) == _kinds(tp)
    _same(t, s)
    with pytest.raises(IndexError):
        del t[10]
    with pytest.raises(IndexError):
        del s[10]


def test_modulelist_add_iadd():
    (a, b, c), (sa, sb, sc) = _pair("relu", "lin", "tanh")
    t, s = torch.nn.ModuleList([a, b]), nn.ModuleList([sa, sb])
    t2, s2 = t + torch.nn.ModuleList([c]), s + nn.ModuleList([sc])
    assert type(s2) is nn.ModuleList and s2 is not s
    _same(t2, s2)
    _same(t + [c], s + [sc])  # any iterable
    _same(t, s)
    s_id = id(s)
    t += [c]
    s += [sc]
    assert id(s) == s_id
    _same(t, s)
    with pytest.raises(TypeError) as te:
        t.extend(3)
    with pytest.raises(TypeError) as se:
        s.extend(3)
    assert str(se.value) == str(te.value)


@pytest.mark.parametrize("case", ["mixed", "same", "nested", "single", "empty", "alternating"])
def test_modulelist_repr_collapses_like_torch(case):
    def build(m):
        lin = lambda: m.Linear(1, 1)  # noqa: E731
        if case == "mixed":
            return m.ModuleList([lin(), lin(), lin(), m.ReLU(), m.Linear(2, 3), m.Linear(2, 3)])
        if case == "same":
            return m.ModuleList([lin() for _ in range(3)])
        if case == "nested":
            inner = m.ModuleList([lin(), lin()])
            return m.ModuleList([m.Sequential(lin(), m.ReLU()), m.Sequential(lin(), m.ReLU()),
                                 inner, m.ModuleList([m.Tanh(), m.Tanh(), m.ReLU()])])
        if case == "single":
            return m.ModuleList([lin()])
        if case == "empty":
            return m.ModuleList()
        return m.ModuleList([m.ReLU(), m.Tanh(), m.ReLU(), m.ReLU()])
    assert repr(build(nn)) == repr(build(torch.nn))


def test_modulelist_repr_inside_module():
    t = torch.nn.Sequential(torch.nn.ModuleList([torch.nn.ReLU(), torch.nn.ReLU()]))
    s = nn.Sequential(nn.ModuleList([nn.ReLU(), nn.ReLU()]))
    assert repr(s) == repr(t)


# ------------------------------------------------------------------ forward(input=...)
def _forward_mismatches():
    skip = {"Module", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList",
            "RNNBase", "RNNCellBase"}
    out = []
    for name in sorted(dir(nn)):
        a, b = getattr(nn, name), getattr(torch.nn, name, None)
        if name in skip or not (isinstance(a, type) and isinstance(b, type)):
            continue
        if not issubclass(b, torch.nn.Module) or not hasattr(a, "forward"):
            continue
        pa = list(inspect.signature(a.forward).parameters)[1:2]
        pb = list(inspect.signature(b.forward).parameters)[1:2]
        if pa != pb:
            out.append((name, pa, pb))
    return out


def test_forward_first_parameter_names_match_torch():
    assert _forward_mismatches() == []


def test_forward_accepts_input_keyword():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    lin_t = torch.nn.Linear(8, 4)
    lin_s = nn.Linear(8, 4)
    lin_s.load_state_dict({k: ts.asarray(v.detach().numpy())
                           for k, v in lin_t.state_dict().items()})
    np.testing.assert_allclose(to_np(lin_s(input=ts.asarray(x))),
                               lin_t(input=torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    for name in ("ReLU", "Tanh", "GELU", "Sigmoid", "Identity", "Flatten"):
        tt = getattr(torch.nn, name)()(input=torch.tensor(x)).numpy()
        np.testing.assert_allclose(to_np(getattr(nn, name)()(input=ts.asarray(x))), tt,
                                   rtol=1e-5, atol=1e-6)
    seq = nn.Sequential(nn.ReLU(), nn.Flatten())
    np.testing.assert_allclose(to_np(seq(input=ts.asarray(x))),
                               torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Flatten())(
                                   input=torch.tensor(x)).numpy())
    assert tuple(nn.Conv1d(3, 2, 3)(input=ts.asarray(x)).shape) == \
        tuple(torch.nn.Conv1d(3, 2, 3)(input=torch.tensor(x)).shape)
    assert tuple(nn.MaxPool1d(2)(input=ts.asarray(x)).shape) == (2, 3, 4)
    # torch's RMSNorm names it x, and AdaptiveLogSoftmaxWithLoss input_/target_.
    assert tuple(nn.RMSNorm(8)(x=ts.asarray(x)).shape) == (2, 3, 8)
    for m in (nn.ReLU(), nn.Linear(8, 4)):
        with pytest.raises(TypeError):
            m(x=ts.asarray(x))


# ------------------------------------------------------------------ Embedding.from_pretrained
def test_embedding_from_pretrained_full_signature():
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    kw = dict(freeze=False, padding_idx=1, max_norm=5.0, norm_type=1.0, scale_grad_by_freq=True)
    te = torch.nn.Embedding.from_pretrained(torch.tensor(w), **kw)
    se = nn.Embedding.from_pretrained(ts.asarray(w), **kw)
    assert repr(se) == repr(te)
    assert (se.padding_idx, se.max_norm, se.norm_type, se.scale_grad_by_freq, se.sparse) == \
        (te.padding_idx, te.max_norm, te.norm_type, te.scale_grad_by_freq, te.sparse)
    assert se.weight.requires_grad == te.weight.requires_grad
    idx = np.array([0, 2, 2, 1, 3])
    to = te(torch.tensor(idx))
    so = se(ts.asarray(idx))
    np.testing.assert_allclose(to_np(so), to.detach().numpy(), rtol=1e-5)
    # max_norm renormalized the looked-up rows in place, as torch.
    np.testing.assert_allclose(to_np(se.weight), te.weight.detach().numpy(), rtol=1e-5)
    to.sum().backward()
    so.sum().backward()
    np.testing.assert_allclose(to_np(se.weight.grad), te.weight.grad.numpy(), rtol=1e-5)
    sp = nn.Embedding.from_pretrained(ts.asarray(w), sparse=True)
    assert sp.sparse and repr(sp) == repr(torch.nn.Embedding.from_pretrained(
        torch.tensor(w), sparse=True))
    with pytest.raises(AssertionError):
        torch.nn.Embedding.from_pretrained(torch.zeros(3))
    with pytest.raises(AssertionError):
        nn.Embedding.from_pretrained(ts.zeros(3))


# ------------------------------------------------------------------ clip_grad_norm_
def _grads_pair(grads):
    tp, sp = [], []
    for g in grads:
        a = torch.nn.Parameter(torch.zeros(g.shape, dtype=torch.float64 if g.dtype == np.float64
                                           else torch.float32))
        a.grad = torch.tensor(g)
        b = nn.Parameter(ts.zeros(g.shape, dtype=ts.float64 if g.dtype == np.float64
                                  else ts.float32))
        b.grad = ts.asarray(g)
        tp.append(a)
        sp.append(b)
    return tp, sp


@pytest.mark.parametrize("norm_type", [0, 0.0, 1, 2, 2.0, 3.5, 0.5, float("inf"), -float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal((3, 4)).astype(np.float32),
             np.array([0.0, 0.0, 2.0], dtype=np.float32),
             np.zeros((2,), dtype=np.float32)]
    tp, sp = _grads_pair(grads)
    tt = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    st = nn.utils.clip_grad_norm_(sp, max_norm, norm_type)
    assert str(st.dtype).split(".")[-1] == str(tt.dtype).split(".")[-1]
    np.testing.assert_allclose(to_np(st), tt.numpy(), rtol=1e-5)
    for a, b in zip(tp, sp):
        np.testing.assert_allclose(to_np(b.grad), a.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_dtype_generator_foreach():
    rng = np.random.default_rng(2)
    grads = [rng.standard_normal((5,)).astype(np.float64), rng.standard_normal((2, 2))
             .astype(np.float32)]
    for foreach in (None, True, False):
        tp, sp = _grads_pair(grads)
        # Generators (model.parameters()) must still be clipped.
        tt = torch.nn.utils.clip_grad_norm_((p for p in tp), 0.1, 2.0, foreach=foreach)
        st = nn.utils.clip_grad_norm_((p for p in sp), 0.1, 2.0, foreach=foreach)
        assert str(st.dtype).split(".")[-1] == str(tt.dtype).split(".")[-1] == "float64"
        np.testing.assert_allclose(to_np(st), tt.numpy(), rtol=1e-6)
        for a, b in zip(tp, sp):
            np.testing.assert_allclose(to_np(b.grad), a.grad.numpy(), rtol=1e-5)
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        torch.nn.utils.clip_grad_norm_((p for p in []), 1.0)
    with warnings.catch_warnings(record=True) as sw:
        warnings.simplefilter("always")
        out = nn.utils.clip_grad_norm_((p for p in []), 1.0)
    assert [str(w.message) for w in sw] == [str(w.message) for w in tw]
    assert float(to_np(out)) == 0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_foreach_norm_matches_torch(dtype):
    """_C._foreach_norm (clip_grad_norm_'s one-read 2-norms): strided, empty, 0-d, large."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((7, 5)).astype(dtype),
              rng.standard_normal((4, 6)).astype(dtype).T,  # transposed: not contiguous
              np.zeros((0, 3), dtype=dtype), np.array(2.5, dtype=dtype),
              rng.standard_normal(70001).astype(dtype)]
    xs = [ts.asarray(a) for a in arrays]
    xs[1] = ts.asarray(arrays[1].T).T
    got = ts._C._foreach_norm(xs)
    want = torch.stack(torch._foreach_norm([torch.tensor(a) for a in arrays], 2))
    assert got.shape == (5,) and str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(to_np(got), want.numpy(), rtol=1e-6 if dtype == np.float32 else 1e-12)
    with pytest.raises(TypeError, match="_foreach_norm"):
        ts._C._foreach_norm([ts.ones(2), ts.ones(2, dtype=ts.float64)])
    with pytest.raises(TypeError, match="_foreach_norm"):
        ts._C._foreach_norm([ts.ones(2, dtype=ts.int64)])
    with pytest.raises(ValueError, match="_foreach_norm"):
        ts._C._foreach_norm([])


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_get_total_norm_matches_torch(norm_type):
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(9)
              .astype(np.float32)]
    want = torch.nn.utils.get_total_norm([torch.tensor(a) for a in arrays], norm_type)
    got = nn.utils.get_total_norm([ts.asarray(a) for a in arrays], norm_type)
    np.testing.assert_allclose(to_np(got), want.numpy(), rtol=1e-6)


def test_clip_grad_norm_error_if_nonfinite():
    grads = [np.array([1.0, np.inf], dtype=np.float32), np.array([1.0], dtype=np.float32)]
    tp, sp = _grads_pair(grads)
    with pytest.raises(RuntimeError) as te:
        torch.nn.utils.clip_grad_norm_(tp, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as se:
        nn.utils.clip_grad_norm_(sp, 1.0, error_if_nonfinite=True)
    assert str(se.value) == str(te.value)
    # Without the flag both scale by the non-finite norm.
    tt = torch.nn.utils.clip_grad_norm_(tp, 1.0)
    st = nn.utils.clip_grad_norm_(sp, 1.0)
    assert np.isinf(to_np(st)) and np.isinf(tt.numpy())
    for a, b in zip(tp, sp):
        np.testing.assert_allclose(to_np(b.grad), a.grad.numpy(), equal_nan=True)


# ------------------------------------------------------------------ adaptive max pooling ties
_POOLS = [
    ("AdaptiveMaxPool1d", (1, 2, 6), 2), ("AdaptiveMaxPool1d", (1, 2, 7), 3),
    ("AdaptiveMaxPool2d", (1, 1, 5, 5), 2), ("AdaptiveMaxPool2d", (2, 4, 4), 2),
    ("AdaptiveMaxPool2d", (1, 1, 5, 6), (3, None)),
    ("AdaptiveMaxPool3d", (1, 1, 4, 5, 5), 2), ("AdaptiveMaxPool3d", (1, 1, 4, 4, 4), 2),
]


@pytest.mark.parametrize("return_indices", [False, True])
@pytest.mark.parametrize("name,shape,size", _POOLS)
@pytest.mark.parametrize("fill", ["ones", "random_ties"])
def test_adaptive_max_pool_grad_goes_to_argmax(name, shape, size, return_indices, fill):
    rng = np.random.default_rng(3)
    x = np.ones(shape, dtype=np.float32) if fill == "ones" else \
        rng.integers(0, 3, shape).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    sx = ts.asarray(x)
    sx.requires_grad = True
    to = getattr(torch.nn, name)(size, return_indices)(tx)
    so = getattr(nn, name)(size, return_indices)(sx)
    if return_indices:
        np.testing.assert_array_equal(to_np(so[1]), to[1].numpy())
        to, so = to[0], so[0]
    np.testing.assert_allclose(to_np(so), to.detach().numpy())
    w = rng.standard_normal(to.shape).astype(np.float32)
    (to * torch.tensor(w)).sum().backward()
    (so * ts.asarray(w)).sum().backward()
    np.testing.assert_allclose(to_np(sx.grad), tx.grad.numpy(), rtol=1e-6)


def test_adaptive_max_pool2d_functional_and_max_pool_ties():
    x = np.ones((1, 1, 5, 5), dtype=np.float32)
    from tessera.nn.functional import pooling
    assert pooling.adaptive_max_pool2d is ts.nn.functional.adaptive_max_pool2d  # one definition
    for fn in (ts.nn.functional.adaptive_max_pool2d,):
        sx = ts.asarray(x)
        sx.requires_grad = True
        fn(sx, 2).sum().backward()
        tx = torch.tensor(x, requires_grad=True)
        torch.nn.functional.adaptive_max_pool2d(tx, 2).sum().backward()
        np.testing.assert_allclose(to_np(sx.grad), tx.grad.numpy())
    for name, shape, k in (("MaxPool1d", (1, 2, 6), 2), ("MaxPool2d", (1, 1, 5, 5), 3),
                           ("MaxPool3d", (1, 1, 4, 4, 4), 2)):
        tx = torch.tensor(np.ones(shape, dtype=np.float32), requires_grad=True)
        sx = ts.ones(shape)
        sx.requires_grad = True
        getattr(torch.nn, name)(k, 1).forward(tx).sum().backward()
        getattr(nn, name)(k, 1)(sx).sum().backward()
        np.testing.assert_allclose(to_np(sx.grad), tx.grad.numpy())


# ------------------------------------------------------------------ LP pooling
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("p", [1.0, 2.0, 3, 1.5, float("inf"), -float("inf")])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_lp_pool_matches_torch(nsp, p, ceil_mode):
    rng = np.random.default_rng(4)
    shape = (1, 2) + (5,) * nsp
    x = rng.standard_normal(shape).astype(np.float32)
    x[..., :2] = 0.0  # all-zero windows: torch's gradient there is 0, not NaN
    name = f"LPPool{nsp}d"
    tx = torch.tensor(x, requires_grad=True)
    sx = ts.asarray(x)
    sx.requires_grad = True
    to = getattr(torch.nn, name)(p, 2, ceil_mode=ceil_mode)(tx)
    so = getattr(nn, name)(p, 2, ceil_mode=ceil_mode)(sx)
    np.testing.assert_allclose(to_np(so), to.detach().numpy(), rtol=1e-5, atol=1e-6,
                               equal_nan=True)
    w = rng.standard_normal(to.shape).astype(np.float32)
    (to * torch.tensor(w)).sum().backward()
    (so * ts.asarray(w)).sum().backward()
    np.testing.assert_allclose(to_np(sx.grad), tx.grad.numpy(), rtol=1e-4, atol=1e-6,
                               equal_nan=True)


def test_lp_pool_zero_window_grad_is_zero():
    for nsp in (1, 2):
        sx = ts.zeros((1, 1) + (4,) * nsp)
        sx.requires_grad = True
        getattr(nn, f"LPPool{nsp}d")(2, 2)(sx).sum().backward()
        assert not np.isnan(to_np(sx.grad)).any()
        assert (to_np(sx.grad) == 0).all()
    sx = ts.asarray(np.array([[[1.0, -3.0, 2.0, 0.5]]], dtype=np.float32))
    sx.requires_grad = True
    y = nn.LPPool1d(float("inf"), 2)(sx)
    np.testing.assert_allclose(to_np(y), [[[3.0, 2.0]]])
    y.sum().backward()
    np.testing.assert_allclose(to_np(sx.grad), [[[0.0, -1.0, 1.0, 0.0]]])

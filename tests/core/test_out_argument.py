"""out= against PyTorch 2.13 (Note [out= rules] in csrc/ops/out_arg.cpp): every public
function whose signature has `out` is found by inspect.signature and called with an out of the
right shape, an empty one, a wrong non-empty one (resized with PyTorch's UserWarning), a strided
view, other dtypes (PyTorch's canCast or exact-dtype rule, per op), out aliasing an input, and
inputs that require grad; result, warning and error class must match torch's."""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tessera as ts
from harness import assert_same, randn

# ---- inputs: the same arrays for both libraries
_ARRAYS = {
    "x": randn(2, 3),
    "y": randn(2, 3),
    "ypos": np.abs(randn(2, 3)) + 0.5,
    "v3a": randn(2, 3),
    "v3b": randn(2, 3),
    "sq": randn(3, 3) + 3 * np.eye(3, dtype=np.float32),
    "i": np.array([[4, -6, 9], [12, 0, 7]], dtype=np.int64),
    "j": np.array([[6, 4, 3], [8, 5, 7]], dtype=np.int64),
    "e": np.array([[1, 0, 2], [3, -1, 0]], dtype=np.int32),
    "idx": np.array([[0, 2], [1, 1]], dtype=np.int64),
    "sidx": np.array([[0, 2, 1], [1, 0, 2]], dtype=np.int64),
    "i1": np.array([2, 0], dtype=np.int64),
    "src2": randn(2, 2),
    "cond": randn(2, 3) > 0,
    "seq": np.array([-1.0, -0.2, 0.0, 0.4, 1.5], dtype=np.float32),
    "v3": randn(3),
    "v4": randn(4),
    "b1": randn(2, 3, 4),
    "b2": randn(2, 4, 3),
    "b3": randn(2, 3, 3),
    "inf": np.array([[np.inf, -np.inf, 1.0], [np.nan, 0.0, -2.0]], dtype=np.float32),
}


def _inputs(m, requires_grad=False):
    lib = torch if m is torch else ts
    out = {}
    for k, a in _ARRAYS.items():
        t = lib.tensor(a) if m is torch else ts.asarray(np.array(a))
        if requires_grad and a.dtype == np.float32:
            t.requires_grad_(True)
        out[k] = t
    out["_m"] = m
    return out


def _fn(m, name):
    mod = m
    for part in name.split(".")[:-1]:
        mod = getattr(mod, part)
    return getattr(mod, name.split(".")[-1])


# name -> (args(t) for the call, kwargs); t holds the library's tensors. The function is
# looked up by name in torch and in tessera.
RECIPES = {
    # elementwise: PyTorch's canCast rule
    "add": lambda t: ((t["x"], t["y"]), {"alpha": 2}),
    "subtract": lambda t: ((t["x"], t["y"]), {}),
    "sub": lambda t: ((t["x"], t["y"]), {}),
    "multiply": lambda t: ((t["x"], t["y"]), {}),
    "mul": lambda t: ((t["x"], t["y"]), {}),
    "true_divide": lambda t: ((t["x"], t["ypos"]), {}),
    "divide": lambda t: ((t["x"], t["ypos"]), {}),
    "div": lambda t: ((t["x"], t["ypos"]), {"rounding_mode": "floor"}),
    "fmod": lambda t: ((t["x"], t["ypos"]), {}),
    "lerp": lambda t: ((t["x"], t["y"], 0.25), {}),
    "addcmul": lambda t: ((t["x"], t["x"], t["y"]), {"value": 0.5}),
    "addcdiv": lambda t: ((t["x"], t["x"], t["ypos"]), {}),
    "gcd": lambda t: ((t["i"], t["j"]), {}),
    "lcm": lambda t: ((t["i"], t["j"]), {}),
    "fmax": lambda t: ((t["x"], t["y"]), {}),
    "fmin": lambda t: ((t["x"], t["y"]), {}),
    "logaddexp2": lambda t: ((t["x"], t["y"]), {}),
    "ldexp": lambda t: ((t["x"], t["e"]), {}),
    "rsqrt": lambda t: ((t["ypos"],), {}),
    "exp2": lambda t: ((t["x"],), {}),
    "deg2rad": lambda t: ((t["x"],), {}),
    "rad2deg": lambda t: ((t["x"],), {}),
    "angle": lambda t: ((t["x"],), {}),
    # elementwise ops that want out in the result's dtype
    "clamp": lambda t: ((t["x"], -0.5, 0.5), {}),
    "clip": lambda t: ((t["x"], -0.5, 0.5), {}),
    "clamp_min": lambda t: ((t["x"], 0.0), {}),
    "clamp_max": lambda t: ((t["x"], 0.0), {}),
    "nan_to_num": lambda t: ((t["inf"],), {}),
    "frac": lambda t: ((t["x"],), {}),
    "sgn": lambda t: ((t["x"],), {}),
    "fix": lambda t: ((t["x"],), {}),
    "round": lambda t: ((t["x"],), {"decimals": 1}),
    "isposinf": lambda t: ((t["inf"],), {}),
    "isneginf": lambda t: ((t["inf"],), {}),
    "heaviside": lambda t: ((t["x"], t["y"]), {}),
    "float_power": lambda t: ((t["x"], 2.0), {}),
    "complex": lambda t: ((t["x"], t["y"]), {}),
    "polar": lambda t: ((t["ypos"], t["y"]), {}),
    "where": lambda t: ((t["cond"], t["x"], t["y"]), {}),
    # indexing
    "gather": lambda t: ((t["x"], 1, t["idx"]), {}),
    "scatter": lambda t: ((t["x"], 1, t["idx"], t["src2"]), {}),
    "scatter_add": lambda t: ((t["x"], 1, t["idx"], t["src2"]), {}),
    "scatter_reduce": lambda t: ((t["x"], 1, t["idx"], t["src2"], "amax"), {}),
    "index_select": lambda t: ((t["x"], 1, t["i1"]), {}),
    "index_add": lambda t: ((t["x"], 1, t["i1"], t["src2"]), {}),
    "index_copy": lambda t: ((t["x"], 1, t["i1"], t["src2"]), {}),
    "index_reduce": lambda t: ((t["x"], 1, t["i1"], t["src2"], "prod"), {}),
    "masked_select": lambda t: ((t["x"], t["cond"]), {}),
    "searchsorted": lambda t: ((t["seq"], t["x"]), {}),
    # products, norms
    "matmul": lambda t: ((t["x"], t["sq"]), {}),
    "mm": lambda t: ((t["x"], t["sq"]), {}),
    "addmm": lambda t: ((t["y"], t["x"], t["sq"]), {"beta": 0.5}),
    "tensordot": lambda t: ((t["x"], t["y"]), {"dims": ([1], [1])}),
    "linalg.vecdot": lambda t: ((t["x"], t["y"]), {}),
    "chain_matmul": lambda t: ((t["sq"], t["sq"]), {}),
    "cross": lambda t: ((t["v3a"], t["v3b"]), {"dim": 1}),
    "norm": lambda t: ((t["x"],), {"dim": 1}),
    "renorm": lambda t: ((t["x"], 2, 0, 1.0), {}),
    "tril": lambda t: ((t["x"],), {}),
    "triu": lambda t: ((t["x"], 1), {}),
    "bmm": lambda t: ((t["b1"], t["b2"]), {}),
    "addbmm": lambda t: ((t["sq"], t["b1"], t["b2"]), {"alpha": 0.5}),
    "baddbmm": lambda t: ((t["b3"], t["b1"], t["b2"]), {}),
    "addmv": lambda t: ((t["v3"], t["sq"], t["v3"]), {}),
    "addr": lambda t: ((t["sq"], t["v3"], t["v3"]), {}),
    "mv": lambda t: ((t["sq"], t["v3"]), {}),
    "dot": lambda t: ((t["v3"], t["v3"]), {}),
    "vdot": lambda t: ((t["v3"], t["v3"]), {}),
    "inner": lambda t: ((t["x"], t["y"]), {}),
    "outer": lambda t: ((t["v3"], t["v4"]), {}),
    "ger": lambda t: ((t["v3"], t["v4"]), {}),
    "kron": lambda t: ((t["x"], t["y"]), {}),
    "count_nonzero": lambda t: ((t["x"], 1), {}),
    # joins
    "cat": lambda t: (([t["x"], t["y"]], 1), {}),
    "concatenate": lambda t: (([t["x"], t["y"]], 1), {}),
    "stack": lambda t: (([t["x"], t["y"]],), {}),
    # reductions (sum, prod, mean, cumsum, cumprod compute in out's dtype)
    "sum": lambda t: ((t["x"], 1), {}),
    "prod": lambda t: ((t["x"], 1), {}),
    "mean": lambda t: ((t["x"], 1), {}),
    "all": lambda t: ((t["cond"], 1), {}),
    "any": lambda t: ((t["cond"], 1), {}),
    "argmax": lambda t: ((t["x"], 1), {}),
    "argmin": lambda t: ((t["x"], 1), {}),
    "std": lambda t: ((t["x"], 1), {}),
    "var": lambda t: ((t["x"], 1), {}),
    "cumsum": lambda t: ((t["x"], 1), {}),
    "cumprod": lambda t: ((t["x"], 1), {}),
    # fft, linalg
    "fft.fft": lambda t: ((t["x"],), {}),
    "fft.ifft": lambda t: ((t["x"],), {}),
    "fft.rfft": lambda t: ((t["x"],), {}),
    "fft.fft2": lambda t: ((t["sq"],), {}),
    "fft.fftn": lambda t: ((t["sq"],), {}),
    "fft.ifft2": lambda t: ((t["sq"],), {}),
    "fft.ifftn": lambda t: ((t["sq"],), {}),
    "fft.rfft2": lambda t: ((t["sq"],), {}),
    "fft.rfftn": lambda t: ((t["sq"],), {}),
    "fft.irfft": lambda t: ((t["x"],), {}),
    "fft.irfft2": lambda t: ((t["sq"],), {}),
    "fft.irfftn": lambda t: ((t["sq"],), {}),
    "fft.hfft": lambda t: ((t["x"],), {}),
    "fft.ihfft": lambda t: ((t["x"],), {}),
    "linalg.cond": lambda t: ((t["sq"],), {}),
    "linalg.matrix_rank": lambda t: ((t["sq"],), {}),
    "linalg.tensorinv": lambda t: ((t["sq"],), {"ind": 1}),
    "linalg.tensorsolve": lambda t: ((t["sq"], t["v3"]), {}),
    "linalg.lu_solve": lambda t: (t["_m"].linalg.lu_factor(t["sq"]) + (t["x"].T,), {}),
    "lu_solve": lambda t: ((t["x"].T,) + tuple(t["_m"].linalg.lu_factor(t["sq"])), {}),
    "linalg.inv": lambda t: ((t["sq"],), {}),
    "linalg.det": lambda t: ((t["sq"],), {}),
    "linalg.solve": lambda t: ((t["sq"], t["x"].T), {}),
    "linalg.cholesky": lambda t: ((t["sq"] @ t["sq"].T,), {}),
    "linalg.eigvalsh": lambda t: ((t["sq"] + t["sq"].T,), {}),
    "linalg.svdvals": lambda t: ((t["sq"],), {}),
    "linalg.matrix_power": lambda t: ((t["sq"], 3), {}),
    "linalg.matrix_norm": lambda t: ((t["sq"],), {}),
    "linalg.vector_norm": lambda t: ((t["x"],), {"dim": 1}),
    "linalg.norm": lambda t: ((t["x"],), {"dim": 1}),
    "linalg.pinv": lambda t: ((t["x"],), {}),
    "linalg.matrix_exp": lambda t: ((t["sq"] / 8,), {}),
    "linalg.multi_dot": lambda t: (([t["x"], t["sq"], t["sq"]],), {}),
    "linalg.cross": lambda t: ((t["v3a"], t["v3b"]), {}),
    "linalg.solve_triangular": lambda t: ((t["sq"].triu(), t["x"].T), {"upper": True}),
    # several outputs
    "max": lambda t: ((t["x"], 1), {}),
    "min": lambda t: ((t["x"], 1), {}),
    "frexp": lambda t: ((t["x"],), {}),
    "histogram": lambda t: ((t["x"], 4), {}),
    "linalg.slogdet": lambda t: ((t["sq"],), {}),
    "linalg.qr": lambda t: ((t["sq"],), {}),
    "linalg.householder_product": lambda t: ((t["sq"], t["x"][0]), {}),
    "orgqr": lambda t: ((t["sq"], t["x"][0]), {}),
    "linalg.eigh": lambda t: ((t["sq"] + t["sq"].T,), {}),
    "linalg.inv_ex": lambda t: ((t["sq"],), {}),
    "linalg.lu_factor": lambda t: ((t["sq"],), {}),
    "linalg.lu_factor_ex": lambda t: ((t["sq"],), {}),
    "linalg.lu": lambda t: ((t["sq"],), {}),
    "linalg.svd": lambda t: ((t["sq"],), {}),
    "linalg.cholesky_ex": lambda t: ((t["sq"] @ t["sq"].T,), {}),
    "linalg.solve_ex": lambda t: ((t["sq"], t["x"].T), {}),
    "linalg.lstsq": lambda t: ((t["sq"], t["x"].T), {}),
    "lu": lambda t: ((t["sq"],), {}),
    "lu_unpack": lambda t: (tuple(t["_m"].linalg.lu_factor(t["sq"])), {}),
    "triangular_solve": lambda t: ((t["x"].T, t["sq"].triu()), {}),
}
# Random results: shape, dtype and identity are compared, not values.
RANDOM = {
    "normal": lambda t: ((t["x"], t["ypos"]), {}),
    "bernoulli": lambda t: ((t["ypos"] / 4,), {}),
    "multinomial": lambda t: ((t["ypos"], 2), {}),
    "rand": lambda t: ((2, 3), {}),
    "randn": lambda t: ((2, 3), {}),
    "randint": lambda t: ((0, 5, (2, 3)), {}),
    "randperm": lambda t: ((6,), {}),
}
# Creation functions: torch resizes their out silently (no deprecation warning).
CREATION = {
    "arange": lambda t: ((1, 7), {}),
    "zeros": lambda t: ((2, 3), {}),
    "ones": lambda t: ((2, 3), {}),
    "full": lambda t: ((2, 3), 1.5),
    "eye": lambda t: ((3,), {}),
    "linspace": lambda t: ((0.0, 1.0, 5), {}),
    "logspace": lambda t: ((0.0, 1.0, 5), {}),
}
CREATION["full"] = lambda t: (((2, 3), 1.5), {})
# What tessera does not do as torch yet (named here so the walk below still covers them).
KNOWN_GAPS = {
    "rsub": "torch.rsub has no out= for a tensor other; tessera's accepts one",
    "isreal": "torch.isreal has no out=; tessera's accepts one",
    "empty_strided": "torch.empty_strided has no out=",
    "empty_permuted": "torch.empty_permuted has no out=",
    "scalar_tensor": "a legacy factory; out= as the other factories",
}


# Where tessera's out= still differs from torch 2.13 (strict xfails: each must still differ).
_GRAD = "torch records through this composite or non-differentiable op instead of raising"
DIFFERS = {
    ("resize", "addbmm"): "torch's addbmm resizes a wrong-shaped out without the warning",
    ("resize", "bernoulli"): "torch's bernoulli resizes a wrong-shaped out without the warning",
    ("resize", "multinomial"): "torch's multinomial resizes out without the warning",
    ("resize", "lu"): "torch.lu (Python) resizes its outs without the warning",
    ("dtype", "cumsum", "bool"): "torch has no bool cumsum kernel; tessera computes in bool",
    ("dtype", "cumprod", "bool"): "torch has no bool cumprod kernel; tessera computes in bool",
    ("dtype", "ldexp", "float64"): "torch 2.13 fails an INTERNAL ASSERT (its bug); tessera casts",
    ("dtype", "ldexp", "float16"): "torch 2.13 fails an INTERNAL ASSERT (its bug); tessera casts",
    ("dtype", "ldexp", "complex64"): "torch 2.13 fails an INTERNAL ASSERT (its bug); tessera casts",
    ("dtype", "lu"): "torch.lu's out= (a pair plus infos) is not tessera's",
    ("dtype", "mean", "float16"): "torch computes the float16 mean in float32 and rounds",
    ("dtype", "var", "float16"): "torch computes the float16 var in float32 and rounds",
    ("dtype", "std", "complex64"): "torch has no complex std of a real input",
    ("dtype", "var", "complex64"): "torch has no complex var of a real input",
    ("grad", "heaviside"): _GRAD, ("grad", "histogram"): _GRAD, ("grad", "inner"): _GRAD,
    ("grad", "fft.ifft"): _GRAD, ("grad", "fft.ihfft"): _GRAD, ("grad", "linalg.cond"): _GRAD,
    ("grad", "linalg.matrix_norm"): _GRAD, ("grad", "linalg.norm"): _GRAD,
    ("grad", "linalg.tensorinv"): _GRAD, ("grad", "linalg.tensorsolve"): _GRAD,
    ("grad", "lu"): _GRAD, ("grad", "tensordot"): _GRAD,
}
for _d in ("float64", "float32", "float16", "complex64"):
    DIFFERS[("dtype", "linalg.lstsq", _d)] = "torch's lstsq out= layout differs (rank/residuals)"
for _n in ("fft.hfft", "fft.irfft", "fft.irfft2", "fft.irfftn"):
    DIFFERS[("dtype", _n, "complex64")] = "torch's c2r fft refuses a complex out"


def _params(kind, names, dtypes=(None,)):
    out = []
    for n in names:
        for d in dtypes:
            reason = DIFFERS.get((kind, n, d)) or DIFFERS.get((kind, n))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(n, d, marks=marks, id=n if d is None else f"{n}-{d}"))
    return out


def _torch_has(name):
    try:
        _fn(torch, name)
        return True
    except AttributeError:
        return False


def _public_out_functions():
    names = set()
    for prefix, mod in (("", ts), ("linalg.", ts.linalg), ("fft.", ts.fft),
                        ("special.", ts.special)):
        for attr in dir(mod):
            if attr.startswith("_"):
                continue
            f = getattr(mod, attr)
            if isinstance(f, type) or not callable(f):
                continue
            try:
                sig = inspect.signature(f)
            except (TypeError, ValueError):
                continue
            if "out" in sig.parameters:
                names.add(prefix + attr)
    return names


DISCOVERED = _public_out_functions()
ALL = {**RECIPES, **RANDOM, **CREATION}
WALKED = sorted(n for n in DISCOVERED if n in ALL)


def test_every_out_function_is_walked():
    """Each public function taking out= has a recipe here, or is named as a known gap."""
    missing = sorted(n for n in DISCOVERED - set(ALL) - set(KNOWN_GAPS) if _torch_has(n))
    assert not missing, f"functions with out= and no recipe: {missing}"
    assert len(WALKED) >= 60


# ---- running a call in both libraries
def _call(m, name, make_out, requires_grad=False):
    """(outcome, value or exception, warnings, out) of name(*args, out=make_out(m, ref))."""
    f = _fn(m, name)
    args, kw = ALL[name](_inputs(m))
    ref = f(*args, **kw)
    if requires_grad:
        args, kw = ALL[name](_inputs(m, requires_grad))
    out = make_out(m, ref)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = f(*args, **kw, out=out)
            res = ("ok", r)
        except Exception as e:  # noqa: BLE001 - the class is compared with torch's
            res = ("err", e)
    resized = [x for x in w if issubclass(x.category, UserWarning) and "resized" in str(x.message)]
    return res[0], res[1], resized, out


def _specs(ref):
    return list(ref) if isinstance(ref, tuple) else [ref]


def _dname(d):
    return str(d).split(".")[-1]


def _tdtype(m, d):
    return getattr(m, _dname(d))


def _empty_like_spec(m, ref, shape=None, dtype=None):
    outs = []
    for r in _specs(ref):
        sh = tuple(r.shape) if shape is None else shape
        dt = _tdtype(m, r.dtype) if dtype is None else getattr(m, dtype)
        outs.append(m.empty(sh, dtype=dt) if m is torch else ts.empty(sh, dtype=dt))
    return tuple(outs) if isinstance(ref, tuple) else outs[0]


def _compare(name, want, got, values=True):
    kw, wv, ww, wout = want
    kg, gv, gw, gout = got
    if kw == "err":
        assert kg == "err", f"{name}: torch raised {wv!r}, tessera returned"
        assert isinstance(gv, type(wv)), (name, wv, gv)
        return
    assert kg == "ok", f"{name}: tessera raised {gv!r}, torch returned"
    assert bool(gw) == bool(ww), (name, [str(x.message) for x in gw], [str(x.message) for x in ww])
    if isinstance(wout, tuple):
        assert isinstance(gv, tuple) and all(a is b for a, b in zip(gv, gout)), name
    else:
        assert gv is gout, f"{name}: out= must return out itself"
    for g, w in zip(_specs(gout), _specs(wout)):
        assert tuple(g.shape) == tuple(w.shape), name
        assert _dname(g.dtype) == _dname(w.dtype), name
        if values and name in RECIPES:
            assert_same(g, w, rtol=1e-5, atol=1e-5)


def _both(name, make_out, requires_grad=False):
    want = _call(torch, name, make_out, requires_grad)
    got = _call(ts, name, make_out, requires_grad)
    _compare(name, want, got)
    return want, got


@pytest.mark.parametrize("name", WALKED)
def test_out_of_the_right_shape(name):
    _both(name, lambda m, ref: _empty_like_spec(m, ref))


@pytest.mark.parametrize("name", WALKED)
def test_empty_out_is_resized_silently(name):
    want, got = _both(name, lambda m, ref: _empty_like_spec(m, ref, shape=(0,)))
    assert not got[2]


@pytest.mark.parametrize("name,_", _params("resize", WALKED))
def test_wrong_shaped_out_is_resized_with_a_warning(name, _):
    _both(name, lambda m, ref: _empty_like_spec(m, ref, shape=(7,)))


@pytest.mark.parametrize("name", WALKED)
def test_strided_out_keeps_its_strides(name):
    def strided(m, ref):
        outs = []
        for r in _specs(ref):
            dt = _tdtype(m, r.dtype)
            big = m.zeros(tuple(r.shape) + (2,), dtype=dt)
            outs.append(big[..., 1])
        return tuple(outs) if isinstance(ref, tuple) else outs[0]

    want, got = _both(name, strided)
    if want[0] == "ok":
        for g, w in zip(_specs(got[3]), _specs(want[3])):
            assert tuple(g.stride()) == tuple(w.stride()), name


@pytest.mark.parametrize("name,dtype", _params(
    "dtype", sorted(n for n in WALKED if n in RECIPES),
    ("float64", "float32", "float16", "int64", "int32", "bool", "complex64")))
def test_out_dtype_follows_torch(name, dtype):
    """PyTorch's canCast for elementwise ops, its exact-dtype rule for the others."""
    _both(name, lambda m, ref: _empty_like_spec(m, ref, dtype=dtype))


@pytest.mark.parametrize("name,_", _params("grad", sorted(n for n in WALKED if n in RECIPES)))
def test_out_with_inputs_requiring_grad_raises(name, _):
    def out(m, ref):
        return _empty_like_spec(m, ref, shape=(0,))

    want = _call(torch, name, out, requires_grad=True)
    got = _call(ts, name, out, requires_grad=True)
    assert want[0] == got[0], (name, want[1], got[1])
    if want[0] == "err":
        assert isinstance(got[1], type(want[1])), (name, got[1])
    if name == "count_nonzero":  # torch's has no out=: a TypeError either way
        return
    with ts.no_grad():
        got = _call(ts, name, out, requires_grad=True)
    assert got[0] == "ok", (name, got[1])


def test_out_requiring_grad_raises_under_grad_mode():
    for m in (torch, ts):
        x = m.ones(3) if m is torch else ts.ones(3)
        o = m.zeros(3, requires_grad=True) if m is torch else ts.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
            m.add(x, x, out=o)


# ---- aliasing and views
@pytest.mark.parametrize("name", ["add", "mul", "clamp", "fmod", "where", "lerp", "addcmul"])
def test_out_may_be_an_input(name):
    def run(m):
        t = _inputs(m)
        args, kw = ALL[name](t)
        target = next(a for a in args if isinstance(a, (torch.Tensor, ts.Tensor))
                      and a.dtype in (torch.float32, ts.float32))
        r = _fn(m, name)(*args, **kw, out=target)
        assert r is target
        return target

    assert_same(run(ts), run(torch))


@pytest.mark.parametrize("case", ["add", "neg_clamp", "index_select"])
def test_partial_overlap_raises_as_torch(case):
    def run(m):
        x = m.arange(8.0) if m is torch else ts.arange(8.0)
        if case == "add":
            return m.add(x[:4], x[:4], out=x[2:6])
        if case == "neg_clamp":
            return m.clamp(x[:4], 1.0, 5.0, out=x[1:5])
        return m.index_select(x[:4], 0, m.tensor([0, 1, 2, 3]) if m is torch
                              else ts.asarray([0, 1, 2, 3]), out=x[2:6])

    errs = []
    for m in (torch, ts):
        try:
            run(m)
            errs.append(None)
        except RuntimeError as e:
            errs.append(str(e))
    assert (errs[0] is None) == (errs[1] is None), errs
    if errs[0] is not None:
        assert "some elements of the input tensor and the written-to tensor" in errs[1]


def test_out_that_is_an_input_is_not_resized():
    for m in (torch, ts):
        x = m.ones(3)
        with pytest.raises(RuntimeError, match=r"output with shape .*3.* doesn't match the "
                                                r"broadcast shape"):
            m.add(x, m.ones(2, 3), out=x)


def test_expanded_out_raises_as_torch():
    for m in (torch, ts):
        o = m.zeros(1, 3).expand(2, 3)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            m.add(m.ones(2, 3), 1, out=o)


def test_out_view_writes_through_and_resized_view_keeps_its_offset():
    for m in (torch, ts):
        base = m.zeros(4, 3)
        a = m.ones(2, 3)
        m.add(a, a, out=base[1:3])
        np.testing.assert_array_equal(np.asarray(base.numpy()),
                                      [[0, 0, 0], [2, 2, 2], [2, 2, 2], [0, 0, 0]])
    got, want = [], []
    for m, sink in ((torch, want), (ts, got)):
        base = m.zeros(4, 3)
        view = base[1:2]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.add(m.ones(2, 3), 1, out=view)
        sink.append((tuple(view.shape), np.asarray(base.numpy()).copy(), len(w)))
    assert got[0][0] == want[0][0] and got[0][2] == want[0][2]
    np.testing.assert_array_equal(got[0][1], want[0][1])


def test_resize_keeps_identity_size_and_numpy_storage_refuses():
    o = ts.empty(5)
    assert o.size == 5
    with pytest.warns(UserWarning, match=r"resized since it had shape \[5\], which does not "
                                         r"match the required output shape \[2, 3\]"):
        r = ts.add(ts.ones(2, 3), 1, out=o)
    assert r is o and tuple(o.shape) == (2, 3) and o.size == 6 and o.size() == (2, 3)
    assert o.stride() == (3, 1)
    n = ts.from_numpy(np.zeros(3, dtype=np.float32))
    tn = torch.from_numpy(np.zeros(3, dtype=np.float32))
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        torch.add(torch.ones(2, 3), 1, out=tn)
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ts.add(ts.ones(2, 3), 1, out=n)


def test_resize_warning_as_error_propagates():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="resized"):
            ts.add(ts.ones(2), 1, out=ts.empty(3))


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 4), max_size=3),
       out_shape=st.lists(st.integers(0, 4), max_size=3),
       dtype=st.sampled_from(["float32", "float64", "int64", "int16", "bool", "complex64"]),
       in_dtype=st.sampled_from(["float32", "int64", "bool"]))
def test_add_out_shapes_and_dtypes_hypothesis(shape, out_shape, dtype, in_dtype):
    a = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(in_dtype)
    res = []
    for m in (torch, ts):
        x = torch.tensor(a) if m is torch else ts.asarray(a)
        o = m.zeros(tuple(out_shape), dtype=getattr(m, dtype))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = m.add(x, x, out=o)
                assert r is o
                resized = [x for x in w if "resized" in str(x.message)]
                res.append(("ok", np.asarray(o.numpy()).copy(), tuple(o.stride()), bool(resized)))
            except RuntimeError as e:
                res.append(("err", type(e).__name__))
    assert res[0][0] == res[1][0], res
    if res[0][0] == "ok":
        np.testing.assert_array_equal(res[1][1], res[0][1])
        assert res[1][2:] == res[0][2:]

"""rand / randn / randint / randperm / random.uniform parsed in C++
(csrc/python/bind_random_forms.cpp) against PyTorch: the size forms, dtype/device/out=/
requires_grad=/generator=, reproducibility under ts.manual_seed, and errors naming the op."""
from __future__ import annotations

import inspect

import pytest
import torch

import tessera as ts


def meta(t):
    return tuple(t.shape), str(t.dtype).rsplit(".", 1)[-1]


SIZE_FORMS = [((2, 3), {}), (((2, 3),), {}), (([2, 3],), {}), ((), {"size": (2, 3)}),
              ((4,), {}), ((0, 3), {}), ((), {"size": (5,)}), ((), {"size": ()})]


@pytest.mark.parametrize("name", ["rand", "randn"])
@pytest.mark.parametrize("args,kw", SIZE_FORMS, ids=repr)
def test_size_forms_as_torch(name, args, kw):
    assert meta(getattr(ts, name)(*args, **kw)) == meta(getattr(torch, name)(*args, **kw))


@pytest.mark.parametrize("name", ["rand", "randn"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_dtype_and_requires_grad(name, dtype):
    x = getattr(ts, name)(3, dtype=getattr(ts, dtype), requires_grad=True)
    y = getattr(torch, name)(3, dtype=getattr(torch, dtype), requires_grad=True)
    assert meta(x) == meta(y) and x.requires_grad


@pytest.mark.parametrize("args,kw", [((10, (3,)), {}), ((2, 5, (4, 2)), {}),
                                     ((), {"high": 4, "size": (2,)}), ((3, 7), {"size": (5,)}),
                                     ((10, (0,)), {}), ((-3, 3, (6,)), {"dtype": "int32"})],
                         ids=repr)
def test_randint_forms_as_torch(args, kw):
    kt = {k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()}
    ks = {k: getattr(ts, v) if k == "dtype" else v for k, v in kw.items()}
    got, want = ts.randint(*args, **ks), torch.randint(*args, **kt)
    assert meta(got) == meta(want)
    lo = args[0] if len(args) == 3 or "high" in kw and len(args) == 1 else 0
    hi = args[1] if len(args) == 3 else kw.get("high", args[0] if args else None)
    if len(args) == 2 and "size" in kw:
        lo, hi = args
    assert all(lo <= v < hi for v in got.reshape(-1).tolist())


def test_numpy_style_randint_and_uniform():
    assert ts.randint(5).shape == () and 0 <= int(ts.randint(5)) < 5
    x = ts.random.uniform(2.0, 3.0, (1000,))
    assert x.dtype == ts.float32 and float(x.min()) >= 2.0 and float(x.max()) < 3.0
    assert ts.random.uniform(size=(2,), dtype=ts.float64).dtype == ts.float64


def test_randperm_is_a_permutation():
    p = ts.randperm(50)
    assert p.dtype == ts.int64 and sorted(p.tolist()) == list(range(50))
    assert ts.randperm(5, dtype=ts.int32).dtype == ts.int32 and ts.randperm(0).shape == (0,)


def test_out_is_resized_and_returned_as_torch():
    for lib in (ts, torch):
        o = lib.empty(0)
        r = lib.rand(2, 3, out=o)
        assert r is o and tuple(o.shape) == (2, 3)
        o64 = lib.empty(4, dtype=lib.float64)
        assert lib.randn(4, out=o64).dtype == lib.float64
        oi = lib.empty(0, dtype=lib.int64)
        assert tuple(lib.randint(0, 5, (3,), out=oi).shape) == (3,)
        assert tuple(lib.randperm(6, out=lib.empty(0, dtype=lib.int64)).shape) == (6,)
        with pytest.raises(RuntimeError):
            lib.rand(2, out=lib.empty(2, dtype=lib.float64), dtype=lib.float32)
    with pytest.raises(RuntimeError, match=r"^rand: dtype float32 does not match the dtype of out"):
        ts.rand(2, out=ts.empty(2, dtype=ts.float64), dtype=ts.float32)


def test_reproducible_under_manual_seed_and_generators():
    for f in (lambda **k: ts.rand(3, 4, **k), lambda **k: ts.randn((5,), **k),
              lambda **k: ts.randint(0, 100, (7,), **k), lambda **k: ts.randperm(9, **k)):
        ts.manual_seed(123)
        a = f()
        ts.manual_seed(123)
        assert f().tolist() == a.tolist()
        g1, g2 = ts.random.Generator(5), ts.random.Generator(5)
        assert f(generator=g1).tolist() == f(generator=g2).tolist()
        tg = ts.Generator().manual_seed(5)
        assert f(generator=tg).tolist() == f(generator=ts.random.Generator(5)).tolist()
    g = ts.random.Generator(1)
    assert g.rand(2, 3).shape == (2, 3) and g.randint(3, size=(2,)).shape == (2,)


def test_errors_name_the_op():
    cases = [(lambda: ts.rand(2, dtype=ts.int32), TypeError, r"^rand: expected a floating-point"),
             (lambda: ts.randn(2, generator=torch.Generator()), TypeError,
              r"^randn: generator must be a tessera.random.Generator, got Generator"),
             (lambda: ts.rand(2, "a"), TypeError, r"^rand: size must be an int, got str"),
             (lambda: ts.rand(-1), ValueError, r"^rand: negative dimension"),
             (lambda: ts.rand(2, size=3), TypeError, r"^rand\(\) got multiple values for "
                                                      r"argument 'size'"),
             (lambda: ts.randint(5, 2, (3,)), ValueError, r"^randint: expected low < high"),
             (lambda: ts.randint(), TypeError, r"^randint\(\) missing 1 required positional"),
             (lambda: ts.randint(1.5, 3, (2,)), TypeError, r"^randint: low must be an int"),
             (lambda: ts.randperm("3"), TypeError, r"^randperm: n must be an int, got str"),
             (lambda: ts.random.uniform("a"), TypeError, r"^uniform: expected a number, got str"),
             (lambda: ts.rand(2, out=[1]), TypeError, r"^rand: out must be a Tensor")]
    for call, exc, pattern in cases:
        with pytest.raises(exc, match=pattern):
            call()


def test_signatures_are_the_bindings():
    assert ts.rand is ts._C.rand and ts.random.randn is ts._C.randn and ts.randint is ts._C.randint
    assert str(inspect.signature(ts.rand)).startswith("(*size, generator=None, out=None")
    assert "generator=None" in str(inspect.signature(ts.randperm))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("normal", [False, True])
def test_complex_rand_randn_as_torch(dtype, normal):
    """torch's complex samples: independent real and imaginary parts, each U[0, 1) (rand) or
    N(0, 1/2) (randn: E|z|^2 = 1); the *_like forms and out= too; reproducible under seed."""
    import numpy as np
    name = "randn" if normal else "rand"
    dt = getattr(ts, dtype)
    ts.manual_seed(11)
    a = getattr(ts, name)(100_000, dtype=dt).numpy()
    assert a.dtype == np.dtype(dtype)
    mean, var = (0.0, 0.5) if normal else (0.5, 1.0 / 12)
    for part in (a.real, a.imag):
        assert abs(part.mean() - mean) < 0.01 and abs(part.var() - var) < 0.01
    assert abs(np.corrcoef(a.real, a.imag)[0, 1]) < 0.02
    if not normal:
        assert a.real.min() >= 0 and a.real.max() < 1 and a.imag.min() >= 0 and a.imag.max() < 1
    t = getattr(torch, name)(100_000, dtype=getattr(torch, dtype)).numpy()
    assert abs(t.real.var() - a.real.var()) < 0.01  # the same distribution as torch's
    ts.manual_seed(11)
    np.testing.assert_array_equal(getattr(ts, name)(100_000, dtype=dt).numpy(), a)
    like = getattr(ts, name + "_like")(ts.zeros((50_000,), dtype=dt)).numpy()
    assert like.dtype == np.dtype(dtype) and abs(like.imag.var() - var) < 0.01
    out = ts.empty((3,), dtype=dt)
    assert getattr(ts, name)(2, 2, out=out) is out and out.shape == (2, 2)
    with pytest.raises(TypeError, match=name):
        getattr(ts, name)(3, dtype=ts.int64)

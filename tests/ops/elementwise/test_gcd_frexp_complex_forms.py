"""PyTorch's pointwise functions bound in C++ (csrc/python/bind_pointwise_torch.cpp): gcd / lcm
(integer kernels), fix, float_power, frexp, torch.complex / polar, torch.relu / threshold,
x.equal and x.square: values against torch over shapes, dtypes, broadcasting and layouts,
gradients in float64, and the errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from harness import arrays, assert_same, compare_grads, same_as_torch, shapes, strided_views

INTS = ["int8", "int16", "int32", "int64", "uint8"]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_gcd_lcm_match_torch(data):
    dt = data.draw(st.sampled_from(INTS))
    shape = data.draw(shapes(max_dims=3))
    lo, hi = (0, 60) if dt == "uint8" else (-60, 60)
    a = data.draw(arrays(dt, shape, elements=st.integers(lo, hi)))
    b = data.draw(arrays(dt, shape[1:] if data.draw(st.booleans()) else shape,
                         elements=st.integers(lo, hi)))
    a = data.draw(st.builds(lambda: a)) if a.ndim == 0 else a
    for name in ("gcd", "lcm"):
        want = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b))
        assert_same(getattr(ts, name)(ts.asarray(a), ts.asarray(b)), want)
        assert_same(getattr(ts.asarray(a), name)(ts.asarray(b)), want)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_gcd_strided_and_inplace(data):
    a = data.draw(arrays("int64", shapes(1, 3, 1), elements=st.integers(-1000, 1000)))
    a = strided_views(data.draw, a)
    b = np.arange(1, a.shape[-1] + 1, dtype=np.int64) * 6
    x = ts.asarray(a.copy())
    x.gcd_(ts.asarray(b))
    assert_same(x, torch.gcd(torch.from_numpy(np.ascontiguousarray(a)), torch.from_numpy(b)))


def test_gcd_extremes():
    m = np.iinfo(np.int64).min
    a = torch.tensor([m, 0, 0, -4, 7], dtype=torch.int64)
    b = torch.tensor([0, 0, -9, 0, -21], dtype=torch.int64)
    assert_same(ts.gcd(ts.asarray(a.numpy()), ts.asarray(b.numpy())), torch.gcd(a, b))
    assert_same(ts.lcm(ts.asarray(a.numpy()), ts.asarray(b.numpy())), torch.lcm(a, b))
    assert_same(ts.gcd(ts.asarray(np.array(12)), ts.asarray(np.array(18))), np.array(6))


@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize("dtype", ["float32", "bool", "complex64"])
def test_gcd_rejects_non_integers(name, dtype):
    x = ts.ones((2,), dtype=dtype)
    with pytest.raises(RuntimeError, match=name):
        getattr(ts, name)(x, x)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_frexp_matches_torch(dtype):
    t = torch.tensor([0.0, -0.0, 1.0, 0.5, -3.75, 1e-3, 123456.0, float("inf"), -float("inf")],
                     dtype=getattr(torch, dtype))
    x = ts.asarray(t.float().numpy()).astype(dtype)
    m, e = ts.frexp(x)
    wm, we = torch.frexp(t)
    assert type(ts.frexp(x)).__name__ == "frexp" and ts.frexp(x).mantissa.dtype == x.dtype
    np.testing.assert_array_equal(e.numpy(), we.numpy())
    assert e.dtype == ts.int32
    np.testing.assert_array_equal(m.astype("float32").numpy(), wm.float().numpy())
    np.testing.assert_array_equal(np.signbit(m.astype("float32").numpy()),
                                  np.signbit(wm.float().numpy()))
    assert_same(x.frexp().exponent, we)


def test_frexp_extremes_and_nan():
    v = np.array([np.finfo(np.float64).max, 5e-324, -np.finfo(np.float64).tiny, np.nan])
    m, e = ts.frexp(ts.asarray(v))
    wm, we = np.frexp(v)
    np.testing.assert_array_equal(m.numpy(), wm)
    np.testing.assert_array_equal(e.numpy()[:3], we[:3])
    v32 = np.array([np.finfo(np.float32).max, 1e-45], dtype=np.float32)
    m, e = ts.frexp(ts.asarray(v32))
    wm, we = torch.frexp(torch.from_numpy(v32))
    assert_same(m, wm)
    assert_same(e, we)


def test_frexp_gradient_and_errors():
    compare_grads(lambda x: ts.frexp(x).mantissa, lambda x: torch.frexp(x).mantissa,
                  [np.array([[3.0, -0.2], [1e5, 7.5]])])
    with pytest.raises(RuntimeError, match="frexp: only supports floating-point"):
        ts.frexp(ts.asarray([1, 2]))
    out = (ts.empty((2,)), ts.empty((2,), dtype=ts.int32))
    r = ts.frexp(ts.asarray([2.0, 3.0]), out=out)
    assert r.mantissa is out[0] and r.exponent is out[1]
    np.testing.assert_array_equal(out[1].numpy(), [2, 2])


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_float_power_matches_torch(data):
    dt = data.draw(st.sampled_from(["int32", "float32", "float64", "complex64"]))
    a = data.draw(arrays(dt, shapes(max_dims=3), elements=st.integers(1, 5)
                         if dt == "int32" else None))
    exp = data.draw(st.sampled_from([2, 0.5, -1, "tensor"]))
    ta = torch.from_numpy(a)
    if exp == "tensor":
        e = np.full(a.shape[-1:] if a.ndim else (), 1.5, dtype=np.float32)
        want, got = torch.float_power(ta, torch.from_numpy(e)), ts.float_power(ts.asarray(a),
                                                                               ts.asarray(e))
    else:
        want, got = torch.float_power(ta, exp), ts.float_power(ts.asarray(a), exp)
    assert_same(got, want, rtol=1e-6, atol=1e-6)
    assert_same(ts.asarray(a).float_power(2), torch.float_power(ta, 2), rtol=1e-6, atol=1e-6)
    assert_same(ts.float_power(2, ts.asarray(a)), torch.float_power(2, ta), rtol=1e-6, atol=1e-6)


def test_float_power_gradient_and_inplace():
    compare_grads(lambda x, y: ts.float_power(x, y), lambda x, y: torch.float_power(x, y),
                  [np.array([[1.5, 2.0], [0.3, 4.0]]), np.array([2.0, -0.5])])
    x = ts.asarray([2.0, 3.0], dtype=ts.float64)
    x.float_power_(2)
    np.testing.assert_array_equal(x.numpy(), [4.0, 9.0])
    same_as_torch(lambda m: m.tensor([2.0]).float_power_(2))  # float32 self: RuntimeError


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_complex_polar_match_torch(data):
    dt = data.draw(st.sampled_from(["float32", "float64"]))
    shape = data.draw(shapes(max_dims=3))
    re = data.draw(arrays(dt, shape))
    im = data.draw(arrays(dt, shape[1:] if data.draw(st.booleans()) else shape))
    re = strided_views(data.draw, re)
    assert_same(ts.complex(ts.asarray(re), ts.asarray(im)),
                torch.complex(torch.from_numpy(re.copy()), torch.from_numpy(im)))
    r = np.abs(re.copy(), out=re.copy())
    assert_same(ts.polar(ts.asarray(r), ts.asarray(im)),
                torch.polar(torch.from_numpy(r), torch.from_numpy(im)),
                rtol=1e-5, atol=1e-4)


def test_complex_keeps_infinite_parts():
    # torch.complex(0, inf) is 0+infj: no 0 * inf NaN (the Python version gave nan+infj)
    got = ts.complex(ts.asarray([0.0, float("inf")]), ts.asarray([float("inf"), 1.0]))
    want = torch.complex(torch.tensor([0.0, float("inf")]), torch.tensor([float("inf"), 1.0]))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_complex_polar_gradients_and_errors():
    compare_grads(ts.complex, torch.complex, [np.array([1.0, -2.0]), np.array([0.5, 3.0])])
    compare_grads(ts.polar, torch.polar, [np.array([1.0, 2.0]), np.array([0.5, -3.0])])
    with pytest.raises(RuntimeError, match="complex: expected real and imag of the same dtype"):
        ts.complex(ts.ones(2), ts.ones(2, dtype=ts.float64))
    with pytest.raises(RuntimeError, match="complex: expected both inputs to be float32"):
        ts.complex(ts.ones(2, dtype=ts.int64), ts.ones(2, dtype=ts.int64))
    same_as_torch(lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)))
    same_as_torch(lambda m: m.polar(m.ones(2), m.ones(3)))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_relu_threshold_fix_square_equal(data):
    dt = data.draw(st.sampled_from(["int32", "float32", "float64"]))
    a = data.draw(arrays(dt, shapes(max_dims=3), elements=st.integers(-5, 5)
                         if dt == "int32" else None))
    ta, x = torch.from_numpy(a), ts.asarray(a)
    assert_same(ts.relu(x), torch.relu(ta))
    assert_same(x.relu(), ta.relu())
    assert_same(ts.threshold(x, 1, 0), torch.threshold(ta, 1, 0))
    assert_same(x.square(), ta.square())
    assert x.equal(ts.asarray(a.copy())) == ta.equal(ta.clone())
    if dt != "int32":
        assert_same(ts.fix(x), torch.fix(ta))
        assert_same(x.fix(), ta.fix())


def test_square_equal_relu_forms():
    assert_same(ts.asarray([True, False]).square(), torch.tensor([True, False]).square())
    assert ts.asarray([1.0, float("nan")]).equal(ts.asarray([1.0, float("nan")])) is False
    assert ts.ones((2, 3)).equal(ts.ones((3, 2))) is False
    with pytest.raises(TypeError):
        ts.relu(ts.ones(2), inplace=True)  # torch.relu has no inplace= (F.relu has)
    same_as_torch(lambda m: m.ones(2).equal([1.0, 1.0]))
    compare_grads(lambda x: ts.relu(x), torch.relu, [np.array([-1.0, 2.0, 0.5])])
    compare_grads(lambda x: ts.threshold(x, 0.7, -2.0), lambda x: torch.threshold(x, 0.7, -2.0),
                  [np.array([-1.0, 2.0, 0.5])])


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "int64"])
def test_lcm_wraps_as_torch(dtype) -> None:
    # torch's abs(a / g * b): the product in C++'s promoted type (int for 8/16-bit), its absolute
    # value, then the cast back (int8: lcm(10, 13) = 130 wraps to -126)
    import torch
    big = 65536 if dtype in ("int32", "int64") else 3
    a = np.array([10, 7 if dtype.startswith("u") else -7, 100, big], dtype=dtype)
    b = np.array([13, 9, 3, big + 1], dtype=dtype)
    got = ts.lcm(ts.asarray(a), ts.asarray(b))
    want = torch.lcm(torch.from_numpy(a), torch.from_numpy(b))
    np.testing.assert_array_equal(got.numpy(), want.numpy())

"""The set functions in C++ (csrc/ops/unique.cpp, csrc/python/bind_sets.cpp) against PyTorch:
torch.unique / unique_consecutive (flat and dim=), isin, torch.cross and its gradients; the
argument and error forms; x.unique / x.cross are the namespace functions."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
import tessera.errors as errors
from harness import arrays, assert_same, same_result, shapes, strided_views

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]


def _elements(dtype, nan=True):
    if dtype.startswith("float"):
        vals = [0.0, -0.0, 1.0, -2.5, np.inf, 3.0] + ([np.nan] if nan else [])
        return st.sampled_from(vals)
    if dtype == "bool":
        return None
    return st.integers(0, 4)


def _both(a):
    return ts.asarray(a), torch.from_numpy(np.array(a, order="C"))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(DTYPES), st.booleans(), st.booleans(), st.booleans(), st.data())
def test_unique_matches_torch(dtype, sorted_, inverse, counts, data):
    a = data.draw(arrays(dtype, shapes(0, 3, 0, 6), elements=_elements(dtype)))
    a = strided_views(data.draw, a)
    x, t = _both(a)
    kw = dict(sorted=sorted_, return_inverse=inverse, return_counts=counts)
    same_result(ts.unique(x, **kw), torch.unique(t, **kw))
    same_result(x.unique(**kw), t.unique(**kw))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(DTYPES), st.booleans(), st.booleans(), st.data())
def test_unique_dim_matches_torch(dtype, inverse, counts, data):
    # (no NaN: torch orders slices holding NaN arbitrarily)
    a = data.draw(arrays(dtype, shapes(1, 3, 0, 5), elements=_elements(dtype, nan=False)))
    a = strided_views(data.draw, a)
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    x, t = _both(a)
    kw = dict(return_inverse=inverse, return_counts=counts, dim=dim)
    if a.size == 0 and (a.shape[dim] != 0 or a.shape.count(0) > 1):
        with pytest.raises(RuntimeError):
            torch.unique(t, **kw)
        with pytest.raises(RuntimeError, match="^unique: .*0-sized"):
            ts.unique(x, **kw)
        return
    same_result(ts.unique(x, **kw), torch.unique(t, **kw))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(DTYPES), st.booleans(), st.booleans(), st.data())
def test_unique_consecutive_matches_torch(dtype, inverse, counts, data):
    a = data.draw(arrays(dtype, shapes(0, 3, 0, 5), elements=_elements(dtype)))
    a = strided_views(data.draw, a)
    dim = data.draw(st.none() | st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1))
    if dim is not None and a.ndim == 0:
        dim = None
    x, t = _both(a)
    kw = dict(return_inverse=inverse, return_counts=counts, dim=dim)
    if dim is not None and a.size == 0 and (a.shape[dim] != 0 or a.shape.count(0) > 1):
        with pytest.raises(RuntimeError):
            torch.unique_consecutive(t, **kw)
        with pytest.raises(RuntimeError, match="^unique_consecutive: .*0-sized"):
            ts.unique_consecutive(x, **kw)
        return
    same_result(ts.unique_consecutive(x, **kw), torch.unique_consecutive(t, **kw))
    same_result(x.unique_consecutive(**kw), t.unique_consecutive(**kw))


def test_unique_nan_each_distinct_and_signed_zero():
    a = np.array([2.0, np.nan, -0.0, 1.0, np.nan, 0.0, 2.0], dtype=np.float32)
    x, t = _both(a)
    same_result(ts.unique(x, return_inverse=True, return_counts=True),
                torch.unique(t, return_inverse=True, return_counts=True))
    same_result(ts.unique_consecutive(x, return_counts=True),
                torch.unique_consecutive(t, return_counts=True))


def test_unique_0d_and_empty():
    for a in (np.array(5.0), np.zeros((0, 3), np.float32), np.zeros((2, 0), np.int64)):
        x, t = _both(a)
        same_result(ts.unique(x, return_inverse=True, return_counts=True),
                    torch.unique(t, return_inverse=True, return_counts=True))
    x, t = _both(np.zeros((2, 0, 3), np.float32))
    same_result(ts.unique(x, dim=1, return_inverse=True, return_counts=True),
                torch.unique(t, dim=1, return_inverse=True, return_counts=True))


def test_unique_complex_keeps_numpy_order():
    # torch refuses complex unique; tessera keeps NumPy's order (flat and with dim)
    a = np.array([2 + 1j, 1 + 5j, 1 - 5j, 2 + 1j, complex(np.nan, 1), -3j, 1 + 5j])
    v, inv, cnt = ts.unique(ts.asarray(a), return_inverse=True, return_counts=True)
    w, winv, wcnt = np.unique(a, return_inverse=True, return_counts=True, equal_nan=False)
    assert_same(v, w)
    assert_same(inv, winv.astype(np.int64))
    assert_same(cnt, wcnt.astype(np.int64))
    m = np.array([[1 + 1j, 2j], [1 + 1j, 2j], [1 - 1j, 0j]])
    assert_same(ts.unique(ts.asarray(m), dim=0), np.unique(m, axis=0))


def test_unique_records_no_graph():
    x = ts.asarray([1.0, 2.0, 1.0], requires_grad=True)
    for r in (ts.unique(x), ts.unique_consecutive(x), ts.unique_values(x), ts.unique(x, dim=0)):
        assert not r.requires_grad


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["uint8", "int8", "int32", "int64", "float16", "float32", "float64"]),
       st.sampled_from(["int16", "int64", "float32", "float64"]), st.booleans(), st.data())
def test_isin_matches_torch(dt1, dt2, invert, data):
    a = data.draw(arrays(dt1, shapes(0, 3, 0, 5), elements=_elements(dt1)))
    b = data.draw(arrays(dt2, shapes(0, 2, 0, 5), elements=_elements(dt2)))
    a = strided_views(data.draw, a)
    (x, t), (y, u) = _both(a), _both(b)
    same_result(ts.isin(x, y, invert=invert), torch.isin(t, u, invert=invert))
    same_result(ts.isin(elements=x, test_elements=y, assume_unique=True, invert=invert),
                torch.isin(elements=t, test_elements=u, assume_unique=True, invert=invert))


@pytest.mark.parametrize("scalar", [2, 2.0, 2.5, -1, 300])
def test_isin_python_numbers_either_side(scalar):
    for dt in ("uint8", "int8", "int64", "float32"):
        a = np.array([0, 1, 2, 44], dtype=dt)
        x, t = _both(a)
        same_result(ts.isin(x, scalar), torch.isin(t, scalar))
        same_result(ts.isin(scalar, x), torch.isin(scalar, t))
        same_result(ts.isin(scalar, x, invert=True), torch.isin(scalar, t, invert=True))


def test_isin_nan_never_found():
    x, t = _both(np.array([np.nan, 1.0, 2.0]))
    y, u = _both(np.array([np.nan, 2.0]))
    same_result(ts.isin(x, y), torch.isin(t, u))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["float32", "float64", "int64"]), st.data())
def test_cross_matches_torch(dtype, data):
    shape = list(data.draw(shapes(1, 3, 1, 4)))
    pos = data.draw(st.integers(0, len(shape) - 1))
    shape[pos] = 3
    a = data.draw(arrays(dtype, tuple(shape), elements=st.integers(-5, 5)))
    b = data.draw(arrays(dtype, tuple(shape), elements=st.integers(-5, 5)))
    a = strided_views(data.draw, a)
    (x, t), (y, u) = _both(a), _both(b)
    dim = data.draw(st.none() | st.sampled_from([pos, pos - len(shape)]))
    same_result(ts.cross(x, y, dim), torch.cross(t, u, dim=dim if dim is not None else pos))
    if dim is None:
        same_result(x.cross(y), torch.cross(t, u, dim=pos))
    else:
        same_result(x.cross(y, dim=dim), t.cross(u, dim=dim))


def test_cross_out():
    a, b = np.random.default_rng(0).standard_normal((2, 4, 3))
    (x, t), (y, u) = _both(a), _both(b)
    o = ts.empty((4, 3), dtype=ts.float64)
    assert ts.cross(x, y, 1, out=o) is o
    same_result(o, torch.cross(t, u, dim=1))


@pytest.mark.parametrize("dim", [None, 0, -1])
def test_cross_gradient_matches_torch_and_finite_differences(dim):
    rng = np.random.default_rng(1)
    shape = (3, 3) if dim is not None else (2, 3)
    a, b = rng.standard_normal(shape), rng.standard_normal(shape)
    x = ts.asarray(a, requires_grad=True)
    y = ts.asarray(b, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    u = torch.tensor(b, requires_grad=True)
    g = rng.standard_normal(shape)
    (ts.cross(x, y, dim) * ts.asarray(g)).sum().backward()
    kw = {} if dim is None else {"dim": dim}
    (torch.cross(t, u, **({"dim": 1} if dim is None else kw)) * torch.tensor(g)).sum().backward()
    assert_same(x.grad, t.grad, rtol=1e-12, atol=1e-12)
    assert_same(y.grad, u.grad, rtol=1e-12, atol=1e-12)
    assert ts.autograd.gradcheck(lambda p, q: ts.cross(p, q, dim), (x, y))
    # second order through the formula ops
    assert ts.autograd.gradgradcheck(lambda p, q: ts.cross(p, q, dim), (x, y))


def test_methods_are_the_functions_and_signatures():
    assert ts.Tensor.unique is ts.unique
    assert ts.Tensor.unique_consecutive is ts.unique_consecutive
    assert ts.Tensor.cross is ts.cross
    assert list(inspect.signature(ts.unique).parameters) == [
        "input", "sorted", "return_inverse", "return_counts", "dim"]
    assert list(inspect.signature(ts.isin).parameters) == [
        "elements", "test_elements", "assume_unique", "invert"]
    assert list(inspect.signature(ts.cross).parameters) == ["input", "other", "dim", "out"]
    assert list(inspect.signature(ts.unique_all).parameters) == ["x"]
    assert type(ts.unique_all(ts.arange(3))).__name__ == "UniqueAllResult"
    assert "unique" in ts.unique.__doc__


@pytest.mark.parametrize("call,cls,match", [
    (lambda x: ts.unique([1, 2]), TypeError,
     r"^unique\(\): argument 'input' \(position 1\) must be Tensor, not list"),
    (lambda x: ts.unique(x, dim="a"), TypeError, r"^unique: dim must be an int, got str"),
    (lambda x: ts.unique(x, dim=2), IndexError, r"^unique: "),
    (lambda x: ts.unique(ts.asarray(1.0), dim=0), IndexError, r"^unique: dim 0 .* 0-d"),
    (lambda x: ts.unique(ts.zeros((2, 0)), dim=0), RuntimeError, r"^unique: .*\(2, 0\)"),
    (lambda x: ts.unique_consecutive(x, dim=1.5), TypeError,
     r"^unique_consecutive: dim must be an int, got float"),
    (lambda x: ts.unique_values([1]), TypeError, r"^unique_values: x must be a tensor, got list"),
    (lambda x: ts.unique_all(None), TypeError, r"^unique_all: x must be a tensor, got NoneType"),
    (lambda x: ts.isin(x, "ab"), TypeError, r"^isin\(\): argument 'test_elements' \(position 2\)"),
    (lambda x: ts.isin(object(), x), TypeError, r"^isin\(\): argument 'elements' \(position 1\)"),
    (lambda x: ts.cross(x, None), TypeError,
     r"^cross\(\): argument 'other' \(position 2\) must be Tensor, not NoneType"),
    (lambda x: ts.cross(x, x), RuntimeError, r"^cross: no dimension of size 3 in input \(2, 2\)"),
    (lambda x: ts.cross(x, x, 0), ValueError, r"^cross: expected size 3"),
    (lambda x: x.unique(dim=[0]), TypeError, r"dim must be an int"),
    # flags are bools, as torch's
    (lambda x: ts.unique(x, return_inverse=1), TypeError,
     r"^unique\(\): argument 'return_inverse' must be bool, not int"),
    (lambda x: x.unique(None), TypeError, r"^unique\(\): argument 'sorted' must be bool"),
    (lambda x: x.unique_consecutive("abc"), TypeError,
     r"^unique_consecutive\(\): argument 'return_inverse' must be bool, not str"),
    (lambda x: ts.isin(x, x, invert=None), TypeError,
     r"^isin\(\): argument 'invert' must be bool, not NoneType"),
])
def test_errors_name_the_op(call, cls, match):
    """Raised by the C++ op or its binding with the final class, naming the op."""
    x = ts.ones((2, 2))
    with pytest.raises(cls, match=match) as info:
        call(x)
    msg = str(info.value)
    assert "Unable to cast" not in msg and "incompatible function arguments" not in msg
    assert type(info.value).__module__ in ("tessera.errors", "builtins")
    if cls is not RuntimeError:
        assert type(info.value).__module__ == "tessera.errors" or cls is IndexError

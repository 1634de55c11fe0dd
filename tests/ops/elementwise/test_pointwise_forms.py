"""PyTorch's pointwise functions bound in C++ (issue 17: csrc/ops/pointwise_composite.cpp,
csrc/python/bind_elementwise.cpp): clamp / clamp_min / clamp_max, lerp, addcmul, addcdiv,
nan_to_num, isclose, allclose and fmod. One definition each (Tensor.clamp is ts.clamp), every
argument form parsed in the binding (keywords, value=, out=), PyTorch's promotion, gradients
through the C++ ops, and errors naming the op."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import tessera as ts
import tessera.errors as errors
from harness import assert_same, compare_grads

NAMES = ["clamp", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv", "nan_to_num",
         "isclose", "allclose", "fmod"]
X = np.array([[-2.5, -1.0, 0.0], [0.5, 1.5, 3.0]], dtype=np.float32)
Y = np.array([[1.0, -2.0, 0.5], [2.0, 0.25, -1.0]], dtype=np.float32)
SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf, -0.0, 3.0], dtype=np.float32)


def pair(a):
    return ts.asarray(a), torch.from_numpy(np.array(a))


@pytest.mark.parametrize("name", NAMES)
def test_method_is_the_function(name):
    """Tensor.<name> is ts.<name>, one C++ function with a readable signature and docstring."""
    fn = getattr(ts, name)
    assert getattr(ts.Tensor, name) is fn
    assert not inspect.isfunction(fn)  # bound in C++, no Python wrapper left
    params = inspect.signature(fn).parameters
    assert list(params)[0] == "input"
    assert fn.__doc__ and fn.__text_signature__.startswith("(input")
    assert ts.Tensor.clip is ts.clamp  # x.clip is torch's clamp (ts.clip stays the standard's)


@pytest.mark.parametrize("call", [
    lambda m, x, y: m.clamp(x, -1.0, 1.0), lambda m, x, y: m.clamp(x, min=-1),
    lambda m, x, y: m.clamp(x, max=0.5), lambda m, x, y: m.clamp(x, min=y, max=y + 1),
    lambda m, x, y: x.clamp(y[0]), lambda m, x, y: x.clip(-0.5, 0.5),
    lambda m, x, y: m.clamp_min(x, 0.25), lambda m, x, y: x.clamp_max(max=y),
    lambda m, x, y: m.lerp(x, y, 0.3), lambda m, x, y: m.lerp(x, y, weight=y),
    lambda m, x, y: x.lerp(end=y, weight=0.75),
    lambda m, x, y: m.addcmul(x, y, y, value=-0.5), lambda m, x, y: x.addcmul(y, x),
    lambda m, x, y: m.addcdiv(x, y, y + 5, value=2), lambda m, x, y: x.addcdiv(tensor1=y, tensor2=x + 5),
    lambda m, x, y: m.fmod(x, y), lambda m, x, y: m.fmod(x, 0.7), lambda m, x, y: x.fmod(other=-1.5),
    lambda m, x, y: m.isclose(x, y), lambda m, x, y: m.isclose(x, x + 1e-7, rtol=0, atol=1e-6),
    lambda m, x, y: x.isclose(x * (1 + 1e-4), rtol=1e-3),
])
def test_forms_match_torch(call):
    (x, tx), (y, ty) = pair(X), pair(Y)
    assert_same(call(ts, x, y), call(torch, tx, ty))


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
@pytest.mark.parametrize("call", [
    lambda m, x, b: m.clamp(x, 0.5, 2.5), lambda m, x, b: m.clamp(x, 1, 2),
    lambda m, x, b: m.clamp(x, min=b), lambda m, x, b: m.clamp_max(x, 1.5),
])
def test_clamp_promotion_matches_torch(call, dtype):
    """A float bound makes an integer input float; a tensor bound of another dtype promotes."""
    a = np.array([0, 1, 2, 3], dtype=dtype)
    b = np.array([1.0, 0.5, 2.0, 2.5], dtype=np.float64)
    (x, tx), (bb, tb) = pair(a), pair(b)
    try:
        want = call(torch, tx, tb)
    except RuntimeError:
        with pytest.raises((TypeError, RuntimeError)):
            call(ts, x, bb)
        return
    assert_same(call(ts, x, bb), want)


def test_clamp_broadcasts_input_to_tensor_bounds():
    (x, tx), (b, tb) = pair(np.array([1.0, 5.0], dtype=np.float32)), pair(Y[:, :2])
    assert_same(ts.clamp(x, min=b), torch.clamp(tx, min=tb))


@pytest.mark.parametrize("name,args", [
    ("clamp", (-1.0, 1.0)), ("clamp_min", (0.0,)), ("lerp", (np.ones_like(X), 0.5)),
    ("addcmul", (Y, Y)), ("addcdiv", (Y, Y + 5)), ("nan_to_num", ()), ("fmod", (0.7,)),
])
def test_out(name, args):
    """out= (newly accepted by these functions: torch's form)."""
    x, tx = pair(X)
    ts_args = [ts.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    t_args = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
    out = ts.empty(X.shape)
    assert getattr(ts, name)(x, *ts_args, out=out) is out
    assert_same(out, getattr(torch, name)(tx, *t_args))
    out5, tout5 = ts.empty((5,)), torch.empty((5,))  # resized with torch's warning
    with pytest.warns(UserWarning, match="resized since it had shape"):
        assert getattr(ts, name)(x, *ts_args, out=out5) is out5
    getattr(torch, name)(tx, *t_args, out=tout5)
    assert_same(out5, tout5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64",
                                   "int32", "bool"])
def test_nan_to_num_matches_torch(dtype):
    a = SPECIAL
    if dtype == "complex64":
        a = (SPECIAL + 1j * SPECIAL[::-1]).astype(np.complex64)
    tx = torch.from_numpy(np.array(a)).to(getattr(torch, dtype))
    x = ts.asarray(tx.float().numpy() if dtype == "bfloat16" else tx.numpy()).astype(getattr(ts, dtype))
    assert_same(ts.nan_to_num(x).astype(ts.float64) if dtype == "bfloat16" else ts.nan_to_num(x),
                torch.nan_to_num(tx).double() if dtype == "bfloat16" else torch.nan_to_num(tx))
    want = torch.nan_to_num(tx, nan=7.0, posinf=1.0, neginf=-2.0)
    got = x.nan_to_num(7.0, posinf=1.0, neginf=-2.0)
    assert_same(got.astype(ts.float64) if dtype == "bfloat16" else got,
                want.double() if dtype == "bfloat16" else want)
    # nan=None is the default 0.0 (torch accepts it; tessera raised TypeError before)
    assert_same(ts.nan_to_num(x, None).astype(ts.float64),
                torch.nan_to_num(tx, None).to(torch.float64))


def test_isclose_allclose_match_torch():
    (x, tx), (y, ty) = pair(SPECIAL), pair(SPECIAL[::-1].copy())
    for eq in (False, True):
        assert_same(ts.isclose(x, y, equal_nan=eq), torch.isclose(tx, ty, equal_nan=eq))
        assert_same(ts.isclose(x, x, equal_nan=eq), torch.isclose(tx, tx, equal_nan=eq))
        assert ts.allclose(x, x, equal_nan=eq) is torch.allclose(tx, tx, equal_nan=eq)
    assert ts.allclose(ts.asarray(X), ts.asarray(X) + 1e-9) is True
    assert x.allclose(x, 0.0, 0.0, True) is True
    (i, ti) = pair(np.array([1, 2, 3]))
    assert_same(ts.isclose(i, i + 1, rtol=0, atol=1), torch.isclose(ti, ti + 1, rtol=0, atol=1))
    assert_same(ts.isclose(i, 2), torch.isclose(ti, torch.tensor(2)))


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_fmod_signs_match_torch(dtype):
    a = np.array([-7, -5, 5, 7, 0, -3], dtype=dtype)
    b = np.array([3, -3, 3, -3, 2, 4], dtype=dtype)
    (x, tx), (y, ty) = pair(a), pair(b)
    assert_same(ts.fmod(x, y), torch.fmod(tx, ty))
    assert_same(x.fmod(-2), tx.fmod(-2))


def test_errors_name_the_op():
    x = ts.asarray(X)
    with pytest.raises(errors.ZeroDivisionError, match="fmod"):
        ts.fmod(ts.asarray([1, 2]), ts.asarray([1, 0]))
    with pytest.raises(RuntimeError, match="fmod"):  # tessera's ZeroDivisionError is one
        ts.asarray([1, 2]).fmod(0)
    with pytest.raises(RuntimeError, match="lerp"):
        ts.lerp(ts.asarray([1, 2]), ts.asarray([3, 4]), 0.5)
    with pytest.raises(ValueError, match="lerp"):
        ts.lerp(x, ts.ones(4), 0.5)
    with pytest.raises(RuntimeError, match="addcdiv"):
        ts.addcdiv(x, ts.asarray([1]), ts.asarray([2]))
    with pytest.raises(RuntimeError, match="isclose"):
        ts.isclose(x, ts.asarray(X, dtype=ts.float64))
    with pytest.raises(TypeError, match="isclose.*rtol"):
        ts.isclose(x, x, rtol="a")
    with pytest.raises(TypeError, match="clamp_min"):  # torch: min is required (TypeError)
        ts.clamp_min(x, None)
    with pytest.raises(TypeError, match="clamp_max"):
        x.clamp_max(None)
    with pytest.raises(TypeError, match="clamp"):
        ts.clamp([1.0, 2.0], 0, 1)
    with pytest.raises(TypeError, match="addcmul"):
        ts.addcmul(x, x, x, value="2")


def test_clamp_without_bounds_is_a_copy():
    x = ts.asarray(X)
    y = ts.clamp(x)
    assert y is not x
    assert_same(y, X)


@pytest.mark.parametrize("fn", [
    lambda m, x, y: m.clamp(x, min=y),
    lambda m, x, y: m.lerp(x, y, 0.3), lambda m, x, y: m.lerp(x, y, y),
    lambda m, x, y: m.addcmul(x, y, x, value=-2), lambda m, x, y: m.addcdiv(x, y, x + 5, value=3),
    lambda m, x, y: m.fmod(x, y + 5), lambda m, x, y: m.nan_to_num(x * 2) * y,
    lambda m, x, y: m.clamp(x, -1.0, 1.0) * y,
])
def test_gradients_match_torch(fn):
    compare_grads(lambda *a: fn(ts, *a), lambda *a: fn(torch, *a), [X, Y])


def test_inplace_forms():
    for name, args in [("clamp_", (-1.0, 1.0)), ("clip_", (0.0, None)), ("clamp_min_", (0.5,)),
                       ("clamp_max_", (0.5,)), ("lerp_", (Y, 0.5)), ("addcmul_", (Y, Y)),
                       ("addcdiv_", (Y, Y + 5)), ("nan_to_num_", ()), ("fmod_", (0.7,))]:
        (x, tx) = pair(X.copy())
        ts_args = [ts.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        t_args = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
        assert getattr(x, name)(*ts_args) is x
        getattr(tx, name)(*t_args)
        assert_same(x, tx)


# ---- PyTorch's unary/binary functions made of elementwise ops (csrc/ops/pointwise_composite.cpp)
UNARY = ["rsqrt", "exp2", "frac", "deg2rad", "rad2deg", "isposinf", "isneginf", "sgn", "angle",
         "isreal"]
BINARY = ["fmax", "fmin", "logaddexp2", "ldexp", "heaviside"]


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_unary_binary_are_one_function(name):
    fn = getattr(ts, name)
    assert getattr(ts.Tensor, name) is fn and not inspect.isfunction(fn)
    assert list(inspect.signature(fn).parameters)[0] == "input"
    assert "out" in inspect.signature(fn).parameters


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex64"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_match_torch(name, dtype):
    a = SPECIAL if dtype != "int64" else np.array([-3, 0, 2, 5])
    if dtype == "complex64":
        if name in ("frac", "isposinf", "isneginf", "deg2rad", "rad2deg", "rsqrt"):
            pytest.skip("torch: not for complex (rsqrt: torch's complex infinities differ)")
        a = (SPECIAL + 1j * SPECIAL[::-1]).astype(np.complex64)
    tx = torch.from_numpy(np.array(a)).to(getattr(torch, dtype))
    x = ts.asarray(tx.numpy())
    try:
        want = getattr(torch, name)(tx)
    except RuntimeError:
        with pytest.raises(RuntimeError, match=name):
            getattr(ts, name)(x)
        return
    assert_same(getattr(ts, name)(x), want, rtol=1e-6, atol=1e-6)
    assert_same(getattr(x, name)(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_match_torch(name, dtype):
    a, b = SPECIAL, np.array([0.5, 2.0, np.nan, 1.0, 3.0, np.nan], dtype=np.float32)
    if dtype == "int64":
        a, b = np.array([-3, 0, 2, 5, 0, 1]), np.array([1, 4, 2, -1, 0, 3])
    (x, tx), (y, ty) = pair(a), pair(b)
    if name == "logaddexp2" and dtype == "int64":
        pytest.skip("torch: not implemented for int64 (tessera computes in float32)")
    assert_same(getattr(ts, name)(x, y), getattr(torch, name)(tx, ty))
    assert_same(getattr(x, name)(y), getattr(tx, name)(ty))
    out = ts.empty(a.shape, dtype=getattr(torch, name)(tx, ty).numpy().dtype.name)
    assert getattr(ts, name)(x, y, out=out) is out


def test_unary_binary_errors_and_gradients():
    with pytest.raises(RuntimeError, match="frac"):
        ts.frac(ts.asarray([1, 2]))
    with pytest.raises(RuntimeError, match="heaviside"):
        ts.heaviside(ts.asarray(X), ts.asarray(Y, dtype=ts.float64))
    with pytest.raises(ValueError, match="fmax"):
        ts.fmax(ts.asarray(X), ts.ones(4))
    for name in ["rsqrt", "exp2", "frac", "deg2rad"]:
        compare_grads(lambda x: getattr(ts, name)(x + 3), lambda x: getattr(torch, name)(x + 3), [X])
    for name in ["fmax", "fmin", "logaddexp2", "ldexp"]:
        compare_grads(lambda x, y: getattr(ts, name)(x, y), lambda x, y: getattr(torch, name)(x, y),
                      [X, Y])


def test_rsub_matches_torch():
    (x, tx), (y, ty) = pair(X), pair(Y)
    assert_same(ts.rsub(x, y), torch.rsub(tx, ty))
    assert_same(ts.rsub(x, y, alpha=2), torch.rsub(tx, ty, alpha=2))
    assert_same(ts.rsub(x, 3.0), torch.rsub(tx, 3.0))
    assert list(inspect.signature(ts.rsub).parameters) == ["input", "other", "alpha", "out"]
    (i, ti) = pair(np.array([1, 2, 3]))
    with pytest.raises(TypeError, match="rsub"):  # a float alpha with integers, as torch
        ts.rsub(i, i, alpha=0.5)
    with pytest.raises(RuntimeError):
        torch.rsub(ti, ti, alpha=0.5)


@pytest.mark.parametrize("call", [
    lambda m, a, b: m.lerp(a, b.double(), 0.5),
    lambda m, a, b: m.lerp(a, b, b.double()),
    lambda m, a, b: a.lerp(b.half(), 0.5),
    lambda m, a, b: a.clone().lerp_(b.double(), 0.5),
    lambda m, a, b: a.clone().lerp_(b, b.double()),
    lambda m, a, b: m.lerp(a.double(), b, 0.5),
])
def test_lerp_refuses_end_or_weight_of_another_dtype(call):
    # torch: RuntimeError "expected dtype float for `end` but got dtype double"; tessera promoted
    a_np, b_np = np.array([1.0, -2.0, 3.0], np.float32), np.array([0.5, 0.25, -1.0], np.float32)
    for m in (torch, ts):
        with pytest.raises(RuntimeError) as info:
            call(m, m.tensor(a_np), m.tensor(b_np))
        assert type(info.value) is RuntimeError
        assert "expected dtype" in str(info.value)


def test_lerp_zero_dim_weight_of_another_dtype_acts_as_a_number():
    out = []
    for m in (torch, ts):
        w = m.tensor(0.25, dtype=m.float64, requires_grad=True)
        a = m.tensor([1.0, -2.0], requires_grad=True)
        y = m.lerp(a, m.zeros(2), w)
        (y * m.tensor([1.0, 3.0])).sum().backward()
        out.append((str(y.dtype).split(".")[-1], y.tolist(), float(w.grad),
                    str(w.grad.dtype).split(".")[-1], a.grad.tolist()))
    assert out[1] == out[0]

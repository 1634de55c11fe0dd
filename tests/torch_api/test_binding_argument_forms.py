"""Argument forms parsed by the pybind11 bindings themselves (issue 17: no Python wrapper
between ts.sum / x.sum and the C++ op): every form PyTorch and the array API standard write,
against PyTorch and NumPy, and the errors for mixed aliases."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import _C

A = np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 7.5


def x_pair():
    return ts.asarray(A), torch.tensor(A)


SUM_FORMS = [
    ("all", lambda m, x: m.sum(x)),
    ("positional dim", lambda m, x: m.sum(x, 1)),
    ("positional dim keepdim", lambda m, x: m.sum(x, 1, True)),
    ("dim tuple", lambda m, x: m.sum(x, (0, 2))),
    ("dim list", lambda m, x: m.sum(x, [0, 2])),
    ("dim=", lambda m, x: m.sum(x, dim=-1)),
    ("dim= keepdim=", lambda m, x: m.sum(x, dim=2, keepdim=True)),
    ("dtype=", lambda m, x: m.sum(x, 1, dtype=m.float32)),
    ("method", lambda m, x: x.sum()),
    ("method dim", lambda m, x: x.sum(0)),
    ("method dim keepdim", lambda m, x: x.sum(0, True)),
    ("method dim=", lambda m, x: x.sum(dim=(1, 2))),
    ("method keepdim=", lambda m, x: x.sum(1, keepdim=True)),
    ("method dtype", lambda m, x: x.sum(dtype=m.float32)),
]


@pytest.mark.parametrize("name,f", SUM_FORMS, ids=[n for n, _ in SUM_FORMS])
def test_sum_forms_match_torch(name, f) -> None:
    xs, xt = x_pair()
    got, want = f(ts, xs), f(torch, xt)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype).replace("torch.", "")
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("kw", [{"axis": 1}, {"axis": (0, 2), "keepdims": True}, {},
                                {"axis": -1, "dtype": ts.float32}])
def test_sum_standard_forms_match_numpy(kw) -> None:
    xs = ts.asarray(A)
    got = ts.sum(xs, **kw)
    want = np.sum(A, **{k: (np.float32 if v is ts.float32 else v) for k, v in kw.items()})
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    assert got.numpy().dtype == want.dtype
    got_m = xs.sum(**kw)
    np.testing.assert_array_equal(got_m.numpy(), got.numpy())


def test_sum_integer_and_bool_dtypes() -> None:
    for dt in ("int8", "int32", "uint8", "bool"):
        a = (A > 0) if dt == "bool" else np.abs(A).astype(dt)
        got, want = ts.sum(ts.asarray(a), 1), torch.sum(torch.tensor(a), 1)
        # unsigned sums are uint64: the standard's rule (design.md), where torch gives int64
        assert str(got.dtype) == ("uint64" if dt == "uint8" else
                                  str(want.dtype).replace("torch.", ""))
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_sum_is_the_binding_and_records_one_node() -> None:
    assert ts.sum is _C.sum
    x = ts.asarray(A, requires_grad=True)
    y = x.sum(1)
    assert y.grad_fn.name().startswith("SumBackward")
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(A))


def test_sum_alias_errors() -> None:
    xs = ts.asarray(A)
    with pytest.raises(TypeError, match="got both axis= and its alias dim="):
        ts.sum(xs, axis=1, dim=1)
    with pytest.raises(TypeError, match="got both axis= and its alias dim="):
        xs.sum(1, axis=1)
    with pytest.raises(TypeError, match="got both keepdims= and its alias keepdim="):
        xs.sum(1, keepdims=True, keepdim=True)
    # out= as torch's: the sum computed in out's dtype, written into out (which is returned)
    o, to = ts.zeros((3, 4), dtype=ts.int64), torch.zeros((3, 4), dtype=torch.int64)
    assert ts.sum(xs, 1, out=o) is o
    torch.sum(torch.from_numpy(A), 1, out=to)
    np.testing.assert_array_equal(o.numpy(), to.numpy())
    with pytest.raises(TypeError, match="sum"):
        ts.sum("abc")
    with pytest.raises((IndexError, ValueError)):
        ts.sum(xs, 3)


SHAPE_FORMS = [
    ("varargs", lambda x: x.reshape(4, 6)), ("tuple", lambda x: x.reshape((4, 6))),
    ("list", lambda x: x.reshape([2, -1])), ("shape=", lambda x: x.reshape(shape=(24,))),
    ("numpy int", lambda x: x.reshape(np.int64(24))), ("-1", lambda x: x.reshape(-1, 4)),
    ("view varargs", lambda x: x.view(6, 4)), ("view size=", lambda x: x.view(size=(3, 8))),
    ("view tuple", lambda x: x.view((2, 12))),
]


@pytest.mark.parametrize("name,f", SHAPE_FORMS, ids=[n for n, _ in SHAPE_FORMS])
def test_reshape_and_view_forms_match_torch(name, f) -> None:
    xs, xt = x_pair()
    got, want = f(xs), f(xt)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_view_dtype_and_errors() -> None:
    xs, xt = x_pair()
    for m, x in ((ts, xs), (torch, xt)):
        assert str(x.view(m.int64).dtype).endswith("int64")
        assert str(x.view(dtype=m.int64).dtype).endswith("int64")
    np.testing.assert_array_equal(xs.view(ts.int64).numpy(), xt.view(torch.int64).numpy())
    assert xs.view(ts.float64).shape == xs.shape
    with pytest.raises(TypeError, match="multiple values for argument 'shape'"):
        xs.reshape(4, 6, shape=(24,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'size'"):
        xs.reshape(size=(24,))
    with pytest.raises(TypeError, match="either size= or dtype="):
        xs.view(size=(24,), dtype=ts.int64)
    with pytest.raises((ValueError, RuntimeError)):
        xs.reshape(5, 5)
    with pytest.raises((ValueError, RuntimeError)):  # not viewable: a copy would be needed
        xs.mT.view(-1)
    with pytest.raises(RuntimeError):
        xt.mT.view(-1)


STACK_FORMS = [
    ("list", lambda m, a, b: m.stack([a, b])), ("tuple", lambda m, a, b: m.stack((a, b))),
    ("positional dim", lambda m, a, b: m.stack([a, b], 1)),
    ("dim=", lambda m, a, b: m.stack([a, b], dim=-1)),
    ("tensors=", lambda m, a, b: m.stack(tensors=[a, b], dim=2)),
]


@pytest.mark.parametrize("name,f", STACK_FORMS, ids=[n for n, _ in STACK_FORMS])
def test_stack_forms_match_torch(name, f) -> None:
    xs, xt = x_pair()
    got, want = f(ts, xs, xs * 2), f(torch, xt, xt * 2)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_stack_standard_form_and_errors() -> None:
    xs = ts.asarray(A)
    np.testing.assert_array_equal(ts.stack([xs, xs], axis=-1).numpy(), np.stack([A, A], axis=-1))
    assert ts.stack is _C.stack
    with pytest.raises(TypeError, match="got both axis= and its alias dim="):
        ts.stack([xs, xs], 0, axis=0)
    with pytest.raises(TypeError, match="also given as 'tensors'"):
        ts.stack([xs], tensors=[xs])
    with pytest.raises(TypeError, match="expected a sequence of tensors"):
        ts.stack(xs)
    with pytest.raises((ValueError, RuntimeError)):
        ts.stack([xs, xs[0]])


CREATION_FORMS = [
    ("tuple", lambda m, f: f((2, 3))), ("varargs", lambda m, f: f(2, 3)),
    ("int", lambda m, f: f(4)), ("list", lambda m, f: f([2, 1, 3])),
    ("size=", lambda m, f: f(size=(3, 2))), ("empty shape", lambda m, f: f(())),
    ("dtype", lambda m, f: f(2, 3, dtype=m.int32)),
    ("requires_grad", lambda m, f: f(2, requires_grad=True)),
    ("numpy ints", lambda m, f: f(np.int64(2), np.int32(3))),
]


@pytest.mark.parametrize("op", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("name,call", CREATION_FORMS, ids=[n for n, _ in CREATION_FORMS])
def test_creation_forms_match_torch(op, name, call) -> None:
    got, want = call(ts, getattr(ts, op)), call(torch, getattr(torch, op))
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype).replace("torch.", "")
    assert got.requires_grad == want.requires_grad
    if op != "empty":
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert getattr(ts, op) is getattr(_C, op)


def test_creation_default_dtype_and_errors() -> None:
    ts.set_default_dtype(ts.float64)
    try:
        assert ts.zeros(2).dtype == ts.float64 and ts.ones(2, 2).dtype == ts.float64
    finally:
        ts.set_default_dtype(ts.float32)
    assert ts.empty(2).dtype == ts.float32
    with pytest.raises(TypeError, match="zeros: missing the size"):
        ts.zeros()
    with pytest.raises(TypeError, match="ones: sizes must be ints, got str"):
        ts.ones(2, "a")
    with pytest.raises(TypeError, match="shape must be an int or a sequence of ints"):
        ts.zeros((2, 2.5))
    with pytest.raises(TypeError, match="both as shape= and as size="):
        ts.zeros(shape=2, size=2)
    with pytest.raises(TypeError, match="both positionally and as a keyword"):
        ts.zeros(2, size=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        ts.empty(2, foo=1)
    o = ts.ones(2)
    assert ts.zeros(2, out=o) is o and o.tolist() == [0.0, 0.0]  # out= as torch (test_creation_bindings)
    with pytest.raises(ValueError, match="zeros: negative dimension"):
        ts.zeros(-1)
    with pytest.raises(ValueError, match="ones: dimension .* out of range for a 64-bit size"):
        ts.ones(2**70)
    with pytest.raises(ValueError, match="empty: shape .* more than 2\\^63 elements"):
        ts.empty(2**62, 2**62)
    assert tuple(ts.zeros(2, memory_format=None).shape) == (2,)

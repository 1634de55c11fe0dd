"""asarray / tensor / as_tensor / from_numpy, parsed in C++ (csrc/python/bind_asarray.cpp,
Note [Nested sequence conversion]) against PyTorch and NumPy: literal forms and their dtypes,
nested shapes (hypothesis), NumPy inputs (strided, 0-d, empty, every dtype), copy= semantics,
device=/requires_grad=/pin_memory=, and the errors of ragged or hostile input."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts


def same(got, want):
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1]
    np.testing.assert_array_equal(np.asarray(got.tolist()), np.asarray(want.tolist()))


LITERALS = [1.5, 3, True, 1 + 2j, [], [[], []], [1.0, 2.0, 3.0], [[1, 2], [3, 4]], (1, 2),
            [True, False], [True, 2], [1, 2.5], [True, 1.5], [1, 2.5j], [[1.5], [2]],
            [[[1, 2]], [[3, 4]]], [2**62, -5], [-0.0, float("inf"), float("nan")],
            [np.float32(1), 2.5], [np.int32(1), 2], [np.float64(1.5), 2.0], np.float64(2.5),
            np.int16(7), [np.float16(1), 3]]


@pytest.mark.parametrize("data", LITERALS, ids=repr)
@pytest.mark.parametrize("name", ["tensor", "asarray", "as_tensor"])
def test_literal_values_and_dtypes_as_torch(name, data):
    same(getattr(ts, name)(data), getattr(torch, name)(data))


@pytest.mark.parametrize("data", [[1, 2], [1.5, 2.5], [True, False], [1j, 2]], ids=repr)
@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16", "int32", "uint8", "bool",
                                   "complex128", "int64"])
def test_dtype_argument_as_torch(data, dtype):
    if isinstance(data[0], complex) and dtype not in ("complex128",):
        return  # torch discards the imaginary part with a warning; not a form to pin
    same(ts.tensor(data, dtype=getattr(ts, dtype)), torch.tensor(data, dtype=getattr(torch, dtype)))


def test_default_dtype_float64_for_python_floats():
    old = ts.get_default_dtype()
    ts.set_default_dtype(ts.float64)
    torch_old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for data in ([1.5, 2.0], 2.5, [1j], [1, 2.5]):
            same(ts.tensor(data), torch.tensor(data))
            same(ts.asarray(data), torch.asarray(data))
    finally:
        ts.set_default_dtype(old)
        torch.set_default_dtype(torch_old)


def test_sequences_of_tensors_and_arrays_stack():
    same(ts.tensor([ts.tensor(1, dtype=ts.int8), 300]),
         torch.tensor([torch.tensor(1, dtype=torch.int8), 300]))
    same(ts.tensor([ts.tensor(1.5), ts.tensor(2.5)]), torch.tensor([torch.tensor(1.5), torch.tensor(2.5)]))
    got = ts.asarray([np.arange(3), np.arange(3, 6)])
    same(got, torch.asarray(np.stack([np.arange(3), np.arange(3, 6)])))
    got = ts.tensor([ts.ones(2, 3), ts.zeros(2, 3)])
    assert got.shape == (2, 2, 3) and got.tolist()[0] == [[1.0] * 3] * 2


def test_uint64_past_int64_as_numpy():
    t = ts.asarray([2**63, 1])
    assert t.dtype == ts.uint64 and t.tolist() == [2**63, 1]


nested = st.recursive(st.floats(allow_nan=False, width=32) | st.integers(-2**31, 2**31),
                      lambda children: st.integers(0, 3).flatmap(
                          lambda n: st.lists(children, min_size=n, max_size=n)), max_leaves=30)


@settings(max_examples=80, deadline=None)
@given(shape=st.lists(st.integers(0, 3), max_size=4), kind=st.sampled_from(["int", "float",
                                                                            "bool", "complex"]),
       data=st.data())
def test_nested_shapes_as_numpy_and_torch(shape, kind, data):
    n = int(np.prod(shape)) if shape else 1
    elem = {"int": st.integers(-2**40, 2**40), "float": st.floats(-1e6, 1e6, width=32),
            "bool": st.booleans(), "complex": st.complex_numbers(max_magnitude=1e3, width=64)}[kind]
    flat = data.draw(st.lists(elem, min_size=n, max_size=n))
    obj = np.array(flat, dtype=object).reshape(shape).tolist() if shape else flat[0]
    same(ts.tensor(obj), torch.tensor(obj))
    same(ts.asarray(obj), torch.asarray(obj))


@settings(max_examples=60, deadline=None)
@given(obj=nested)
def test_arbitrary_nesting_raises_or_matches_torch(obj):
    try:
        want = torch.tensor(obj)
    except (ValueError, TypeError, RuntimeError) as e:
        with pytest.raises(ValueError if isinstance(e, ValueError) else Exception) as info:
            ts.tensor(obj)
        assert str(info.value).startswith("tensor"), str(info.value)
        return
    if want.numel() == 0:  # torch reads no item of [[], 0.0] and calls it (2, 0); tessera
        try:               # checks every item (ragged: ValueError)
            same(ts.tensor(obj), want)
        except ValueError as e:
            assert str(e).startswith("tensor: the nested sequence is ragged")
        return
    same(ts.tensor(obj), want)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.uint64,
                                   np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_numpy_arrays_keep_dtype_and_layout(dtype):
    base = (np.arange(24) % 5).astype(dtype).reshape(4, 6)
    for arr in (base, base[::2, ::-3], base.T, base[1:1], np.asarray(base[0, 0]), base[0, 0]):
        same(ts.tensor(arr), torch.tensor(np.array(arr, order="C")))
        same(ts.asarray(arr), torch.asarray(np.array(arr, order="C")))


def test_asarray_copy_semantics():
    a = np.arange(6.0)
    shared = ts.asarray(a)  # copy=None: shares when it can
    a[0] = 42
    assert shared.tolist()[0] == 42
    assert ts.asarray(a, copy=True).tolist()[0] == 42
    copied = ts.asarray(a, copy=True)
    a[1] = -1
    assert copied.tolist()[1] == 1
    assert ts.asarray(a, copy=False).tolist()[1] == -1
    x = ts.arange(3.0)
    assert ts.asarray(x) is x and ts.asarray(x, copy=True) is not x
    for bad in (lambda: ts.asarray([1.0], copy=False), lambda: ts.asarray(1.0, copy=False),
                lambda: ts.asarray(a, dtype=ts.float32, copy=False),
                lambda: ts.asarray(x, dtype=ts.int64, copy=False)):
        with pytest.raises(ValueError, match=r"^asarray: copy=False"):
            bad()
    with pytest.raises(TypeError, match=r"^asarray: copy must be"):
        ts.asarray([1], copy="yes")


def test_tensor_always_copies_and_detaches_as_torch():
    a = np.arange(3.0)
    t = ts.tensor(a)
    a[0] = 9
    assert t.tolist()[0] == 0
    x = ts.ones(2, requires_grad=True)
    y = ts.tensor(x * 2)
    assert not y.requires_grad and y.grad_fn is None
    assert ts.tensor([1.0, 2.0], requires_grad=True).requires_grad
    assert ts.tensor([1.0], pin_memory=False).tolist() == [1.0]


def test_as_tensor_and_from_numpy_share_memory():
    a = np.arange(4, dtype=np.float32)
    t, u = ts.as_tensor(a), ts.from_numpy(a)
    a[0] = 7
    assert t.tolist()[0] == 7 and u.tolist()[0] == 7
    assert ts.as_tensor(a, dtype=ts.float64).dtype == ts.float64
    x = ts.arange(3)
    assert ts.as_tensor(x) is x
    with pytest.raises(TypeError, match=r"^from_numpy: expected np.ndarray, got list"):
        ts.from_numpy([1, 2])


def test_buffer_protocol_and_array_interface():
    same(ts.asarray(bytearray(b"\x01\x02")), torch.asarray(np.frombuffer(b"\x01\x02", np.uint8)))

    class ArrayInterface:
        def __init__(self):
            self._a = np.arange(3, dtype=np.int16)
            self.__array_interface__ = self._a.__array_interface__

    same(ts.asarray(ArrayInterface()), torch.tensor([0, 1, 2], dtype=torch.int16))
    same(ts.asarray(torch.arange(3)), torch.arange(3))  # __dlpack__


def test_hostile_input_raises_naming_the_op():
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match=r"^tensor: the nested sequence is deeper than 64"):
        ts.tensor(cyclic)
    deep: list = [1.0]
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match=r"^asarray: the nested sequence is deeper"):
        ts.asarray(deep)
    with pytest.raises(ValueError, match=r"^tensor: the nested sequence is ragged: expected a "
                                         r"sequence of length 2, got one of length 1 at dim 1"):
        ts.tensor([[1, 2], [3]])
    with pytest.raises(ValueError, match=r"^tensor: the nested sequence is ragged"):
        ts.tensor([1, [2]])
    with pytest.raises(ValueError, match=r"^tensor: the nested sequence is ragged"):
        ts.tensor([[1], 2])
    with pytest.raises(ValueError, match=r"^tensor: the nested sequence is ragged: items of shapes"):
        ts.tensor([ts.ones(2), ts.ones(3)])
    with pytest.raises(TypeError, match=r"^tensor: a nested sequence may hold numbers"):
        ts.tensor([1, "a"])
    with pytest.raises(TypeError, match=r"^asarray: a nested sequence may hold numbers"):
        ts.asarray([object()])
    with pytest.raises(OverflowError, match=r"^tensor: Python int \d+ does not fit"):
        ts.tensor([2**64])
    with pytest.raises(OverflowError, match=r"^tensor: the Python ints span"):
        ts.tensor([-1, 2**63])
    with pytest.raises(TypeError, match=r"^asarray: cannot convert an object of type object"):
        ts.asarray(object())
    # a huge claimed shape from one shared inner list: checked, never a crash
    row = [0] * 1000
    assert ts.tensor([row] * 1000).shape == (1000, 1000)
    with pytest.raises(MemoryError):  # 10**11 claimed elements: refused at once, no long walk
        ts.tensor([[0] * 10**5] * 10**6)
    mixed = [[1, 2]] * 3 + [[1, 2, 3]]  # a repeated row, then a ragged one
    with pytest.raises(ValueError, match=r"^tensor: the nested sequence is ragged"):
        ts.tensor(mixed)


def test_signatures_are_the_bindings():
    assert ts.asarray is ts._C.asarray and ts.tensor is ts._C.tensor
    assert str(inspect.signature(ts.asarray)) == \
        "(obj, /, *, dtype=None, device=None, copy=None, requires_grad=False)"
    assert str(inspect.signature(ts.tensor)) == \
        "(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False)"


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "float16",
                                   "bfloat16", "float32", "float64", "complex64", "bool"])
@pytest.mark.parametrize("count,offset", [(-1, 0), (1, 0), (-1, 16), (2, 16)])
def test_frombuffer_as_torch(dtype, count, offset):
    raw = bytes(range(48)) if dtype != "bool" else bytes([0, 1, 2, 255] * 12)
    got = ts.frombuffer(bytearray(raw), dtype=getattr(ts, dtype), count=count, offset=offset)
    want = torch.frombuffer(bytearray(raw), dtype=getattr(torch, dtype), count=count,
                            offset=offset)
    if dtype == "bfloat16":
        got, want = got.astype(ts.float32), want.float()
    if dtype == "bool":
        want = want.to(torch.uint8) != 0  # torch keeps the raw bytes; tessera normalizes
    same(got, want)


def test_frombuffer_errors_name_the_op():
    buf = bytearray(24)
    for call, exc in [(lambda: ts.frombuffer(buf, dtype=ts.int32, count=100), ValueError),
                      (lambda: ts.frombuffer([1], dtype=ts.int8), TypeError),
                      (lambda: ts.frombuffer(bytearray(b"abc"), dtype=ts.int16), ValueError),
                      (lambda: ts.frombuffer(buf, dtype=ts.int8, offset=-1), ValueError),
                      (lambda: ts.frombuffer(buf, dtype=ts.int8, offset=24), ValueError),
                      (lambda: ts.frombuffer(buf, dtype=ts.int64, count=2**62), ValueError)]:
        with pytest.raises(exc, match=r"^frombuffer: "):
            call()
    assert ts.frombuffer(buf, dtype=ts.float32, requires_grad=True).requires_grad

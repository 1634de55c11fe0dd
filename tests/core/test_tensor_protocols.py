"""Tensor-object behaviour against PyTorch: format specs, `in`, stride(dim), size() as a
Size, writable real/imag views, H of 0-d, dtype.to_complex/to_real, deepcopy/pickle keep .grad."""
from __future__ import annotations

import copy
import pickle

import pytest

import tessera as ts
from harness import same_as_torch

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("spec", [".2f", ">10.3e", "", "g", "+.1%"])
def test_format_of_a_0d_tensor(spec):
    same_as_torch(lambda m: format(m.tensor(3.14159), spec))
    same_as_torch(lambda m: format(m.tensor(7), spec.replace("%", "")) if "f" not in spec else 0)


def test_format_of_a_vector_needs_an_empty_spec():
    same_as_torch(lambda m: format(m.tensor([1.0, 2.0]), ".2f"))
    assert format(ts.asarray([1.0, 2.0]), "") == str(ts.asarray([1.0, 2.0]))


@pytest.mark.parametrize("element", [3, 9, 2.0, True, "t", "a"])
def test_contains(element):
    def f(m):
        x = m.tensor([[1, 2], [3, 4]])
        e = m.tensor([1, 5]) if element == "t" else element
        return e in x
    same_as_torch(f)


@pytest.mark.parametrize("dim", [None, 0, 1, -1, -2, 2, -3])
def test_stride_of_one_dim(dim):
    same_as_torch(lambda m: m.arange(6).reshape((2, 3)).stride(dim) if dim is not None
         else m.arange(6).reshape((2, 3)).stride())
    same_as_torch(lambda m: m.arange(12).reshape((3, 4)).t().stride(dim) if dim is not None
         else m.arange(12).reshape((3, 4)).t().stride())


def test_size_is_a_size():
    same_as_torch(lambda m: (m.zeros(2, 3).size().numel(), m.zeros(2, 3).size() == (2, 3),
                    m.zeros(2, 3).size(-1), tuple(m.zeros(2, 3).size())))


def test_real_and_imag_are_writable_views():
    def f(m):
        x = m.tensor([1 + 1j, 2 - 3j])
        x.real[0] = 5
        x.imag.mul_(2)
        strides = (x.real.stride(), x.imag.stride())
        x.real = m.tensor([7.0, 8.0])
        x.imag = 0.5
        return x.tolist(), strides, m.tensor([1.0, 2.0]).real.tolist()
    same_as_torch(f)


def test_real_and_imag_gradients():
    def f(m):
        x = m.tensor([1 + 2j, 3j], requires_grad=True)
        (x.real * 2 + x.imag * 3).sum().backward()
        return x.grad.tolist()
    same_as_torch(f)


def test_H_of_0d_complex_conjugates():
    same_as_torch(lambda m: m.tensor(1 + 2j).H.item())


def test_dtype_to_complex_and_real():
    for name, want in [("float32", "complex64"), ("float64", "complex128"),
                       ("complex64", "complex64")]:
        assert getattr(ts, name).to_complex() == getattr(ts, want)
    assert ts.complex128.to_real() == ts.float64 and ts.float32.to_real() == ts.float32


def test_deepcopy_and_pickle_keep_the_grad():
    x = ts.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    for y in (copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
        assert y.requires_grad and y.grad.tolist() == [2.0, 2.0, 2.0]
        assert y.grad.data_ptr() != x.grad.data_ptr()


# ---- Python numbers written into tensors must fit (Note [Checked scalar writes])
WRITES = [("uint8", 300), ("uint8", -1), ("uint8", 256), ("uint8", -129), ("uint8", -256),
          ("int8", 128), ("int8", -129), ("int8", -128), ("int64", 2**63), ("int64", -2**63),
          ("int32", 2.5), ("int32", -2.9), ("int32", float("nan")), ("int32", float("inf")),
          ("int32", 3e9), ("float32", 1e40), ("float32", float("inf")),
          ("float32", float("nan")), ("float32", 1 + 2j), ("bool", 2), ("bool", 0.5),
          ("int32", True), ("uint8", 255.9), ("uint8", -0.5), ("uint8", 255.0),
          ("complex64", 1 + 2j), ("float64", 1e308), ("int16", -32768), ("uint16", 65536)]


@pytest.mark.parametrize("how", ["fill", "setitem"])
@pytest.mark.parametrize("dtype,value", WRITES)
def test_python_number_writes_are_checked_like_torch(dtype, value, how):
    def f(m):
        t = m.zeros(2, dtype=getattr(m, dtype))
        if how == "fill":
            t.fill_(value)
        else:
            t[0] = value
        v = t[0].item()
        return "nan" if v != v else v
    same_as_torch(f)


def test_overflowing_write_names_the_value_and_dtype():
    with pytest.raises(RuntimeError, match="300.*uint8.*overflow"):
        ts.zeros(2, dtype=ts.uint8)[0] = 300
    with pytest.raises(ValueError):  # also a ValueError (NumPy habits)
        ts.zeros(2, dtype=ts.int8).fill_(1000)
    x = ts.zeros(2, dtype=ts.uint8)
    x[...] = ts.asarray([300, 2])  # tensors cast without checks, as in torch
    assert x.tolist() == [44, 2]

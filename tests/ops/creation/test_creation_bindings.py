"""The creation functions parsed in C++ (csrc/python/bind_creation.cpp) against PyTorch: the
forms the bindings newly accept (NumPy scalar fill values, layout=strided, input=, eye's n=/m=,
empty_permuted's physical layout), the ones that now raise as torch does (tril(x, None)), and
that each function is one object for the namespace and the Tensor method."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import tessera as ts


def same(got, want):
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("value", [np.float64(1.5), np.float32(2.5), np.int64(3), np.int32(-4),
                                   np.bool_(True), 7, 2.5, True, 1 + 2j])
def test_full_dtype_from_fill_value_as_torch(value):
    same(ts.full((2, 3), value), torch.full((2, 3), value))
    same(ts.full(size=(2,), fill_value=value), torch.full(size=(2,), fill_value=value))


def test_full_one_element_tensor_fill_value():
    same(ts.full((2,), ts.asarray([1.5])), torch.full((2,), torch.tensor([1.5]).item()))
    with pytest.raises(ValueError, match="^full: fill_value"):
        ts.full((2,), ts.ones(2))


@pytest.mark.parametrize("make", [
    lambda m: m.zeros(2, 3, layout=m.strided), lambda m: m.ones((2,), layout=m.strided),
    lambda m: m.full((2,), 1.0, layout=m.strided), lambda m: m.eye(2, layout=m.strided),
    lambda m: m.zeros_like(m.ones(2), layout=m.strided),
    lambda m: m.scalar_tensor(3, layout=m.strided),
    lambda m: m.empty_strided((2, 2), (2, 1), layout=m.strided).fill_(1)])
def test_layout_strided_is_accepted(make):
    same(make(ts), make(torch))


def test_other_layouts_raise():
    with pytest.raises(NotImplementedError, match="^zeros: layout="):
        ts.zeros(2, layout=ts.sparse_coo)


OUT_CALLS = [lambda m, o: m.zeros(2, 3, out=o), lambda m, o: m.ones((4,), out=o),
             lambda m, o: m.empty(0, out=o), lambda m, o: m.full((2, 2), 7, out=o),
             lambda m, o: m.arange(5, out=o), lambda m, o: m.arange(1, 4, 2, out=o),
             lambda m, o: m.linspace(0, 1, 5, out=o), lambda m, o: m.logspace(0, 2, 3, out=o),
             lambda m, o: m.eye(3, out=o), lambda m, o: m.eye(2, 4, out=o)]


@pytest.mark.parametrize("call", OUT_CALLS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("start", [(0,), (7,), (2, 3)])
def test_out_is_resized_filled_and_returned_as_torch(call, dtype, start):
    o, to = ts.ones(start, dtype=getattr(ts, dtype)), torch.ones(start, dtype=getattr(torch, dtype))
    got, want = call(ts, o), call(torch, to)
    assert got is o
    if call is not OUT_CALLS[2]:  # empty's values are uninitialized
        same(got, want)
    else:
        assert tuple(got.shape) == tuple(want.shape) and got.dtype == o.dtype


@pytest.mark.parametrize("call", [lambda m: m.zeros(2, dtype=m.float32, out=m.empty(0, dtype=m.int64)),
                                  lambda m: m.arange(3, dtype=m.float64, out=m.empty(0)),
                                  lambda m: m.full((2,), 1, dtype=m.int32, out=m.empty(0))])
def test_out_with_another_dtype_raises_as_torch(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError, match=r"^(zeros|arange|full): dtype \w+ does not match the "
                                           r"dtype of out"):
        call(ts)
    with pytest.raises(TypeError, match=r"^zeros: out must be a Tensor"):
        ts.zeros(2, out=[0, 0])


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "rand_like",
                                  "randn_like"])
@pytest.mark.parametrize("view", ["t", "noncontig", "channels_last", "plain"])
@pytest.mark.parametrize("fmt", [None, "preserve_format", "contiguous_format", "channels_last"])
def test_like_layouts_as_torch(name, view, fmt):
    def make(m):
        x = m.ones(2, 3, 4, 5)
        x = {"t": x.transpose(1, 3), "noncontig": x[:, :, ::2, 1:].permute(0, 3, 1, 2),
             "channels_last": x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
             "plain": x}[view]
        kw = {} if fmt is None else {"memory_format": getattr(m, fmt)}
        return getattr(m, name)(input=x, **kw)
    got, want = make(ts), make(torch)
    assert tuple(got.shape) == tuple(want.shape) and tuple(got.stride()) == want.stride()


def test_full_like_and_fill_keep_the_layout():
    for m in (ts, torch):
        x = m.ones(3, 4).T
        assert m.full_like(x, 2.0).stride() == (1, 4) or tuple(m.full_like(x, 2.0).stride()) == (1, 4)
    same(ts.fill(ts.ones(3, 4).T, 2), torch.fill(torch.ones(3, 4).T, 2))
    with pytest.raises(RuntimeError, match="rank 4"):
        ts.zeros_like(ts.ones(2, 3), memory_format=ts.channels_last)


@pytest.mark.parametrize("size,perm", [((2, 3, 4, 5), (0, 2, 3, 1)), ((2, 3, 4), (2, 0, 1)),
                                       ((3, 4), (0, 1))])
def test_empty_permuted_strides_as_torch(size, perm):
    assert tuple(ts.empty_permuted(size, perm).stride()) == torch.empty_permuted(size, perm).stride()


def test_empty_strided_as_torch():
    e = ts.empty_strided((2, 3), (1, 2))
    assert tuple(e.stride()) == (1, 2) and tuple(e.shape) == (2, 3)
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        ts.empty_strided((2, 3), (1,))


def test_eye_torch_names():
    for call in (lambda m: m.eye(n=2, m=3), lambda m: m.eye(3, m=2), lambda m: m.eye(3)):
        same(call(ts), call(torch))
    with pytest.raises(TypeError, match="multiple values for argument 'n'"):
        ts.eye(2, n=2)


def test_tril_triu_diagonal_none_raises_as_torch():
    x = ts.ones(3, 3)
    for f in (lambda: ts.tril(x, None), lambda: x.triu(None), lambda: x.tril_(None)):
        with pytest.raises(TypeError, match="diagonal must be an int"):
            f()
    same(ts.tril(x, k=1), torch.tril(torch.ones(3, 3), 1))


def test_new_full_and_scalar_tensor():
    x, t = ts.ones(2, dtype=ts.float64), torch.ones(2, dtype=torch.float64)
    same(x.new_full((2, 3), 4), t.new_full((2, 3), 4))
    same(x.new_full((2,), 1, dtype=ts.int32), t.new_full((2,), 1, dtype=torch.int32))
    same(ts.scalar_tensor(3), torch.scalar_tensor(3))
    same(ts.scalar_tensor(np.int64(2), dtype=ts.int16), torch.scalar_tensor(2, dtype=torch.int16))
    assert ts.scalar_tensor(1.0, requires_grad=True).requires_grad


@pytest.mark.parametrize("name", ["tril", "triu", "numel", "is_floating_point", "is_complex",
                                  "is_nonzero"])
def test_method_is_the_function(name):
    assert getattr(ts.Tensor, name) is getattr(ts, name)


def test_queries_as_torch():
    for a in (np.ones((2, 3), np.float32), np.array([1j]), np.array([0])):
        x, t = ts.asarray(a), torch.from_numpy(a)
        assert ts.numel(x) == torch.numel(t) == x.numel()
        assert ts.is_floating_point(x) == torch.is_floating_point(t)
        assert ts.is_complex(x) == torch.is_complex(t)
    assert ts.is_nonzero(ts.asarray([2.0])) and not ts.is_nonzero(ts.asarray([0]))
    with pytest.raises(RuntimeError, match="is_nonzero"):
        ts.is_nonzero(ts.ones(2))
    with pytest.raises(TypeError, match="^numel: input must be a Tensor"):
        ts.numel([1])


@pytest.mark.parametrize("name", ["full", "zeros_like", "full_like", "eye", "tril", "rand_like",
                                  "scalar_tensor", "empty_strided", "empty_permuted"])
def test_signatures_are_readable(name):
    params = inspect.signature(getattr(ts, name)).parameters
    assert "dtype" in params or "diagonal" in params
    assert getattr(ts, name).__doc__


def test_random_like():
    x = ts.ones(3, 4).T
    assert tuple(ts.rand_like(x).stride()) == (1, 4)
    ts.manual_seed(0)
    a = ts.rand_like(x)
    ts.manual_seed(0)
    b = ts.rand(12).as_strided((4, 3), (1, 4))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    r = ts.randint_like(ts.ones(50, dtype=ts.int32), 3)
    assert r.dtype == ts.int32 and 0 <= int(r.min()) and int(r.max()) < 3
    r = ts.randint_like(ts.ones(50), 5, 8)
    assert r.dtype == ts.float32 and 5 <= float(r.min()) and float(r.max()) < 8
    with pytest.raises(TypeError, match="^rand_like: expected a floating-point dtype"):
        ts.rand_like(ts.ones(2, dtype=ts.int64))


@pytest.mark.parametrize("call", [
    lambda m: m.arange(0, 10, step=3),  # was: the keyword step was dropped after two positionals
    lambda m: m.arange(end=4), lambda m: m.arange(1, end=7, step=2),
    lambda m: m.arange(start=1, end=4), lambda m: m.arange(np.int64(5)),
    lambda m: m.arange(m.tensor(3)), lambda m: m.arange(0.5, 5.7, 1.3, dtype=m.int64),
    lambda m: m.arange(-3.5, 4.2, 1.5, dtype=m.int32), lambda m: m.arange(2.5),
    lambda m: m.arange(1, 4, dtype=m.float64)])
def test_arange_forms_as_torch(call):
    same(call(ts), call(torch))


def test_arange_argument_errors():
    with pytest.raises(TypeError, match='missing 1 required positional argument: "end"'):
        ts.arange(start=2)
    with pytest.raises(TypeError, match="multiple values for argument 'start'"):
        ts.arange(1, start=2)
    with pytest.raises(TypeError, match="real numbers"):
        ts.arange(1j)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int16"])
@pytest.mark.parametrize("start,end,steps", [(0, 10, 4), (-3.7, 9.2, 7), (5, -5, 6), (1, 1, 1),
                                             (0, 100, 0), (2.9, 250.5, 11)])
def test_integer_linspace_as_torch(dtype, start, end, steps):
    if dtype == "uint8" and min(start, end) < 0:
        return
    same(ts.linspace(start, end, steps, dtype=getattr(ts, dtype)),
         torch.linspace(start, end, steps, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("kw", [{}, {"base": 2.0}, {"dtype": "float64"}, {"dtype": "int64"}])
def test_logspace_as_torch(kw):
    kt = {k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()}
    ks = {k: getattr(ts, v) if k == "dtype" else v for k, v in kw.items()}
    got, want = ts.logspace(-1, 3, 9, **ks), torch.logspace(-1, 3, 9, **kt)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    assert str(got.dtype).rsplit(".", 1)[-1] == str(want.dtype).rsplit(".", 1)[-1]
    with pytest.raises(RuntimeError, match="logspace: number of steps must be non-negative"):
        ts.logspace(0, 1, -1)


def test_linspace_torch_names():
    same(ts.linspace(0, end=1, steps=5), torch.linspace(0, end=1, steps=5))
    same(ts.linspace(start=1, end=2, steps=3), torch.linspace(start=1, end=2, steps=3))
    with pytest.raises(TypeError, match="got both num= and its alias steps="):
        ts.linspace(0, 1, 3, steps=3)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_as_torch(indexing):
    def grids(m):
        return m.meshgrid(m.arange(3), m.tensor(7), m.arange(4), indexing=indexing)
    for got, want in zip(grids(ts), grids(torch)):
        same(got, want)
    for got, want in zip(ts.meshgrid([ts.arange(2), ts.arange(3)], indexing=indexing),
                         torch.meshgrid([torch.arange(2), torch.arange(3)], indexing=indexing)):
        same(got, want)
    x = ts.arange(3.0, requires_grad=True)
    ts.meshgrid(x, ts.arange(2.0), indexing=indexing)[0].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
    with pytest.raises(TypeError, match="^meshgrid: argument 1 must be a tensor"):
        ts.meshgrid(ts.arange(2), [1, 2], indexing=indexing)


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("r,c,o", [(3, 3, 0), (4, 3, -1), (3, 5, 2), (0, 3, 0), (5, 2, -7),
                                   (2, 6, 9)])
def test_tri_indices_as_torch(name, r, c, o):
    same(getattr(ts, name)(r, c, o), getattr(torch, name)(r, c, o))
    same(getattr(ts, name)(r, c, offset=o, dtype=ts.int32),
         getattr(torch, name)(r, c, offset=o, dtype=torch.int32))

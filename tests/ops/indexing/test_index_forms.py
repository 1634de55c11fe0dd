"""The argument forms of PyTorch's gather / scatter / scatter_add / index_select / index_add /
masked_fill / masked_select and the standard's take_along_axis, parsed once in their C++
bindings (issue 17): dim positional or keyword, out=, sparse_grad= (ignored), alpha=, the
method and in-place forms, and the errors the ops raise (op name, shapes, a hint)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import tessera as ts
from harness import assert_same

A = np.arange(12, dtype=np.float32).reshape(3, 4)
IDX = np.array([[0, 2], [1, 0], [2, 2]], dtype=np.int64)


@pytest.mark.parametrize("name", ["gather", "scatter", "scatter_add", "index_select",
                                  "index_add", "masked_fill", "masked_select"])
def test_method_is_the_function(name):
    """One definition: Tensor.gather is ts.gather (was a Python method beside the function)."""
    assert getattr(ts.Tensor, name) is getattr(ts, name)
    assert "input" in inspect.signature(getattr(ts, name)).parameters


def test_gather_forms_match_torch():
    x, t = ts.asarray(A), torch.from_numpy(A)
    i, ti = ts.asarray(IDX), torch.from_numpy(IDX)
    want = torch.gather(t, 1, ti)
    assert_same(ts.gather(x, 1, i), want)
    assert_same(ts.gather(x, dim=1, index=i), want)
    assert_same(ts.gather(x, 1, i, sparse_grad=True), want)
    assert_same(x.gather(1, i), want)
    assert_same(x.gather(dim=1, index=i), want)
    out = ts.zeros((3, 2))
    assert ts.gather(x, 1, i, out=out) is out
    assert_same(out, want)


def test_index_select_and_index_add_forms_match_torch():
    x, t = ts.asarray(A), torch.from_numpy(A)
    j = np.array([2, 0, 2], dtype=np.int64)
    src = np.ones((3, 3), dtype=np.float32)
    assert_same(ts.index_select(x, dim=1, index=ts.asarray(j)),
                torch.index_select(t, 1, torch.from_numpy(j)))
    want = torch.index_add(t, 1, torch.from_numpy(j), torch.from_numpy(src), alpha=2.5)
    assert_same(ts.index_add(x, 1, ts.asarray(j), ts.asarray(src), alpha=2.5), want)
    assert_same(x.index_add(1, ts.asarray(j), ts.asarray(src), alpha=2.5), want)
    y = ts.asarray(A.copy())
    assert y.index_add_(1, ts.asarray(j), ts.asarray(src), alpha=2.5) is y
    assert_same(y, want)


def test_scatter_forms_match_torch():
    x, t = ts.asarray(A), torch.from_numpy(A)
    i, ti = ts.asarray(IDX), torch.from_numpy(IDX)
    s = np.full((3, 2), 5.0, dtype=np.float32)
    assert_same(ts.scatter(x, 1, i, ts.asarray(s)), torch.scatter(t, 1, ti, torch.from_numpy(s)))
    assert_same(ts.scatter(x, 1, i, value=2.0), torch.scatter(t, 1, ti, value=2.0))
    assert_same(x.scatter(1, i, 2.0, reduce="multiply"),
                t.scatter(1, ti, 2.0, reduce="multiply"))
    assert_same(ts.scatter_add(x, dim=1, index=i, src=ts.asarray(s)),
                torch.scatter_add(t, 1, ti, torch.from_numpy(s)))
    y, ty = ts.asarray(A.copy()), t.clone()
    assert y.scatter_(1, i, ts.asarray(s), reduce="add") is y
    assert_same(y, ty.scatter_(1, ti, torch.from_numpy(s), reduce="add"))
    assert y.scatter_add_(1, i, ts.asarray(s)) is y
    assert_same(y, ty.scatter_add_(1, ti, torch.from_numpy(s)))
    with pytest.raises(TypeError, match="only one of src and value"):
        ts.scatter(x, 1, i, ts.asarray(s), value=1.0)
    with pytest.raises(ValueError, match="reduce must be None, 'add' or 'multiply'"):
        ts.scatter(x, 1, i, ts.asarray(s), reduce="max")


SRC_MISMATCH = {
    "scatter": lambda m, x, i, s: m.scatter(x, 1, i, s),
    "scatter_method": lambda m, x, i, s: x.scatter(1, i, s),
    "scatter_reduce_add": lambda m, x, i, s: x.scatter(1, i, s, reduce="add"),
    "scatter_reduce_multiply": lambda m, x, i, s: x.scatter(1, i, s, reduce="multiply"),
    "scatter_": lambda m, x, i, s: x.scatter_(1, i, s),
    "scatter_add": lambda m, x, i, s: m.scatter_add(x, 1, i, s),
    "scatter_add_": lambda m, x, i, s: x.scatter_add_(1, i, s),
    "index_add": lambda m, x, i, s: m.index_add(x, 0, i[:, 0], s[:, :1].expand(3, 4)),
    "index_add_alpha": lambda m, x, i, s: x.index_add(0, i[:, 0], s[:, :1].expand(3, 4), alpha=2),
    "index_add_": lambda m, x, i, s: x.index_add_(0, i[:, 0], s[:, :1].expand(3, 4)),
}


@pytest.mark.parametrize("src_dtype,self_dtype", [("float64", "float32"), ("float32", "float64"),
                                                  ("int64", "float32"), ("float32", "int64")])
@pytest.mark.parametrize("name", sorted(SRC_MISMATCH))
def test_scatter_and_index_add_refuse_a_src_of_another_dtype(name, src_dtype, self_dtype):
    # torch raises RuntimeError; tessera used to cast src silently (float into int64 truncated)
    s = np.full((3, 2), 2.5)
    for m, x, i, src in (
            (torch, torch.from_numpy(A).to(getattr(torch, self_dtype)), torch.from_numpy(IDX),
             torch.from_numpy(s).to(getattr(torch, src_dtype))),
            (ts, ts.asarray(A).astype(getattr(ts, self_dtype)), ts.asarray(IDX),
             ts.asarray(s).astype(getattr(ts, src_dtype)))):
        with pytest.raises(RuntimeError) as info:
            SRC_MISMATCH[name](m, x, i, src)
        assert type(info.value) is RuntimeError
        if m is ts:
            assert "same dtype" in str(info.value) and self_dtype in str(info.value)
            assert src_dtype in str(info.value)
            assert np.array_equal(x.numpy(), A.astype(self_dtype))  # self left unchanged


def test_scatter_number_src_takes_self_dtype():
    for m in (torch, ts):
        x = m.zeros((2, 3), dtype=m.int64)
        i = m.tensor([[0, 2]])
        assert x.scatter(1, i, 2.7).tolist() == [[2, 0, 2], [0, 0, 0]]
        assert x.scatter(1, i, value=3.2).tolist() == [[3, 0, 3], [0, 0, 0]]
        assert x.scatter_(1, i, 1.9, reduce="add").tolist() == [[1, 0, 1], [0, 0, 0]]


def test_masked_forms_match_torch():
    x, t = ts.asarray(A), torch.from_numpy(A)
    m = A[0] > 4  # broadcasts over the rows
    assert_same(ts.masked_fill(x, ts.asarray(m), -1.0), torch.masked_fill(t, torch.from_numpy(m), -1.0))
    assert_same(x.masked_fill(ts.asarray(m), ts.asarray(3.0)),
                t.masked_fill(torch.from_numpy(m), torch.tensor(3.0)))
    y = ts.asarray(A.copy())
    assert y.masked_fill_(ts.asarray(m), 0.5) is y
    assert_same(y, t.clone().masked_fill_(torch.from_numpy(m), 0.5))
    want = torch.masked_select(t, torch.from_numpy(m))
    assert_same(ts.masked_select(x, ts.asarray(m)), want)
    out = ts.zeros(tuple(want.shape))
    assert ts.masked_select(x, ts.asarray(m), out=out) is out
    assert_same(out, want)
    assert_same(ts.masked_select(ts.asarray(2.0), ts.asarray(True)),
                torch.masked_select(torch.tensor(2.0), torch.tensor(True)))


def test_masked_fill_errors_name_op_and_shapes():
    x = ts.asarray(A)
    with pytest.raises(TypeError, match="masked_fill: mask must be a bool tensor, got int64"):
        ts.masked_fill(x, ts.asarray([1, 0, 1, 0]), 1.0)
    with pytest.raises(ValueError, match=r"masked_fill_: mask of shape \(2,\) does not broadcast"):
        x.masked_fill_(ts.asarray([True, False]), 1.0)
    with pytest.raises(ValueError, match="value must be a number or a 0-d tensor"):
        ts.masked_fill(x, ts.asarray(A > 3), ts.ones(2))


def test_masked_fill_gradient_matches_torch():
    x = ts.asarray(A, requires_grad=True)
    v = ts.asarray(2.0, requires_grad=True)
    t = torch.from_numpy(A).requires_grad_(True)
    tv = torch.tensor(2.0, requires_grad=True)
    m = A > 5
    (ts.masked_fill(x, ts.asarray(m), v) * 3).sum().backward()
    (torch.masked_fill(t, torch.from_numpy(m), tv) * 3).sum().backward()
    assert_same(x.grad, t.grad)
    assert_same(v.grad, tv.grad)


def test_take_along_axis_keeps_the_standard_signature():
    assert str(inspect.signature(ts.take_along_axis)) == "(x, indices, /, *, axis=-1)"
    x = ts.asarray(A)
    i = ts.argsort(x, axis=1)
    assert_same(ts.take_along_axis(x, i, axis=1), np.take_along_axis(A, np.argsort(A, axis=1), 1))


# ---- nonzero / argwhere / index_fill / index_copy, bound in C++ (csrc/python/bind_search.cpp)
@pytest.mark.parametrize("name", ["index_fill", "index_copy"])
def test_more_methods_are_the_functions(name):
    assert getattr(ts.Tensor, name) is getattr(ts, name)
    assert not inspect.isfunction(getattr(ts, name))


NZ = np.array([[0, 1.5, 0], [2, 0, -1]], dtype=np.float32)


def test_nonzero_forms():
    """ts.nonzero is the standard's tuple; torch's as_tuple=False, x.nonzero() and argwhere
    are the (count, ndim) form."""
    x, t = ts.asarray(NZ), torch.from_numpy(NZ)
    assert_same(ts.nonzero(x), tuple(torch.from_numpy(c) for c in np.nonzero(NZ)))
    assert_same(ts.nonzero(x, as_tuple=True), torch.nonzero(t, as_tuple=True))
    assert_same(ts.nonzero(x, as_tuple=False), torch.nonzero(t))
    assert_same(x.nonzero(), t.nonzero())
    assert_same(x.nonzero(as_tuple=True), t.nonzero(as_tuple=True))
    assert_same(ts.argwhere(x), torch.argwhere(t))
    assert_same(x.argwhere(), t.argwhere())
    s, st = ts.asarray(2.0), torch.tensor(2.0)
    assert_same(s.nonzero(as_tuple=True), st.nonzero(as_tuple=True))
    assert_same(s.nonzero(), st.nonzero())
    with pytest.raises(ValueError, match="nonzero"):
        ts.nonzero(s)
    assert_same(ts.nonzero([0, 3, 4]), (torch.tensor([1, 2]),))
    assert list(inspect.signature(ts.nonzero).parameters) == ["x", "as_tuple"]
    with pytest.raises(TypeError):
        ts.Tensor.argwhere(3)  # the method needs a tensor (torch's TypeError)


@pytest.mark.parametrize("dim,index,value", [
    (0, [1], 7.0), (1, [0, 2], -1), (-1, [-1, 0, 0], 2.5), (1, [], 3.0), (0, 1, 4.0),
])
def test_index_fill_matches_torch(dim, index, value):
    x, t = ts.asarray(A), torch.from_numpy(A)
    i, ti = ts.asarray(np.array(index, dtype=np.int64)), torch.tensor(index, dtype=torch.int64)
    want = torch.index_fill(t, dim, ti, value)
    assert_same(ts.index_fill(x, dim, i, value), want)
    assert_same(x.index_fill(dim, i, value), want)
    assert_same(ts.index_fill(x, dim=dim, index=i, value=ts.asarray(value)), want)
    y = ts.asarray(A.copy())
    assert y.index_fill_(dim, i, value) is y
    assert_same(y, want)
    xi, tii = ts.asarray(A.astype(np.int32)), torch.from_numpy(A.astype(np.int32))
    assert_same(xi.index_fill(dim, i, value), tii.index_fill(dim, ti, value))


@pytest.mark.parametrize("dim,index", [(0, [2, 0]), (1, [3, 1, 0]), (-1, [3]), (0, [])])
def test_index_copy_matches_torch(dim, index):
    x, t = ts.asarray(A), torch.from_numpy(A)
    i, ti = ts.asarray(np.array(index, dtype=np.int64)), torch.tensor(index, dtype=torch.int64)
    shape = list(A.shape)
    shape[dim] = len(index)
    src = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 100
    want = torch.index_copy(t, dim, ti, torch.from_numpy(src))
    assert_same(ts.index_copy(x, dim, i, ts.asarray(src)), want)
    assert_same(x.index_copy(dim=dim, index=i, source=ts.asarray(src)), want)
    out = ts.empty(A.shape)
    assert ts.index_copy(x, dim, i, ts.asarray(src), out=out) is out
    assert_same(out, want)
    y = ts.asarray(A.copy())
    assert y.index_copy_(dim, i, ts.asarray(src)) is y
    assert_same(y, want)


def test_index_fill_copy_gradients_match_torch():
    i, ti = ts.asarray([2, 0]), torch.tensor([2, 0])
    src = np.ones((3, 2), dtype=np.float64) * 3
    for ts_fn, t_fn in [
        (lambda x, s: ts.index_copy(x, 1, i, s) * x, lambda x, s: torch.index_copy(x, 1, ti, s) * x),
        (lambda x, s: ts.index_fill(x, 1, i, -2.0) * x, lambda x, s: torch.index_fill(x, 1, ti, -2.0) * x),
    ]:
        x, s = ts.asarray(A.astype(np.float64), requires_grad=True), ts.asarray(src, requires_grad=True)
        tx, tsrc = (torch.from_numpy(A.astype(np.float64)).requires_grad_(),
                    torch.from_numpy(src).requires_grad_())
        ts_fn(x, s).sum().backward()
        t_fn(tx, tsrc).sum().backward()
        assert_same(x.grad, tx.grad)
        if tsrc.grad is not None:
            assert_same(s.grad, tsrc.grad)


def test_index_fill_copy_errors():
    x = ts.asarray(A)
    with pytest.raises(IndexError, match="index_fill"):
        x.index_fill(1, ts.asarray([4]), 1.0)
    with pytest.raises(IndexError, match="index_copy"):
        x.index_copy(0, ts.asarray([[0]]), ts.ones((1, 4)))
    with pytest.raises(RuntimeError, match="index_fill.*0-dimensional"):
        x.index_fill(0, ts.asarray([0]), ts.ones(2))
    with pytest.raises(RuntimeError, match="index_copy.*same dtype"):
        x.index_copy(0, ts.asarray([0]), ts.ones((1, 4), dtype=ts.float64))
    with pytest.raises(RuntimeError, match="index_copy.*shape"):
        x.index_copy(0, ts.asarray([0]), ts.ones((2, 4)))
    with pytest.raises(RuntimeError, match="index_fill.*integer"):
        x.index_fill(0, ts.asarray([0.0]), 1.0)

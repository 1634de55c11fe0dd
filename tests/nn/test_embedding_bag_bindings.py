"""F.embedding and F.embedding_bag are the C++ ops themselves (csrc/ops/nn/embedding.h,
csrc/ops/nn/embedding_bag.h, bound in csrc/python/bind_embedding.cpp): values and gradients
against torch's (hypothesis over bags, modes, offsets, padding, per-sample weights, dtypes and
empty inputs), float64 gradcheck, max_norm / scale_grad_by_freq, and errors naming the op."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera import _C
from tessera.nn import functional as F
from harness import strided_views


def test_is_the_binding() -> None:
    assert F.embedding_bag is _C.embedding_bag and F.embedding is _C.embedding
    want = inspect.signature(TF.embedding_bag).parameters
    got = inspect.signature(F.embedding_bag).parameters
    assert list(got) == list(want)
    assert [p.default for p in got.values()][2:] == [None, None, 2.0, False, "mean", False, None,
                                                     False, None]
    assert list(inspect.signature(F.embedding).parameters) == \
        list(inspect.signature(TF.embedding).parameters)


@st.composite
def bag_cases(draw):
    num = draw(st.integers(1, 6))
    dim = draw(st.integers(0, 3))
    two_d = draw(st.booleans())
    if two_d:
        shape = (draw(st.integers(0, 3)), draw(st.integers(1, 3)))
        offsets = None
    else:
        n = draw(st.integers(0, 7))
        shape = (n,)
        cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4)))
        offsets = [0] + cuts
    idx = draw(st.lists(st.integers(-num, num - 1), min_size=int(np.prod(shape)),
                        max_size=int(np.prod(shape))))
    idx = np.array(idx, np.int64).reshape(shape) % num  # torch refuses negative bag indices
    mode = draw(st.sampled_from(["sum", "mean", "max"]))
    ilo = offsets is not None and len(offsets) > 1 and draw(st.booleans())
    if ilo:
        offsets = offsets + [shape[0]]  # torch's documented form: the last offset is n
    pad = draw(st.one_of(st.none(), st.integers(-num, num - 1)))
    psw = mode == "sum" and draw(st.booleans())
    return num, dim, idx, offsets, mode, ilo, pad, psw, draw(st.sampled_from(["float32",
                                                                                "float64"]))


@settings(max_examples=80, deadline=None)
@given(bag_cases(), st.sampled_from(["int64", "int32"]), st.data())
def test_values_and_gradients_match_torch(case, idt: str, data) -> None:
    num, dim, idx, offsets, mode, ilo, pad, psw, dtype = case
    idx = strided_views(data.draw, idx)  # non-contiguous index layouts
    rng = np.random.default_rng(0)
    w = rng.standard_normal((num, dim)).astype(dtype)
    p = rng.standard_normal(idx.shape).astype(dtype) if psw else None
    xw = ts.asarray(w, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    xp = ts.asarray(p, requires_grad=True) if psw else None
    tp = torch.tensor(p, requires_grad=True) if psw else None
    off = None if offsets is None else np.array(offsets, np.int64)
    got = F.embedding_bag(ts.asarray(idx.astype(idt, copy=False)), xw,
                          None if off is None else ts.asarray(off.astype(idt)), mode=mode,
                          include_last_offset=ilo, padding_idx=pad, per_sample_weights=xp)
    want = TF.embedding_bag(torch.tensor(idx.astype(idt)), tw,
                            None if off is None else torch.tensor(off.astype(idt)), mode=mode,
                            include_last_offset=ilo, padding_idx=pad, per_sample_weights=tp)
    tol = 1e-12 if dtype == "float64" else 1e-5
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype.name == dtype
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)
    if got.size == 0:
        return
    # distinct values per row so that max mode has no ties (torch sends a tie's gradient to one)
    cot = rng.standard_normal(tuple(want.shape)).astype(dtype)
    (got * ts.asarray(cot)).sum().backward()
    (want * torch.tensor(cot)).sum().backward()
    if tw.grad is not None:
        np.testing.assert_allclose(xw.grad.numpy(), tw.grad.numpy(), rtol=tol, atol=tol)
    if psw:
        np.testing.assert_allclose(xp.grad.numpy(), tp.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_gradcheck_float64(mode: str) -> None:
    rng = np.random.default_rng(3)
    w = ts.asarray(rng.standard_normal((5, 3)), requires_grad=True)
    idx = ts.asarray(np.array([1, 4, 0, 2, 2, 3]))
    off = ts.asarray(np.array([0, 2, 2, 4]))
    assert ts.autograd.gradcheck(lambda w_: F.embedding_bag(idx, w_, off, mode=mode), (w,))
    if mode == "sum":
        p = ts.asarray(rng.standard_normal(6), requires_grad=True)
        assert ts.autograd.gradcheck(
            lambda w_, p_: F.embedding_bag(idx, w_, off, mode="sum", per_sample_weights=p_),
            (w, p))


def test_last_bag_runs_to_the_end_with_include_last_offset() -> None:
    # torch's rule where offsets[-1] < len(input); the Python version stopped at offsets[-1]
    w = np.arange(12.0).reshape(6, 2)
    i = np.array([1, 2, 4, 0, 5, 5, 1])
    off = np.array([0, 2, 5])
    got = F.embedding_bag(ts.asarray(i), ts.asarray(w), ts.asarray(off), mode="sum",
                          include_last_offset=True)
    want = TF.embedding_bag(torch.tensor(i), torch.tensor(w), torch.tensor(off), mode="sum",
                            include_last_offset=True)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_max_norm_and_scale_grad_by_freq_match_torch() -> None:
    rng = np.random.default_rng(4)
    w = rng.standard_normal((6, 3)) * 3
    i = np.array([1, 2, 1, 5, 1, 0])
    off = np.array([0, 3])
    xw, tw = ts.asarray(w.copy(), requires_grad=True), torch.tensor(w.copy(), requires_grad=True)
    got = F.embedding_bag(ts.asarray(i), xw, ts.asarray(off), max_norm=1.5, norm_type=3.0,
                          scale_grad_by_freq=True, mode="mean")
    want = TF.embedding_bag(torch.tensor(i), tw, torch.tensor(off), max_norm=1.5, norm_type=3.0,
                            scale_grad_by_freq=True, mode="mean")
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(xw.detach().numpy(), tw.detach().numpy(), rtol=1e-12)  # renormed
    # torch's CPU embedding_bag scales by counts it misindexes (row 0, seen once, gets 1/3 of
    # its gradient in this case); ours divides by each index's own count, as F.embedding does
    got.sum().backward()
    count = np.bincount(i, minlength=6)[:, None]
    per_row = np.zeros((6, 1))
    np.add.at(per_row, i, 1.0 / 3)
    np.testing.assert_allclose(xw.grad.numpy(), np.broadcast_to(per_row / np.maximum(count, 1),
                                                                (6, 3)), rtol=1e-12)
    ew, et = ts.asarray(w.copy(), requires_grad=True), torch.tensor(w.copy(), requires_grad=True)
    F.embedding(ts.asarray(i), ew, scale_grad_by_freq=True, max_norm=2.0).sum().backward()
    TF.embedding(torch.tensor(i), et, scale_grad_by_freq=True, max_norm=2.0).sum().backward()
    np.testing.assert_allclose(ew.grad.numpy(), et.grad.numpy(), rtol=1e-12)


def test_max_mode_refuses_scale_grad_by_freq_as_torch() -> None:
    # the Python version allowed it; torch raises ValueError
    w, i, off = ts.zeros((4, 2)), ts.asarray(np.array([0, 1])), ts.asarray(np.array([0]))
    with pytest.raises(ValueError, match="embedding_bag: max mode does not support scaling"):
        F.embedding_bag(i, w, off, mode="max", scale_grad_by_freq=True)
    with pytest.raises(ValueError):
        TF.embedding_bag(torch.tensor([0, 1]), torch.zeros(4, 2), torch.tensor([0]), mode="max",
                         scale_grad_by_freq=True)


@pytest.mark.parametrize("kw,cls,match", [
    (dict(offsets=None), ValueError, "embedding_bag: offsets are required"),
    (dict(offsets=[3, 4]), ValueError, r"embedding_bag: offsets must start at 0.*= 3"),
    (dict(offsets=[0, 9]), ValueError, r"embedding_bag: offsets\[-1\] can not be greater than "
                                       r"input's length 4"),
    (dict(offsets=[0, 3, 2]), ValueError, "embedding_bag: offsets must be non-decreasing"),
    (dict(mode="median"), ValueError, "embedding_bag: mode must be one of sum, mean, max"),
    (dict(mode="mean", per_sample_weights=True), NotImplementedError,
     "embedding_bag: per_sample_weights .*only supported for mode='sum'"),
    (dict(padding_idx=7), ValueError, "embedding_bag: padding_idx must be within"),
    (dict(sparse=True), NotImplementedError, "embedding_bag: sparse gradients"),
    (dict(offsets=[], include_last_offset=True), ValueError,
     "embedding_bag: include_last_offset: number of offset"),
])
def test_errors_name_the_op(kw, cls, match) -> None:
    args = dict(offsets=[0, 2])
    args.update(kw)
    off = args.pop("offsets")
    if args.get("per_sample_weights"):
        args["per_sample_weights"] = ts.ones(4)
    with pytest.raises(cls, match=match) as e:
        F.embedding_bag(ts.asarray(np.array([1, 2, 4, 0])), ts.zeros((5, 3)),
                        None if off is None else ts.asarray(np.array(off, np.int64)), **args)
    if cls is ValueError:
        assert isinstance(e.value, RuntimeError)  # torch raises RuntimeError for most of these


def test_shape_and_dtype_errors() -> None:
    w = ts.zeros((5, 3))
    with pytest.raises(ValueError, match=r"offsets must be None when input is 2-D.*\(1,\)"):
        F.embedding_bag(ts.asarray(np.array([[1, 2]])), w, ts.asarray(np.array([0])))
    with pytest.raises(TypeError, match="embedding_bag: indices must be integers, got float32"):
        F.embedding_bag(ts.zeros(3), w, ts.asarray(np.array([0])))
    with pytest.raises(ValueError, match=r"per_sample_weights \(\(3,\)\).*\(\(4,\)\)"):
        F.embedding_bag(ts.asarray(np.array([1, 2, 4, 0])), w, ts.asarray(np.array([0])),
                        mode="sum", per_sample_weights=ts.ones(3))
    with pytest.raises(ValueError, match=r"embedding_bag: input has to be 1D .*\(1, 1, 1\)"):
        F.embedding_bag(ts.asarray(np.zeros((1, 1, 1), np.int64)), w)
    with pytest.raises(TypeError, match="must be Tensor"):
        F.embedding_bag([1, 2], w)


@pytest.mark.cpu_only  # on CUDA a bad index surfaces at the next sync (deferred), as torch's
def test_index_out_of_range() -> None:
    w = ts.zeros((5, 3))
    with pytest.raises(IndexError, match="embedding: index out of range"):
        F.embedding_bag(ts.asarray(np.array([9])), w, ts.asarray(np.array([0])))

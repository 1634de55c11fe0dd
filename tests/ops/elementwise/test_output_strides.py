"""Elementwise outputs take PyTorch's layout (Note [Output strides] in csrc/iter/tensor_iter.h):
the stride order of the inputs, as TensorIterator allocates it. Differential against torch over
shapes, permutations, slices, broadcasting, size-1 dims, 0-d and empty tensors: every op's
``.stride()``, dtype and values must be torch's."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tessera as ts
from harness import to_np

torch = pytest.importorskip("torch")

# ---- layouts: (shape, storage order, slice steps, expanded dims) of one operand


@st.composite
def layouts(draw, shape: tuple) -> dict:
    """A layout of a tensor that broadcasts to `shape`: leading dims dropped, some dims 1
    (broadcast) or expanded (stride 0), stored in any dim order, sliced with steps."""
    nd = len(shape)
    lead = draw(st.integers(0, nd))
    own = list(shape[lead:])
    expand = []
    for d in range(len(own)):
        kind = draw(st.sampled_from(["keep", "keep", "keep", "one", "expand"]))
        if kind != "keep" and own[d] != 1:
            if kind == "expand":
                expand.append(d)
            own[d] = 1
    order = draw(st.permutations(range(len(own))))
    # (a step on a dim of size < 2 gives torch a stride tessera's views do not keep)
    steps = [draw(st.sampled_from([1, 1, 2])) if n > 1 else 1 for n in own]
    return {"shape": tuple(own), "order": list(order), "steps": steps, "expand": expand,
            "full": tuple(shape[lead:])}


def build(m: Any, lay: dict, data: np.ndarray) -> Any:
    """The tensor `lay` describes, over `data` (values of its storage), in library m."""
    shape, order, steps = lay["shape"], lay["order"], lay["steps"]
    t = m.empty(data.shape, dtype=getattr(m, str(data.dtype)))  # canonical strides, also empty
    t.copy_(m.tensor(data))
    inv = list(np.argsort(order))
    t = t.permute(*inv) if order else t
    if shape:
        t = t[tuple(slice(None, None, s) for s in steps)]
    if lay["expand"]:
        t = t.expand(*[lay["full"][d] if d in lay["expand"] else n for d, n in enumerate(shape)])
    return t


def storage(lay: dict, dtype: str, rng: np.random.Generator) -> np.ndarray:
    shape, order, steps = lay["shape"], lay["order"], lay["steps"]
    sshape = [shape[d] * steps[d] for d in order]
    if dtype == "bool":
        return rng.random(sshape) > 0.5
    vals = rng.standard_normal(sshape) * 3
    return vals.astype(dtype)


def pair(lay: dict, dtype: str, seed: int) -> tuple:
    data = storage(lay, dtype, np.random.default_rng(seed))
    a, b = build(ts, lay, data), build(torch, lay, data)
    # views of empty tensors, and size-1 dims of expanded views, may have other strides than
    # torch's (tessera's views, not this rule's concern)
    assume(a.stride() == b.stride())
    return a, b


def same(got: Any, want: Any, exact: bool = True) -> None:
    """Same strides, shape, dtype and values (NaNs in the same places). Not `exact`: the strides
    of dims of size > 1 (of non-empty results) only."""
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    if exact:
        assert got.stride() == want.stride(), (got.stride(), want.stride())
    elif want.numel() > 0:
        big = [d for d in range(want.ndim) if want.shape[d] > 1]
        assert [got.stride()[d] for d in big] == [want.stride()[d] for d in big], (
            got.stride(), want.stride())
    np.testing.assert_allclose(to_np(got).astype(np.float64),
                               want.detach().numpy().astype(np.float64), rtol=1e-5, atol=1e-5)


out_shapes = st.lists(st.sampled_from([0, 1, 1, 2, 3, 4]), min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.sampled_from([1, 2, 3, 4]), min_size=0, max_size=4).map(tuple)

UNARY: dict[str, Callable] = {
    "neg": lambda m, x: x.neg(),
    "exp": lambda m, x: m.exp(x),
    "abs": lambda m, x: x.abs(),
    "relu": lambda m, x: m.relu(x),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "tanh": lambda m, x: x.tanh(),
    "gelu": lambda m, x: m.nn.functional.gelu(x),
    "silu": lambda m, x: m.nn.functional.silu(x),
    "isnan": lambda m, x: m.isnan(x),
    "square": lambda m, x: x * x,
    "clone": lambda m, x: x.clone(),
}

CASTS: dict[str, Callable] = {
    "to_float64": lambda m, x: x.to(m.float64),
    "double": lambda m, x: x.double(),
    "int": lambda m, x: x.int(),
    "bool": lambda m, x: x.bool(),
    "type_as": lambda m, x: x.type(m.float16),
}

BINARY: dict[str, Callable] = {
    "add": lambda m, x, y: x + y,
    "add_fn": lambda m, x, y: m.add(x, y),
    "mul": lambda m, x, y: x * y,
    "sub_rev": lambda m, x, y: y - x,
    "div": lambda m, x, y: x / y,
    "maximum": lambda m, x, y: m.maximum(x, y),
    "lt": lambda m, x, y: x < y,
    "eq": lambda m, x, y: m.eq(x, y),
    "atan2": lambda m, x, y: m.atan2(x, y),
}

SCALAR: dict[str, Callable] = {
    "add_scalar": lambda m, x: x + 1,
    "radd_scalar": lambda m, x: 2.5 + x,
    "mul_scalar": lambda m, x: x * 3,
    "pow_scalar": lambda m, x: x ** 2,
    "gt_scalar": lambda m, x: x > 0,
    "rsub": lambda m, x: 1 - x,
    "add_0d": lambda m, x: x + m.tensor(2.0),
}


@settings(max_examples=200, deadline=None)
@given(shape=out_shapes, data=st.data(), name=st.sampled_from(sorted(UNARY) + sorted(CASTS)))
def test_unary_and_casts(shape: tuple, data: Any, name: str) -> None:
    lay = data.draw(layouts(shape))
    a, b = pair(lay, "float32", 1)
    fn = UNARY.get(name) or CASTS[name]
    same(fn(ts, a), fn(torch, b))


@settings(max_examples=120, deadline=None)
@given(shape=out_shapes, data=st.data(), name=st.sampled_from(sorted(SCALAR)),
       dtype=st.sampled_from(["float32", "float64", "int64", "int32"]))
def test_scalar_operand(shape: tuple, data: Any, name: str, dtype: str) -> None:
    lay = data.draw(layouts(shape))
    a, b = pair(lay, dtype, 2)
    # torch takes pow's Scalar exponent as a parameter, not an operand: its fast setup then
    # decides the strides of size-1 dims and of empty results (tessera: the general rule)
    same(SCALAR[name](ts, a), SCALAR[name](torch, b), exact=name != "pow_scalar")


@settings(max_examples=250, deadline=None)
@given(shape=out_shapes, data=st.data(), name=st.sampled_from(sorted(BINARY)),
       dtypes=st.sampled_from([("float32", "float32"), ("float32", "float64"),
                               ("int64", "float32"), ("int32", "int64")]))
def test_binary(shape: tuple, data: Any, name: str, dtypes: tuple) -> None:
    lx, ly = data.draw(layouts(shape)), data.draw(layouts(shape))
    x, tx = pair(lx, dtypes[0], 3)
    y, ty = pair(ly, dtypes[1], 4)
    if name == "div" and "float" not in dtypes[0] + dtypes[1]:
        return
    if dtypes[0] != dtypes[1] and (x.ndim == 0) != (y.ndim == 0):
        return  # 0-d tensors promote as the array API standard says, not as torch (by design)
    same(BINARY[name](ts, x, y), BINARY[name](torch, tx, ty))


def y_ndim(lay: dict) -> int:
    return len(lay["shape"])


@settings(max_examples=150, deadline=None)
@given(shape=out_shapes, data=st.data(), scalar_other=st.booleans())
def test_where(shape: tuple, data: Any, scalar_other: bool) -> None:
    lc, lx, ly = (data.draw(layouts(shape)) for _ in range(3))
    c, tc = pair(lc, "bool", 5)
    x, tx = pair(lx, "float32", 6)
    y, ty = pair(ly, "float64" if x.ndim and y_ndim(ly) else "float32", 7)
    if scalar_other:
        same(ts.where(c, x, 0.5), torch.where(tc, tx, 0.5))
    else:
        same(ts.where(c, x, y), torch.where(tc, tx, ty))




def owning(lay: dict, shape: tuple) -> dict:
    """A dense layout of `shape` (each element its own slot) in lay's storage order where it
    has one for every dim, else transposed."""
    order = lay["order"] if len(lay["order"]) == len(shape) else list(range(len(shape)))[::-1]
    return dict(lay, shape=shape, full=shape, expand=[], steps=[1] * len(shape), order=order)


@settings(max_examples=120, deadline=None)
@given(shape=nonempty_shapes, data=st.data(), op=st.sampled_from(["add_", "mul_", "sub_"]))
def test_inplace_keeps_self_layout(shape: tuple, data: Any, op: str) -> None:
    """In place, self keeps its strides whatever the other operand's layout; broadcast other."""
    lx = data.draw(layouts(shape))
    if lx["shape"] != shape or lx["expand"]:  # self must have the full shape and own its elements
        lx = owning(lx, shape)
    ly = data.draw(layouts(shape))
    x, tx = pair(lx, "float32", 9)
    y, ty = pair(ly, "float32", 10)
    before = x.stride()
    getattr(x, op)(y)
    getattr(tx, op)(ty)
    assert x.stride() == before
    same(x, tx)


@settings(max_examples=80, deadline=None)
@given(shape=nonempty_shapes, data=st.data())
def test_out_keeps_its_layout(shape: tuple, data: Any) -> None:
    lo, lx, ly = (data.draw(layouts(shape)) for _ in range(3))
    lo = owning(lo, shape)
    if lx["shape"] != shape:  # x gives the result its full shape
        lx = dict(lo, order=list(range(len(shape))))
    o, to_ = pair(lo, "float32", 11)
    x, tx = pair(lx, "float32", 12)
    y, ty = pair(ly, "float32", 13)
    ts.add(x, y, out=o)
    torch.add(tx, ty, out=to_)
    same(o, to_)


# ---- named cases (the ones the hypothesis search draws rarely): each pins torch's answer


def channels_last_pair(shape=(2, 3, 4, 5)) -> tuple:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return (ts.tensor(x).to(memory_format=ts.channels_last),
            torch.tensor(x).to(memory_format=torch.channels_last))


@pytest.mark.parametrize("name", sorted(UNARY) + sorted(SCALAR))
def test_channels_last_stays(name: str) -> None:
    a, b = channels_last_pair()
    fn = UNARY.get(name) or SCALAR[name]
    got = fn(ts, a)
    same(got, fn(torch, b))
    assert got.is_contiguous(memory_format=ts.channels_last)


@pytest.mark.parametrize("other", ["contiguous", "bias", "channels_last", "first"])
def test_channels_last_with_a_second_operand(other: str) -> None:
    a, b = channels_last_pair()
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
    bias = np.random.default_rng(2).standard_normal((3, 1, 1)).astype(np.float32)
    pairs = {"contiguous": (ts.tensor(x), torch.tensor(x)),
             "bias": (ts.tensor(bias), torch.tensor(bias)),
             "channels_last": channels_last_pair(),
             "first": (ts.tensor(x), torch.tensor(x))}
    y, ty = pairs[other]
    if other == "first":  # a contiguous first operand decides: contiguous result
        same(y + a, ty + b)
        assert (y + a).is_contiguous()
    else:
        same(a + y, b + ty)
        same(ts.where(a > 0, a, y), torch.where(b > 0, b, ty))


def test_transposed_results() -> None:
    x = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32)
    a, b = ts.tensor(x).t(), torch.tensor(x).t()
    for fn in (lambda m, t: t + 1, lambda m, t: m.exp(t), lambda m, t: t > 0,
               lambda m, t: t.to(m.float64), lambda m, t: m.where(t > 0, t, t)):
        got = fn(ts, a)
        same(got, fn(torch, b))
        assert not got.is_contiguous()
    same(a + ts.tensor(x.T.copy()), b + torch.tensor(x.T.copy()))   # first operand decides
    same(ts.tensor(x.T.copy()) + a, torch.tensor(x.T.copy()) + b)


def test_ties_and_size_one_dims() -> None:
    """Pinned cases from torch: equal strides on a size-1 dim, ties broken by a later input."""
    d2 = np.random.default_rng(4).standard_normal((4, 3)).astype(np.float32)
    d = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    a, ta = ts.tensor(d2)[:, None, :], torch.tensor(d2)[:, None, :]
    b, tb = ts.tensor(d).t().unsqueeze(1), torch.tensor(d).t().unsqueeze(1)
    assert (a + b).stride() == (ta + tb).stride() == (3, 12, 1)
    assert (b + a).stride() == (tb + ta).stride() == (1, 12, 4)
    e, te = ts.empty(3, 0, 4).transpose(0, 2), torch.empty(3, 0, 4).transpose(0, 2)
    assert (e + 1).stride() == (te + 1).stride() == (1, 4, 0)
    assert e.neg().stride() == te.neg().stride()
    c1 = np.random.default_rng(6).standard_normal((2, 1, 4, 5)).astype(np.float32)
    a = ts.tensor(c1).as_strided((2, 1, 4, 5), (20, 1, 5, 1))  # channels-last, and contiguous
    b = torch.tensor(c1).as_strided((2, 1, 4, 5), (20, 1, 5, 1))
    for fn in (lambda t: t.neg(), lambda t: t * 2, lambda t: t + t):
        same(fn(a), fn(b))


def test_flipped_input_gives_a_dense_output() -> None:
    """Negative strides (tessera's; PyTorch has none) count by magnitude: a flipped transposed
    view gives the transposed layout, as the unflipped one does."""
    x = ts.tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    f = ts.flip(x, 0).t()
    got = f + 1
    assert got.stride() == (1, 3)
    np.testing.assert_array_equal(to_np(got), np.arange(12, dtype=np.float32).reshape(4, 3)[::-1].T + 1)


def test_gradients_of_channels_last_ops() -> None:
    x = np.random.default_rng(7).standard_normal((2, 3, 4, 5))
    a = ts.tensor(x).to(memory_format=ts.channels_last).requires_grad_()
    b = torch.tensor(x).to(memory_format=torch.channels_last).requires_grad_()
    for fn in (lambda m, t: m.relu(t), lambda m, t: t * 2, lambda m, t: m.sigmoid(t) * t):
        a.grad, b.grad = None, None
        fn(ts, a).sum().backward()
        fn(torch, b).sum().backward()
        same(a.grad, b.grad)
    y, ty = ts.relu(a) * a, torch.relu(b) * b
    assert y.stride() == ty.stride()


def test_to_device_and_formats_preserve() -> None:
    x = np.random.default_rng(8).standard_normal((2, 3, 4, 5)).astype(np.float32)
    a, b = ts.tensor(x).permute(0, 2, 3, 1), torch.tensor(x).permute(0, 2, 3, 1)
    assert a.to("cpu").stride() == b.to("cpu").stride()
    assert a.cpu().stride() == b.cpu().stride()
    c, tc = channels_last_pair()
    assert c.is_contiguous(memory_format=ts.channels_last)
    assert not c.is_contiguous()
    assert c.contiguous().stride() == tc.contiguous().stride()
    d = ts.tensor(x).contiguous(memory_format=ts.channels_last)
    assert d.stride() == torch.tensor(x).contiguous(memory_format=torch.channels_last).stride()

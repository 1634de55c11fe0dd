"""Layouts of new tensors made like another (issue: clone / *_like / x.to keep strides as PyTorch):
preserve_format keeps the strides of a dense, non-overlapping input (a transpose, a permutation,
channels-last, any empty tensor) and otherwise packs densely in the input's stride order (ATen's
infer_dense_strides: a slice with gaps in row-major order comes back contiguous, an expanded dim
takes its place); contiguous_format and channels_last ask for those layouts. Differential against
PyTorch for strides and values."""
from __future__ import annotations

from typing import Any, Callable, List, Tuple

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from harness import assert_same, shapes

View = List[Tuple[Any, ...]]  # the steps that turn a fresh array into the input


@st.composite
def viewed(draw) -> Tuple[np.ndarray, View]:
    """A fresh array and view steps (permute, strided slice, expand of a size-1 dim, select)
    that tessera and PyTorch apply alike."""
    base = draw(shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    a = np.asarray(np.arange(int(np.prod(base)), dtype=np.float32).reshape(base) - 3.5)
    steps: View = []
    shape = list(base)
    for _ in range(draw(st.integers(0, 3))):
        kinds = ["permute", "slice", "unsqueeze_expand"] + (["select"] if shape else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "permute" and len(shape) >= 2:
            perm = draw(st.permutations(range(len(shape))))
            steps.append(("permute", tuple(perm)))
            shape = [shape[p] for p in perm]
        elif kind == "slice" and shape:
            d = draw(st.integers(0, len(shape) - 1))
            start = draw(st.integers(0, shape[d]))
            stop = draw(st.integers(start, shape[d]))
            step = draw(st.integers(1, 3))
            steps.append(("slice", d, start, stop, step))
            shape[d] = len(range(start, stop, step))
        elif kind == "unsqueeze_expand":
            d = draw(st.integers(0, len(shape)))
            n = draw(st.integers(0, 3))
            steps.append(("expand", d, n))
            shape.insert(d, n)
        elif kind == "select" and all(shape) and shape:
            d = draw(st.integers(0, len(shape) - 1))
            steps.append(("select", d, draw(st.integers(0, shape[d] - 1))))
            del shape[d]
    return a, steps


def apply(x: Any, steps: View) -> Any:
    for s in steps:
        if s[0] == "permute":
            x = x.permute(*s[1])
        elif s[0] == "slice":
            key = [slice(None)] * x.ndim
            key[s[1]] = slice(s[2], s[3], s[4])
            x = x[tuple(key)]
        elif s[0] == "expand":
            x = x.unsqueeze(s[1])
            x = x.expand(*[s[2] if d == s[1] else -1 for d in range(x.ndim)])
        else:
            x = x.select(s[1], s[2])
    return x


def pair(a: np.ndarray, steps: View) -> Tuple[ts.Tensor, torch.Tensor]:
    """The torch view, and a tessera view of the same geometry over the same values (made by
    as_strided, so that the layouts compared start out equal)."""
    xt = apply(torch.tensor(a), steps)
    x = ts.as_strided(ts.asarray(a.reshape(-1)), tuple(xt.shape), xt.stride(), xt.storage_offset())
    return x, xt


def same_layout(got: ts.Tensor, want: torch.Tensor, values: bool = True) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    assert tuple(got.stride()) == want.stride(), (tuple(got.stride()), want.stride())
    assert got.is_contiguous() == want.is_contiguous()
    if values:
        assert_same(got, want)


# Each makes a new tensor like x: (name, f(module, x)); its values are compared too when
# they are deterministic.
COPIES: List[Tuple[str, Callable[[Any, Any], Any]]] = [
    ("x.clone()", lambda m, x: x.clone()),
    ("clone(preserve)", lambda m, x: m.clone(x, memory_format=m.preserve_format)),
    ("clone(contiguous)", lambda m, x: x.clone(memory_format=m.contiguous_format)),
    ("x.to(float64)", lambda m, x: x.to(m.float64)),
    ("x.to(float32, copy)", lambda m, x: x.to(m.float32, copy=True)),
    ("x.to(int32, preserve)", lambda m, x: x.to(m.int32, memory_format=m.preserve_format)),
    ("x.to(float64, contiguous)", lambda m, x: x.to(m.float64, memory_format=m.contiguous_format)),
    ("x.double()", lambda m, x: x.double()),
    ("x.half()", lambda m, x: x.half()),
    ("x.long()", lambda m, x: x.long()),
    ("x.type(float64)", lambda m, x: x.type(m.float64)),
    ("x.type_as(int64)", lambda m, x: x.type_as(m.zeros(1, dtype=m.int64))),
    ("x.contiguous()", lambda m, x: x.contiguous()),
    ("asarray(copy)", lambda m, x: m.asarray(x, copy=True)),
    ("zeros_like", lambda m, x: m.zeros_like(x)),
    ("ones_like(float64)", lambda m, x: m.ones_like(x, dtype=m.float64)),
    ("full_like", lambda m, x: m.full_like(x, 7)),
    ("zeros_like(contiguous)", lambda m, x: m.zeros_like(x, memory_format=m.contiguous_format)),
]
LAYOUT_ONLY: List[Tuple[str, Callable[[Any, Any], Any]]] = [
    ("empty_like", lambda m, x: m.empty_like(x)),
    ("empty_like(preserve)", lambda m, x: m.empty_like(x, memory_format=m.preserve_format)),
    ("rand_like", lambda m, x: m.rand_like(x)),
    ("randn_like(float64)", lambda m, x: m.randn_like(x, dtype=m.float64)),
    ("randint_like", lambda m, x: m.randint_like(x, 5)),
    ("rand_like(contiguous)", lambda m, x: m.rand_like(x, memory_format=m.contiguous_format)),
]


@settings(max_examples=150, deadline=None)
@given(viewed())
def test_new_tensors_like_a_view_take_torch_strides(case):
    x, xt = pair(*case)
    for name, f in COPIES + LAYOUT_ONLY:
        try:
            same_layout(f(ts, x), f(torch, xt), values=(name, f) in COPIES)
        except AssertionError as e:
            raise AssertionError(f"{name} of shape {tuple(xt.shape)} strides {xt.stride()}: {e}")


@pytest.mark.parametrize("view", [
    lambda x: x[0].t(), lambda x: x.permute(2, 0, 1), lambda x: x[:, ::2], lambda x: x[:, 1:, :2],
    lambda x: x.transpose(1, 2)[:, 1:], lambda x: x[:, :1].permute(2, 1, 0),
    lambda x: x[:, :0].permute(2, 0, 1), lambda x: x[0, 0, 0], lambda x: x[:1, :1, :1],
    lambda x: x[:, :1].expand(2, 3, 4).permute(1, 2, 0),
], ids=["t", "permute", "gap", "offset", "transposed_gap", "size1", "empty", "0d", "ones",
        "expanded"])
def test_examples(view):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x, xt = view(ts.asarray(a)), view(torch.tensor(a))
    for name, f in COPIES + LAYOUT_ONLY:
        same_layout(f(ts, x), f(torch, xt), values=(name, f) in COPIES)


def test_transpose_clone_keeps_strides():
    x = ts.asarray(np.arange(12.0).reshape(3, 4))
    assert x.t().clone().stride() == x.t().stride() == (1, 4)
    y = ts.asarray(np.zeros((2, 3, 4)))
    assert y.permute(2, 0, 1).clone().stride() == y.permute(2, 0, 1).stride()
    assert y[:, :, ::2].clone().is_contiguous()  # gaps: packed, here in row-major order
    assert x.t().clone(memory_format=ts.contiguous_format).stride() == (3, 1)


def test_flipped_views_come_back_row_major():
    """tessera has negative strides (torch does not): a flip's copy is packed by |stride|."""
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for v in (ts.asarray(a).flip(0), ts.asarray(a).flip(1), ts.asarray(a).flip(0).t()):
        want = np.array(v.numpy())
        c = v.clone()
        assert c.stride() == ((4, 1) if v.shape == (3, 4) else (1, 4))
        assert_same(c, want)
        assert_same(v.to(ts.float64), want.astype(np.float64))


@pytest.mark.parametrize("shape, fmt", [((2, 3, 4, 5), "channels_last"),
                                        ((2, 3, 2, 4, 5), "channels_last_3d")])
def test_channels_last_formats(shape, fmt):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x, xt = ts.asarray(a), torch.tensor(a)
    f, ft = getattr(ts, fmt), getattr(torch, fmt)
    cl, clt = x.contiguous(memory_format=f), xt.contiguous(memory_format=ft)
    same_layout(cl, clt)
    same_layout(x.clone(memory_format=f), xt.clone(memory_format=ft))
    same_layout(ts.empty_like(x, memory_format=f), torch.empty_like(xt, memory_format=ft), False)
    same_layout(ts.rand_like(x, memory_format=f), torch.rand_like(xt, memory_format=ft), False)
    same_layout(x.to(memory_format=f), xt.to(memory_format=ft))
    # a channels-last input keeps its layout through preserve_format and casts
    for g in (lambda m, t: t.clone(), lambda m, t: t.to(m.float64), lambda m, t: t.half(),
              lambda m, t: m.zeros_like(t), lambda m, t: t.clone(memory_format=m.preserve_format)):
        same_layout(g(ts, cl), g(torch, clt))
    same_layout(cl.clone(memory_format=ts.contiguous_format),
                clt.clone(memory_format=torch.contiguous_format))
    with pytest.raises(RuntimeError, match="required rank"):
        ts.asarray(a[0]).clone(memory_format=f)
    with pytest.raises(RuntimeError, match="required rank"):
        ts.empty_like(ts.asarray(a[0]), memory_format=f)
    with pytest.raises(RuntimeError, match="required rank"):
        ts.randn_like(ts.asarray(a[0]), memory_format=f)


def test_memory_format_must_be_a_format_object():
    x = ts.zeros((2, 3))
    with pytest.raises(TypeError, match="memory_format"):
        x.clone(memory_format="contiguous_format")
    with pytest.raises(TypeError, match="memory_format"):
        ts.clone(x, memory_format=3)


def test_empty_tensors_are_contiguous_whatever_their_strides():
    x, xt = ts.empty((4, 6))[:0, ::2], torch.empty(4, 6)[:0, ::2]
    assert x.is_contiguous() and xt.is_contiguous()
    assert x.contiguous().stride() == xt.contiguous().stride() == (6, 2)
    same_layout(x.clone(), xt.clone())


def test_clone_of_a_view_is_a_fresh_differentiable_tensor():
    a = np.arange(24.0).reshape(2, 3, 4)
    x, xt = ts.asarray(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    c, ct = x.permute(2, 0, 1).clone(), xt.permute(2, 0, 1).clone()
    same_layout(c, ct)
    c.mul_(2)  # a write into the fresh copy, not into x
    ct.mul_(2)
    w = np.arange(24.0).reshape(4, 2, 3)
    (c * ts.asarray(w)).sum().backward()
    (ct * torch.tensor(w)).sum().backward()
    assert_same(x.grad, xt.grad)
    assert_same(ts.asarray(a), xt.detach())  # x unchanged
    d, dt = x.permute(2, 0, 1).to(ts.float32), xt.permute(2, 0, 1).to(torch.float32)
    same_layout(d, dt)
    assert d.grad_fn is not None and dt.grad_fn is not None

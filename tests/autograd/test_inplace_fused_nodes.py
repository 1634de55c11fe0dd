"""The in-place methods that record one node of their own, as PyTorch's do (issue 17):
x.lerp_ (LerpBackward0 for a number weight, LerpBackward1 for a tensor one), x.addcmul_,
x.addcdiv_ and the scaled products x.addmm_, x.addmv_, x.addr_, x.baddbmm_, x.addbmm_.
Values and gradients against torch in float64 (hypothesis over shapes, the other operands
broadcasting to self's, number and tensor weights, self a view of a non-leaf, chains of several
in-place calls), first and second derivatives by finite differences, the node's name and edges,
the version counter, and the error paths (leaves and views of leaves that require grad, a write
that fails leaving self's history as it was, saved operands modified afterwards)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from harness import assert_same, double_backward_pairs, rng

F64 = np.float64


def _lib(x: Any) -> Any:
    return ts if isinstance(x, ts.Tensor) else torch


def _name(node: Any) -> Any:
    """A node's name without torch's namespace ("torch::autograd::CopySlices")."""
    return None if node is None else node.name().replace("torch::autograd::", "")


# ---- the pointwise ones: (name, call(self, a, b, value), the node torch records)
POINTWISE = [
    ("lerp_ number", lambda s, a, b, v: s.lerp_(a, v), "LerpBackward0"),
    ("lerp_ tensor", lambda s, a, b, v: s.lerp_(a, b), "LerpBackward1"),
    ("addcmul_", lambda s, a, b, v: s.addcmul_(a, b, value=v), "AddcmulBackward0"),
    ("addcdiv_", lambda s, a, b, v: s.addcdiv_(a, b + 2.5, value=v), "AddcdivBackward0"),
]


@st.composite
def _broadcast_case(draw: Any) -> tuple:
    """self's shape and two operand shapes that broadcast to it (dims dropped or set to 1)."""
    shape = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))

    def operand() -> tuple:
        lead = draw(st.integers(0, len(shape)))
        return tuple(1 if draw(st.booleans()) else d for d in shape[lead:])
    return tuple(shape), operand(), operand(), draw(st.floats(-2, 2))


def _run_pointwise(lib: Any, call: Callable, leaves: list, value: float, view: str) -> Any:
    """Self is a non-leaf made from leaf 0 (or a view of one); returns what the loss reads."""
    x, a, b = leaves
    base = x * 1.5
    if view == "transpose" and base.ndim >= 2:
        base = x.mT * 1.5
        self_ = base.mT
    elif view == "row" and base.ndim >= 1:
        base = lib.stack([base, base * 0.5])
        self_ = base[1]
    else:
        self_ = base
    out = call(self_, a, b, value)
    assert out is self_
    return base


@settings(max_examples=40, deadline=None)
@given(case=_broadcast_case(), which=st.integers(0, len(POINTWISE) - 1),
       view=st.sampled_from(["none", "transpose", "row"]), seed=st.integers(0, 2**16))
def test_pointwise_values_and_gradients_match_torch(case: tuple, which: int, view: str,
                                                    seed: int) -> None:
    shape, sa, sb, value = case
    _, call, _ = POINTWISE[which]
    g = np.random.default_rng(seed)
    raw = [g.uniform(-1, 1, shape), g.uniform(-1, 1, sa), g.uniform(0.1, 0.9, sb)]
    results = []
    for lib in (ts, torch):
        leaves = [lib.tensor(r, requires_grad=True) for r in raw]
        base = _run_pointwise(lib, call, leaves, value, view)
        cot = lib.tensor(np.arange(base.numel(), dtype=F64).reshape(tuple(base.shape)) / 7 - 1)
        (base * cot).sum().backward()
        results.append((base.detach(), [leaf.grad for leaf in leaves]))
    (vt, gt), (vp, gp) = results
    assert_same(vt, vp, rtol=1e-12, atol=1e-12)
    for got, want in zip(gt, gp):
        if want is None:
            assert got is None or not np.any(got.numpy())
        else:
            assert_same(got, want, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name,call,node", POINTWISE, ids=[p[0] for p in POINTWISE])
def test_one_node_named_as_torch(name: str, call: Callable, node: str) -> None:
    for lib in (ts, torch):
        x = lib.tensor(rng.uniform(-1, 1, (3, 4)), requires_grad=True)
        a = lib.tensor(rng.uniform(-1, 1, (4,)), requires_grad=True)
        b = lib.tensor(rng.uniform(0.1, 0.9, (3, 1)), requires_grad=True)
        s = x * 2
        call(s, a, b, 0.25)
        assert s.grad_fn.name() == node, lib
        # one node: its edges lead straight to self's old history and the operands' leaves
        nxt = [_name(f) for f, _ in s.grad_fn.next_functions]
        assert nxt[0] == "MulBackward0" and "AccumulateGrad" in nxt, (lib, nxt)


SCALED = [
    # (name, self shape, a shape, b shape, call(s, a, b, beta, alpha), node)
    ("addmm_", (3, 4), (3, 2), (2, 4), lambda s, a, b, be, al: s.addmm_(a, b, beta=be, alpha=al),
     "AddmmBackward0"),
    ("addmv_", (3,), (3, 2), (2,), lambda s, a, b, be, al: s.addmv_(a, b, beta=be, alpha=al),
     "AddmvBackward0"),
    ("addr_", (3, 4), (3,), (4,), lambda s, a, b, be, al: s.addr_(a, b, beta=be, alpha=al),
     "AddrBackward0"),
    ("baddbmm_", (2, 3, 4), (2, 3, 2), (2, 2, 4),
     lambda s, a, b, be, al: s.baddbmm_(a, b, beta=be, alpha=al), "BaddbmmBackward0"),
    ("addbmm_", (3, 4), (2, 3, 2), (2, 2, 4),
     lambda s, a, b, be, al: s.addbmm_(a, b, beta=be, alpha=al), "AddbmmBackward0"),
]


@pytest.mark.parametrize("name,ss,sa,sb,call,node", SCALED, ids=[s[0] for s in SCALED])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, -2.0), (0, 1.5), (1, 0.25)])
@pytest.mark.parametrize("view", [False, True])
def test_scaled_products_match_torch(name: str, ss: tuple, sa: tuple, sb: tuple, call: Callable,
                                     node: str, beta: float, alpha: float, view: bool) -> None:
    raw = [rng.uniform(-1, 1, ss), rng.uniform(-1, 1, sa), rng.uniform(-1, 1, sb)]
    results = []
    for lib in (ts, torch):
        x, a, b = (lib.tensor(r, requires_grad=True) for r in raw)
        base = lib.stack([x * 1, x * 3]) if view else x * 1
        s = base[1] if view else base
        call(s, a, b, beta, alpha)
        assert (_name(base.grad_fn) == "CopySlices") if view else (s.grad_fn.name() == node)
        cot = lib.tensor(np.linspace(-1, 1, base.numel()).reshape(tuple(base.shape)))
        (base * cot).sum().backward()
        results.append((base.detach(), x.grad, a.grad, b.grad))
    for got, want in zip(*results):
        assert_same(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,ss,sa,sb,call,node", SCALED, ids=[s[0] for s in SCALED])
def test_scaled_products_only_some_operands_require_grad(name: str, ss: tuple, sa: tuple,
                                                         sb: tuple, call: Callable,
                                                         node: str) -> None:
    raw = [rng.uniform(-1, 1, ss), rng.uniform(-1, 1, sa), rng.uniform(-1, 1, sb)]
    for needs in ((False, True, False), (False, False, True), (True, False, False)):
        results = []
        for lib in (ts, torch):
            x, a, b = (lib.tensor(r, requires_grad=n) for r, n in zip(raw, needs))
            s = x * 1 if needs[0] else x.clone()
            call(s, a, b, 0.5, 2.0)
            assert s.grad_fn.name() == node
            (s * s).sum().backward()
            results.append([t.grad for t in (x, a, b)])
        for got, want in zip(*results):
            assert (got is None) == (want is None)
            if want is not None:
                assert_same(got, want, rtol=1e-12, atol=1e-12)


# ---- chains of several in-place calls, and second derivatives against torch
def _chain(x: Any, y: Any) -> Any:
    s = x * 1
    s.lerp_(y, 0.3)
    s.addcmul_(x, y, value=-0.5)
    s.addcdiv_(y, x * x + 1, value=2)
    s.lerp_(x.mT, y * 0.5)
    s.addmm_(y, x, beta=0.5, alpha=1.5)
    s[1].addcmul_(y[0], x[2])
    s.mT[0].lerp_(y[1], x[3])
    s[2:].addmm_(x[2:], y)
    return s * y


def _chain_scaled(x: Any, y: Any) -> Any:
    lib = _lib(x)
    s = x * 1
    s[0].addmv_(y, x[1], beta=2)
    s.addr_(x[0], y[2], alpha=-1)
    b = lib.stack([s, x])
    b.baddbmm_(b * 1, lib.stack([y, x]), beta=0.5)
    s.addbmm_(b, lib.stack([x, y]), alpha=0.5)
    return s * b[0]


@pytest.mark.parametrize("fn", [_chain, _chain_scaled])
def test_chains_first_and_second_derivatives_match_torch(fn: Callable) -> None:
    a = rng.uniform(-0.9, 0.9, (4, 4))
    b = rng.uniform(0.1, 0.9, (4, 4))
    for got, want in double_backward_pairs(fn, fn, [a, b]):
        assert got is not None and want is not None
        assert_same(got.detach(), want.detach(), rtol=1e-9, atol=1e-11)


GRADCHECK_CALLS = [
    lambda x, y, w: (x * 1).lerp_(y, 0.3),
    lambda x, y, w: (x * 1).lerp_(y, w),
    lambda x, y, w: (x * 1).addcmul_(y, w, value=-1.5),
    lambda x, y, w: (x * 1).addcdiv_(y, w + 2, value=0.5),
    lambda x, y, w: (x * 1).addmm_(y, w, beta=0.5, alpha=2),
    lambda x, y, w: (x * 1).addmm_(y, w, beta=0),
    lambda x, y, w: (x[0] * 1).addmv_(y, w[1], alpha=-1),
    lambda x, y, w: (x * 1).addr_(y[0], w[1], beta=2),
    lambda x, y, w: ts.stack([x, y]).baddbmm_(ts.stack([y, w]), ts.stack([w, x])),
    lambda x, y, w: (x * 1).addbmm_(ts.stack([y, w]), ts.stack([w, x]), beta=-1),
    lambda x, y, w: _through_view(x, y, w),
]


def _through_view(x: Any, y: Any, w: Any) -> Any:
    b = x * 1
    b.mT[1:3].lerp_(y[:2], w[0])
    b[0].addcdiv_(y[1], w[2] + 2)
    b[1:, 1:].addmm_(y[1:, :2], w[:2, 1:])
    return b


@pytest.mark.parametrize("fn", GRADCHECK_CALLS)
def test_gradcheck_and_gradgradcheck(fn: Callable) -> None:
    xs = [ts.tensor(rng.uniform(lo, 0.9, (4, 4)), requires_grad=True)
          for lo in (-0.9, -0.9, 0.1)]
    assert ts.autograd.gradcheck(fn, xs)
    assert ts.autograd.gradgradcheck(fn, xs)


# ---- version counter, saved tensors, errors
@pytest.mark.parametrize("call", [
    lambda s, a, b: s.lerp_(a, 0.5), lambda s, a, b: s.lerp_(a, b),
    lambda s, a, b: s.addcmul_(a, b), lambda s, a, b: s.addcdiv_(a, b),
    lambda s, a, b: s.addmm_(a, b), lambda s, a, b: s.addr_(a[0], b[0]),
])
def test_version_counter_bumps_once(call: Callable) -> None:
    for lib in (ts, torch):
        x = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
        a = lib.ones(3, 3, dtype=lib.float64, requires_grad=True) * 0.5
        b = lib.ones(3, 3, dtype=lib.float64) * 2
        s = x * 1
        v = s._version
        call(s, a, b)
        assert s._version == v + 1, lib


@pytest.mark.parametrize("call", [
    lambda s, a, b: s.lerp_(a, b), lambda s, a, b: s.addcmul_(a, b),
    lambda s, a, b: s.addcdiv_(a, b), lambda s, a, b: s.addmm_(a, b),
])
def test_operand_modified_after_the_call_raises_at_backward(call: Callable) -> None:
    for lib in (ts, torch):
        x = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
        a = x * 0.5
        b = x * 2
        s = x * 1
        call(s, a, b)
        b.add_(1)  # b is saved for a's gradient
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            s.sum().backward()


@pytest.mark.parametrize("call", [
    lambda s, a, b: s.lerp_(a, 0.5), lambda s, a, b: s.lerp_(a, b),
    lambda s, a, b: s.addcmul_(a, b), lambda s, a, b: s.addcdiv_(a, b),
    lambda s, a, b: s.addmm_(a, b), lambda s, a, b: s[0].addmv_(a, b[0]),
    lambda s, a, b: s.addr_(a[0], b[0]),
])
def test_leaf_and_view_of_leaf_requiring_grad_raise(call: Callable) -> None:
    for lib in (ts, torch):
        x = lib.ones(3, 3, dtype=lib.float64, requires_grad=True)
        a, b = lib.ones(3, 3, dtype=lib.float64), lib.ones(3, 3, dtype=lib.float64) * 2
        v = x._version
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            call(x, a, b)  # x or its row 0
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            call(x.mT, a, b)  # a view of x (or a row of one)
        assert x._version == v and np.all(x.detach().numpy() == 1)
        with lib.no_grad():
            call(x, a, b)
        assert x.grad_fn is None and x.requires_grad and x._version == v + 1


def test_a_failed_write_keeps_self_and_its_history() -> None:
    x = ts.ones(3, 4, dtype=ts.float64, requires_grad=True)
    s = x * 1
    for call, err in [(lambda: s.addcmul_(ts.ones(2, 4), ts.ones(4)), ValueError),
                      (lambda: s.lerp_(ts.ones(5, dtype=ts.float64), 0.5), ValueError),
                      # torch's lerp_ refuses an end of another dtype (RuntimeError)
                      (lambda: s.lerp_(ts.ones(4), 0.5), RuntimeError),
                      (lambda: s.addmm_(ts.ones(3, 2), ts.ones(3, 4)), ValueError),
                      (lambda: s.addmm_(ts.ones(3, 2), ts.ones(2, 5)), ValueError)]:
        with pytest.raises(err, match=r"addcmul_|lerp_|addmm_"):
            call()
        assert s.grad_fn.name() == "MulBackward0" and s._version == 0
    s.sum().backward()
    assert np.all(x.grad.numpy() == 1)


def test_self_as_an_operand_uses_the_old_values() -> None:
    """x.addcmul_(x, x) and friends: the gradient of self + v*self*self at the old self (torch
    raises at backward here because the saved operand was overwritten; tessera saved a copy)."""
    raw = rng.uniform(0.2, 0.9, (3, 3))
    cases = [(lambda s: s.addcmul_(s, s, value=2), lambda s: s + 2 * s * s),
             (lambda s: s.addcdiv_(s, s + 1), lambda s: s + s / (s + 1)),
             (lambda s: s.lerp_(s * 3, s), lambda s: s + s * (s * 3 - s)),
             (lambda s: s.addmm_(s, s, beta=0.5), lambda s: 0.5 * s + s @ s)]
    for inplace, outplace in cases:
        x = ts.tensor(raw, requires_grad=True)
        inplace(x * 1).sum().backward()
        xt = torch.tensor(raw, requires_grad=True)
        outplace(xt * 1).sum().backward()
        assert_same(x.grad, xt.grad, rtol=1e-12, atol=1e-12)


def test_buffer_not_requiring_grad_takes_the_operands_history() -> None:
    raw = rng.uniform(-1, 1, (2, 3))
    grads = []
    for lib in (ts, torch):
        a = lib.tensor(raw, requires_grad=True)
        buf = lib.zeros(2, 3, dtype=lib.float64)
        buf.addcmul_(a, a * 2, value=3)
        assert not buf.is_leaf and buf.grad_fn.name() == "AddcmulBackward0"
        buf[1].lerp_(a[0], a[1])
        (buf * buf).sum().backward()
        grads.append(a.grad)
    assert_same(*grads, rtol=1e-12, atol=1e-12)


def test_no_grad_and_integer_self_record_nothing() -> None:
    x = ts.ones(2, 2, requires_grad=True)
    with ts.no_grad():
        x.lerp_(ts.zeros(2, 2), 0.5).addcmul_(x, x).addmm_(x, x)
    assert x.grad_fn is None
    i = ts.ones(2, 2, dtype=ts.int64)
    i.addmm_(i, i)
    assert i.grad_fn is None and i.tolist() == [[3, 3], [3, 3]]


def test_float32_self_with_float32_operands_matches_torch() -> None:
    raw = [rng.standard_normal((4, 4)).astype(np.float32) for _ in range(3)]
    results = []
    for lib in (ts, torch):
        x, a, b = (lib.tensor(r, requires_grad=True) for r in raw)
        s = x * 1
        s.lerp_(a, 0.5).addcmul_(a, b, value=1e-3).addcdiv_(a, b.abs() + 0.5, value=1e-3)
        s.addmm_(a, b, alpha=1e-3)
        s.sum().backward()
        results.append((s.detach(), x.grad, a.grad, b.grad))
    for got, want in zip(*results):
        assert_same(got, want, rtol=1e-5, atol=1e-6)


def test_complex_gradients_match_torch() -> None:
    raw = [rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)) for _ in range(3)]
    calls = [lambda s, a, b: s.lerp_(a, b), lambda s, a, b: s.lerp_(a, 0.25 - 0.5j),
             lambda s, a, b: s.addcmul_(a, b, value=1 + 2j),
             lambda s, a, b: s.addcdiv_(a, b, value=0.5j),
             lambda s, a, b: s.addmm_(a, b, beta=1j, alpha=2 - 1j)]
    for call in calls:
        results = []
        for lib in (ts, torch):
            x, a, b = (lib.tensor(r, requires_grad=True) for r in raw)
            s = x * 1
            call(s, a, b)
            (s * s.conj()).real.sum().backward()
            results.append((s.detach(), x.grad, a.grad, b.grad))
        for got, want in zip(*results):
            assert (got is None) == (want is None)
            if want is not None:
                assert_same(got, want, rtol=1e-11, atol=1e-12)

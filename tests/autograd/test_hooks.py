"""Autograd engine behaviour against PyTorch: retain_grad ordering and in-place rebasing,
backward(inputs=) on non-leaves, leaf hooks under autograd.grad, .grad under create_graph,
implicit complex backward, and custom Functions' non-tensor inputs/outputs and bad gradients."""
from __future__ import annotations

from typing import Callable

import pytest

import tessera as ts
from harness import same_as_torch

torch = pytest.importorskip("torch")


def test_backward_inputs_fills_a_non_leaf_grad():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        (y * y).sum().backward(inputs=[y])
        return y.grad.tolist(), x.grad, y.retains_grad
    same_as_torch(f, exact_error=True)


@pytest.mark.parametrize("order", ["retain_first", "hook_first", "between"])
def test_retain_grad_sees_every_tensor_hook(order):
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        if order == "retain_first":
            y.retain_grad()
            y.register_hook(lambda g: g * 2)
        elif order == "hook_first":
            y.register_hook(lambda g: g * 2)
            y.retain_grad()
        else:
            y.register_hook(lambda g: g + 1)
            y.retain_grad()
            y.register_hook(lambda g: g * 3)
        (y * y).sum().backward()
        return y.grad.tolist(), x.grad.tolist()
    same_as_torch(f, exact_error=True)


@pytest.mark.parametrize("ops", [("mul",), ("add", "mul"), ("view_mul",)])
def test_retain_grad_follows_in_place_ops(ops):
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        for op in ops:
            if op == "mul":
                y.mul_(3)
            elif op == "add":
                y.add_(1)
            else:
                y[0:1].mul_(5)
        (y * y).sum().backward()
        return y.grad.tolist(), x.grad.tolist()
    same_as_torch(f, exact_error=True)


def test_leaf_hooks_run_under_autograd_grad():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g * 10)
        (gx,) = m.autograd.grad((x * x).sum(), x)
        return gx.tolist(), x.grad
    same_as_torch(f, exact_error=True)


def test_create_graph_grad_does_not_alias_other_tensors():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        z = m.tensor([1.0, 2.0], requires_grad=True)
        (x + z).sum().backward(create_graph=True)
        with m.no_grad():
            x.grad.mul_(3)
        g = m.tensor([1.0, 1.0])
        w = m.tensor([5.0], requires_grad=True)
        (w * 1).backward(m.tensor([1.0]), create_graph=True)
        g2 = m.tensor([2.0])
        u = m.tensor([5.0], requires_grad=True)
        (u * 1).backward(g2, create_graph=True)
        g2.mul_(7)
        return x.grad.tolist(), z.grad.tolist(), u.grad.tolist(), g.tolist()
    same_as_torch(f, exact_error=True)


def test_implicit_backward_of_a_complex_scalar_raises():
    def f(m):
        x = m.tensor([1 + 1j], requires_grad=True)
        (x * x).sum().backward()
    same_as_torch(f, exact_error=True)


def _fn_with_int_output(m):
    class F(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k, 5

        @staticmethod
        def backward(ctx, g, g_int):
            assert g_int is None
            return g * 2, None
    return F


def test_function_non_tensor_output_gets_none_gradient():
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y, k = _fn_with_int_output(m).apply(x, 3.0)
        y.sum().backward()
        return x.grad.tolist(), k
    same_as_torch(f, exact_error=True)


def _fn_returning(m, grads: Callable):
    class F(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return grads(m, g)
    return F


@pytest.mark.parametrize("grads", [
    lambda m, g: (g * 2, g),                # gradient for the float argument
    lambda m, g: (m.ones(3), None),         # wrong shape
    lambda m, g: (m.ones(()), None),        # 0-d for a (2,) input
    lambda m, g: (m.ones((4, 2)), None),    # broadcastable: summed back
    lambda m, g: (m.ones((1, 2)), None),
    lambda m, g: (g,),                      # too few
    lambda m, g: (g, None, None),           # extra trailing None is fine
])
def test_function_backward_results_are_checked_like_torch(grads):
    def f(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        _fn_returning(m, grads).apply(x, 3.0).sum().backward()
        return x.grad.tolist()
    same_as_torch(f, exact_error=True)

"""Autograd as a PyTorch user observes it: each test runs the same scenario on tessera and on
torch (`m` is the module) and compares results, or checks that both raise with torch's words."""
from __future__ import annotations

import threading
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tessera as ts
from harness import arrays, shapes

LIBS = [ts, torch]


def T(m: Any, v: Any, **kw: Any) -> Any:
    """A tensor from nested lists on either library (dtype given as the module's attribute)."""
    return torch.tensor(v, **kw) if m is torch else ts.asarray(v, **kw)


def L(x: Any) -> Any:
    """A tensor (or None) as a NumPy array, for comparing across libraries."""
    if x is None:
        return None
    if isinstance(x, torch.Tensor):
        x = x.detach()
        return (x.float() if x.dtype in (torch.float16, torch.bfloat16) else x).numpy()
    return np.asarray(x.detach().astype(ts.float32).numpy() if x.dtype in (ts.float16, ts.bfloat16)
                      else x.detach().numpy())


def dname(dt: Any) -> str:
    return str(dt).replace("torch.", "")


def same(fn: Callable[[Any], Any], rtol: float = 1e-6, atol: float = 1e-7) -> None:
    """fn(ts) and fn(torch) return the same nested structure of values."""
    got, want = fn(ts), fn(torch)

    def cmp(g: Any, w: Any) -> None:
        if isinstance(w, (tuple, list)):
            assert isinstance(g, (tuple, list)) and len(g) == len(w), (g, w)
            for a, b in zip(g, w):
                cmp(a, b)
        elif isinstance(w, np.ndarray):
            assert isinstance(g, np.ndarray) and g.shape == w.shape, (g, w)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        else:
            assert g == w, (g, w)
    cmp(got, want)


def raises_like_torch(fn: Callable[[Any], Any], exc: type, match: str) -> None:
    """Both libraries raise `exc` and both messages contain torch's phrase `match`."""
    for m in LIBS:
        with pytest.raises(exc, match=match):
            fn(m)


# ----------------------------------------------------------------------------- error paths

def _backward_twice(m: Any) -> None:
    x = T(m, [1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _inplace_on_saved(m: Any) -> None:
    x = T(m, [1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y.sin()  # saves its input y
    y.mul_(2)
    z.sum().backward()


def _unused_input(m: Any) -> None:
    x = T(m, [1.0, 2.0], requires_grad=True)
    y = T(m, [1.0, 2.0], requires_grad=True)
    m.autograd.grad((x * 2).sum(), [x, y])


@pytest.mark.parametrize("fn, exc, match", [
    (_backward_twice, RuntimeError, "Trying to backward through the graph a second time"),
    (lambda m: (T(m, [1.0, 2.0], requires_grad=True) * 2).backward(), RuntimeError,
     "grad can be implicitly created only for scalar outputs"),
    (lambda m: T(m, [1.0, 2.0]).sum().backward(), RuntimeError,
     "element 0 of tensors does not require grad and does not have a grad_fn"),
    (lambda m: m.autograd.grad(T(m, [1.0], requires_grad=True).sum(), [T(m, [1.0])]),
     RuntimeError, "One of the differentiated Tensors does not require grad"),
    (_inplace_on_saved, RuntimeError, "one of the variables needed for gradient computation has "
     "been modified by an inplace operation"),
    (lambda m: T(m, [1.0, 2.0], requires_grad=True).add_(1), RuntimeError,
     "a leaf Variable that requires grad is being used in an in-place operation"),
    (lambda m: T(m, [1, 2], requires_grad=True), RuntimeError,
     "Only Tensors of floating point and complex dtype can require gradients"),
    (_unused_input, RuntimeError, "appears to not have been used in the graph. Set "
     "allow_unused=True if this is the desired behavior"),
    (lambda m: (T(m, [1.0], requires_grad=True) * 2).requires_grad_(False), RuntimeError,
     "you can only change requires_grad flags of leaf variables"),
    (lambda m: m.autograd.grad(T(m, [1.0], requires_grad=True) * 2, T(m, [1.0], requires_grad=True),
                               materialize_grads=True, allow_unused=False), ValueError,
     "Expected allow_unused to be True or not passed when materialize_grads=True"),
    (lambda m: T(m, [1.0, 2.0]).register_hook(lambda g: g), RuntimeError,
     "cannot register a hook on a tensor that doesn't require gradient"),
    (lambda m: T(m, [1.0, 2.0]).retain_grad(), RuntimeError, "can't retain_grad on Tensor that has "
     "requires_grad=False"),
    (lambda m: (T(m, [1.0], requires_grad=True) * 2).register_post_accumulate_grad_hook(print),
     RuntimeError, "post accumulate grad hooks cannot be registered on non-leaf tensors"),
    (lambda m: T(m, [1.0, 2.0], requires_grad=True)[:1].detach_(), RuntimeError,
     "Can't detach views in-place"),
])
def test_errors_match_torch(fn: Callable, exc: type, match: str) -> None:
    raises_like_torch(fn, exc, match)


def test_grad_output_shape_mismatch_raises_like_torch() -> None:
    def f(m: Any) -> None:
        x = T(m, [1.0, 2.0], requires_grad=True)
        m.autograd.grad(x * 3, x, grad_outputs=T(m, [1.0, -1.0, 2.0]))
    raises_like_torch(f, RuntimeError, "Mismatch in shape")


def test_int_requires_grad_setter_raises() -> None:
    for m in LIBS:
        with pytest.raises(RuntimeError, match="floating point"):
            T(m, [1, 2]).requires_grad_()


# ------------------------------------------------------------------------- grad / backward

def test_grad_sequences_grad_outputs_and_tuple_result() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        w = T(m, [3.0, -1.0], requires_grad=True)
        y1, y2 = x * w, (x * x).sum()
        gs = m.autograd.grad([y1, y2], [x, w], grad_outputs=[T(m, [1.0, -1.0]), None])
        return type(gs).__name__, [L(g) for g in gs]
    same(f)


def test_grad_allow_unused_and_materialize() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        y = T(m, [1.0, 2.0], requires_grad=True)
        a = m.autograd.grad((x * 2).sum(), [x, y], allow_unused=True, retain_graph=True)
        b = m.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)
        return [L(g) for g in a], [L(g) for g in b]
    same(f)


def test_grad_retain_and_create_graph_double_backward() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
        g, = m.autograd.grad(y, x, create_graph=True)
        g2, = m.autograd.grad(g.sum(), x, retain_graph=True)
        g3, = m.autograd.grad(g.sum(), x)
        return L(g), g.requires_grad, L(g2), L(g3)
    same(f)


def test_grad_is_grads_batched() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        eye = T(m, np.eye(3).tolist())
        j, = m.autograd.grad(y, x, grad_outputs=eye, is_grads_batched=True)
        return L(j)
    same(f)


def test_grad_does_not_touch_dot_grad() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        m.autograd.grad((x * x).sum(), x)
        return x.grad
    same(f)


def test_backward_gradient_retain_create_inputs() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        w = T(m, [3.0, 4.0], requires_grad=True)
        y = x * w
        y.backward(gradient=T(m, [1.0, -1.0]), retain_graph=True)
        y.backward(T(m, [1.0, 1.0]), inputs=[x])
        z = (x ** 3).sum()
        z.backward(create_graph=True, inputs=x)
        return L(x.grad), L(w.grad), x.grad.requires_grad
    same(f)


def test_autograd_backward_several_roots_and_grad_tensors() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        m.autograd.backward([(x * 3).sum(), x * x], grad_tensors=[None, T(m, [1.0, 2.0])])
        return L(x.grad)
    same(f)


def test_grad_accumulates_and_resets() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        g = x.grad
        (x * 3).sum().backward()
        first = (L(g), L(x.grad))  # accumulated in place: the earlier .grad sees the sum
        x.grad = None
        (x * 5).sum().backward()
        return first, L(x.grad)
    same(f)


def test_non_leaf_grad_is_none_and_retain_grad() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        y, z = x * 2, x * 3
        y.retain_grad()
        x.retain_grad()  # a leaf: no-op
        (y * y + z).sum().backward()
        return (L(y.grad), y.retains_grad, y.is_leaf, x.is_leaf, z.grad, z.retains_grad,
                x.retains_grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns on z.grad of a non-leaf
        same(f)


def test_detach_and_detach_() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        y = x * 2
        d = y.detach()
        y.detach_()
        with m.no_grad():
            x.detach()[0] = 5.0  # shares memory
        return (d.requires_grad, d.is_leaf, y.requires_grad, y.grad_fn, y.is_leaf, L(x))
    same(f)


def test_grad_fn_names_and_next_functions() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        y = x * 2
        s = (y + 1).exp().sum()
        nf = y.grad_fn.next_functions
        return (s.grad_fn.name(), y.grad_fn.name(), (y + 1).grad_fn.name(),
                nf[0][0].name().split("::")[-1], nf[0][1], len(nf), x.grad_fn, nf[0][0].variable is x
                if m is torch else nf[0][0].variable.shape == x.shape)
    same(f)


def test_no_grad_results_are_leaves() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        with m.no_grad():
            y = x * 2
        return y.is_leaf, y.requires_grad, y.grad_fn, (x > 1).requires_grad, x.argmax().requires_grad
    same(f)


# ------------------------------------------------------------------------------ hooks

def test_register_hook_modify_observe_and_remove() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        seen = []
        h1 = x.register_hook(lambda g: g * 10)
        h2 = x.register_hook(lambda g: seen.append(L(g)))  # returns None: keeps the gradient
        y = x * 2
        y.register_hook(lambda g: g + 1)
        (y * y).sum().backward()
        first = L(x.grad)
        h1.remove()
        h2.remove()
        x.grad = None
        (x * x).sum().backward()
        return first, seen, L(x.grad)
    same(f)


def test_post_accumulate_grad_hook_order_and_remove() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        order = []
        x.register_hook(lambda g: order.append("pre"))
        h = x.register_post_accumulate_grad_hook(lambda t: order.append(("post", L(t.grad).tolist())))
        (x * 3).sum().backward()
        (x * 3).sum().backward()
        h.remove()
        (x * 3).sum().backward()
        return order
    same(f)


def test_post_accumulate_hook_can_step_parameter() -> None:
    def f(m: Any) -> Any:
        w = T(m, [1.0, 2.0], requires_grad=True)

        def step(p: Any) -> None:
            with m.no_grad():
                p -= 0.5 * p.grad
            p.grad = None
        w.register_post_accumulate_grad_hook(step)
        (w * w).sum().backward()
        return L(w), w.grad
    same(f)


# ---------------------------------------------------------------------------- grad mode

def test_grad_mode_context_managers_and_decorators() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        r = []

        @m.no_grad()
        def a(t: Any) -> Any:
            return t * 2

        @m.no_grad
        def b(t: Any) -> Any:
            return t * 2

        @m.enable_grad()
        def c(t: Any) -> Any:
            return t * 2

        @m.set_grad_enabled(False)
        def d(t: Any) -> Any:
            return t * 2
        r += [a(x).requires_grad, b(x).requires_grad, d(x).requires_grad, m.is_grad_enabled()]
        with m.no_grad():
            r += [c(x).requires_grad, m.is_grad_enabled()]
            with m.enable_grad():
                r += [(x * 2).requires_grad]
        m.set_grad_enabled(False)
        r += [m.is_grad_enabled(), (x * 2).requires_grad]
        m.set_grad_enabled(True)
        with m.set_grad_enabled(False):
            r += [(x * 2).requires_grad]
        r += [m.is_grad_enabled()]
        return r
    same(f)


def test_grad_mode_restored_after_exception() -> None:
    def f(m: Any) -> Any:
        try:
            with m.no_grad():
                raise KeyError("x")
        except KeyError:
            pass
        return m.is_grad_enabled()
    same(f)


def test_no_grad_decorates_generators() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0], requires_grad=True)

        @m.no_grad()
        def gen() -> Any:
            yield (x * 2).requires_grad
            yield (x * 2).requires_grad
        out = []
        for v in gen():
            out.append((v, m.is_grad_enabled()))
        return out
    same(f)


def test_inference_mode() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        r = [m.is_inference_mode_enabled()]
        with m.inference_mode():
            r += [m.is_inference_mode_enabled(), m.is_grad_enabled(), (x * 2).requires_grad]
            with m.inference_mode(False):
                r += [m.is_inference_mode_enabled()]
        with m.inference_mode(False):
            r += [m.is_inference_mode_enabled(), m.is_grad_enabled()]
        with m.no_grad():
            r += [m.is_inference_mode_enabled()]

        @m.inference_mode()
        def g(t: Any) -> Any:
            return t * 2

        @m.inference_mode
        def h(t: Any) -> Any:
            return m.is_inference_mode_enabled()
        r += [g(x).requires_grad, h(x), m.is_inference_mode_enabled(), m.is_grad_enabled()]
        return r
    same(f)


def test_grad_mode_is_thread_local() -> None:
    def f(m: Any) -> Any:
        res = []
        with m.no_grad():
            t = threading.Thread(target=lambda: res.append(m.is_grad_enabled()))
            t.start()
            t.join()
            res.append(m.is_grad_enabled())
        return res
    same(f)


# ------------------------------------------------------------------------------ anomaly

def test_anomaly_modes_and_nan_detection() -> None:
    def f(m: Any) -> Any:
        r = [m.is_anomaly_enabled()]
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            ctx = m.autograd.detect_anomaly()
        with ctx:
            r.append(m.is_anomaly_enabled())
        m.autograd.set_detect_anomaly(True)
        r.append(m.is_anomaly_enabled())
        m.autograd.set_detect_anomaly(False)
        r.append(m.is_anomaly_enabled())
        with m.autograd.set_detect_anomaly(True, check_nan=False):
            r += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        r += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        return r
    same(f)
    for m in LIBS:
        x = T(m, [0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly():
                with pytest.raises(RuntimeError, match="returned nan values in its 1th output"):
                    (x / x).sum().backward()
                # an inf gradient is not an anomaly (torch checks NaN only)
                y = T(m, [0.0], requires_grad=True)
                y.sqrt().sum().backward()
                assert np.isinf(L(y.grad)).all()


# ------------------------------------------------------------------------------ Function

def _square_fn(m: Any) -> type:
    class Square(m.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, k: float) -> Any:
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * k

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, = ctx.saved_tensors
            return g * 2 * x * ctx.k, None
    return Square


def test_function_basic_nontensor_args_and_name() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        y = _square_fn(m).apply(x, 3.0)
        y.sum().backward()
        z = _square_fn(m).apply(T(m, [1.0]), 2.0)  # no input requires grad: no history
        return L(x.grad), y.grad_fn.name(), y.requires_grad, z.requires_grad, z.grad_fn
    same(f)


def test_function_needs_input_grad_and_none_grads() -> None:
    def f(m: Any) -> Any:
        seen = []

        class Mul(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any, b: Any, n: int) -> Any:
                seen.append(ctx.needs_input_grad)
                return a * b * n

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g, None, None
        a = T(m, [1.0, 2.0], requires_grad=True)
        Mul.apply(a, T(m, [1.0, 2.0]), 3).sum().backward()
        return seen, L(a.grad)
    same(f)


def test_function_setup_context_style() -> None:
    def f(m: Any) -> Any:
        class Exp(m.autograd.Function):
            @staticmethod
            def forward(x: Any, k: float) -> Any:
                return x.exp() * k

            @staticmethod
            def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
                ctx.save_for_backward(output)
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                out, = ctx.saved_tensors
                return g * out, None
        x = T(m, [0.0, 1.0], requires_grad=True)
        Exp.apply(x, 2.0).sum().backward()
        return L(x.grad)
    same(f, rtol=1e-6)


@pytest.mark.parametrize("materialize", [True, False])
def test_function_set_materialize_grads(materialize: bool) -> None:
    def f(m: Any) -> Any:
        seen = []

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx: Any, g1: Any, g2: Any) -> Any:
                seen.append(None if g2 is None else L(g2))
                return g1 * 2 if g2 is None else g1 * 2 + g2 * 3
        x = T(m, [0.0, 1.0], requires_grad=True)
        a, _ = Two.apply(x)
        a.sum().backward()
        return seen, L(x.grad)
    same(f)


def test_function_mark_dirty_and_non_differentiable() -> None:
    def f(m: Any) -> Any:
        class Double(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                x.mul_(2)
                ctx.mark_dirty(x)
                idx = x * 0
                ctx.mark_non_differentiable(idx)
                return x, idx

            @staticmethod
            def backward(ctx: Any, g: Any, gi: Any) -> Any:
                return g * 2
        a = T(m, [1.0, 2.0], requires_grad=True)
        b = a * 1
        c, idx = Double.apply(b)
        r = (c is b, b.grad_fn.name(), L(b), idx.requires_grad)
        c.sum().backward()
        return r, L(a.grad)
    same(f)


def test_function_mark_dirty_on_leaf_raises() -> None:
    def f(m: Any) -> Any:
        class Double(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * 2
        Double.apply(T(m, [1.0], requires_grad=True))
    raises_like_torch(f, RuntimeError, "a leaf Variable that requires grad has been used in an "
                      "in-place operation")


def test_function_once_differentiable() -> None:
    def make(m: Any) -> type:
        class Sq(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @m.autograd.function.once_differentiable
            def backward(ctx: Any, g: Any) -> Any:
                x, = ctx.saved_tensors
                return g * 2 * x
        return Sq

    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        g, = m.autograd.grad(make(m).apply(x).sum(), x, create_graph=True)
        return L(g)
    same(f)
    assert ts.autograd.once_differentiable is ts.autograd.function.once_differentiable


def test_function_double_backward_through_python_backward() -> None:
    def f(m: Any) -> Any:
        class Cube(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                x, = ctx.saved_tensors
                return g * 3 * x ** 2
        x = T(m, [1.0, 2.0], requires_grad=True)
        g, = m.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        g2, = m.autograd.grad(g.sum(), x)
        return L(g2)
    same(f)


@pytest.mark.parametrize("returned", ["too_few", "too_many"])
def test_function_wrong_number_of_grads_raises(returned: str) -> None:
    def f(m: Any) -> Any:
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any, y: Any) -> Any:
                return x * y

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return (g,) if returned == "too_few" else (g, g, g)
        x = T(m, [1.0, 2.0], requires_grad=True)
        F.apply(x, x).sum().backward()
    raises_like_torch(f, RuntimeError, "returned an incorrect number of gradients")


def test_function_extra_trailing_none_grads_are_allowed() -> None:
    def f(m: Any) -> Any:
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * 2, None
        x = T(m, [1.0, 2.0], requires_grad=True)
        F.apply(x).sum().backward()
        return L(x.grad)
    same(f)


def test_function_save_for_backward_rejects_non_tensors() -> None:
    def f(m: Any) -> Any:
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_backward(x, 3)
                return x

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g
        F.apply(T(m, [1.0], requires_grad=True))
    raises_like_torch(f, TypeError, "save_for_backward can only save variables, but argument 1")


# ------------------------------------------------------------------------------ gradcheck

def test_gradcheck_and_gradgradcheck_with_torch_keywords() -> None:
    for m in LIBS:
        x = T(m, [1.0, 2.0], dtype=m.float64, requires_grad=True)
        f = lambda a: (a * a).sin()  # noqa: E731
        assert m.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-5, rtol=1e-3,
                                    raise_exception=True, nondet_tol=0.0, fast_mode=False)
        assert m.autograd.gradcheck(f, x)
        assert m.autograd.gradgradcheck(f, (x,), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_gradcheck_failure_raise_or_false() -> None:
    for m in LIBS:
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                return a * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * 3
        x = T(m, [1.0, 2.0], dtype=m.float64, requires_grad=True)
        assert m.autograd.gradcheck(Bad.apply, (x,), raise_exception=False) is False
        with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0"):
            m.autograd.gradcheck(Bad.apply, (x,))
    assert issubclass(ts.autograd.GradcheckError, RuntimeError)


def test_gradcheck_warns_on_single_precision() -> None:
    for m in LIBS:
        x = T(m, [1.0, 2.0], dtype=m.float32, requires_grad=True)
        with pytest.warns(UserWarning, match="not a double precision"):
            # torch's single-precision differences usually fail; tessera checks float64 copies
            m.autograd.gradcheck(lambda a: a * 2, (x,), raise_exception=False)
    assert ts.autograd.gradcheck(lambda a: a * 2, (ts.asarray([1.0, 2.0], requires_grad=True),))


# ----------------------------------------------------------------------------- functional

def test_functional_jacobian_hessian_vjp_jvp_hvp_vhp() -> None:
    def f(m: Any) -> Any:
        F = m.autograd.functional
        x = T(m, [1.0, 2.0], dtype=m.float64)
        v = T(m, [1.0, -1.0], dtype=m.float64)
        cube = lambda a: (a ** 3).sum()  # noqa: E731
        j = F.jacobian(lambda a: a * a, x, create_graph=False, strict=False, vectorize=True,
                       strategy="reverse-mode")
        h = F.hessian(cube, x, create_graph=False, strict=False, vectorize=False,
                      outer_jacobian_strategy="reverse-mode")
        o1, vj = F.vjp(lambda a: a * a, x, v, create_graph=False, strict=False)
        o2, jv = F.jvp(lambda a: a * a, x, v, create_graph=False, strict=False)
        o3, hv = F.hvp(cube, x, v, create_graph=False, strict=False)
        o4, vh = F.vhp(cube, x, v)
        return [L(t) for t in (j, h, o1, vj, o2, jv, o3, hv, o4, vh)] + [hv.requires_grad]
    same(f, rtol=1e-12)


def test_functional_tuple_inputs_and_outputs() -> None:
    def f(m: Any) -> Any:
        F = m.autograd.functional
        x = T(m, [1.0, 2.0], dtype=m.float64)
        y = T(m, [3.0], dtype=m.float64)
        j = F.jacobian(lambda a, b: (a * b, b.sum()), (x, y))
        h = F.hessian(lambda a, b: (a * a * b).sum(), (x, y))
        _, hv = F.hvp(lambda a, b: (a * a * b).sum(), (x, y), (x, y))
        return [[L(t) for t in r] for r in j], [[L(t) for t in r] for r in h], [L(t) for t in hv]
    same(f, rtol=1e-12)


def test_functional_strict_raises() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], dtype=m.float64)
        y = T(m, [3.0], dtype=m.float64)
        m.autograd.functional.jacobian(lambda a, b: a * 2, (x, y), strict=True)
    raises_like_torch(f, RuntimeError, "Output 0 of the user-provided function is independent of "
                      "input 1. This is not allowed in strict mode")


def test_functional_create_graph_keeps_history() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], dtype=m.float64, requires_grad=True)
        j = m.autograd.functional.jacobian(lambda a: a * a, x, create_graph=True)
        g, = m.autograd.grad(j.sum(), x)
        return j.requires_grad, L(g)
    same(f)


# ----------------------------------------------------------------------------- checkpoint

@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_both_modes(use_reentrant: bool) -> None:
    def f(m: Any) -> Any:
        import importlib
        cp = importlib.import_module(m.__name__ + ".utils.checkpoint")
        x = T(m, [1.0, 2.0], requires_grad=True)
        w = T(m, [3.0, 4.0], requires_grad=True)
        y = cp.checkpoint(lambda a, b: (a * b).exp(), x, w, use_reentrant=use_reentrant,
                          preserve_rng_state=True)
        y.sum().backward()
        return L(y), L(x.grad), L(w.grad), y.requires_grad
    same(f, rtol=1e-6)


def _checkpoint_net(m: Any, with_dropout: bool) -> Any:
    m.manual_seed(0)
    net = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.Tanh(),
                          m.nn.Dropout(0.5 if with_dropout else 0.0), m.nn.Linear(4, 2))
    w = np.linspace(-1, 1, 26).astype(np.float64)
    with m.no_grad():
        for p in net.parameters():
            p.copy_(T(m, w[:p.numel()].reshape(tuple(p.shape)).copy()))
            w = np.roll(w, 3)
    return net.double()


@pytest.mark.parametrize("call", ["module", "bound_method", "closure", "kwargs"])
@pytest.mark.parametrize("input_grad", [True, False])
def test_checkpoint_reaches_the_parameters_of_fn(call: str, input_grad: bool) -> None:
    # was: only the explicit inputs got gradients; a checkpointed module's weights got none
    def f(m: Any) -> Any:
        import importlib
        cp = importlib.import_module(m.__name__ + ".utils.checkpoint")
        net = _checkpoint_net(m, False)
        x = T(m, np.linspace(-2, 2, 15).reshape(5, 3), dtype=m.float64, requires_grad=input_grad)
        if call == "module":
            y = cp.checkpoint(net, x, use_reentrant=False)
        elif call == "bound_method":
            y = cp.checkpoint(net.__call__, x, use_reentrant=False)
        elif call == "closure":
            y = cp.checkpoint(lambda a: net(a) * 2.0, x * 1.0, use_reentrant=True) \
                if input_grad else None
        else:
            y = cp.checkpoint(lambda a, scale: net(a) * scale, x, scale=3.0, use_reentrant=False)
        if y is None:
            return None
        (y ** 2).sum().backward()
        grads = [L(p.grad) for p in net.parameters()]
        # the recompute updates BatchNorm's running stats a second time, as in torch
        return (L(y), grads, L(x.grad) if input_grad else None, L(net[1].running_mean),
                int(net[1].num_batches_tracked))
    same(f, rtol=1e-10, atol=1e-12)


def test_checkpoint_replays_the_rng_state_for_dropout() -> None:
    # preserve_rng_state=True (the default): the recompute draws the forward's dropout mask, so
    # the gradients are those of the output that was returned
    for m in (torch, ts):
        import importlib
        cp = importlib.import_module(m.__name__ + ".utils.checkpoint")
        net = _checkpoint_net(m, True)
        x = T(m, np.linspace(-2, 2, 60).reshape(20, 3), dtype=m.float64, requires_grad=True)
        m.manual_seed(5)
        y = cp.checkpoint(net, x, use_reentrant=False)
        y.sum().backward()
        got = [p.grad.clone() for p in net.parameters()] + [x.grad.clone()]
        net.zero_grad()
        x.grad = None
        net[1].momentum = 0.0  # the recompute's second stats update must not matter below
        m.manual_seed(5)
        y2 = net(x)
        np.testing.assert_array_equal(y.detach().numpy(), y2.detach().numpy())
        y2.sum().backward()
        want = [p.grad for p in net.parameters()] + [x.grad]
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------------ dtypes / complex

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64",
                                   "complex128"])
def test_gradient_dtype_equals_input_dtype(dtype: str) -> None:
    def f(m: Any) -> Any:
        dt = getattr(m, dtype)
        x = T(m, [1.0, 2.0], dtype=dt, requires_grad=True)
        y = (x * x).sum()
        y.real.backward() if dtype.startswith("complex") else y.backward()
        return dname(x.grad.dtype), L(x.grad)
    same(f, rtol=1e-2)


def test_mixed_dtype_grads_keep_each_inputs_dtype() -> None:
    def f(m: Any) -> Any:
        a = T(m, [1.0, 2.0], dtype=m.float32, requires_grad=True)
        b = T(m, [1.0, 2.0], dtype=m.float64, requires_grad=True)
        c = T(m, [1.0, 2.0], dtype=m.float16, requires_grad=True)
        (a * b * c).sum().backward()
        return [dname(t.grad.dtype) for t in (a, b, c)]
    same(f)


def test_complex_gradients_are_conjugate_wirtinger() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1 + 2j, 3 - 1j], requires_grad=True)
        (x * x.conj()).real.sum().backward()
        g1 = L(x.grad)
        x.grad = None
        (x * x).abs().sum().backward()
        g2 = L(x.grad)
        z = T(m, [1 + 2j], requires_grad=True)
        (z * z).sum().backward(T(m, 1 + 1j))  # holomorphic: grad_out * conj(f'(z))
        r = T(m, [1.0, 2.0], requires_grad=True)
        (r * T(m, [1j, 2 + 1j])).abs().sum().backward()  # real input through a complex path
        return g1, g2, L(z.grad), L(r.grad), dname(r.grad.dtype)
    same(f, rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["float32", "float64"]).flatmap(
    lambda dt: arrays(dt, shapes(max_dims=3), elements=st.floats(-3, 3, width=32))))
def test_elementwise_grads_match_torch_hypothesis(a: np.ndarray) -> None:
    def f(m: Any) -> Any:
        x = T(m, a.tolist(), dtype=getattr(m, str(a.dtype)), requires_grad=True)
        y = (x.sin() * x + x.exp() / 4).sum()
        g, = m.autograd.grad(y, x, create_graph=True)
        g2, = m.autograd.grad(g.sum(), x)
        return dname(g.dtype), L(g), L(g2)
    same(f, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------- saved tensor hooks

def test_saved_tensors_hooks_pack_and_unpack() -> None:
    def f(m: Any) -> Any:
        packed, unpacked = [], []

        def pack(t: Any) -> Any:
            packed.append(tuple(t.shape))
            return ("box", t * 1)

        def unpack(p: Any) -> Any:
            unpacked.append(p[0])
            return p[1]
        x = T(m, [1.0, 2.0], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.sin() * x  # sin saves x; mul saves both of its operands
        n_packed = len(packed)
        y.sum().backward()
        return n_packed, len(unpacked), L(x.grad)
    same(f, rtol=1e-6)


def test_saved_tensors_hooks_unpack_can_change_the_value() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 0 + 10):
            y = (x * x).sum()  # d/dx = 2 * saved x -> every saved value reads as 10
        y.backward()
        return L(x.grad)
    same(f)


def test_saved_tensors_hooks_apply_to_custom_function_and_double_backward() -> None:
    def f(m: Any) -> Any:
        calls = []

        class Cube(m.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                x, = ctx.saved_tensors
                return g * 3 * x ** 2
        x = T(m, [1.0, 2.0], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: calls.append(1) or t, lambda t: t):
            y = Cube.apply(x).sum()
        g, = m.autograd.grad(y, x, create_graph=True)
        g2, = m.autograd.grad(g.sum(), x)
        return len(calls) > 0, L(g), L(g2)
    same(f)


def test_save_on_cpu_and_disable_saved_tensors_hooks() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        with m.autograd.graph.save_on_cpu(pin_memory=False):
            y = (x.exp() * x).sum()
        y.backward()
        return L(x.grad)
    same(f, rtol=1e-6)
    for m in LIBS:
        with m.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # enabled again
            pass


def test_saved_tensors_hooks_unpack_must_return_a_tensor() -> None:
    for m in LIBS:
        x = T(m, [1.0, 2.0], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = (x * x).sum()
        with pytest.raises(TypeError, match="unpack_hook"):
            y.backward()


# ----------------------------------------------------------------------- .grad attribute

def test_non_leaf_grad_access_warns_like_torch() -> None:
    for m in LIBS:
        x = T(m, [1.0, 2.0], requires_grad=True)
        y = x * 2
        with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
            assert y.grad is None
        y.retain_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # retained or leaf: no warning
            assert y.grad is None and x.grad is None


@pytest.mark.parametrize("value, match", [
    (lambda m: T(m, [1.0, 2.0, 3.0]), "attempting to assign a gradient of size"),
    (lambda m: T(m, [1.0, 2.0], dtype=m.float64), "attempting to assign a gradient with dtype"),
])
def test_assigning_a_mismatched_grad_raises_like_torch(value: Callable, match: str) -> None:
    def f(m: Any) -> None:
        x = T(m, [1.0, 2.0], requires_grad=True)
        x.grad = value(m)
    raises_like_torch(f, RuntimeError, match)


def test_function_setup_context_inputs_include_defaults_and_keywords() -> None:
    def f(m: Any) -> Any:
        seen = []

        class Scale(m.autograd.Function):
            @staticmethod
            def forward(x: Any, k: float = 2.0, shift: float = 0.0) -> Any:
                return x * k + shift

            @staticmethod
            def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
                seen.append(len(inputs))
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * ctx.k, None, None
        x = T(m, [1.0, 2.0], requires_grad=True)
        y = Scale.apply(x) + Scale.apply(x, shift=1.0) + Scale.apply(x, 3.0)
        y.sum().backward()
        return seen, L(x.grad), L(y)
    same(f)


def test_graph_node_type_and_namespace() -> None:
    for m in LIBS:
        x = T(m, [1.0], requires_grad=True)
        assert isinstance((x * 2).grad_fn, m.autograd.graph.Node)
        for name in ("grad", "backward", "Function", "gradcheck", "gradgradcheck", "functional",
                     "graph", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
                     "detect_anomaly", "set_detect_anomaly"):
            assert hasattr(m.autograd, name), name
        for name in ("is_grad_enabled", "is_inference_mode_enabled", "is_anomaly_enabled",
                     "is_anomaly_check_nan_enabled", "no_grad", "enable_grad", "set_grad_enabled",
                     "inference_mode"):
            assert hasattr(m, name), name


def _hook_changes_shape(m: Any) -> None:
    x = T(m, [1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g.sum())
    (x * 2).sum().backward()


@pytest.mark.parametrize("fn, match", [
    (lambda m: m.autograd.grad(T(m, [1.0], requires_grad=True).sum(), []),
     "`inputs` argument to `grad\\(\\)` cannot be empty"),
    (lambda m: (T(m, [1.0], requires_grad=True) * 2).sum().backward(inputs=[]),
     "`inputs` argument to `backward\\(\\)` cannot be empty"),
    (lambda m: m.autograd.grad([T(m, [1.0], requires_grad=True) * 2] * 2,
                               [T(m, [1.0], requires_grad=True)], grad_outputs=[T(m, [1.0])]),
     "got 2 tensors and 1 gradients"),
    (_hook_changes_shape, "has changed the size of value"),
])
def test_more_errors_match_torch(fn: Callable, match: str) -> None:
    raises_like_torch(fn, RuntimeError, match)


def test_common_grad_fn_names_match_torch() -> None:
    def f(m: Any) -> Any:
        x = T(m, [[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        outs = [x + 1, x - 1, x * 2, x / 2, -x, x ** 2, x.exp(), x.log(), x.sin(), x.sum(), x.mean(),
                x.reshape(-1), x.view(4), x.flatten(), m.cat([x, x]), x.abs(), x.sqrt(), x.tanh(),
                x.clone(), x.permute(1, 0), m.nn.functional.relu(x)]
        return [o.grad_fn.name() for o in outs]
    same(f)


def test_node_hooks_observe_replace_and_remove() -> None:
    def f(m: Any) -> Any:
        x = T(m, [1.0, 2.0], requires_grad=True)
        w = T(m, [3.0, 4.0], requires_grad=True)
        y = x * w
        seen = []

        def pre(gout: Any) -> Any:
            seen.append(("pre", [L(g) for g in gout]))
            return (gout[0] * 2,)

        def post(gin: Any, gout: Any) -> Any:
            seen.append(("post", [L(g) for g in gin], [L(g) for g in gout]))
            return (gin[0] + 1, None)
        h1 = y.grad_fn.register_prehook(pre)
        h2 = y.grad_fn.register_hook(post)
        y.sum().backward(retain_graph=True)
        first = (L(x.grad), w.grad)
        h1.remove()
        h2.remove()
        x.grad = None
        y.sum().backward()
        return seen, first, L(x.grad), L(w.grad)
    same(f)


def test_node_hook_wrong_number_of_values_raises() -> None:
    def f(m: Any) -> None:
        x = T(m, [1.0, 2.0], requires_grad=True)
        y = x * 2
        y.grad_fn.register_hook(lambda gin, gout: (gin[0], gin[0], gin[0]))
        y.sum().backward()
    raises_like_torch(f, RuntimeError, "has returned an incorrect number of values")

"""The activations are the C++ bindings themselves (csrc/python/bind_activation.cpp): torch's
signatures, values on empty / 0-d / strided inputs and several dtypes, float64 gradients and
double backward against torch, in-place forms on leaves and non-leaves, errors naming the op."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
from tessera import _C, nn
from harness import close, compare_grads, double_backward_pairs, randn, tt

F = nn.functional

# name, extra positional arguments
UNARY = [("sigmoid", ()), ("logsigmoid", ()), ("softsign", ()), ("tanhshrink", ()),
         ("relu", ()), ("relu6", ()), ("selu", ()), ("silu", ()), ("mish", ()),
         ("hardsigmoid", ()), ("hardswish", ()), ("elu", (0.7,)), ("celu", (0.6,)),
         ("leaky_relu", (0.2,)), ("hardtanh", (-0.5, 2.0)), ("threshold", (0.3, -1.0)),
         ("softplus", (2.0, 3.0)), ("hardshrink", (0.4,)), ("softshrink", (0.4,)),
         ("glu", (1,)), ("softmin", (1,)), ("rrelu", (0.1, 0.3))]
NAMES = [n for n, _ in UNARY]
INPLACE = ["relu", "relu6", "selu", "silu", "mish", "hardsigmoid", "hardswish", "elu", "celu",
           "leaky_relu", "hardtanh", "threshold", "rrelu"]
ARGS = dict(UNARY)


def _values(*shape: int) -> np.ndarray:
    """Normal values plus the kinks and special points (0, +-3, the bounds, +-inf, NaN)."""
    x = randn(*shape, dtype=np.float64) * 3
    flat = x.reshape(-1)
    special = [0.0, -3.0, 3.0, 0.3, -0.5, 2.0, np.inf, -np.inf, np.nan, 25.0, -25.0]
    flat[:min(len(special), flat.size)] = special[:flat.size]
    return x


@pytest.mark.parametrize("name", NAMES + ["softmax2d", "relu_", "elu_", "celu_", "selu_",
                                          "leaky_relu_", "hardtanh_", "threshold_", "rrelu_"])
def test_the_binding_is_the_function(name: str) -> None:
    f = getattr(F, name)
    assert f is getattr(_C, name)
    if name in ("rrelu", "rrelu_"):  # torch's F.rrelu has no generator=; ours is kw-only
        got = [p for p in inspect.signature(f).parameters if p != "generator"]
        assert got == ["input", "lower", "upper", "training"] + ["inplace"] * (name == "rrelu")
        return
    if name == "softmax2d":  # tessera's own (torch has the module only)
        return
    want = getattr(TF, name)
    if isinstance(want, type(torch.add)):  # a torch builtin: compare the names in its doc
        line = want.__doc__.strip().splitlines()[0]
        assert line.startswith(name + "(")
        assert [p for p in inspect.signature(f).parameters] == \
            [a.split("=")[0].strip() for a in line[len(name) + 1:line.index(")")].split(",")]
        return
    sig, tsig = inspect.signature(f), inspect.signature(want)
    assert list(sig.parameters) == list(tsig.parameters)
    for p in sig.parameters.values():
        d = tsig.parameters[p.name].default
        if d is not inspect.Parameter.empty:
            assert p.default == d, (name, p.name)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (4, 6), (2, 4, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_match_torch(name: str, shape, dtype) -> None:
    if name == "glu" and len(shape) < 2:
        shape = (2, 4)
    args = (-1,) if name == "softmin" else ARGS[name]
    x = _values(*shape).astype(dtype) if np.prod(shape) else np.zeros(shape, dtype)
    got = getattr(F, name)(tt(x), *args)
    want = getattr(TF, name)(torch.tensor(x), *args)
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    close(got, want, 1e-6, 1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_strided_input(name: str) -> None:
    x = _values(6, 8)
    args = (0,) if name == "glu" else ARGS[name]
    close(getattr(F, name)(tt(x)[::2, 1::2].mT, *args),
          getattr(TF, name)(torch.tensor(x)[::2, 1::2].mT, *args), 1e-12, 1e-12)


@pytest.mark.parametrize("name", ["sigmoid", "relu", "hardtanh", "hardsigmoid", "silu",
                                  "leaky_relu", "softplus"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_dtypes(name: str, dtype: str) -> None:
    x = randn(4, 5) * 3
    args = ARGS[name]
    got = getattr(F, name)(ts.asarray(x).astype(getattr(ts, dtype)), *args)
    want = getattr(TF, name)(torch.tensor(x).to(getattr(torch, dtype)), *args)
    assert got.dtype == getattr(ts, dtype)
    close(got.astype(ts.float32), want.float(), 2e-2, 2e-2)


@pytest.mark.parametrize("name", [n for n in NAMES if n != "rrelu"])
def test_float64_gradients_match_torch(name: str) -> None:
    args = ARGS[name]
    x = _values(4, 6)
    # torch's CPU backward of the piecewise activations gives NaN its gradient in the scalar
    # loop and something else in the vectorized one (position-dependent; test_grad_kinks.py
    # checks tessera's NaN rule); glu's inf * sigmoid'(b) is inf - inf in a composite
    x[np.isnan(x) | (np.isinf(x) if name == "glu" else False)] = 0.25
    # PyTorch's CELU backward uses float32 constants even in float64
    compare_grads(lambda v: getattr(F, name)(v, *args), lambda v: getattr(TF, name)(v, *args),
                  [x], rtol=1e-6 if name == "celu" else None)


@pytest.mark.parametrize("name", ["sigmoid", "logsigmoid", "softsign", "tanhshrink", "selu",
                                  "silu", "mish", "elu", "celu", "softplus", "glu", "softmin",
                                  "hardswish"])
def test_double_backward_matches_torch(name: str) -> None:
    args = ARGS[name]
    x = randn(4, 6, dtype=np.float64) * 2
    x[np.abs(x) < 0.05] = 0.5  # off the kinks
    x[np.abs(np.abs(x) - 3) < 0.05] = 1.0
    for a, b in double_backward_pairs(lambda v: getattr(F, name)(v, *args),
                                      lambda v: getattr(TF, name)(v, *args), [x]):
        # PyTorch's CELU backward uses float32 constants even in float64
        close(a, b, 1e-6 if name == "celu" else 1e-9, 1e-9)


def test_prelu_and_softmax2d_match_torch() -> None:
    x, w = randn(2, 3, 4, dtype=np.float64), np.array([0.2, -0.3, 0.5])
    compare_grads(F.prelu, TF.prelu, [x, w])
    compare_grads(F.softmax2d, lambda v: TF.softmax(v, -3), [x])


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_on_leaf_and_non_leaf(name: str) -> None:
    args = ARGS[name]
    x = _values(3, 4)
    leaf, tleaf = tt(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with pytest.raises(RuntimeError, match=f"{name}.*a leaf Variable that requires grad"):
        getattr(F, name)(leaf, *args, inplace=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        getattr(TF, name)(tleaf, *args, inplace=True)
    if name == "rrelu":
        return
    v, vt = leaf * 1.0, tleaf * 1.0
    assert getattr(F, name)(v, *args, inplace=True) is v
    getattr(TF, name)(vt, *args, inplace=True)
    close(v, vt, 1e-12, 1e-12)
    g = randn(3, 4, dtype=np.float64)
    (v * tt(g)).sum().backward()
    (vt * torch.tensor(g)).sum().backward()
    close(leaf.grad, tleaf.grad, 1e-7, 1e-9)


def test_inplace_through_a_view_writes_the_base() -> None:
    x = randn(4, 6, dtype=np.float64)
    a, at = tt(x), torch.tensor(x)
    F.elu(a[:, ::2], 0.5, inplace=True)
    TF.elu(at[:, ::2], 0.5, inplace=True)
    close(a, at, 1e-12, 1e-12)


def test_inplace_keeps_the_dtype_rules() -> None:
    i = ts.asarray([-2, 0, 3])
    assert F.relu(i, inplace=True) is i and i.tolist() == [0, 0, 3]
    with pytest.raises(TypeError, match="elu.*can't be cast"):
        F.elu(ts.asarray([-2, 0, 3]), inplace=True)


@pytest.mark.parametrize("op,call,cls,pattern", [
    ("hardtanh", lambda m: m.hardtanh(m.ones(3), 2.0, 1.0), ValueError,
     "min_val cannot be greater"),
    ("softshrink", lambda m: m.softshrink(m.ones(3), -1.0), RuntimeError, "lambda must be"),
    ("glu", lambda m: m.glu(m.ones(3), 0), RuntimeError, "[Hh]alving dimension"),
    ("glu", lambda m: m.glu(m.ones(()), 0), RuntimeError, ""),
    ("relu", lambda m: m.relu(m.ones(3) > 0), RuntimeError, ""),
    ("prelu", lambda m: m.prelu(m.ones(2, 4), m.ones(3)), RuntimeError, ""),
    ("elu", lambda m: m.elu("x"), TypeError, "elu"),
    ("leaky_relu", lambda m: m.leaky_relu(m.ones(3), "a"), TypeError, "leaky_relu"),
    ("rrelu", lambda m: m.rrelu(m.ones(3), 0.5, 0.1, True), None, ""),
])
def test_errors_are_torch_classes_naming_the_op(op, call, cls, pattern) -> None:
    if cls is not None:
        with pytest.raises(cls, match=pattern):
            call(_Lib(torch.ones, TF))
    with pytest.raises(cls or ValueError) as e:
        call(_Lib(ts.ones, F))
    assert str(e.value).startswith(op) or f"{op}()" in str(e.value)


class _Lib:
    """A library's functional module and its ones(), under the names the calls above use."""
    def __init__(self, ones, functional) -> None:
        self.ones, self.functional = ones, functional

    def __getattr__(self, name):
        return getattr(self.functional, name)


def test_rrelu_generator_is_reproducible() -> None:
    x = tt(-np.ones((50,), np.float32))
    g1, g2 = ts.random.Generator().manual_seed(3), ts.random.Generator().manual_seed(3)
    a = F.rrelu(x, 0.1, 0.3, True, generator=g1)
    b = F.rrelu(x, 0.1, 0.3, True, generator=g2)
    assert np.array_equal(a.numpy(), b.numpy())
    assert float(a.min()) >= -0.3 and float(a.max()) <= -0.1


def test_softmin_dtype_and_implicit_dim() -> None:
    x = randn(3, 4)
    close(F.softmin(tt(x), 0, dtype=ts.float64), TF.softmin(torch.tensor(x), 0,
                                                            dtype=torch.float64), 1e-6, 1e-6)
    with pytest.warns(UserWarning):
        TF.softmin(torch.tensor(x))
    close(F.softmin(tt(x)), TF.softmin(torch.tensor(x), 1), 1e-6, 1e-6)


@pytest.mark.parametrize("name", ["sigmoid", "hardshrink", "prelu"])
def test_namespace_twins_are_the_bindings(name: str) -> None:
    assert getattr(ts, name) is getattr(F, name)


def test_torch_forms_take_no_inplace() -> None:
    x = ts.ones(3)
    for f, args in [(ts.relu, ()), (ts.threshold, (0.5, 1.0))]:
        with pytest.raises(TypeError):
            f(x, *args, True)
        with pytest.raises(TypeError):
            getattr(torch, f.__name__)(torch.ones(3), *args, True)


def test_namespace_twins_now_agree_with_torch() -> None:
    # ts.prelu's gradient at 0 is torch's (the weight's slope; it used to pass g), ts.relu of a
    # bool tensor raises as torch, ts.sigmoid of integers gives the default float
    x, w = np.array([[-1.0, 0.0, 2.0]]).T.copy(), np.array([0.25])
    compare_grads(ts.prelu, torch.prelu, [x.reshape(1, 3), w])
    with pytest.raises(RuntimeError):
        ts.relu(ts.asarray([True, False]))
    assert ts.sigmoid(ts.asarray([0, 1])).dtype == ts.float32
    close(ts.sigmoid(ts.asarray([0, 1])), torch.sigmoid(torch.tensor([0, 1])), 1e-7, 1e-7)
    close(ts.threshold(tt(np.array([np.nan, 0.2, 0.9])), 0.5, -1.0),
          torch.threshold(torch.tensor([np.nan, 0.2, 0.9]), 0.5, -1.0))


def test_torch_rrelu_honours_its_generator() -> None:
    x = tt(-np.ones((40,), np.float32))
    a = ts.rrelu(x, 0.1, 0.3, True, ts.random.Generator(5))
    b = ts.rrelu(x, 0.1, 0.3, True, ts.random.Generator(5))
    c = ts.rrelu(x, 0.1, 0.3, True, ts.random.Generator(6))
    assert np.array_equal(a.numpy(), b.numpy()) and not np.array_equal(a.numpy(), c.numpy())

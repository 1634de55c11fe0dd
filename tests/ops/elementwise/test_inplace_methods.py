"""The in-place methods bound in C++ (csrc/python/bind_inplace_methods.cpp, Note [torch
in-place]) against torch: values, dtypes, the method's name in errors, leaf errors, version
bumps, views, and gradients through an in-place op on a non-leaf (float64, with gradcheck)."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import tessera as ts
from harness import assert_same, rng


def _pair(a: np.ndarray, grad: bool = False) -> Any:
    t, x = torch.from_numpy(a.copy()), ts.asarray(a.copy())
    if grad:
        t.requires_grad_(True)
        x.requires_grad_(True)
    return t, x


UNARY = ["abs_", "absolute_", "acos_", "arccos_", "asin_", "arcsin_", "atan_", "arctan_",
         "atanh_", "arctanh_", "asinh_", "arcsinh_", "cos_", "cosh_", "sin_", "sinh_", "tan_",
         "tanh_", "exp_", "expm1_", "log_", "log10_", "log1p_", "log2_", "sqrt_", "ceil_",
         "floor_", "trunc_", "sign_", "reciprocal_", "neg_", "negative_", "sigmoid_", "rsqrt_",
         "exp2_", "frac_", "deg2rad_", "rad2deg_", "sgn_", "sinc_", "logit_", "erf_", "erfc_",
         "erfinv_", "lgamma_", "digamma_", "i0_", "relu_", "fix_", "square_"]


@pytest.mark.parametrize("name", UNARY + ["acosh_", "arccosh_"])
def test_unary_inplace_values_and_self(name: str) -> None:
    a = rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
    if "cosh" in name:
        a += 1.0
    t, x = _pair(a)
    v0 = x._version
    assert getattr(x, name)() is x
    getattr(t, name)()
    assert x._version > v0
    assert_same(x, t, rtol=1e-5, atol=1e-6)


BINARY = ["atan2_", "arctan2_", "hypot_", "copysign_", "nextafter_", "floor_divide_",
          "remainder_", "fmod_", "eq_", "ne_", "not_equal_", "lt_", "less_", "le_",
          "less_equal_", "gt_", "greater_", "ge_", "greater_equal_", "xlogy_", "pow_", "ldexp_", "heaviside_", "logical_and_", "logical_or_",
          "logical_xor_"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_inplace_values_and_broadcast_operand(name: str) -> None:
    a = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    b = rng.uniform(0.5, 2.0, (4,)).astype(np.float32)
    t, x = _pair(a)
    assert getattr(x, name)(ts.asarray(b)) is x
    getattr(t, name)(torch.from_numpy(b))
    assert_same(x, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["bitwise_and_", "bitwise_or_", "bitwise_xor_",
                                  "bitwise_left_shift_", "bitwise_right_shift_", "gcd_", "lcm_"])
def test_integer_inplace_values(name: str) -> None:
    a = rng.integers(1, 9, (3, 4)).astype(np.int64)
    b = rng.integers(1, 4, (3, 4)).astype(np.int64)
    t, x = _pair(a)
    getattr(x, name)(ts.asarray(b))
    getattr(t, name)(torch.from_numpy(b))
    assert_same(x, t)
    t, x = _pair(a)
    x.bitwise_not_()
    t.bitwise_not_()
    assert_same(x, t)


CALLS = [
    lambda m, x, y: x.clamp_(0.3, 0.6), lambda m, x, y: x.clip_(max=0.5),
    lambda m, x, y: x.clamp_min_(0.4), lambda m, x, y: x.clamp_max_(0.4),
    lambda m, x, y: x.lerp_(y, 0.25), lambda m, x, y: x.addcmul_(x, y, value=2),
    lambda m, x, y: x.addcdiv_(x, y), lambda m, x, y: x.nan_to_num_(0.0),
    lambda m, x, y: x.tril_(1), lambda m, x, y: x.triu_(), lambda m, x, y: x.cumsum_(1),
    lambda m, x, y: x.cumprod_(0), lambda m, x, y: x.renorm_(2, 0, 1.0), lambda m, x, y: x.polygamma_(1),
    lambda m, x, y: x.mvlgamma_(1), lambda m, x, y: x.addmm_(y[:, :2], y[:2], beta=0.5),
    lambda m, x, y: x.addr_(y[0, :3], y[1]), lambda m, x, y: x.fill_(0.25),
    lambda m, x, y: x.zero_(), lambda m, x, y: x.copy_(y), lambda m, x, y: x.copy_(y[0]),
    lambda m, x, y: x.copy_(2.5), lambda m, x, y: x.index_fill_(1, m.tensor([0, 2]), -1.0),
    lambda m, x, y: x.index_copy_(0, m.tensor([2, 0, 1]), y[:, :4]),
    lambda m, x, y: x.fill_(y.sum()),
]


@pytest.mark.parametrize("fn", CALLS)
def test_written_back_values(fn: Callable) -> None:
    a = rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
    b = rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
    t, x = _pair(a)
    tb, xb = _pair(b)
    assert fn(ts, x, xb) is x
    fn(torch, t, tb)
    assert_same(x, t, rtol=1e-5, atol=1e-6)


def test_inplace_into_views_and_noncontiguous() -> None:
    a = rng.uniform(0.1, 0.9, (4, 6)).astype(np.float32)
    t, x = _pair(a)
    x[:, ::2].hypot_(ts.asarray(a[:, 1::2].copy()))
    t[:, ::2].hypot_(torch.from_numpy(a[:, 1::2].copy()))
    x.mT[1:3].clamp_(0.2, 0.5)
    t.mT[1:3].clamp_(0.2, 0.5)
    x[1].exp_()
    t[1].exp_()
    assert_same(x, t, rtol=1e-6)


def test_copy_across_dtypes_and_complex_discards_imag() -> None:
    x = ts.zeros((3,), dtype=ts.int32)
    x.copy_(ts.asarray(np.array([1.7, -2.2, 3.9], dtype=np.float64)))
    assert_same(x, torch.zeros(3, dtype=torch.int32).copy_(torch.tensor([1.7, -2.2, 3.9])))
    c = np.array([1 + 2j, 3 - 1j, -4 + 0.5j], dtype=np.complex64)
    y = ts.zeros((3,)).copy_(ts.asarray(c))
    with warnings.catch_warnings():  # torch warns once per process (TORCH_WARN_ONCE)
        warnings.simplefilter("ignore")
        want = torch.zeros(3).copy_(torch.from_numpy(c))
    assert_same(y, want)
    z = ts.zeros((2, 3)).copy_(ts.asarray(np.arange(3.0)), non_blocking=True)
    assert_same(z, torch.zeros(2, 3).copy_(torch.arange(3.0)))
    assert ts.zeros((3,), dtype=ts.bool).copy_(ts.asarray([0.0, 2.0, 0.0])).tolist() == \
        [False, True, False]


def test_float_power_inplace_wants_float64() -> None:
    a = rng.uniform(0.5, 2.0, (5,))
    t, x = _pair(a)
    x.float_power_(2.5)
    t.float_power_(2.5)
    assert_same(x, t)
    for m, f in ((torch, torch.ones(3)), (ts, ts.ones((3,)))):
        with pytest.raises(RuntimeError, match="float_power_" if m is ts else ""):
            f.float_power_(2)


# ---- errors: the class torch raises, the message naming the in-place method
@pytest.mark.parametrize("call, name, cls", [
    (lambda m: m.ones(3, dtype=m.int64).acosh_(), "acosh_", TypeError),
    (lambda m: m.ones(3, dtype=m.bool).sqrt_(), "sqrt_", TypeError),
    (lambda m: m.ones(3, dtype=m.int64).hypot_(m.ones(3)), "hypot_", TypeError),
    (lambda m: m.ones(3, dtype=m.int64).clamp_(0.5, 1.5), "clamp_", TypeError),
    (lambda m: m.ones(3, dtype=m.int32).sigmoid_(), "sigmoid_", TypeError),
    (lambda m: m.ones(3).lt_(m.ones((2, 3))), "lt_", ValueError),
    (lambda m: m.ones(3).addcmul_(m.ones((2, 3)), m.ones(3)), "addcmul_", ValueError),
    (lambda m: m.ones(3).copy_(m.ones(4)), "copy_", ValueError),
    (lambda m: m.ones(3).fill_(m.ones(2)), "fill_", RuntimeError),
    (lambda m: m.ones(3).fill_(1 + 2j), "fill_", RuntimeError),
    (lambda m: m.ones(3, dtype=m.float32).float_power_(2), "float_power_", TypeError),
    (lambda m: m.ones(3, dtype=m.int64).pow_(-1), "pow_", ValueError),
    (lambda m: m.ones(3, dtype=m.int64).pow_(0.5), "pow_", TypeError),
    (lambda m: m.ones(3, dtype=m.int64).pow_(m.ones(3)), "pow_", TypeError),
    (lambda m: m.ones(3).pow_(m.ones((2, 3))), "pow_", ValueError),
    (lambda m: m.ones(3, dtype=m.bool).pow_(2), "pow_", TypeError),
    (lambda m: m.ones(3, dtype=m.int64).true_divide_(2), "true_divide_", TypeError),
    (lambda m: m.ones(3, dtype=m.bool).round_(), "round_", TypeError),
    (lambda m: m.ones(3, dtype=m.int64).round_(decimals=1), "round_", TypeError),
])
def test_inplace_errors_name_the_method(call: Callable, name: str, cls: Any) -> None:
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(cls, match=f"^{name}: "):
        call(ts)


def test_inplace_junk_arguments_raise_torchs_type_error() -> None:
    for call in (lambda m: m.ones(3).hypot_("a"), lambda m: m.ones(3).copy_("a"),
                 lambda m: m.ones(3).copy_(None), lambda m: m.ones(3).fill_("a"),
                 lambda m: m.ones(3).clamp_(None, "a")):
        with pytest.raises(TypeError):
            call(torch)
        with pytest.raises(TypeError):
            call(ts)


@pytest.mark.parametrize("call", [
    lambda x, y: x.acosh_(), lambda x, y: x.hypot_(y), lambda x, y: x.clamp_(0, 1),
    lambda x, y: x.fill_(1.0), lambda x, y: x.zero_(), lambda x, y: x.copy_(y),
    lambda x, y: x.sigmoid_(), lambda x, y: x.eq_(y),
])
def test_leaf_requiring_grad_raises_and_no_grad_writes(call: Callable) -> None:
    for m in (torch, ts):
        x = m.ones(3) + 1
        x.requires_grad_(True)
        y = m.ones(3) * 2
        with pytest.raises(RuntimeError, match="leaf" if m is ts else ""):
            call(x, y)
        with m.no_grad():
            assert call(x, y) is x
        assert x.requires_grad and x.is_leaf
    with pytest.raises(RuntimeError, match="^zero_: a view of a leaf"):
        ts.ones(3).requires_grad_()[:2].zero_()


# ---- autograd through an in-place op on a non-leaf
GRAD_CALLS = [
    lambda x, y: (x * 1 + 2).sqrt_() * 2, lambda x, y: (x * 1).hypot_(y),
    lambda x, y: (x * 1).arctan2_(y), lambda x, y: (x * 1).clamp_(-0.3, 0.3),
    lambda x, y: (x * 1).lerp_(y, 0.25), lambda x, y: (x * 1).sigmoid_() * 2,
    lambda x, y: (x * 1).copy_(y * 2) + x, lambda x, y: (x * 1).copy_(y[0]) * x,
    lambda x, y: (x * 1).fill_(y.sum()) + x, lambda x, y: (x * 1).zero_() + x,
    lambda x, y: (x * 1).fill_(3.0) * y, lambda x, y: (x * 1).eq_(y) + x,
    lambda x, y: (x * 1).xlogy_(y * y + 1), lambda x, y: (x * 1).addcmul_(x, y),
    lambda x, y: (x * 1).cumsum_(1) * y,
    lambda x, y: _view_write(x, y), lambda x, y: _view_copy(x, y),
]


def _view_write(x: Any, y: Any) -> Any:
    b = x * 1
    b[1:].hypot_(y[1:])
    return b * 2


def _view_copy(x: Any, y: Any) -> Any:
    b = x * 1
    b.mT[0].copy_(y[0, :3])
    b[0].mul_(3)
    return b

@pytest.mark.parametrize("fn", GRAD_CALLS)
def test_inplace_gradients_match_torch_float64(fn: Callable) -> None:
    a = rng.uniform(-0.9, 0.9, (3, 4))
    b = rng.uniform(0.2, 0.9, (3, 4))
    t, x = _pair(a, grad=True)
    tb, xb = _pair(b, grad=True)
    w = rng.uniform(0.5, 1.5, (3, 4))
    (fn(t, tb) * torch.from_numpy(w)).sum().backward()
    (fn(x, xb) * ts.asarray(w)).sum().backward()
    for got, want in ((x, t), (xb, tb)):
        if want.grad is None or got.grad is None:  # None and zeros are the same gradient
            for g in (want.grad, got.grad):
                assert g is None or not np.any(g.numpy())
        else:
            assert_same(got.grad, want.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn", [GRAD_CALLS[i] for i in (0, 1, 3, 4, 6, 7, 8, 12, 13, 15, 16)] + [
    lambda x, y: (x * 1 + 2).acosh_(), lambda x, y: (x * 1).sigmoid_().exp_()])
def test_inplace_gradcheck(fn: Callable) -> None:
    x = ts.asarray(rng.uniform(-0.9, 0.9, (3, 4))).requires_grad_()
    y = ts.asarray(rng.uniform(0.2, 0.9, (3, 4))).requires_grad_()
    assert ts.autograd.gradcheck(fn, (x, y))


def test_aliases_are_their_targets_and_inplace_methods_are_cpp() -> None:
    T = ts.Tensor
    for alias, target in (("arccos", "acos"), ("absolute", "abs"), ("arctan2", "atan2"),
                          ("greater", "gt"), ("less_equal", "le"), ("not_equal", "ne"),
                          ("unsafe_split", "split"), ("unsafe_chunk", "chunk")):
        assert getattr(T, alias) is getattr(T, target)
    for name in UNARY + BINARY + ["fill_", "zero_", "copy_", "float_power_", "clamp_"]:
        assert not hasattr(getattr(T, name), "__code__"), name  # not a Python function

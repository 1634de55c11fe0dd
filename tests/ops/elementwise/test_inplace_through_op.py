"""The in-place methods written through their op in C++ (x.clamp_ / clip_ / clamp_min_ /
clamp_max_, lerp_, addcmul_, addcdiv_, the scaled products addmm_ ... addbmm_, the special
functions' erf_ ... logit_): PyTorch's values on contiguous, strided, 0-d and empty self and
with operands that share self's memory; errors raised once by the op, naming the method, in
torch's class; the version counter; gradients and double backward against torch (float64)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import tessera as ts
from harness import assert_same, double_backward_pairs, rng


def _both(a: np.ndarray) -> tuple:
    return ts.asarray(a.copy()), torch.from_numpy(a.copy())


def _mk(m: Any, a: np.ndarray) -> Any:
    return ts.asarray(a.copy()) if m is ts else torch.from_numpy(a.copy())


A = rng.uniform(-1.0, 1.0, (4, 4))
B = rng.uniform(-1.0, 1.0, (4, 4))
C = rng.uniform(0.5, 1.5, (4, 4))
P = rng.uniform(0.1, 0.9, (4, 4))
BATCH = rng.uniform(-1.0, 1.0, (2, 4, 4))

# (self values, call(m, x, b, c)): each returns what it was called on
CALLS = [
    (A, lambda m, x, b, c: x.clamp_(-0.5, 0.5)),
    (A, lambda m, x, b, c: x.clamp_(min=0.1)),
    (A, lambda m, x, b, c: x.clamp_(max=b)),
    (A, lambda m, x, b, c: x.clamp_(b[0], c)),
    (A, lambda m, x, b, c: x.clip_(-0.2, 0.3)),
    (A, lambda m, x, b, c: x.clamp_min_(b)),
    (A, lambda m, x, b, c: x.clamp_max_(0.2)),
    (A, lambda m, x, b, c: x.clamp_(0.6, 0.1)),          # min > max: max everywhere
    (A, lambda m, x, b, c: x.clamp_(min=x)),             # the bound is self
    (A, lambda m, x, b, c: x.clamp_(min=b, max=x)),      # max shares self's memory
    (A, lambda m, x, b, c: x.lerp_(b, 0.3)),
    (A, lambda m, x, b, c: x.lerp_(b, c)),
    (A, lambda m, x, b, c: x.lerp_(x, 0.5)),
    (A, lambda m, x, b, c: x.addcmul_(b, c, value=-0.5)),
    (A, lambda m, x, b, c: x.addcmul_(x, x)),
    (A, lambda m, x, b, c: x.addcdiv_(b, c, value=2)),
    (A, lambda m, x, b, c: x.addcdiv_(x, c)),
    (A, lambda m, x, b, c: x.addmm_(b, c)),
    (A, lambda m, x, b, c: x.addmm_(b, c, beta=0.5, alpha=-2)),
    (A, lambda m, x, b, c: x.addmm_(b, c, beta=0)),
    (A, lambda m, x, b, c: x.addr_(b[0], c[1], alpha=3)),
    (A, lambda m, x, b, c: x.addbmm_(m.stack([b, c]), m.stack([c, b]))),
    (A[0], lambda m, x, b, c: x.addmv_(b, c[0])),
    (BATCH, lambda m, x, b, c: x.baddbmm_(x * 1, m.stack([b, c]), beta=2)),
    (A, lambda m, x, b, c: x.erf_()),
    (P, lambda m, x, b, c: x.erfinv_()),
    (A, lambda m, x, b, c: x.erfc_()),
    (C, lambda m, x, b, c: x.lgamma_()),
    (C, lambda m, x, b, c: x.digamma_()),
    (A, lambda m, x, b, c: x.i0_()),
    (A, lambda m, x, b, c: x.sinc_()),
    (C, lambda m, x, b, c: x.xlogy_(c)),
    (C, lambda m, x, b, c: x.xlogy_(2.5)),
    (C, lambda m, x, b, c: x.igamma_(c)),
    (C, lambda m, x, b, c: x.igammac_(c)),
    (C, lambda m, x, b, c: x.polygamma_(2)),
    (C + 2, lambda m, x, b, c: x.mvlgamma_(3)),
    (P, lambda m, x, b, c: x.logit_()),
    (P, lambda m, x, b, c: x.logit_(0.3)),
    (C, lambda m, x, b, c: x.rsqrt_()),
    (A, lambda m, x, b, c: x.exp2_()),
    (A * 3, lambda m, x, b, c: x.frac_()),
    (A, lambda m, x, b, c: x.sgn_()),
    (A, lambda m, x, b, c: x.sigmoid_()),
    (A, lambda m, x, b, c: x.relu_()),
    (A, lambda m, x, b, c: x.square_()),
    (A * 3, lambda m, x, b, c: x.fix_()),
    (A * 3, lambda m, x, b, c: x.fmod_(c)),
    (A, lambda m, x, b, c: x.fmod_(x)),
    (A, lambda m, x, b, c: x.ldexp_(m.ones(4, dtype=m.int64) * 2)),
    (A, lambda m, x, b, c: x.tril_()),
    (A, lambda m, x, b, c: x.triu_(diagonal=-1)),
    (A, lambda m, x, b, c: x.cumsum_(1)),
    (A, lambda m, x, b, c: x.cumprod_(-2)),
    (A, lambda m, x, b, c: x.index_fill_(1, m.tensor([0, 2]), -1.5)),
    (A, lambda m, x, b, c: x.index_copy_(0, m.tensor([3, 0, 1, 2]), b)),
    (A, lambda m, x, b, c: x.renorm_(2, 0, 0.5)),
    (A, lambda m, x, b, c: x.log_().nan_to_num_(nan=2.0, neginf=-3.0)),
    (A, lambda m, x, b, c: x.heaviside_(b)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("i", range(len(CALLS)))
def test_values_match_torch(i: int, dtype: Any) -> None:
    a, call = CALLS[i]
    for strided in (False, True):  # the transposed self is written through the copy path
        x, t = _both(a.astype(dtype))
        xb, tb = _both(B.astype(dtype))
        xc, tc = _both(C.astype(dtype))
        if strided and a.ndim == 2:
            x, t = x.mT, t.mT
        v0 = x._version
        assert call(ts, x, xb, xc) is x
        call(torch, t, tb, tc)
        assert x._version > v0
        tol = 1e-5 if dtype == np.float32 else 1e-12
        assert_same(x, t, rtol=tol, atol=tol)


@pytest.mark.parametrize("call", [
    lambda m, x: x.clamp_(0, 1), lambda m, x: x.lerp_(x + 1, 0.5),
    lambda m, x: x.addcmul_(x, x), lambda m, x: x.addcdiv_(x, x + 1), lambda m, x: x.erf_(),
    lambda m, x: x.xlogy_(2.0), lambda m, x: x.clamp_min_(x),
])
@pytest.mark.parametrize("shape", [(), (0,), (0, 3)])
def test_zero_dim_and_empty_self(call: Callable, shape: tuple) -> None:
    a = rng.uniform(0.1, 0.9, shape)
    x, t = _both(a)
    assert call(ts, x) is x
    call(torch, t)
    assert x.shape == tuple(t.shape)
    assert_same(x, t, rtol=1e-12, atol=1e-12)


# ---- errors: raised once by the op, its message naming the method, torch's class
I64 = np.arange(6).reshape(2, 3)


@pytest.mark.parametrize("call, name", [
    (lambda m: _mk(m, I64).clamp_(0.5, 1.5), "clamp_"),               # float result, int self
    (lambda m: _mk(m, I64).clip_(max=_mk(m, A[:2, :3])), "clip_"),
    (lambda m: _mk(m, I64).erf_(), "erf_"),
    (lambda m: _mk(m, I64).xlogy_(2.5), "xlogy_"),
    (lambda m: _mk(m, I64).addcmul_(_mk(m, I64), _mk(m, A[:2, :3])), "addcmul_"),
    (lambda m: _mk(m, I64).addmm_(_mk(m, A[:2, :2]), _mk(m, A[:2, :3])), "addmm_"),
    (lambda m: _mk(m, A[0]).clamp_(_mk(m, A)), "clamp_"),               # would grow self
    (lambda m: _mk(m, A[0]).lerp_(_mk(m, A), 0.5), "lerp_"),
    (lambda m: _mk(m, A[0]).addcdiv_(_mk(m, A), _mk(m, C)), "addcdiv_"),
    (lambda m: _mk(m, A[0]).addmv_(_mk(m, A[:2]), _mk(m, A[0])), "addmv_"),
    (lambda m: _mk(m, A).addmm_(_mk(m, A[:3]), _mk(m, A[:2])), "addmm_"),  # shapes can't multiply
    (lambda m: _mk(m, A).addcmul_(_mk(m, A[:3]), _mk(m, A)), "addcmul_"),  # no broadcast
    (lambda m: _mk(m, I64).lerp_(_mk(m, I64), 0.5), "lerp_"),
    (lambda m: _mk(m, A).addcdiv_(_mk(m, I64[:1, :1]), _mk(m, I64[:1, :1])), "addcdiv_"),
    (lambda m: _mk(m, A).polygamma_(-1), "polygamma_"),
    (lambda m: _mk(m, A).mvlgamma_(0), "mvlgamma_"),
    (lambda m: _mk(m, I64).rsqrt_(), "rsqrt_"),
    (lambda m: _mk(m, I64).frac_(), "frac_"),
    (lambda m: _mk(m, I64).sigmoid_(), "sigmoid_"),
    (lambda m: _mk(m, I64 > 2).relu_(), "relu_"),
    (lambda m: _mk(m, I64 > 2).square_(), "square_"),
    (lambda m: _mk(m, A).gcd_(_mk(m, A)), "gcd_"),
    (lambda m: _mk(m, A[0]).fmod_(_mk(m, A)), "fmod_"),
    (lambda m: _mk(m, I64).ldexp_(_mk(m, I64)), "ldexp_"),
    (lambda m: _mk(m, A[0]).tril_(), "tril_"),
    (lambda m: _mk(m, A).cumsum_(2), "cumsum_"),
    (lambda m: _mk(m, I64).cumprod_(0, dtype=m.float32), "cumprod_"),
    (lambda m: _mk(m, A.astype(np.float32)).float_power_(2), "float_power_"),
    (lambda m: _mk(m, A).heaviside_(_mk(m, I64[:1, :1])), "heaviside_"),
])
def test_errors_name_the_method_once(call: Callable, name: str) -> None:
    with pytest.raises((RuntimeError, NotImplementedError, IndexError)) as want:  # torch's
        call(torch)
    cls = IndexError if want.type is IndexError else RuntimeError
    with pytest.raises(cls) as got:  # tessera's TypeError / ValueError are RuntimeErrors too
        call(ts)
    msg = str(got.value)
    assert msg.startswith(f"{name}: ") and msg.count(f"{name}: ") == 1, msg
    assert got.value.__cause__ is None and got.value.__context__ is None  # raised once


def test_self_is_untouched_by_an_error() -> None:
    x = ts.asarray(I64.copy())
    f = ts.asarray(A[:2, :2].copy())
    for call in (lambda: x.clamp_(0, 0.5), lambda: x.addmm_(f, f[:, :1].expand(2, 3) * 1),
                 lambda: x.clamp_(min=ts.asarray(A))):
        with pytest.raises(RuntimeError):
            call()
        assert x.tolist() == I64.tolist()


@pytest.mark.parametrize("call", [
    lambda x, y: x.clamp_(0, 1), lambda x, y: x.lerp_(y, 0.5), lambda x, y: x.addcmul_(y, y),
    lambda x, y: x.addmm_(y, y), lambda x, y: x.erf_(), lambda x, y: x.xlogy_(y),
    lambda x, y: x.logit_(), lambda x, y: x.polygamma_(1),
])
def test_leaf_requiring_grad_raises(call: Callable) -> None:
    for m in (torch, ts):
        x = m.ones(2, 2) * 0.5
        x.requires_grad_(True)
        with pytest.raises(RuntimeError, match="leaf"):
            call(x, m.ones(2, 2))
        with m.no_grad():
            assert call(x, m.ones(2, 2)) is x


# ---- autograd: a non-leaf self, float64, against torch
GRAD_CALLS = [
    lambda x, y: (x * 1).clamp_(-0.3, 0.4),
    lambda x, y: (x * 1).clamp_(min=y * 0.5, max=y),
    lambda x, y: (x * 1).clip_(max=0.2) * y,
    lambda x, y: (x * 1).clamp_min_(y - 0.5),
    lambda x, y: (x * 2).clamp_(min=x),
    lambda x, y: (x * 1).lerp_(y, 0.25),
    lambda x, y: (x * 1).lerp_(y, y * x),
    lambda x, y: (x * 1).addcmul_(x, y, value=0.5),
    lambda x, y: (x * 1).addcdiv_(x, y + 2, value=-1.5),
    lambda x, y: (x * 1).addmm_(x, y),
    lambda x, y: (x * 1).addmm_(y, x, beta=0.5, alpha=2),
    lambda x, y: (x * 1).addmm_(y, x, beta=0),
    lambda x, y: (x[0] * 1).addmv_(y, x[1]),
    lambda x, y: (x * 1).addr_(x[0], y[1]),
    lambda x, y: (x * 1).erf_() * y,
    lambda x, y: (x * 1).sinc_(),
    lambda x, y: (y + 2).lgamma_() * x,
    lambda x, y: (y + 1).xlogy_(x + 2),
    lambda x, y: (y * 0.5 + 0.2).logit_() * x,
    lambda x, y: (y + 2).polygamma_(1) * x,
    lambda x, y: (y + 3).mvlgamma_(2) * x,
    lambda x, y: (y + 1).rsqrt_() * x,
    lambda x, y: (x * 1).sigmoid_() * y,
    lambda x, y: (x * 1).square_() * y,
    lambda x, y: (x * 3).fmod_(y + 0.5),
    lambda x, y: (x * 1).tril_(1) * y,
    lambda x, y: (x * 1).cumsum_(0) * y,
    lambda x, y: (x + 2).cumprod_(1) * y,
    lambda x, y: (x * 1).index_copy_(1, _idx(x), y),
    lambda x, y: (x * 1).renorm_(2, 1, 0.7) * y,
    lambda x, y: _through_view(x, y),
]


def _idx(x: Any) -> Any:
    return (ts if isinstance(x, ts.Tensor) else torch).tensor([2, 0, 3, 1])


def _through_view(x: Any, y: Any) -> Any:
    b = x * 1
    b.mT[1:3].clamp_(-0.2, 0.2)
    b[0].addcmul_(y[0], y[1])
    return b * y


@pytest.mark.parametrize("fn", GRAD_CALLS)
def test_gradients_match_torch_float64(fn: Callable) -> None:
    a = rng.uniform(-0.9, 0.9, (4, 4))
    b = rng.uniform(0.1, 0.9, (4, 4))
    def f(x: Any, y: Any) -> Any:  # every input used, second derivatives not all zero
        return fn(x, y) * x * y
    pairs = double_backward_pairs(f, f, [a, b])  # grads with create_graph, then their grads
    for got, want in pairs:
        if want is None or got is None:
            for g in (want, got):
                assert g is None or not np.any(g.detach().numpy())
        else:
            assert_same(got.detach(), want.detach(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("fn", [GRAD_CALLS[i] for i in (0, 5, 7, 8, 9, 14, 17, 21)])
def test_gradcheck(fn: Callable) -> None:
    x = ts.asarray(rng.uniform(-0.9, 0.9, (4, 4))).requires_grad_()
    y = ts.asarray(rng.uniform(0.1, 0.9, (4, 4))).requires_grad_()
    assert ts.autograd.gradcheck(fn, (x, y))


def test_saved_self_survives_the_write() -> None:
    """A formula that saved self (erf's, clamp's) sees the values before the write."""
    for m in (ts, torch):
        x = (m.ones(3, dtype=m.float64) * 0.5).requires_grad_()
        y = x * 1
        z = y.erf_()
        z.sum().backward()
        assert abs(float(x.grad[0]) - 2 / np.sqrt(np.pi) * np.exp(-0.25)) < 1e-12


def test_threshold_inplace_is_the_functions_twin() -> None:
    a = A.copy()
    x = ts.asarray(a)
    assert x.threshold_(0.1, -2.0) is x
    assert_same(x, torch.threshold(torch.from_numpy(a), 0.1, -2.0))
    y = ts.asarray(I64.copy())
    y.threshold_(2, -1)
    assert_same(y, torch.threshold(torch.from_numpy(I64), 2, -1))
    z = (ts.asarray(a.copy()).requires_grad_() * 1).threshold_(0.0, 5.0) * 2
    z.sum().backward()


def test_methods_are_the_cpp_ops() -> None:
    for name in ("clamp_", "clip_", "clamp_min_", "clamp_max_", "lerp_", "addcmul_", "addcdiv_",
                 "addmm_", "addmv_", "addr_", "baddbmm_", "addbmm_", "erf_", "xlogy_",
                 "igamma_", "polygamma_", "mvlgamma_", "logit_", "rsqrt_", "exp2_", "frac_",
                 "deg2rad_", "rad2deg_", "sgn_", "sigmoid_", "relu_", "square_", "fix_", "gcd_",
                 "lcm_", "fmod_", "ldexp_", "tril_", "triu_", "cumsum_", "cumprod_",
                 "index_fill_", "index_copy_", "renorm_", "nan_to_num_", "heaviside_",
                 "threshold_", "float_power_"):
        assert not hasattr(getattr(ts.Tensor, name), "__code__"), name

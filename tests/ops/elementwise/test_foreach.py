"""torch._foreach_* (Note [foreach lists], csrc/python/bind_optim.cpp) against torch: values of
every form (tensor lists, one number, number lists, 1-D scalar tensors, alpha=/value=), the
in-place forms writing through to the list's tensors, results' types, errors, gradients."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts


def _lists(m):
    a = [m.tensor([1.0, -2.0, 3.0]), m.tensor([[0.5, 4.0]], dtype=m.float64)]
    b = [m.tensor([0.5, 0.25, -1.0]), m.tensor([[2.0, -1.0]], dtype=m.float64)]
    return a, b


CASES = {
    "add_scalar": lambda m, a, b: m._foreach_add(a, 1.5),
    "add_list_alpha": lambda m, a, b: m._foreach_add(a, b, alpha=2),
    "add_scalar_list": lambda m, a, b: m._foreach_add(a, [1.0, 2.0]),
    "add_tensor": lambda m, a, b: m._foreach_add(a, m.tensor(3.0)),
    "add_": lambda m, a, b: m._foreach_add_(a, b, alpha=0.5),
    "sub_": lambda m, a, b: m._foreach_sub_(a, 1),
    "sub_list": lambda m, a, b: m._foreach_sub(a, b, alpha=3),
    "mul_": lambda m, a, b: m._foreach_mul_(a, 0.9),
    "mul_list": lambda m, a, b: m._foreach_mul(a, b),
    "div_": lambda m, a, b: m._foreach_div_(a, [2.0, 4.0]),
    "pow": lambda m, a, b: m._foreach_pow(a, 2),
    "pow_list": lambda m, a, b: m._foreach_pow([x.abs() for x in a], b),
    "clamp_min_": lambda m, a, b: m._foreach_clamp_min_(a, 0.0),
    "clamp_max": lambda m, a, b: m._foreach_clamp_max(a, b),
    "sqrt": lambda m, a, b: m._foreach_sqrt([x.abs() for x in a]),
    "exp_": lambda m, a, b: m._foreach_exp_(a),
    "neg_": lambda m, a, b: m._foreach_neg_(a),
    "abs": lambda m, a, b: m._foreach_abs(a),
    "sign": lambda m, a, b: m._foreach_sign(a),
    "reciprocal_": lambda m, a, b: m._foreach_reciprocal_(a),
    "zero_": lambda m, a, b: m._foreach_zero_(a),
    "lerp_": lambda m, a, b: m._foreach_lerp_(a, b, 0.25),
    "lerp_scalar_list": lambda m, a, b: m._foreach_lerp(a, b, [0.1, 0.9]),
    "lerp_tensor_list": lambda m, a, b: m._foreach_lerp(a, b, [x * 0 + 0.3 for x in b]),
    "addcmul_": lambda m, a, b: m._foreach_addcmul_(a, b, b, value=0.5),
    "addcmul_default": lambda m, a, b: m._foreach_addcmul(a, b, b),
    "addcdiv_scalar_list": lambda m, a, b: m._foreach_addcdiv(a, b, [x + 3 for x in b],
                                                              [0.5, 2.0]),
    "addcdiv_scalar_tensor": lambda m, a, b: m._foreach_addcdiv_(a, b, [x + 3 for x in b],
                                                                 m.tensor([0.5, 2.0])),
    "copy_": lambda m, a, b: m._foreach_copy_(a, b),
    "norm": lambda m, a, b: m._foreach_norm(a),
    "norm_1": lambda m, a, b: m._foreach_norm(a, 1),
    "norm_inf": lambda m, a, b: m._foreach_norm(a, float("inf")),
}


def _read(r):
    if isinstance(r, (list, tuple)):
        return type(r).__name__, [(str(t.dtype).split(".")[-1], t.detach().numpy().tolist())
                                  for t in r]
    return r


@pytest.mark.parametrize("name", sorted(CASES))
def test_foreach_matches_torch(name):
    got, want = [], []
    for m, out in ((torch, want), (ts, got)):
        a, b = _lists(m)
        ids = [id(t) for t in a]
        r = CASES[name](m, a, b)
        out.append(_read(r))
        out.append(_read(a))  # the in-place forms wrote into a's tensors
        if name.endswith("_"):
            assert [id(t) for t in r] == ids  # they return self's list
    for (kind_w, w), (kind_g, g) in zip(want[:1] + want[1:], got[:1] + got[1:]):
        assert kind_g == kind_w
        assert len(g) == len(w)
        for (dw, vw), (dg, vg) in zip(w, g):
            assert dg == dw
            np.testing.assert_allclose(np.asarray(vg), np.asarray(vw), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("call,cls", [
    (lambda m, a, b: m._foreach_add_(a, b[:1]), RuntimeError),
    (lambda m, a, b: m._foreach_add_(a, [1.0]), RuntimeError),
    (lambda m, a, b: m._foreach_lerp_(a, b[:1], 0.5), RuntimeError),
    (lambda m, a, b: m._foreach_add_(a[0], 1.0), TypeError),
    (lambda m, a, b: m._foreach_mul_([], 2.0), RuntimeError),
    (lambda m, a, b: m._foreach_norm([]), RuntimeError),
    (lambda m, a, b: m._foreach_mul_([m.tensor([1, 2])], 1.5), RuntimeError),
    (lambda m, a, b: m._foreach_add_(a, [m.ones(5), m.ones(1, 2)]), RuntimeError),
])
def test_foreach_errors_as_torch(call, cls):
    for m in (torch, ts):
        a, b = _lists(m)
        with pytest.raises(cls):
            call(m, a, b)


def test_foreach_out_of_place_records_gradients_as_torch():
    grads = []
    for m in (torch, ts):
        a = [m.tensor([1.0, -2.0, 3.0], dtype=m.float64, requires_grad=True),
             m.tensor([0.5, 4.0], dtype=m.float64, requires_grad=True)]
        b = [m.tensor([0.5, 0.25, -1.0], dtype=m.float64, requires_grad=True),
             m.tensor([2.0, -1.0], dtype=m.float64, requires_grad=True)]
        out = m._foreach_addcmul(m._foreach_mul(a, b), a, b, value=0.5)
        out = m._foreach_lerp(out, b, 0.3)
        sum(o.pow(2).sum() for o in out).backward()
        grads.append([t.grad.numpy().copy() for t in a + b])
    for g, w in zip(grads[1], grads[0]):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_foreach_ema_update_as_timm_writes_it():
    # timm ModelEmaV3 / stable-baselines3 polyak: mul_ then add_ with alpha, under no_grad
    res = []
    for m in (torch, ts):
        ema = [m.tensor([1.0, 2.0]), m.tensor([[3.0]])]
        model = [m.tensor([0.0, 4.0], requires_grad=True), m.tensor([[1.0]], requires_grad=True)]
        with m.no_grad():
            for _ in range(3):
                m._foreach_mul_(ema, 0.9)
                m._foreach_add_(ema, model, alpha=0.1)
        assert not any(t.requires_grad for t in ema)
        res.append([t.numpy().tolist() for t in ema])
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-6)

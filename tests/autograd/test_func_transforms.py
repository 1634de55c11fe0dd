"""torch.func's transforms (tessera.func) against torch.func: grad / grad_and_value with
argnums, has_aux and dict arguments, nesting, vjp, jvp, jacrev / jacfwd / hessian, vmap over
dicts (per-sample gradients and model ensembles, as the torch.func tutorials write them),
stack_module_state; and the eager torch.jit / nn.modules.utils helpers."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.func as tf

import tessera as ts
import tessera.func as sf
from harness import randn


def _np(v):
    if isinstance(v, dict):
        return {k: _np(x) for k, x in v.items()}
    if isinstance(v, (tuple, list)):
        return type(v)(_np(x) for x in v)
    return np.asarray(v.detach().numpy() if hasattr(v, "detach") else v)


def _close(a, b, tol=1e-5):
    a, b = _np(a), _np(b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k], tol)
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, tol)
    else:
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def both(fn, *arrays):
    return (fn(sf, ts, *[ts.asarray(a) for a in arrays]),
            fn(tf, torch, *[torch.from_numpy(a) for a in arrays]))


X = randn(3, 4).astype(np.float32)
V = randn(4).astype(np.float32)


def f(lib):
    return lambda x, w: (lib.sin(x @ w) ** 2).sum()


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), -1])
def test_grad_argnums(argnums):
    _close(*both(lambda F, lib, x, w: F.grad(f(lib), argnums=argnums)(x, w), X, V))
    _close(*both(lambda F, lib, x, w: F.grad_and_value(f(lib), argnums=argnums)(x, w), X, V))


def test_grad_has_aux_nested_and_dicts():
    _close(*both(lambda F, lib, x: F.grad(lambda v: ((v ** 3).sum(), v * 2), has_aux=True)(x), V))
    _close(*both(lambda F, lib, x: F.grad(lambda v: F.grad(lambda u: (u ** 3).sum())(v).sum())(x),
                 V))
    _close(*both(lambda F, lib, x, w: F.grad(lambda p: (p["a"][:3] * p["b"][0]).sum())(
        {"a": x, "b": (w[:3],)}), V, V))
    for F, lib in ((sf, ts), (tf, torch)):
        g = F.grad(lambda v: (v ** 2).sum())(lib.ones(3))
        assert not g.requires_grad
        with pytest.raises(RuntimeError):
            F.grad(lambda v: v ** 2)(lib.ones(3))  # not a scalar


def test_vjp_jvp():
    _close(*both(lambda F, lib, x: F.vjp(lambda v: lib.tanh(v) * 3, x)[1](lib.ones(4)), V))
    _close(*both(lambda F, lib, x: F.vjp(lambda v: lib.tanh(v) * 3, x)[0], V))
    _close(*both(lambda F, lib, x, t: F.jvp(lambda v: lib.exp(v).sum(0), (x,), (t,)), X, X))


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_and_hessian(name):
    _close(*both(lambda F, lib, x: getattr(F, name)(lambda v: lib.sin(v) * v.sum())(x), V))
    _close(*both(lambda F, lib, x, w: getattr(F, name)(lambda a, b: a @ b, argnums=(0, 1))(x, w),
                 X, V))
    _close(*both(lambda F, lib, x: F.hessian(lambda v: (v ** 3).sum() * v[0])(x), V), 1e-4)


def test_per_sample_grads_and_ensembles_with_vmap():
    data = randn(5, 4).astype(np.float32)
    target = randn(5, 2).astype(np.float32)
    models = {}
    for lib in (ts, torch):
        lib.manual_seed(0)
        models[lib] = lib.nn.Linear(4, 2)
    with torch.no_grad():
        for (n, p) in models[torch].named_parameters():
            p.copy_(torch.from_numpy(dict(models[ts].named_parameters())[n].detach().numpy()))

    def per_sample(F, lib, x, y):
        model = models[lib]
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def loss(p, b, xs, ys):
            out = F.functional_call(model, (p, b), (xs.unsqueeze(0),))
            return lib.nn.functional.mse_loss(out, ys.unsqueeze(0))
        return F.vmap(F.grad(loss), in_dims=(None, None, 0, 0))(params, buffers, x, y)
    _close(*both(per_sample, data, target))

    def ensemble(F, lib, x):
        nets = [lib.nn.Linear(4, 2) for _ in range(3)]
        for k, net in enumerate(nets):
            with lib.no_grad():
                net.weight.copy_(lib.asarray(np.full((2, 4), k + 1.0, np.float32))
                                 if lib is ts else torch.full((2, 4), k + 1.0))
                net.bias.zero_()
        params, buffers = F.stack_module_state(nets)
        assert params["weight"].shape == (3, 2, 4) and params["weight"].requires_grad
        return F.vmap(lambda p, b, xs: F.functional_call(nets[0], (p, b), (xs,)),
                      in_dims=(0, 0, None))(params, buffers, x)
    _close(*both(ensemble, data))


def test_jit_runs_eagerly_and_module_utils():
    m = ts.nn.Linear(2, 2)
    assert ts.jit.script(m) is m and ts.jit.trace(m, ts.ones(1, 2)) is m
    assert not ts.jit.is_scripting() and not ts.jit.is_tracing()
    assert ts.jit.annotate(list, [1]) == [1] and ts.jit.wait(ts.jit.fork(lambda a: a + 1, 1)) == 2

    @ts.jit.ignore
    def g(a):
        return a
    assert g(3) == 3 and ts.jit.ignore(drop=True)(g) is g and ts.jit.unused(g) is g
    import tessera.nn.modules.utils as su
    import torch.nn.modules.utils as tu
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for v in (3, (1, 2), [4]):
            assert getattr(su, name)(v) == getattr(tu, name)(v)
    assert su._ntuple(2)(5) == tu._ntuple(2)(5)
    assert su._reverse_repeat_tuple((1, 2), 2) == tu._reverse_repeat_tuple((1, 2), 2)

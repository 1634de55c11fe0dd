"""nn.utils.weight_norm / spectral_norm (and their removal) vs PyTorch: state-dict keys and
shapes, outputs, gradients of the reparametrized parameters, power-iteration buffers."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn
from harness import close, randn, tt


def _keys(m) -> list:
    return [(k, tuple(v.shape)) for k, v in m.state_dict().items()]


def _step(sm, tm, x: np.ndarray) -> None:
    ys, yt = sm(tt(x)), tm(torch.tensor(x))
    close(ys, yt, 1e-5, 1e-5)
    g = randn(*yt.shape)
    ys.backward(tt(g))
    yt.backward(torch.tensor(g))
    tp = dict(tm.named_parameters())
    for k, p in sm.named_parameters():
        close(p.grad, tp[k].grad, 1e-5, 1e-5)
    tb = dict(tm.named_buffers())
    for k, b in sm.named_buffers():
        close(b, tb[k], 1e-5, 1e-5)


@pytest.mark.parametrize("make,shape,dim", [
    (lambda m: m.Linear(3, 4), (5, 3), 0), (lambda m: m.Linear(3, 4), (5, 3), None),
    (lambda m: m.Conv2d(2, 3, 2), (1, 2, 4, 4), 1), (lambda m: m.Conv1d(2, 3, 2), (2, 2, 5), -1),
])
def test_weight_norm_matches_torch(make, shape, dim) -> None:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.utils.weight_norm(make(torch.nn), dim=dim)
    sm = nn.utils.weight_norm(make(nn), dim=dim)
    assert _keys(sm) == _keys(tm)
    sm.load_state_dict(tm.state_dict())
    _step(sm, tm, randn(*shape))
    nn.utils.remove_weight_norm(sm)
    torch.nn.utils.remove_weight_norm(tm)
    assert _keys(sm) == _keys(tm)
    close(sm.weight, tm.weight, 1e-6, 1e-6)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(sm)


@pytest.mark.parametrize("make,shape", [
    (lambda m: m.Linear(3, 4), (5, 3)), (lambda m: m.Conv2d(2, 3, 2), (1, 2, 4, 4)),
    (lambda m: m.ConvTranspose2d(2, 3, 2), (1, 2, 3, 3)),
])
@pytest.mark.parametrize("iters", [1, 3])
def test_spectral_norm_matches_torch(make, shape, iters: int) -> None:
    torch.manual_seed(0)
    tm = torch.nn.utils.spectral_norm(make(torch.nn), n_power_iterations=iters)
    sm = nn.utils.spectral_norm(make(nn), n_power_iterations=iters)
    assert _keys(sm) == _keys(tm)
    sm.load_state_dict(tm.state_dict())
    for _ in range(2):  # training: u and v move each forward
        _step(sm, tm, randn(*shape))
    sm.eval()
    tm.eval()
    _step(sm, tm, randn(*shape))
    # the normalized weight has spectral norm ~1 after enough iterations
    nn.utils.remove_spectral_norm(sm)
    torch.nn.utils.remove_spectral_norm(tm)
    assert _keys(sm) == _keys(tm)
    close(sm.weight, tm.weight, 1e-5, 1e-5)


def test_norm_hook_errors() -> None:
    m = nn.utils.weight_norm(nn.Linear(3, 4))
    with pytest.raises(RuntimeError, match="two weight_norm hooks"):
        nn.utils.weight_norm(m)
    with pytest.raises(ValueError, match="no parameter 'kernel'"):
        nn.utils.spectral_norm(nn.Linear(3, 4), name="kernel")
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        nn.utils.spectral_norm(nn.Linear(3, 4), n_power_iterations=0)
    # Power iteration from a random start: seeded (and run long enough) so that whatever ran
    # before cannot leave a start that converges too slowly for the tolerance below.
    ts.manual_seed(0)
    s = nn.utils.spectral_norm(nn.Linear(30, 20), n_power_iterations=100)
    s(tt(randn(2, 30)))
    assert abs(np.linalg.svd(s.weight.detach().numpy(), compute_uv=False)[0] - 1) < 1e-3


# ---------------------------------------------------------------- parametrizations (modern API)
P = nn.utils.parametrize


@pytest.mark.parametrize("make,shape,dim", [
    (lambda m: m.Linear(3, 4), (5, 3), 0), (lambda m: m.Conv2d(2, 3, 2), (1, 2, 4, 4), 1),
    (lambda m: m.Conv1d(2, 3, 2), (2, 2, 5), None),
])
def test_parametrizations_weight_norm(make, shape, dim) -> None:
    torch.manual_seed(0)
    tm = torch.nn.utils.parametrizations.weight_norm(make(torch.nn), dim=dim)
    sm = nn.utils.parametrizations.weight_norm(make(nn), dim=dim)
    assert repr(sm) == repr(tm)
    assert _keys(sm) == _keys(tm)
    sm.load_state_dict(tm.state_dict())
    _step(sm, tm, randn(*shape))
    close(sm.weight, tm.weight, 1e-6, 1e-6)
    P.remove_parametrizations(sm, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(tm, "weight")
    assert type(sm).__name__ == type(tm).__name__ and _keys(sm) == _keys(tm)
    close(sm.weight, tm.weight, 1e-6, 1e-6)


@pytest.mark.parametrize("make,shape", [
    (lambda m: m.Linear(3, 4), (5, 3)), (lambda m: m.ConvTranspose2d(2, 3, 2), (1, 2, 3, 3)),
])
def test_parametrizations_spectral_norm(make, shape) -> None:
    torch.manual_seed(0)
    tm = torch.nn.utils.parametrizations.spectral_norm(make(torch.nn))
    sm = nn.utils.parametrizations.spectral_norm(make(nn))
    assert repr(sm) == repr(tm)
    assert _keys(sm) == _keys(tm)
    sm.load_state_dict(tm.state_dict())
    for _ in range(2):
        _step(sm, tm, randn(*shape))
    sm.eval()
    tm.eval()
    _step(sm, tm, randn(*shape))


class _TorchSymmetric(torch.nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)

    def right_inverse(self, a):
        return a.triu()


class _Symmetric(nn.Module):
    def forward(self, x):
        return ts.triu(x) + ts.triu(x, k=1).mT

    def right_inverse(self, a):
        return ts.triu(a)


def test_custom_parametrization_assign_chain_and_remove() -> None:
    torch.manual_seed(0)
    tm, sm = torch.nn.Linear(3, 3), nn.Linear(3, 3)
    sm.load_state_dict(tm.state_dict())
    torch.nn.utils.parametrize.register_parametrization(tm, "weight", _TorchSymmetric())
    P.register_parametrization(sm, "weight", _Symmetric())
    assert P.is_parametrized(sm) and P.is_parametrized(sm, "weight")
    assert not P.is_parametrized(sm, "bias")
    assert _keys(sm) == _keys(tm)
    w = sm.weight.numpy()
    np.testing.assert_allclose(w, w.T)
    close(sm.weight, tm.weight, 1e-6, 1e-6)
    _step(sm, tm, randn(4, 3))
    # assignment goes through right_inverse
    a = randn(3, 3)
    sm.weight = tt(a)
    with torch.no_grad():
        tm.weight = torch.tensor(a)
    close(sm.weight, tm.weight, 1e-6, 1e-6)
    # a second parametrization chains after the first
    class Double(nn.Module):
        def forward(self, x):
            return 2 * x
    P.register_parametrization(sm, "weight", Double())
    close(sm.weight, 2 * tm.weight.detach().numpy(), 1e-6, 1e-6)
    with P.cached():
        close(sm.weight, 2 * tm.weight.detach().numpy(), 1e-6, 1e-6)
    P.remove_parametrizations(sm, "weight", leave_parametrized=False)
    assert type(sm) is nn.Linear and not P.is_parametrized(sm)
    assert tuple(sm.weight.shape) == (3, 3)
    with pytest.raises(ValueError, match="does not have a parametrization"):
        P.remove_parametrizations(sm, "weight")
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        P.register_parametrization(sm, "kernel", Double())

    class Shrink(nn.Module):
        def forward(self, x):
            return x[:1]
    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(nn.Linear(3, 3), "weight", Shrink())
    m = P.register_parametrization(nn.Linear(3, 3), "weight", Shrink(), unsafe=True)
    assert tuple(m.weight.shape) == (1, 3)
    other = nn.Linear(3, 3)
    assert type(other) is nn.Linear and not hasattr(type(other), "weight")


@pytest.mark.parametrize("make,shape,omap", [
    (lambda m: m.Linear(4, 4), (3, 4), None), (lambda m: m.Linear(4, 4), (3, 4), "cayley"),
    (lambda m: m.Linear(3, 5), (2, 3), None), (lambda m: m.Linear(5, 3), (2, 5), "householder"),
    (lambda m: m.Linear(3, 5), (2, 3), "matrix_exp"), (lambda m: m.Linear(5, 3), (2, 5), "cayley"),
])
def test_parametrizations_orthogonal(make, shape, omap) -> None:
    torch.manual_seed(0)
    tm = torch.nn.utils.parametrizations.orthogonal(make(torch.nn), orthogonal_map=omap)
    sm = nn.utils.parametrizations.orthogonal(make(nn), orthogonal_map=omap)
    assert _keys(sm) == _keys(tm)
    assert type(sm.parametrizations.weight[0]).__name__ == "_Orthogonal"
    w = sm.weight.detach().numpy().astype(np.float64)  # orthonormal columns (rows when wide)
    g = w.T @ w if w.shape[0] >= w.shape[1] else w @ w.T
    np.testing.assert_allclose(g, np.eye(min(w.shape)), atol=1e-5)
    sm.load_state_dict(tm.state_dict())
    for _ in range(2):
        _step(sm, tm, randn(*shape))
    # assigning re-bases the trivialization on the new (orthogonalised) value
    a = randn(*tm.weight.shape)
    with torch.no_grad():
        tm.weight = torch.tensor(a)
    with ts.no_grad():
        sm.weight = tt(a)
    if a.shape[0] == a.shape[1]:
        close(sm.weight, tm.weight, 1e-5, 1e-5)
    with pytest.raises(ValueError, match="orthogonal_map"):
        nn.utils.parametrizations.orthogonal(make(nn), orthogonal_map="qr")
    with pytest.raises(ValueError, match="dimensions"):
        nn.utils.parametrizations.orthogonal(make(nn), name="bias")

"""The optimizers beyond SGD/Adam (NAdam, RAdam, Adamax, Adadelta, ASGD, Rprop, LBFGS) and
the torch-only options of every optimizer vs torch.optim: 25-step trajectories for each
option combination, param groups with different options, state-dict layout and resume."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn, optim
from nn_helpers import close, tt

CASES = [
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, maximize=True)),
    ("NAdam", dict(lr=0.02, weight_decay=0.05, decoupled_weight_decay=True, maximize=True,
                   foreach=False)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, maximize=True, eps=1e-4)),
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.6), weight_decay=0.2, decoupled_weight_decay=True,
                   maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-3, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, maximize=True, foreach=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.5, maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.02, etas=(0.3, 1.5), step_sizes=(1e-3, 0.05))),
    ("Rprop", dict(lr=0.01, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.01, foreach=False, capturable=False, fused=None)),
    ("AdamW", dict(lr=0.01, maximize=True, foreach=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, foreach=False)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, maximize=True, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.2, maximize=True)),
]


def _problem(seed: int):
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    b0 = rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = rng.standard_normal((8, 3)).astype(np.float32)
    return w0, b0, x, y


def _loss(mod, w, b, x, y):
    return mod.mean((mod.tanh(x @ w) + b - y) ** 2)


def _make(mod, name, kw, w, b):
    """Two param groups; the second overrides lr (and a second option where one exists)."""
    second = {"params": [b], "lr": kw.get("lr", 1.0) / 2}
    if "weight_decay" in kw:
        second["weight_decay"] = 0.0
    return getattr(mod.optim, name)([{"params": [w]}, second], **kw)


def _run(name, kw, seed, steps=25, check=True):
    w0, b0, x, y = _problem(seed)
    ws, bs = nn.Parameter(tt(w0.copy())), nn.Parameter(tt(b0.copy()))
    wt, bt = torch.nn.Parameter(torch.tensor(w0)), torch.nn.Parameter(torch.tensor(b0))
    opt_s, opt_t = _make(ts, name, kw, ws, bs), _make(torch, name, kw, wt, bt)
    xs, ys, xt, yt = tt(x), tt(y), torch.tensor(x), torch.tensor(y)
    for _ in range(steps):
        opt_s.zero_grad()
        opt_t.zero_grad()
        _loss(ts, ws, bs, xs, ys).backward()
        _loss(torch, wt, bt, xt, yt).backward()
        opt_s.step()
        opt_t.step()
        if check:
            close(ws, wt, rtol=1e-5, atol=3e-6)
            close(bs, bt, rtol=1e-5, atol=3e-6)
    return (ws, bs, opt_s), (wt, bt, opt_t), (xs, ys, xt, yt)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_trajectory_matches_torch(case: int) -> None:
    name, kw = CASES[case]
    (ws, bs, opt_s), (wt, bt, opt_t), _ = _run(name, kw, case)
    # Same param-group options and state layout (keys, step as a 0-d float32 tensor).
    gs, gt = opt_s.state_dict(), opt_t.state_dict()
    assert gs["param_groups"] == [{k: v for k, v in g.items()} for g in gt["param_groups"]]
    assert sorted(gs["state"]) == sorted(gt["state"]) == [0, 1]
    for i in (0, 1):
        assert set(gs["state"][i]) == set(gt["state"][i])
        for k, v in gt["state"][i].items():
            mine = gs["state"][i][k]
            if isinstance(v, torch.Tensor):
                assert isinstance(mine, ts.Tensor) and tuple(mine.shape) == tuple(v.shape), k
                assert str(mine.dtype).split(".")[-1] == str(v.dtype).split(".")[-1], k
                close(mine, v, rtol=1e-5, atol=3e-6)


@pytest.mark.parametrize("case", [0, 5, 10, 13, 16, 19, 26, 27])
def test_state_dict_resume_and_torch_state_loads(case: int) -> None:
    """Stop after 10 steps, save, rebuild, load, continue: the resumed run equals an
    uninterrupted one; a torch optimizer's state_dict loads too and continues like torch."""
    name, kw = CASES[case]
    (ws, bs, opt_s), (wt, bt, opt_t), (xs, ys, xt, yt) = _run(name, kw, case, steps=10)
    sd = copy.deepcopy(opt_s.state_dict())
    w2, b2 = nn.Parameter(tt(ws.numpy().copy())), nn.Parameter(tt(bs.numpy().copy()))
    opt2 = _make(ts, name, kw, w2, b2)
    opt2.load_state_dict(sd)
    w3, b3 = nn.Parameter(tt(wt.detach().numpy().copy())), nn.Parameter(tt(bt.detach().numpy().copy()))
    opt3 = _make(ts, name, kw, w3, b3)
    opt3.load_state_dict(opt_t.state_dict())
    for _ in range(10):
        for opt, w, b in ((opt_s, ws, bs), (opt2, w2, b2), (opt3, w3, b3)):
            opt.zero_grad()
            _loss(ts, w, b, xs, ys).backward()
            opt.step()
        opt_t.zero_grad()
        _loss(torch, wt, bt, xt, yt).backward()
        opt_t.step()
    close(w2, ws.numpy(), 0, 0)
    close(b2, bs.numpy(), 0, 0)
    close(w3, wt, 1e-5, 3e-6)
    close(b3, bt, 1e-5, 3e-6)


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax", "Adadelta", "ASGD", "Rprop",
                                  "RMSprop", "Adagrad"])
def test_zero_grad_skip_and_closure(name: str) -> None:
    p = nn.Parameter(ts.ones(3))
    q = nn.Parameter(ts.ones(2))
    opt = getattr(optim, name)([p, q], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    assert np.all(q.numpy() == 1) and q not in opt.state and p in opt.state
    opt.zero_grad(set_to_none=False)
    assert np.all(p.grad.numpy() == 0)
    opt.zero_grad()
    assert p.grad is None

    before = float((p * p).sum().item())

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    assert float(opt.step(closure).item()) == before
    assert float((p * p).sum().item()) != before
    assert "Parameter Group 0" in repr(opt)


def test_float64_params_keep_float32_step() -> None:
    for name in ("NAdam", "RAdam", "Adamax", "Adadelta", "ASGD", "Rprop"):
        p = nn.Parameter(ts.ones(3, dtype=ts.float64))
        opt = getattr(optim, name)([p], lr=0.1)
        (p * p).sum().backward()
        opt.step()
        st = opt.state[p]
        assert st["step"].dtype == ts.float32 and float(st["step"].item()) == 1
        assert p.dtype == ts.float64
        assert all(v.dtype == ts.float64 for k, v in st.items()
                   if isinstance(v, ts.Tensor) and v.ndim > 0)


def test_option_errors() -> None:
    p = nn.Parameter(ts.ones(3))
    for name in ("NAdam", "RAdam", "Adamax", "Adadelta", "ASGD", "Rprop", "Adam", "SGD"):
        with pytest.raises(ValueError, match="Invalid learning rate"):
            getattr(optim, name)([p], lr=-1.0)
    for name in ("NAdam", "RAdam", "Adamax"):
        with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
            getattr(optim, name)([p], betas=(0.9, 1.0))
        with pytest.raises(ValueError, match="Invalid epsilon value"):
            getattr(optim, name)([p], eps=-1.0)
        with pytest.raises(ValueError, match="Invalid weight decay value"):
            getattr(optim, name)([p], weight_decay=-1.0)
    with pytest.raises(ValueError, match="Invalid momentum decay"):
        optim.NAdam([p], momentum_decay=-1.0)
    with pytest.raises(ValueError, match="Invalid rho value"):
        optim.Adadelta([p], rho=1.5)
    with pytest.raises(ValueError, match="Invalid eta values"):
        optim.Rprop([p], etas=(1.2, 0.5))
    for name in ("NAdam", "RAdam", "Adamax", "Adadelta", "ASGD", "Rprop", "Adam", "AdamW",
                 "SGD", "RMSprop", "Adagrad"):
        with pytest.raises(NotImplementedError, match="differentiable=True"):
            getattr(optim, name)([p], lr=0.1, differentiable=True)

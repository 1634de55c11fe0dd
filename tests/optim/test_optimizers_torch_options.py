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
from harness import close, tt


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
    ("Adafactor", dict(lr=0.05)),
    ("Adafactor", dict(lr=0.05, weight_decay=0.1, beta2_decay=-0.5, d=1.5)),
    ("Adafactor", dict(lr=0.02, eps=(1e-20, 1e-2), maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.01, foreach=False, capturable=False, fused=None)),
    ("AdamW", dict(lr=0.01, maximize=True, foreach=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, foreach=False)),
    # (centered + maximize drives sq_avg - grad_avg^2 into cancellation, where torch's fused
    # multiply-adds and tessera's separate ops part by more than float32 rounding)
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, maximize=True, momentum=0.3)),
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


def _grid(name, base, **axes):
    """Every combination of the option values in `axes` on top of `base`."""
    import itertools
    keys = list(axes)
    return [(name, {**base, **dict(zip(keys, vals))})
            for vals in itertools.product(*(axes[k] for k in keys))]


GRID = (_grid("NAdam", dict(lr=0.01), weight_decay=[0.0, 0.1], decoupled_weight_decay=[False, True],
              maximize=[False, True], momentum_decay=[4e-3, 0.02])
        + _grid("RAdam", dict(lr=0.01), weight_decay=[0.0, 0.1], decoupled_weight_decay=[False, True],
                maximize=[False, True], betas=[(0.9, 0.999), (0.5, 0.8)])
        + _grid("Adamax", dict(lr=0.01), weight_decay=[0.0, 0.1], maximize=[False, True],
                eps=[1e-8, 1e-2])
        + _grid("Adadelta", dict(lr=0.5), weight_decay=[0.0, 0.1], maximize=[False, True],
                rho=[0.9, 0.5])
        + _grid("ASGD", dict(lr=0.05), weight_decay=[0.0, 0.1], maximize=[False, True],
                t0=[1e6, 3], lambd=[1e-4, 0.05])
        + _grid("Rprop", dict(lr=0.01), maximize=[False, True], etas=[(0.5, 1.2), (0.2, 2.0)],
                step_sizes=[(1e-6, 50), (1e-3, 0.03)])
        + _grid("Adafactor", dict(lr=0.03), weight_decay=[0.0, 0.1], maximize=[False, True],
                eps=[(None, 1e-3), (1e-6, 0.05)], d=[1.0, 2.0])
        + _grid("RMSprop", dict(lr=0.01), weight_decay=[0.0, 0.1], momentum=[0.0, 0.5],
                centered=[False, True], maximize=[False]))


@pytest.mark.parametrize("case", range(len(GRID)))
def test_every_option_combination_matches_torch(case: int) -> None:
    name, kw = GRID[case]
    _run(name, kw, 100 + case)


@pytest.mark.parametrize("case", range(len(CASES)))
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
                                  "RMSprop", "Adagrad", "Adafactor"])
def test_zero_grad_skip_and_closure(name: str) -> None:
    p = nn.Parameter(ts.ones(3))
    q = nn.Parameter(ts.ones(2))
    opt = getattr(optim, name)([p, q], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    assert np.all(q.numpy() == 1) and p in opt.state
    if name == "Adagrad":  # state made at construction, untouched without a gradient
        assert float(opt.state[q]["step"].item()) == 0
    else:
        assert q not in opt.state
    held = p.grad
    opt.zero_grad(set_to_none=False)
    assert np.all(p.grad.numpy() == 0) and np.all(held.numpy() == 0)  # zeroed in place
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


def test_adagrad_state_exists_at_construction() -> None:
    p = nn.Parameter(ts.ones(3))
    sd = optim.Adagrad([p], initial_accumulator_value=0.5).state_dict()
    td = torch.optim.Adagrad([torch.nn.Parameter(torch.ones(3))], initial_accumulator_value=0.5).state_dict()
    assert set(sd["state"]) == set(td["state"]) == {0}
    close(sd["state"][0]["sum"], td["state"][0]["sum"], 0, 0)
    assert float(sd["state"][0]["step"].item()) == 0


def test_float64_params_keep_float32_step() -> None:
    for name in ("NAdam", "RAdam", "Adamax", "Adadelta", "ASGD", "Rprop", "Adafactor"):
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
    for kw, msg in [(dict(lr=-1), "Learning rate"), (dict(beta2_decay=0.5), "beta2_decay"),
                    (dict(eps=(-1, 1e-3)), "epsilon1"), (dict(eps=(None, -1)), "epsilon2"),
                    (dict(d=0.5), "Clipping threshold"), (dict(weight_decay=-1), "weight_decay")]:
        with pytest.raises(ValueError, match=msg):
            optim.Adafactor([p], **kw)
    for name in ("NAdam", "RAdam", "Adamax", "Adadelta", "ASGD", "Rprop", "Adam", "AdamW",
                 "SGD", "RMSprop", "Adagrad"):
        with pytest.raises(NotImplementedError, match="differentiable=True"):
            getattr(optim, name)([p], lr=0.1, differentiable=True)


# ----------------------------------------------------------------------------- LBFGS
LBFGS_CASES = [
    dict(lr=0.5, max_iter=5, history_size=3),
    dict(lr=1, max_iter=4, line_search_fn="strong_wolfe"),
    dict(lr=1, max_iter=20, history_size=5, line_search_fn="strong_wolfe", tolerance_change=1e-12),
    dict(lr=0.3, max_iter=3, max_eval=2),
    dict(lr=1, max_iter=10, history_size=2, line_search_fn="strong_wolfe", max_eval=7),
]


def _lbfgs_run(mod, kw, A, y, w0, steps):
    w = mod.nn.Parameter(mod.asarray(w0.copy()) if mod is ts else torch.tensor(w0.copy()))
    opt = mod.optim.LBFGS([w], **kw)
    A_, y_ = (tt(A), tt(y)) if mod is ts else (torch.tensor(A), torch.tensor(y))

    def closure():
        opt.zero_grad()
        loss = mod.sum((mod.tanh(A_ @ w) - y_) ** 2) + mod.sum(w ** 4)
        loss.backward()
        return loss
    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        out.append((float(loss.detach().numpy() if mod is torch else loss.numpy()),
                    np.array(w.detach().numpy() if mod is torch else w.numpy()),
                    opt.state[w]["func_evals"], opt.state[w]["n_iter"]))
    return w, opt, closure, out


@pytest.mark.parametrize("case", range(len(LBFGS_CASES)))
def test_lbfgs_matches_torch_float64(case: int) -> None:
    """float64: the same iterates, function-evaluation and iteration counts as torch."""
    rng = np.random.default_rng(case)
    A, y, w0 = rng.standard_normal((10, 5)), rng.standard_normal(10), rng.standard_normal(5)
    *_, a = _lbfgs_run(ts, LBFGS_CASES[case], A, y, w0, 4)
    *_, b = _lbfgs_run(torch, LBFGS_CASES[case], A, y, w0, 4)
    for (la, wa, fa, na), (lb, wb, fb, nb) in zip(a, b):
        assert (fa, na) == (fb, nb)
        np.testing.assert_allclose(la, lb, rtol=1e-10)
        np.testing.assert_allclose(wa, wb, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", [0, 1])
def test_lbfgs_float32_first_steps_and_state_dict(case: int) -> None:
    rng = np.random.default_rng(10 + case)
    A = rng.standard_normal((10, 5)).astype(np.float32)
    y = rng.standard_normal(10).astype(np.float32)
    w0 = rng.standard_normal(5).astype(np.float32)
    ws, opt_s, closure_s, a = _lbfgs_run(ts, LBFGS_CASES[case], A, y, w0, 2)
    wt, opt_t, _, b = _lbfgs_run(torch, LBFGS_CASES[case], A, y, w0, 2)
    for (la, wa, *_), (lb, wb, *_) in zip(a, b):
        np.testing.assert_allclose(la, lb, rtol=1e-5)
        np.testing.assert_allclose(wa, wb, rtol=1e-4, atol=1e-5)
    # The state (histories are lists of tensors) round-trips, and torch's loads.
    sd = opt_s.state_dict()
    assert set(sd["state"][0]) == set(opt_t.state_dict()["state"][0])
    for source in (sd, opt_t.state_dict()):
        w2 = nn.Parameter(tt(ws.numpy().copy()))
        opt2 = optim.LBFGS([w2], **LBFGS_CASES[case])
        opt2.load_state_dict(source)
        st = opt2.state[w2]
        assert len(st["old_dirs"]) == len(sd["state"][0]["old_dirs"])
        assert all(isinstance(v, ts.Tensor) for v in st["old_dirs"])


def test_lbfgs_converges_and_errors() -> None:
    rng = np.random.default_rng(3)
    A = rng.standard_normal((20, 4))
    y = rng.standard_normal(20)
    w = nn.Parameter(ts.zeros(4, dtype=ts.float64))
    opt = optim.LBFGS([w], line_search_fn="strong_wolfe", max_iter=50, tolerance_grad=1e-9,
                      tolerance_change=1e-14)

    def closure():
        opt.zero_grad()
        loss = ts.sum((tt(A) @ w - tt(y)) ** 2)
        loss.backward()
        return loss
    opt.step(closure)
    np.testing.assert_allclose(w.numpy(), np.linalg.lstsq(A, y, rcond=None)[0], atol=1e-8)
    # Already optimal: returns at once (tolerance_grad), one evaluation.
    evals = opt.state[w]["func_evals"]
    opt.step(closure)
    assert opt.state[w]["func_evals"] == evals + 1
    with pytest.raises(ValueError, match="closure"):
        opt.step()
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [w]}, {"params": [nn.Parameter(ts.ones(2))]}])
    with pytest.raises(ValueError, match="strong_wolfe"):
        optim.LBFGS([w], line_search_fn="armijo")
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.LBFGS([w], lr=-1)


# ----------------------------------------------------------------------------- swa_utils
def _train_pair(avg_kw_ts, avg_kw_torch, use_buffers=False, steps=6):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.Linear(6, 2))
    sm = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Linear(6, 2))
    sm.load_state_dict(tm.state_dict())
    avg_t = torch.optim.swa_utils.AveragedModel(tm, use_buffers=use_buffers, **avg_kw_torch)
    avg_s = optim.swa_utils.AveragedModel(sm, use_buffers=use_buffers, **avg_kw_ts)
    opt_t = torch.optim.SGD(tm.parameters(), lr=0.1)
    opt_s = optim.SGD(sm.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        x = rng.standard_normal((8, 4)).astype(np.float32)
        for opt, m, xx in ((opt_t, tm, torch.tensor(x)), (opt_s, sm, tt(x))):
            opt.zero_grad()
            (m(xx) ** 2).mean().backward()
            opt.step()
        avg_t.update_parameters(tm)
        avg_s.update_parameters(sm)
    return avg_s, avg_t


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_multi", "swa_multi", "custom"])
@pytest.mark.parametrize("use_buffers", [False, True])
def test_averaged_model_matches_torch(kind: str, use_buffers: bool) -> None:
    if kind == "swa_multi" and use_buffers:
        kind = "swa"  # torch's own swa multi_avg_fn raises on the int64 BatchNorm counter
    U, T = optim.swa_utils, torch.optim.swa_utils
    kws = {"swa": ({}, {}),
           "ema": ({"avg_fn": U.get_ema_avg_fn(0.9)}, {"avg_fn": T.get_ema_avg_fn(0.9)}),
           "ema_multi": ({"multi_avg_fn": U.get_ema_multi_avg_fn(0.8)},
                         {"multi_avg_fn": T.get_ema_multi_avg_fn(0.8)}),
           "swa_multi": ({"multi_avg_fn": U.get_swa_multi_avg_fn()},
                         {"multi_avg_fn": T.get_swa_multi_avg_fn()}),
           "custom": ({"avg_fn": lambda a, p, n: 0.5 * a + 0.5 * p},
                      {"avg_fn": lambda a, p, n: 0.5 * a + 0.5 * p})}[kind]
    avg_s, avg_t = _train_pair(*kws, use_buffers=use_buffers)
    sd_t = avg_t.state_dict()
    sd_s = avg_s.state_dict()
    assert list(sd_s) == list(sd_t)
    for k in sd_t:
        close(sd_s[k], sd_t[k], 1e-5, 1e-6)
    assert int(avg_s.n_averaged.item()) == 6 and avg_s.n_averaged.dtype == ts.int64
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    avg_s.eval()
    avg_t.eval()
    close(avg_s(tt(x)), avg_t(torch.tensor(x)), 1e-5, 1e-6)


def test_update_bn_matches_torch_and_errors() -> None:
    avg_s, avg_t = _train_pair({}, {})
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((5, 4)).astype(np.float32) for _ in range(4)]
    avg_t.train(False)
    avg_s.train(False)
    torch.optim.swa_utils.update_bn([(torch.tensor(b), 0) for b in batches], avg_t)
    optim.swa_utils.update_bn([(tt(b), 0) for b in batches], avg_s)
    for k, v in avg_t.state_dict().items():
        close(avg_s.state_dict()[k], v, 1e-5, 1e-6)
    assert not avg_s.training and avg_s.module[1].momentum == 0.1
    optim.swa_utils.update_bn([tt(batches[0])], nn.Linear(4, 2))  # no BatchNorm: a no-op
    with pytest.raises(ValueError, match="decay"):
        optim.swa_utils.get_ema_avg_fn(1.5)
    with pytest.raises(ValueError, match="only one of"):
        optim.swa_utils.AveragedModel(nn.Linear(2, 2), avg_fn=lambda *a: a[0],
                                      multi_avg_fn=lambda *a: None)


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=[0.01, 0.2], anneal_epochs=4,
                                                          anneal_strategy="linear"),
                                dict(swa_lr=0.3, anneal_epochs=0)])
def test_swalr_matches_torch(kw) -> None:
    seqs = []
    for mod in (ts, torch):
        p = mod.nn.Parameter(mod.ones(2))
        q = mod.nn.Parameter(mod.ones(2))
        opt = mod.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.5}], lr=0.1)
        sched = mod.optim.swa_utils.SWALR(opt, **kw)
        seq = []
        for _ in range(15):
            opt.step()
            sched.step()
            seq.append(list(sched.get_last_lr()))
        seqs.append(seq)
    np.testing.assert_allclose(seqs[0], seqs[1], rtol=0, atol=0)
    p = nn.Parameter(ts.ones(2))
    with pytest.raises(ValueError, match="anneal_strategy"):
        optim.swa_utils.SWALR(optim.SGD([p], lr=0.1), 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs"):
        optim.swa_utils.SWALR(optim.SGD([p], lr=0.1), 0.1, anneal_epochs=-1)


def test_optimizer_hooks() -> None:
    """Step, state_dict and load_state_dict hooks (per optimizer and global) run like
    torch's, for the base step and for subclasses that define their own (LBFGS)."""
    calls = []
    p = nn.Parameter(ts.ones(3))
    opt = optim.NAdam([p], lr=0.1)
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", o is opt, a, k)))
    h2 = opt.register_step_post_hook(lambda o, a, k: calls.append(("post", o is opt)))
    g = optim.register_optimizer_step_pre_hook(lambda o, a, k: calls.append(("global",)))
    (p * p).sum().backward()
    opt.step()
    assert calls == [("global",), ("pre", True, (), {}), ("post", True)]
    g.remove()
    h1.remove()
    calls.clear()
    opt.step()
    assert calls == [("post", True)]
    h2.remove()

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    # A pre hook may replace the arguments.
    seen = []
    opt.register_step_pre_hook(lambda o, a, k: ((), {"closure": lambda: seen.append(1) or closure()}))
    opt.step()
    assert seen == [1]
    lb = optim.LBFGS([nn.Parameter(ts.ones(2))], max_iter=2)
    lb.register_step_post_hook(lambda o, a, k: calls.append("lbfgs"))
    lb.step(lambda: (lb.param_groups[0]["params"][0] ** 2).sum())
    assert calls[-1] == "lbfgs"
    # state_dict / load_state_dict hooks
    opt.register_state_dict_pre_hook(lambda o: calls.append("sd-pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    sd = opt.state_dict()
    assert sd["extra"] == 1 and calls[-1] == "sd-pre"
    opt2 = optim.NAdam([nn.Parameter(ts.ones(3))], lr=0.5)
    opt2.register_load_state_dict_pre_hook(
        lambda o, sd: {"state": sd["state"], "param_groups": [{**sd["param_groups"][0], "lr": 0.25}]})
    opt2.register_load_state_dict_post_hook(lambda o: calls.append("load-post"))
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.25 and calls[-1] == "load-post"
    bad = opt2.register_step_pre_hook(lambda o, a, k: 3)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt2.step()
    bad.remove()


# ----------------------------------------------------------------------------- Muon
@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (5, 5), (1, 7), (9, 2)])
@pytest.mark.parametrize("steps", [5, 2])
def test_newton_schulz_matches_torch_bitwise(shape, steps) -> None:
    from torch.optim._muon import _zeropower_via_newtonschulz as ns_torch
    from tessera.optim.muon import zeropower_via_newtonschulz as ns_ts
    g = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
    coef = (3.4445, -4.7750, 2.0315)
    ours = ns_ts(tt(g), coef, steps, 1e-7)
    assert ours.dtype == ts.bfloat16 and tuple(ours.shape) == shape
    close(ours.astype(ts.float32), ns_torch(torch.tensor(g), coef, steps, 1e-7).float(), 0, 0)


@pytest.mark.parametrize("kw", [dict(lr=0.02), dict(lr=0.02, nesterov=False, weight_decay=0.0,
                                                   adjust_lr_fn="match_rms_adamw"),
                                dict(lr=0.01, momentum=0.5, ns_steps=3, adjust_lr_fn="original")])
def test_muon_trajectory_and_state(kw) -> None:
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3, 5)]]
    tp = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    sp = [nn.Parameter(tt(a.copy())) for a in arrays]
    ot = torch.optim.Muon([{"params": tp[:1]}, {"params": tp[1:], "lr": 0.005}], **kw)
    os_ = optim.Muon([{"params": sp[:1]}, {"params": sp[1:], "lr": 0.005}], **kw)
    for _ in range(15):
        for P, o, m in ((tp, ot, torch), (sp, os_, ts)):
            o.zero_grad()
            sum(m.sum(m.tanh(p) ** 2 * (k + 1)) for k, p in enumerate(P)).backward()
            o.step()
        for a, b in zip(sp, tp):
            close(a, b, 1e-5, 1e-6)
    sd_s, sd_t = os_.state_dict(), ot.state_dict()
    assert sd_s["param_groups"] == sd_t["param_groups"]
    assert set(sd_s["state"][0]) == set(sd_t["state"][0]) == {"momentum_buffer"}


def test_muon_errors() -> None:
    with pytest.raises(ValueError, match="only supports 2D parameters"):
        optim.Muon([nn.Parameter(ts.ones(3))])
    p = nn.Parameter(ts.ones((2, 2)))
    for kw, msg in [(dict(lr=-1), "Learning rate"), (dict(momentum=-1), "momentum"),
                    (dict(weight_decay=-1), "weight decay"), (dict(adjust_lr_fn="x"), "not supported")]:
        with pytest.raises(ValueError, match=msg):
            optim.Muon([p], **kw)
    from tessera.optim.muon import zeropower_via_newtonschulz as ns
    with pytest.raises(ValueError, match="less than 100"):
        ns(ts.ones((2, 2)), (1, 1, 1), 100, 1e-7)
    with pytest.raises(ValueError, match="2D matrix"):
        ns(ts.ones(2), (1, 1, 1), 5, 1e-7)
    with pytest.raises(ValueError, match="exactly 3 values"):
        ns(ts.ones((2, 2)), (1, 1), 5, 1e-7)


def test_named_parameters() -> None:
    """An optimizer over module.named_parameters() keeps the names (param_names) like torch."""
    torch.manual_seed(0)
    tm = torch.nn.Linear(3, 2)
    sm = nn.Linear(3, 2)
    sm.load_state_dict(tm.state_dict())
    ot = torch.optim.RAdam(tm.named_parameters(), lr=0.1)
    os_ = optim.RAdam(sm.named_parameters(), lr=0.1)
    assert list(os_.param_groups[0])[:2] == ["params", "param_names"]
    x = np.ones((4, 3), np.float32)
    for _ in range(3):
        for o, m, xx in ((ot, tm, torch.tensor(x)), (os_, sm, tt(x))):
            o.zero_grad()
            (m(xx) ** 2).sum().backward()
            o.step()
    assert os_.state_dict()["param_groups"] == ot.state_dict()["param_groups"]
    close(sm.weight, tm.weight)
    with pytest.raises(ValueError, match="with/without names"):
        os_.add_param_group({"params": [nn.Parameter(ts.ones(2))]})
    with pytest.raises(ValueError, match="names are missing"):
        optim.SGD([("a", nn.Parameter(ts.ones(2))), nn.Parameter(ts.ones(2))], lr=0.1)


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_several_parameters_float64(line_search) -> None:
    """Parameters of different shapes are flattened into one vector, like torch's."""
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).double()
    sm = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    sm.load_state_dict(tm.state_dict())
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 1))
    ot = torch.optim.LBFGS(tm.parameters(), lr=0.5, max_iter=6, history_size=4,
                           line_search_fn=line_search)
    os_ = optim.LBFGS(sm.parameters(), lr=0.5, max_iter=6, history_size=4,
                      line_search_fn=line_search)

    def closure_t():
        ot.zero_grad()
        loss = ((tm(torch.tensor(x)) - torch.tensor(y)) ** 2).mean()
        loss.backward()
        return loss

    def closure_s():
        os_.zero_grad()
        loss = ((sm(tt(x)) - tt(y)) ** 2).mean()
        loss.backward()
        return loss
    for _ in range(3):
        lt, ls = ot.step(closure_t), os_.step(closure_s)
        np.testing.assert_allclose(float(ls.item()), float(lt.item()), rtol=1e-10)
    for (_, a), (_, b) in zip(sm.named_parameters(), tm.named_parameters()):
        close(a, b, 1e-8, 1e-10)
    first = next(iter(sm.parameters()))
    assert os_.state[first]["func_evals"] == ot.state[next(iter(tm.parameters()))]["func_evals"]


# ---- complex parameters (Note [complex parameters], optim/optimizer.py): torch updates them as
# view_as_real pairs with complex state; tessera raised TypeError (SGD, Adam, AdamW, Adamax,
# Rprop) or silently took complex-arithmetic steps (RMSprop, Adagrad, Adadelta, NAdam)
COMPLEX_CASES = [
    ("SGD", dict(lr=0.05)), ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.05)), ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.05)), ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True)), ("Adagrad", dict(lr=0.1)),
    ("Adadelta", dict(lr=0.5)), ("Adamax", dict(lr=0.05)), ("NAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05)), ("ASGD", dict(lr=0.05)), ("Rprop", dict(lr=0.05)),
]


@pytest.mark.parametrize("name,kw", COMPLEX_CASES, ids=[f"{n}-{i}" for i, (n, _) in
                                                         enumerate(COMPLEX_CASES)])
def test_complex_parameters_step_as_torch(name, kw):
    w0 = (np.linspace(-1, 1, 6) + 1j * np.linspace(0.5, -0.7, 6)).astype(np.complex64)
    w0 = w0.reshape(2, 3)
    target = (np.arange(6).reshape(2, 3) * (0.3 - 0.2j)).astype(np.complex64)
    out = []
    for m in (torch, ts):
        p = m.nn.Parameter(m.tensor(w0.copy()))
        r = m.nn.Parameter(m.tensor(np.array([0.5, -1.0], dtype=np.float32)))  # a real one beside
        opt = getattr(m.optim, name)([p, r], **kw)
        tgt = m.tensor(target)
        for _ in range(8):
            opt.zero_grad()
            d = p - tgt
            loss = (d * d.conj()).real.sum() + (p.imag ** 3).sum() + (r ** 2).sum() * p.real.mean()
            loss.backward()
            opt.step()
        state = {k: (str(v.dtype).split(".")[-1], tuple(v.shape)) for k, v in opt.state[p].items()
                 if hasattr(v, "dtype") and v.dim() > 0}
        out.append((p.detach().numpy().copy(), r.detach().numpy().copy(), state))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=2e-5, atol=2e-6)
    assert out[1][2] == out[0][2]  # the state stays complex, of the parameter's shape


def test_complex_adam_state_dict_round_trip_resumes_as_torch():
    w0 = np.array([1 + 2j, -0.5 + 0.3j], dtype=np.complex64)
    res = []
    for m in (torch, ts):
        p = m.nn.Parameter(m.tensor(w0.copy()))
        opt = m.optim.Adam([p], lr=0.1)
        for step in range(6):
            if step == 3:  # resume into a fresh optimizer from the state dict
                sd = opt.state_dict()
                opt = m.optim.Adam([p], lr=0.1)
                opt.load_state_dict(sd)
            opt.zero_grad()
            (p * p.conj()).real.sum().backward()
            opt.step()
        res.append(p.detach().numpy().copy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-5, atol=1e-6)

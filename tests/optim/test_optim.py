"""ts.optim vs torch.optim: parameter trajectories over 25 steps, state dicts, schedulers."""
from __future__ import annotations


import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn, optim
from harness import close, tt

OPTIMIZERS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, weight_decay=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, alpha=0.9)),
    ("RMSprop", dict(lr=0.005, centered=True, momentum=0.5)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
]


def _loss_ts(w, b, x, y):
    return ts.mean((ts.tanh(x @ w) + b - y) ** 2)


def _loss_torch(w, b, x, y):
    return torch.mean((torch.tanh(x @ w) + b - y) ** 2)


@pytest.mark.parametrize("case", range(len(OPTIMIZERS)))
def test_trajectory_matches_torch(case: int) -> None:
    name, kw = OPTIMIZERS[case]
    rng = np.random.default_rng(case)
    w0 = rng.standard_normal((4, 3)).astype(np.float32)
    b0 = rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = rng.standard_normal((8, 3)).astype(np.float32)
    ws, bs = nn.Parameter(tt(w0.copy())), nn.Parameter(tt(b0.copy()))
    wt, bt = torch.nn.Parameter(torch.tensor(w0)), torch.nn.Parameter(torch.tensor(b0))
    # Two param groups so per-group options are exercised too.
    opt_s = getattr(optim, name)([{"params": [ws]}, {"params": [bs], "lr": kw["lr"] / 2}], **kw)
    opt_t = getattr(torch.optim, name)([{"params": [wt]}, {"params": [bt], "lr": kw["lr"] / 2}], **kw)
    xs, ys, xt, yt = tt(x), tt(y), torch.tensor(x), torch.tensor(y)
    for _ in range(25):
        opt_s.zero_grad()
        opt_t.zero_grad()
        _loss_ts(ws, bs, xs, ys).backward()
        _loss_torch(wt, bt, xt, yt).backward()
        opt_s.step()
        opt_t.step()
        close(ws, wt, rtol=1e-5, atol=2e-6)
        close(bs, bt, rtol=1e-5, atol=2e-6)
    assert ws.is_leaf and isinstance(ws, nn.Parameter)


# Every option of the fused steps (C++ `_sgd_step_` / `_adam_step_`), alone and combined.
FUSED = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, weight_decay=0.05)),
    ("SGD", dict(lr=0.1, maximize=True, weight_decay=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.5)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.05, momentum=0.7, nesterov=True, weight_decay=0.1, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.6, dampening=0.2, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.02, betas=(0.6, 0.9), eps=1e-4, maximize=True, weight_decay=0.2)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01, weight_decay=0.5, maximize=True)),
    ("AdamW", dict(lr=0.02, betas=(0.5, 0.8), eps=1e-3, weight_decay=0.1, amsgrad=True,
                   maximize=True)),
]
# (numpy dtype name, torch dtype, rtol, atol): 16-bit floats follow PyTorch's roundings
# (Note [Optimizer rounding]), but PyTorch's vectorized kernels fuse a + alpha * b into one
# FMA, so the float intermediate occasionally rounds to the neighbouring 16-bit value; over
# 25 steps of a growing (maximize) trajectory that stays within a few ulps.
FUSED_DTYPES = [("float32", torch.float32, 1e-6, 1e-6), ("float64", torch.float64, 1e-12, 1e-12),
                ("float16", torch.float16, 1e-2, 1e-2), ("bfloat16", torch.bfloat16, 5e-2, 5e-2)]


def _dtype_of(name: str):
    return getattr(ts, name)


def _fused_grad(p: np.ndarray, k: int, noise: np.ndarray) -> np.ndarray:
    """A deterministic gradient of the current parameter (float64), different every step."""
    return 0.7 * p - np.sin(p + k) + noise * (k % 3 - 1)


@pytest.mark.parametrize("dt", range(len(FUSED_DTYPES)))
@pytest.mark.parametrize("case", range(len(FUSED)))
def test_fused_step_trajectory_every_option_and_dtype(case: int, dt: int) -> None:
    """25 steps with the same gradients (computed from each library's own parameters) stay
    equal to torch.optim's in every supported dtype; includes a non-contiguous parameter."""
    name, kw = FUSED[case]
    dname, tdtype, rtol, atol = FUSED_DTYPES[dt]
    rng = np.random.default_rng(case)
    inits = [rng.standard_normal(s) for s in [(5, 3), (7,), ()]]
    noise = [rng.standard_normal(a.shape) for a in inits]
    ps = [nn.Parameter(ts.asarray(a).astype(_dtype_of(dname))) for a in inits]
    # A transposed (non-contiguous) parameter is updated in place through its view.
    ps[0] = nn.Parameter(ts.asarray(inits[0].T.copy()).astype(_dtype_of(dname)).T)
    pt = [torch.nn.Parameter(torch.tensor(a, dtype=tdtype)) for a in inits]
    opt_s = getattr(optim, name)([{"params": ps[:2]}, {"params": ps[2:], "lr": kw["lr"] / 2}], **kw)
    opt_t = getattr(torch.optim, name)([{"params": pt[:2]}, {"params": pt[2:], "lr": kw["lr"] / 2}],
                                       **kw)
    for k in range(25):
        for i in range(3):
            gs = _fused_grad(ps[i].astype(ts.float64).numpy(), k, noise[i])
            gt = _fused_grad(pt[i].detach().double().numpy(), k, noise[i])
            ps[i].grad = ts.asarray(gs).astype(_dtype_of(dname))
            pt[i].grad = torch.tensor(gt, dtype=tdtype)
        opt_s.step()
        opt_t.step()
        for a, b in zip(ps, pt):
            close(a.astype(ts.float64), b.detach().double(), rtol=rtol, atol=atol)
    st_s, st_t = opt_s.state[ps[1]], opt_t.state[pt[1]]
    assert set(st_s) == set(st_t)
    for key in st_t:
        close(st_s[key].astype(ts.float64), st_t[key].double(), rtol=rtol * 10, atol=atol * 10)


def test_fused_step_skips_params_without_grad_and_bumps_versions() -> None:
    a, b = nn.Parameter(ts.ones(3)), nn.Parameter(ts.ones(2))
    opt = optim.Adam([a, b], lr=0.1)
    y = a * a  # saves a for backward
    a.grad = ts.ones(3)
    opt.step()
    assert b not in opt.state and int(opt.state[a]["step"].item()) == 1
    close(b, np.ones(2, np.float32))
    # The step wrote `a` in place: the graph that saved it refuses to run.
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()
    m = nn.Parameter(ts.ones(2))
    sgd = optim.SGD([m], lr=0.1, momentum=0.9)
    z = m * m
    m.grad = ts.ones(2)
    sgd.step()
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z.sum().backward()
    # The step itself records nothing, even with grad mode on.
    assert m.grad_fn is None and m.is_leaf


def test_fused_step_errors() -> None:
    from tessera import _C
    p, g = ts.ones(3), ts.ones(3)
    with pytest.raises(ValueError, match="sgd_step: got 1 parameters but 2 gradients"):
        _C._sgd_step_([p], [g, g], [], 0.1, 0.0, 0.0, 0.0, False, False)
    with pytest.raises(ValueError, match=r"grads\[0\] has shape \(2,\)"):
        _C._sgd_step_([p], [ts.ones(2)], [], 0.1, 0.0, 0.0, 0.0, False, False)
    with pytest.raises(TypeError, match=r"params\[0\] must be floating-point"):
        _C._sgd_step_([ts.ones(3, dtype=ts.int32)], [g], [], 0.1, 0.0, 0.0, 0.0, False, False)
    with pytest.raises(TypeError, match=r"momentum_buffers\[0\] has dtype float64"):
        _C._sgd_step_([p], [g], [ts.ones(3, dtype=ts.float64)], 0.1, 0.9, 0.0, 0.0, False, False)
    step = ts.zeros(())
    with pytest.raises(TypeError, match=r"adam_step: exp_avg_sqs\[0\] has dtype float16"):
        _C._adam_step_([p], [g], [ts.zeros(3)], [ts.zeros(3, dtype=ts.float16)], [], [step],
                       0.1, 0.9, 0.999, 1e-8, 0.0, False, False, False)
    # A rejected call leaves the step count alone.
    assert float(step.item()) == 0.0
    with pytest.raises(ValueError, match="adamw_step: got 1 parameters but 0 max_exp_avg_sq"):
        _C._adam_step_([p], [g], [ts.zeros(3)], [ts.zeros(3)], [], [step],
                       0.1, 0.9, 0.999, 1e-8, 0.0, True, False, True)
    with pytest.raises(TypeError, match="one-element floating CPU tensor"):
        _C._adam_step_([p], [g], [ts.zeros(3)], [ts.zeros(3)], [], [ts.zeros(2)],
                       0.1, 0.9, 0.999, 1e-8, 0.0, False, False, False)


def test_state_dict_roundtrip_and_torch_state_loads() -> None:
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 2)).astype(np.float32)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    wt = torch.nn.Parameter(torch.tensor(w0))
    opt_t = torch.optim.Adam([wt], lr=0.05)
    for _ in range(3):
        opt_t.zero_grad()
        (torch.tensor(x) @ wt).pow(2).sum().backward()
        opt_t.step()
    # Continue from torch's state in tessera: trajectories stay equal.
    ws = nn.Parameter(tt(wt.detach().numpy().copy()))
    opt_s = optim.Adam([ws], lr=0.01)
    opt_s.load_state_dict(opt_t.state_dict())
    assert opt_s.param_groups[0]["lr"] == 0.05 and opt_s.state[ws]["step"] == 3
    for _ in range(5):
        for opt, w, xx in ((opt_s, ws, tt(x)), (opt_t, wt, torch.tensor(x))):
            opt.zero_grad()
            ((xx @ w) ** 2).sum().backward()
            opt.step()
        close(ws, wt, 1e-5, 1e-6)
    sd = opt_s.state_dict()
    assert set(sd) == {"state", "param_groups"} and sd["param_groups"][0]["params"] == [0]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    ws2 = nn.Parameter(tt(ws.numpy().copy()))
    opt2 = optim.Adam([ws2])
    opt2.load_state_dict(sd)
    close(opt2.state[ws2]["exp_avg"], opt_s.state[ws]["exp_avg"].numpy(), 0, 0)


def test_optimizer_api_and_errors() -> None:
    p = nn.Parameter(ts.ones(3))
    q = nn.Parameter(ts.ones(2))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": q, "lr": 0.5})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    (p.sum() + q.sum()).backward()
    opt.zero_grad(set_to_none=False)
    assert np.all(p.grad.numpy() == 0)
    opt.zero_grad()
    assert p.grad is None
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    loss = opt.step(closure)
    assert calls == [1] and float(loss.item()) == 3.0
    close(p, np.full(3, 0.8, np.float32))
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [p]})
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([p], lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(p, lr=0.1)
    assert "Parameter Group 0" in repr(opt)


def test_training_a_module_matches_torch() -> None:
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.GELU(), torch.nn.Linear(16, 3))
    sm = nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 3))
    sm.load_state_dict(tm.state_dict())
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 6)).astype(np.float32)
    y = rng.integers(0, 3, 32)
    opt_t = torch.optim.AdamW(tm.parameters(), lr=0.01)
    opt_s = optim.AdamW(sm.parameters(), lr=0.01)
    for _ in range(25):
        for opt, m, xx, yy, F in ((opt_t, tm, torch.tensor(x), torch.tensor(y), torch.nn.functional),
                                  (opt_s, sm, tt(x), tt(y), nn.functional)):
            opt.zero_grad()
            F.cross_entropy(m(xx), yy).backward()
            opt.step()
    for (n, a), (_, b) in zip(sm.named_parameters(), tm.named_parameters()):
        close(a, b, 1e-4, 1e-5)


def _schedule(mod, make, steps=30, metrics=None, opt_name="SGD"):
    p = mod.nn.Parameter(mod.ones(2)) if mod is ts else torch.nn.Parameter(torch.ones(2))
    q = mod.nn.Parameter(mod.ones(2)) if mod is ts else torch.nn.Parameter(torch.ones(2))
    kw = {"momentum": 0.9} if opt_name == "SGD" else {}
    opt = getattr(mod.optim, opt_name)([{"params": [p]}, {"params": [q], "lr": 0.05}], lr=0.1, **kw)
    sched = make(mod.optim.lr_scheduler, opt)
    out = []
    for i in range(steps):
        opt.step()
        if metrics is not None:
            sched.step(metrics[i])
        else:
            sched.step()
        out.append([g["lr"] for g in opt.param_groups]
                   + [g.get("momentum", g.get("betas", (0,))[0]) for g in opt.param_groups])
        if metrics is None:
            out[-1] += list(sched.get_last_lr())
    return out


SCHEDULERS = [
    lambda L, o: L.LambdaLR(o, lambda e: 0.95 ** e),
    lambda L, o: L.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: e % 3]),
    lambda L, o: L.StepLR(o, 7, gamma=0.5),
    lambda L, o: L.MultiStepLR(o, [3, 8, 8, 20], gamma=0.3),
    lambda L, o: L.ExponentialLR(o, 0.9),
    lambda L, o: L.CosineAnnealingLR(o, 10),
    lambda L, o: L.CosineAnnealingLR(o, 7, eta_min=0.01),
    lambda L, o: L.LinearLR(o),
    lambda L, o: L.LinearLR(o, start_factor=0.5, end_factor=0.1, total_iters=12),
    lambda L, o: L.OneCycleLR(o, max_lr=0.5, total_steps=31),
    lambda L, o: L.OneCycleLR(o, max_lr=[0.5, 0.2], epochs=4, steps_per_epoch=8,
                              anneal_strategy="linear", three_phase=True),
    lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=5), L.ExponentialLR(o, 0.9)],
                                milestones=[5]),
    lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2), L.CosineAnnealingLR(o, 8),
                                    L.ExponentialLR(o, 0.8)], milestones=[6, 15]),
]


@pytest.mark.parametrize("case", range(len(SCHEDULERS)))
def test_scheduler_sequence_matches_torch(case: int) -> None:
    a = _schedule(ts, SCHEDULERS[case])
    b = _schedule(torch, SCHEDULERS[case])
    np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float), rtol=1e-12, atol=0)


def test_onecycle_cycles_adam_beta1() -> None:
    make = lambda L, o: L.OneCycleLR(o, max_lr=0.3, total_steps=20)  # noqa: E731
    np.testing.assert_allclose(_schedule(ts, make, 20, opt_name="Adam"),
                               _schedule(torch, make, 20, opt_name="Adam"), rtol=1e-12)
    with pytest.raises(ValueError, match="momentum or beta1"):
        _schedule(ts, make, 1, opt_name="Adagrad")


@pytest.mark.parametrize("kw", [dict(patience=2), dict(mode="max", factor=0.5, patience=1, cooldown=2),
                                dict(threshold=0.1, threshold_mode="abs", patience=0, min_lr=0.02)])
def test_reduce_on_plateau_matches_torch(kw) -> None:
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.8, 0.85, 0.85, 0.85, 0.79, 0.9, 0.9, 0.9, 0.9] * 2
    make = lambda L, o: L.ReduceLROnPlateau(o, **kw)  # noqa: E731
    a = _schedule(ts, make, len(metrics), metrics)
    b = _schedule(torch, make, len(metrics), metrics)
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-12)


def test_scheduler_state_dict_resume_and_load_errors() -> None:
    def make(sched_state=None):
        p = nn.Parameter(ts.ones(2))
        opt = optim.SGD([p], lr=0.1)
        s = optim.lr_scheduler.CosineAnnealingLR(opt, 10)
        if sched_state is not None:
            s.load_state_dict(sched_state)
        return opt, s
    opt, s = make()
    for _ in range(4):
        s.step()
    state = s.state_dict()
    assert state["last_epoch"] == 4 and "optimizer" not in state
    opt2, s2 = make(state)
    opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
    for _ in range(3):
        s.step()
        s2.step()
    assert s.get_last_lr() == s2.get_last_lr()
    p = nn.Parameter(ts.ones(2))
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([p], lr=0.1).load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([p], lr=0.1).load_state_dict({"state": {}, "param_groups": [{"params": [0, 1]}]})
    with pytest.raises(TypeError, match="is not an Optimizer"):
        optim.lr_scheduler.StepLR(object(), 3)


@pytest.mark.parametrize("make", [
    lambda ps: optim.SGD(ps, lr=1e-3, momentum=0.9, weight_decay=0.01),
    lambda ps: optim.AdamW(ps, lr=0.01, fused=True),
], ids=["sgd_momentum", "adamw_fused"])
def test_channels_last_params_step_in_place_in_their_layout(make) -> None:
    # Note [Optimizer layouts] / [Gradient layout contract]: a channels-last parameter gets a
    # channels-last .grad (PyTorch's AccumulateGrad rule) and the fused step updates it in place
    # with its state in the same layout, with the values of the same step on contiguous params
    # and of PyTorch's.
    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    x0 = rng.standard_normal((2, 4, 5, 5)).astype(np.float32)

    def run(cl: bool):
        w = nn.Parameter(ts.asarray(w0.copy()))  # (asarray shares w0's memory)
        if cl:
            w = nn.Parameter(w.detach().to(memory_format=ts.channels_last))
        opt = make([w])
        ptr = w.data_ptr()
        for _ in range(3):
            x = ts.asarray(x0).to(memory_format=ts.channels_last) if cl else ts.asarray(x0)
            loss = (nn.functional.conv2d(x, w, padding=1) ** 2).sum()
            opt.zero_grad()
            loss.backward()
            fmt = ts.channels_last if cl else ts.contiguous_format
            assert w.grad.is_contiguous(memory_format=fmt), w.grad.stride()
            opt.step()
        assert w.data_ptr() == ptr and w.is_contiguous(memory_format=fmt)
        for st in opt.state[w].values():
            if hasattr(st, "shape") and tuple(st.shape) == w0.shape:
                assert st.is_contiguous(memory_format=fmt), st.stride()
        return w.detach().numpy()

    a, b = run(True), run(False)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    tw = torch.nn.Parameter(torch.tensor(w0).to(memory_format=torch.channels_last))
    topt = {"SGD": lambda p: torch.optim.SGD(p, lr=1e-3, momentum=0.9, weight_decay=0.01),
            "AdamW": lambda p: torch.optim.AdamW(p, lr=0.01)}[type(make([nn.Parameter(
                ts.zeros(1))])).__name__]([tw])
    for _ in range(3):
        tx = torch.tensor(x0).to(memory_format=torch.channels_last)
        tl = (torch.nn.functional.conv2d(tx, tw, padding=1) ** 2).sum()
        topt.zero_grad()
        tl.backward()
        topt.step()
    np.testing.assert_allclose(a, tw.detach().numpy(), rtol=1e-4, atol=1e-5)

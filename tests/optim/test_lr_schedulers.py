"""The LR schedulers beyond the basic set (ConstantLR, PolynomialLR, MultiplicativeLR,
CosineAnnealingWarmRestarts, CyclicLR, ChainedScheduler) and composite schedules vs
torch.optim.lr_scheduler: 120-step learning-rate (and momentum) sequences, state dicts."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn, optim


def _opt(mod, opt_name="SGD"):
    p = mod.nn.Parameter(mod.ones(2))
    q = mod.nn.Parameter(mod.ones(2))
    kw = {"momentum": 0.9} if opt_name == "SGD" else {}
    return getattr(mod.optim, opt_name)([{"params": [p]}, {"params": [q], "lr": 0.05}],
                                        lr=0.1, **kw)


def _momenta(opt):
    return [g.get("momentum", g.get("betas", (0,))[0]) for g in opt.param_groups]


def _schedule(mod, make, steps=120, opt_name="SGD", epochs=None):
    opt = _opt(mod, opt_name)
    sched = make(mod.optim.lr_scheduler, opt)
    out = [[g["lr"] for g in opt.param_groups] + _momenta(opt) + list(sched.get_last_lr())]
    for i in range(steps):
        opt.step()
        if epochs is None:
            sched.step()
        else:
            sched.step(epochs[i])
        out.append([g["lr"] for g in opt.param_groups] + _momenta(opt) + list(sched.get_last_lr()))
    return out


class Halve:
    """A callable object (its __dict__ is what lambda schedulers save)."""

    def __init__(self) -> None:
        self.factor = 0.5

    def __call__(self, epoch: int) -> float:
        return self.factor if epoch % 10 == 0 else 1.0


SCHEDULERS = [
    lambda L, o: L.ConstantLR(o),
    lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=40),
    lambda L, o: L.ConstantLR(o, factor=1.0, total_iters=0),
    lambda L, o: L.PolynomialLR(o),
    lambda L, o: L.PolynomialLR(o, total_iters=100, power=2.0),
    lambda L, o: L.PolynomialLR(o, total_iters=30, power=0.5),
    lambda L, o: L.MultiplicativeLR(o, lambda e: 0.97),
    lambda L, o: L.MultiplicativeLR(o, [lambda e: 0.99, Halve()]),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, 10),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, 5, T_mult=2, eta_min=0.001),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, 1, T_mult=3),
    lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=7),
    lambda L, o: L.CyclicLR(o, [0.01, 0.02], [0.1, 0.3], step_size_up=5, step_size_down=11,
                            mode="triangular2"),
    lambda L, o: L.CyclicLR(o, 0.001, 0.1, step_size_up=4, mode="exp_range", gamma=0.98,
                            base_momentum=0.7, max_momentum=0.95),
    lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=6, scale_fn=lambda x: 1 / (x + 1),
                            scale_mode="iterations", cycle_momentum=False),
    lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=6, scale_fn=lambda x: 0.9 ** x),
    lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.1, total_iters=4),
                                     L.ExponentialLR(o, 0.97)]),
    lambda L, o: L.ChainedScheduler([L.MultiplicativeLR(o, lambda e: 0.99),
                                     L.StepLR(o, 15, 0.5), L.PolynomialLR(o, 50, 2.0)]),
    lambda L, o: L.SequentialLR(o, [L.ConstantLR(o, 0.2, total_iters=10),
                                    L.CosineAnnealingWarmRestarts(o, 12, T_mult=2)],
                                milestones=[20]),
    lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=8),
                                    L.PolynomialLR(o, 40, 1.5), L.CyclicLR(o, 0.01, 0.05, 5)],
                                milestones=[10, 60]),
    lambda L, o: L.ChainedScheduler([L.SequentialLR(o, [L.ConstantLR(o, 0.5, total_iters=3),
                                                        L.ExponentialLR(o, 0.95)], milestones=[5]),
                                     L.MultiStepLR(o, [30, 70], 0.3)]),
]


@pytest.mark.parametrize("case", range(len(SCHEDULERS)))
def test_sequence_matches_torch(case: int) -> None:
    a = _schedule(ts, SCHEDULERS[case])
    b = _schedule(torch, SCHEDULERS[case])
    np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float),
                               rtol=0, atol=0)


@pytest.mark.parametrize("case", [11, 12, 13, 15])
def test_cyclic_cycles_adam_beta1(case: int) -> None:
    a = _schedule(ts, SCHEDULERS[case], 60, opt_name="Adam")
    b = _schedule(torch, SCHEDULERS[case], 60, opt_name="Adam")
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=0, atol=0)
    p = nn.Parameter(ts.ones(2))
    o = optim.Adam([p], lr=0.1)
    optim.lr_scheduler.CyclicLR(o, 0.01, 0.1)
    assert o.param_groups[0]["betas"] == (0.9, 0.999) and o.param_groups[0]["max_momentum"] == 0.9


@pytest.mark.parametrize("epochs", [[0.5 * i for i in range(60)],
                                    [3, 7, 7.5, 2, 15, 31, 0, 40.25, 100, 6.5]])
@pytest.mark.parametrize("t_mult", [1, 2])
def test_warm_restarts_explicit_epochs(epochs, t_mult: int) -> None:
    make = lambda L, o: L.CosineAnnealingWarmRestarts(o, 5, T_mult=t_mult, eta_min=0.01)  # noqa: E731
    a = _schedule(ts, make, len(epochs), epochs=epochs)
    b = _schedule(torch, make, len(epochs), epochs=epochs)
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=0, atol=0)


@pytest.mark.parametrize("epochs", [[0, 3, 9, 10, 2, 40, 41], [5, 6, 7, 1]])
@pytest.mark.parametrize("make", [lambda L, o: L.ConstantLR(o, 0.25, total_iters=6),
                                  lambda L, o: L.PolynomialLR(o, 8, 3.0)])
def test_closed_forms_with_explicit_epochs(make, epochs) -> None:
    a = _schedule(ts, make, len(epochs), epochs=epochs)
    b = _schedule(torch, make, len(epochs), epochs=epochs)
    np.testing.assert_allclose(np.array(a), np.array(b), rtol=0, atol=0)


@pytest.mark.parametrize("case", [1, 4, 7, 9, 12, 13, 16, 18, 20])
def test_state_dict_resume_matches_uninterrupted(case: int) -> None:
    """30 steps, state_dict (deep-copied and pickled), a fresh optimizer+scheduler loads it
    and continues: its sequence equals the uninterrupted one; the saved keys are torch's."""
    make = SCHEDULERS[case]
    opt = _opt(ts)
    sched = make(optim.lr_scheduler, opt)
    for _ in range(30):
        opt.step()
        sched.step()
    saved_opt = copy.deepcopy(opt.state_dict()["param_groups"])
    saved = pickle.loads(pickle.dumps(sched.state_dict()))
    topt = _opt(torch)
    tsched = make(torch.optim.lr_scheduler, topt)
    # (torch also saves its get_lr-warning flag, which tessera has no use for)
    assert set(saved) == set(tsched.state_dict()) - {"_get_lr_called_within_step"}
    opt2 = _opt(ts)
    sched2 = make(optim.lr_scheduler, opt2)
    for g, s in zip(opt2.param_groups, saved_opt):
        g.update({k: v for k, v in s.items() if k != "params"})
    sched2.load_state_dict(saved)
    for _ in range(40):
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
        assert sched.get_last_lr() == sched2.get_last_lr()
        assert _momenta(opt) == _momenta(opt2)


def test_lambda_state_saves_callable_objects() -> None:
    opt = _opt(ts)
    h = Halve()
    sched = optim.lr_scheduler.MultiplicativeLR(opt, [lambda e: 1.0, h])
    h.factor = 0.25
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [None, {"factor": 0.25}]
    h2 = Halve()
    sched2 = optim.lr_scheduler.MultiplicativeLR(_opt(ts), [lambda e: 1.0, h2])
    sched2.load_state_dict(sd)
    assert h2.factor == 0.25 and callable(sched2.lr_lambdas[0])
    sd = optim.lr_scheduler.LambdaLR(opt, h).state_dict()
    assert sd["lr_lambdas"] == [{"factor": 0.25}, {"factor": 0.25}]


def test_errors() -> None:
    L = optim.lr_scheduler
    o = _opt(ts)
    with pytest.raises(ValueError, match="between 0 and 1"):
        L.ConstantLR(o, factor=1.5)
    with pytest.raises(ValueError, match="positive integer T_0"):
        L.CosineAnnealingWarmRestarts(o, 0)
    with pytest.raises(ValueError, match="T_mult >= 1"):
        L.CosineAnnealingWarmRestarts(o, 5, T_mult=0)
    with pytest.raises(ValueError, match="eta_min"):
        L.CosineAnnealingWarmRestarts(o, 5, eta_min="0")
    with pytest.raises(ValueError, match="non-negative epoch"):
        L.CosineAnnealingWarmRestarts(o, 5).step(-1)
    with pytest.raises(ValueError, match="mode is invalid"):
        L.CyclicLR(o, 0.01, 0.1, mode="sine")
    with pytest.raises(ValueError, match="same length as optimizer.param_groups"):
        L.CyclicLR(o, [0.01], 0.1)
    with pytest.raises(ValueError, match="momentum or beta1"):
        L.CyclicLR(optim.Adagrad([nn.Parameter(ts.ones(1))]), 0.01, 0.1)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        L.CyclicLR(object(), 0.01, 0.1)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas"):
        L.MultiplicativeLR(o, [lambda e: 1.0])
    with pytest.raises(TypeError, match="should be a function"):
        L.MultiplicativeLR(o, 0.5)
    with pytest.raises(ValueError, match="at least one scheduler"):
        L.ChainedScheduler([])
    other = _opt(ts)
    with pytest.raises(ValueError, match="same optimizer"):
        L.ChainedScheduler([L.StepLR(o, 3), L.StepLR(other, 3)])
    assert isinstance(L.ReduceLROnPlateau(o), L.LRScheduler)  # as in torch 2.x
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        L.SequentialLR(o, [L.StepLR(o, 3), L.ReduceLROnPlateau(o)], milestones=[3])


RESUMABLE = [
    lambda L, o, e: L.StepLR(o, 3, 0.5, last_epoch=e),
    lambda L, o, e: L.MultiStepLR(o, [4, 9, 12], 0.5, last_epoch=e),
    lambda L, o, e: L.ConstantLR(o, 0.5, 8, last_epoch=e),
    lambda L, o, e: L.PolynomialLR(o, 20, 2.0, last_epoch=e),
    lambda L, o, e: L.MultiplicativeLR(o, lambda k: 0.9, last_epoch=e),
    lambda L, o, e: L.CosineAnnealingWarmRestarts(o, 4, 2, last_epoch=e),
    lambda L, o, e: L.CyclicLR(o, 0.01, 0.1, 3, last_epoch=e),
    lambda L, o, e: L.CosineAnnealingLR(o, 10, last_epoch=e),
    lambda L, o, e: L.LinearLR(o, 0.2, total_iters=10, last_epoch=e),
    lambda L, o, e: L.ExponentialLR(o, 0.9, last_epoch=e),
    lambda L, o, e: L.LambdaLR(o, lambda k: 1 / (k + 1), last_epoch=e),
]


@pytest.mark.parametrize("last_epoch", [0, 5, 13])
@pytest.mark.parametrize("case", range(len(RESUMABLE)))
def test_resume_with_last_epoch_matches_torch(case: int, last_epoch: int) -> None:
    """Constructing with last_epoch >= 0 (groups carry initial_lr) continues like torch."""
    seqs = []
    for mod in (ts, torch):
        opt = _opt(mod)
        for g in opt.param_groups:
            g["initial_lr"] = 2 * g["lr"]
        sched = RESUMABLE[case](mod.optim.lr_scheduler, opt, last_epoch)
        seq = [[g["lr"] for g in opt.param_groups] + _momenta(opt)]
        for _ in range(30):
            opt.step()
            sched.step()
            seq.append([g["lr"] for g in opt.param_groups] + _momenta(opt))
        seqs.append(seq)
    np.testing.assert_allclose(np.array(seqs[0]), np.array(seqs[1]), rtol=0, atol=0)
    opt = _opt(ts)
    with pytest.raises(KeyError, match="initial_lr"):
        RESUMABLE[case](optim.lr_scheduler, opt, last_epoch)


def test_step_before_optimizer_step_warns_as_torch() -> None:
    """lr_scheduler.step() before any optimizer.step() warns (PyTorch's UserWarning, once);
    the usual order, and a custom Optimizer subclass's step, do not."""
    import warnings

    class MySGD(optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))

        def step(self, closure=None):
            return None

    for lib, make in ((ts, lambda m, lib: lib.optim.SGD(m.parameters(), lr=0.1)),
                      (torch, lambda m, lib: lib.optim.SGD(m.parameters(), lr=0.1)),
                      (ts, lambda m, lib: MySGD(m.parameters()))):
        opt = make(lib.nn.Linear(1, 1), lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 1)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            sched.step()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sched.step()  # warned once
            opt2 = make(lib.nn.Linear(1, 1), lib)
            sched2 = lib.optim.lr_scheduler.ExponentialLR(opt2, 0.5)
            opt2.step()
            sched2.step()

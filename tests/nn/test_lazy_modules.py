"""Lazy modules and uninitialized parameters against torch: repr, class change on the first
forward, shapes, state dicts before/after initialization, optimizers built before the first
forward, load_state_dict into a lazy module, errors."""
from __future__ import annotations

import copy
from typing import Any, Dict, Tuple

import numpy as np
import pytest
import torch

import tessera as ts
from harness import close

CASES: Dict[str, Tuple[tuple, dict, tuple]] = {
    "LazyLinear": ((3,), {}, (2, 5)),
    "LazyConv1d": ((4, 3), {"stride": 2}, (2, 3, 9)),
    "LazyConv2d": ((4, 3), {"padding": 1, "groups": 2}, (2, 6, 5, 5)),
    "LazyConv3d": ((2, 2), {"bias": False}, (1, 3, 4, 4, 4)),
    "LazyConvTranspose1d": ((4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 5)),
    "LazyConvTranspose2d": ((4, 3), {"groups": 2}, (2, 6, 4, 4)),
    "LazyConvTranspose3d": ((2, 2), {}, (1, 3, 3, 3, 3)),
    "LazyBatchNorm1d": ((), {}, (4, 6)),
    "LazyBatchNorm2d": ((), {"momentum": 0.3}, (3, 2, 4, 4)),
    "LazyBatchNorm3d": ((), {"affine": False}, (2, 3, 2, 2, 2)),
    "LazyInstanceNorm1d": ((), {"affine": True}, (2, 3, 7)),
    "LazyInstanceNorm2d": ((), {"track_running_stats": True}, (2, 3, 4, 4)),
    "LazyInstanceNorm3d": ((), {}, (2, 3, 2, 3, 2)),
}


def _both(name: str) -> Tuple[Any, Any, np.ndarray]:
    args, kwargs, shape = CASES[name]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return getattr(ts.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs), x


@pytest.mark.parametrize("name", sorted(CASES))
def test_lazy_module_lifecycle_matches_torch(name: str) -> None:
    sm, tm, x = _both(name)
    assert repr(sm) == repr(tm)
    assert sm.has_uninitialized_params() and tm.has_uninitialized_params()
    sd_s, sd_t = sm.state_dict(), tm.state_dict()
    assert list(sd_s) == list(sd_t)
    assert [repr(v) for k, v in sd_s.items() if "num_batches" not in k] == \
        [repr(v) for k, v in sd_t.items() if "num_batches" not in k]
    for p, q in zip(sm.parameters(), tm.parameters()):
        assert isinstance(p, ts.nn.Parameter) and isinstance(q, torch.nn.Parameter)
        assert isinstance(p, ts.nn.UninitializedParameter)
    params = list(sm.parameters())
    ys = sm(ts.asarray(x))
    yt = tm(torch.tensor(x))
    assert type(sm).__name__ == type(tm).__name__ == name[4:]
    assert repr(sm) == repr(tm)
    assert not any(ts.nn.parameter.is_lazy(t) for t in (*sm.parameters(), *sm.buffers()))
    assert all(a is b for a, b in zip(params, sm.parameters()))
    assert [tuple(p.shape) for p in sm.parameters()] == [tuple(p.shape) for p in tm.parameters()]
    assert [tuple(b.shape) for b in sm.buffers()] == [tuple(b.shape) for b in tm.buffers()]
    assert list(sm.state_dict()) == list(tm.state_dict())
    assert tuple(ys.shape) == tuple(yt.shape)
    # Same weights -> same outputs (normalization layers are deterministic already).
    sm.load_state_dict(tm.state_dict())
    close(sm(ts.asarray(x)), tm(torch.tensor(x)), rtol=1e-4, atol=1e-5)


def test_lazy_linear_default_init_range() -> None:
    m = ts.nn.LazyLinear(7)
    m(ts.ones((2, 16)))
    w = m.weight.numpy()
    bound = 1 / np.sqrt(16)
    assert w.shape == (7, 16) and np.all(np.abs(w) <= bound + 1e-7) and w.std() > 0
    assert np.all(np.abs(m.bias.numpy()) <= bound + 1e-7)


def test_lazy_batchnorm_initial_stats() -> None:
    m = ts.nn.LazyBatchNorm2d()
    m.eval()
    m(ts.ones((2, 3, 2, 2)))
    np.testing.assert_array_equal(m.running_mean.numpy(), np.zeros(3, np.float32))
    np.testing.assert_array_equal(m.running_var.numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(m.weight.numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(m.bias.numpy(), np.zeros(3, np.float32))
    assert m.num_batches_tracked.dtype == ts.int64


def test_optimizer_built_before_first_forward() -> None:
    for lib in (ts, torch):
        m = lib.nn.LazyLinear(2)
        opt = lib.optim.SGD(m.parameters(), lr=0.5)
        x = lib.ones((3, 4)) if lib is ts else torch.ones(3, 4)
        m(x)
        before = m.weight.detach().clone() if lib is torch else m.weight.detach().clone()
        m(x).sum().backward()
        opt.step()
        after = m.weight.detach()
        assert float(((before - after) ** 2).sum()) > 0
        assert opt.param_groups[0]["params"][0] is m.weight


def test_load_state_dict_into_lazy_module() -> None:
    tsrc = torch.nn.Linear(5, 3)
    for lib in (ts, torch):
        m = lib.nn.LazyLinear(3)
        res = m.load_state_dict(tsrc.state_dict())
        assert not res.missing_keys and not res.unexpected_keys
        assert type(m).__name__ == "LazyLinear"
        assert tuple(m.weight.shape) == (3, 5)
        assert not m.has_uninitialized_params()
        assert m.in_features == 0  # torch keeps in_features until the first forward
        y = m(lib.ones((2, 5)) if lib is ts else torch.ones(2, 5))
        assert type(m).__name__ == "Linear"
        close(y.detach(), tsrc(torch.ones(2, 5)).detach())


def test_load_state_dict_missing_key_materializes_others() -> None:
    for lib in (ts, torch):
        m = lib.nn.LazyLinear(3)
        w = np.ones((3, 4), np.float32)
        with pytest.raises(RuntimeError, match="Missing key"):
            m.load_state_dict({"weight": ts.asarray(w) if lib is ts else torch.tensor(w)})
        assert tuple(m.weight.shape) == (3, 4)
        assert m.has_uninitialized_params()


def test_lazy_state_dict_loads_into_lazy_module() -> None:
    for lib in (ts, torch):
        a, b = lib.nn.LazyLinear(3), lib.nn.LazyLinear(3)
        b.load_state_dict(a.state_dict())
        assert b.has_uninitialized_params()


def test_to_dtype_before_initialization() -> None:
    for lib in (ts, torch):
        m = lib.nn.LazyLinear(3).double()
        m(lib.ones((2, 4), dtype=lib.float64))
        assert m.weight.dtype == lib.float64 and m.bias.dtype == lib.float64


def test_dtype_argument() -> None:
    for lib in (ts, torch):
        m = lib.nn.LazyConv1d(2, 3, dtype=lib.float64)
        m(lib.ones((1, 4, 6), dtype=lib.float64))
        assert m.weight.dtype == lib.float64 and tuple(m.weight.shape) == (2, 4, 3)


def test_conv_input_errors() -> None:
    for lib in (ts, torch):
        with pytest.raises(RuntimeError, match="Expected 3D"):
            lib.nn.LazyConv2d(4, 3)(lib.ones((2, 3)) if lib is ts else torch.ones(2, 3))
        with pytest.raises(ValueError, match="divisible by groups"):
            lib.nn.LazyConv1d(4, 3, groups=2)(lib.ones((1, 3, 8)) if lib is ts
                                              else torch.ones(1, 3, 8))


def test_unbatched_conv_input() -> None:
    for lib in (ts, torch):
        m = lib.nn.LazyConv1d(4, 3)
        m(lib.ones((5, 8)) if lib is ts else torch.ones(5, 8))
        assert tuple(m.weight.shape) == (4, 5, 3)


def test_uninitialized_parameter_and_buffer() -> None:
    P, B = ts.nn.UninitializedParameter, ts.nn.UninitializedBuffer
    for lib, (p, b) in ((ts, (P(), B())), (torch, (torch.nn.UninitializedParameter(),
                                                   torch.nn.UninitializedBuffer()))):
        assert repr(p) == "<UninitializedParameter>" and repr(b) == "<UninitializedBuffer>"
        assert isinstance(p, lib.nn.Parameter) and not isinstance(b, lib.nn.Parameter)
        assert p.requires_grad and not b.requires_grad
        assert lib.nn.parameter.is_lazy(p) and lib.nn.parameter.is_lazy(b)
        keep = p
        p.materialize((2, 3))
        b.materialize((4,), dtype=lib.float64)
        assert p is keep and tuple(p.shape) == (2, 3) and p.requires_grad
        assert not lib.nn.parameter.is_lazy(p) and isinstance(p, lib.nn.Parameter)
        assert not isinstance(p, lib.nn.UninitializedParameter)
        assert b.dtype == lib.float64 and tuple(b.shape) == (4,)
        assert not hasattr(p, "materialize") or lib is torch
    assert not hasattr(ts.ones(2), "materialize")
    assert not ts.nn.parameter.is_lazy(ts.nn.Parameter(ts.ones(1)))
    assert issubclass(ts.nn.UninitializedParameter, ts.nn.Parameter)


def test_uninitialized_buffer_assignment_registers_buffer() -> None:
    for lib in (ts, torch):
        m = lib.nn.Module()
        m.buf = lib.nn.UninitializedBuffer(persistent=False)
        assert "buf" in dict(m.named_buffers()) and "buf" not in m.state_dict()


def test_deepcopy_lazy_module() -> None:
    m = ts.nn.LazyLinear(3)
    c = copy.deepcopy(m)
    c(ts.ones((1, 4)))
    assert m.has_uninitialized_params() and type(m).__name__ == "LazyLinear"
    assert type(c).__name__ == "Linear" and tuple(c.weight.shape) == (3, 4)


def test_lazy_in_sequential() -> None:
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.LazyConv2d(4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                             torch.nn.LazyLinear(5))
    sm = ts.nn.Sequential(ts.nn.LazyConv2d(4, 3), ts.nn.ReLU(), ts.nn.Flatten(),
                          ts.nn.LazyLinear(5))
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 6)).astype(np.float32)
    tm(torch.tensor(x))
    sm(ts.asarray(x))
    assert repr(sm) == repr(tm)
    sm.load_state_dict(tm.state_dict())
    close(sm(ts.asarray(x)), tm(torch.tensor(x)), rtol=1e-4, atol=1e-5)


def test_reassigning_parameter_keeps_state_dict_order() -> None:
    for lib in (ts, torch):
        m = lib.nn.Linear(2, 2)
        m.weight = lib.nn.Parameter(lib.zeros((2, 2)) if lib is ts else torch.zeros(2, 2))
        assert list(m.state_dict()) == ["weight", "bias"]


def test_lazy_mixin_custom_module() -> None:
    class MyLazy(ts.nn.LazyModuleMixin, ts.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = ts.nn.UninitializedParameter()

        def initialize_parameters(self, x: Any) -> None:
            self.w.materialize((x.shape[-1],))
            with ts.no_grad():
                self.w[...] = 2.0

        def forward(self, x: Any) -> Any:
            return x * self.w

    m = MyLazy()
    assert m.has_uninitialized_params()
    y = m(ts.ones((2, 3)))
    assert y.tolist() == [[2.0] * 3] * 2
    assert not hasattr(m, "_initialize_hook")

    class Broken(ts.nn.LazyModuleMixin, ts.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = ts.nn.UninitializedParameter()

        def forward(self, x: Any) -> Any:
            return x
    with pytest.raises(NotImplementedError):
        Broken()(ts.ones(2))

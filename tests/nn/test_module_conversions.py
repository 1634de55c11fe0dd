"""Module conversions keep Parameter identity as torch does: an optimizer built before
``model.to(...)`` / ``double()`` / ``half()`` / ``type()`` still updates the model; ``.grad`` is
converted in place; buffers are replaced; ``t.data = other`` rebinds a tensor's data."""
from __future__ import annotations

import io
import pickle
from typing import Any, Callable, Tuple

import numpy as np
import pytest
import torch

import tessera as ts
from harness import close


def _pair(seed: int = 0) -> Tuple[ts.nn.Module, torch.nn.Module]:
    torch.manual_seed(seed)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
    sm = ts.nn.Sequential(ts.nn.Linear(4, 3), ts.nn.BatchNorm1d(3), ts.nn.Linear(3, 2))
    sm.load_state_dict(tm.state_dict())
    return sm, tm


CONVERSIONS = [
    ("double", lambda m, lib: m.double(), "float64"),
    ("half", lambda m, lib: m.half(), "float16"),
    ("bfloat16", lambda m, lib: m.bfloat16(), "bfloat16"),
    ("float", lambda m, lib: m.double().float(), "float32"),
    ("to_dtype", lambda m, lib: m.to(lib.float64), "float64"),
    ("to_kw", lambda m, lib: m.to(dtype=lib.float64), "float64"),
    ("to_device_dtype", lambda m, lib: m.to("cpu", lib.float64), "float64"),
    ("to_tensor", lambda m, lib: m.to(lib.zeros(1, dtype=lib.float64)), "float64"),
    ("cpu", lambda m, lib: m.cpu(), "float32"),
    ("type", lambda m, lib: m.type(lib.float64), "float64"),
]


@pytest.mark.parametrize("name,conv,dtype", CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_conversion_keeps_parameter_objects(name: str, conv: Callable, dtype: str) -> None:
    sm, tm = _pair()
    for m, lib in ((sm, ts), (tm, torch)):
        before = [id(p) for p in m.parameters()]
        assert conv(m, lib) is m
        assert [id(p) for p in m.parameters()] == before
        assert all(str(p.dtype).endswith(dtype) for p in m.parameters())
        assert all(isinstance(p, lib.nn.Parameter) and p.requires_grad for p in m.parameters())
    assert [str(b.dtype).split(".")[-1] for b in sm.buffers()] == \
        [str(b.dtype).split(".")[-1] for b in tm.buffers()]
    for a, b in zip(sm.parameters(), tm.parameters()):
        close(a.float(), b.float(), rtol=1e-2, atol=1e-2)


def test_optimizer_built_before_double_updates_model() -> None:
    sm, tm = _pair()
    x = np.random.default_rng(0).standard_normal((5, 4))
    for m, lib in ((sm, ts), (tm, torch)):
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        m.double()
        out = m(lib.asarray(x) if lib is ts else torch.tensor(x))
        assert str(out.dtype).endswith("float64")
        out.sum().backward()
        opt.step()
    for a, b in zip(sm.parameters(), tm.parameters()):
        assert a.dtype == ts.float64
        close(a, b, rtol=1e-10, atol=1e-12)


def test_optimizer_param_groups_are_module_params_after_to() -> None:
    sm, _ = _pair()
    opt = ts.optim.Adam(sm.parameters(), lr=1e-2)
    sm.to(ts.float64)
    assert [id(p) for p in opt.param_groups[0]["params"]] == [id(p) for p in sm.parameters()]
    assert all(p.dtype == ts.float64 for p in opt.param_groups[0]["params"])


def test_grad_is_converted_in_place() -> None:
    sm, tm = _pair()
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    for m, lib in ((sm, ts), (tm, torch)):
        m(lib.asarray(x) if lib is ts else torch.tensor(x)).sum().backward()
        grads = [p.grad for p in m.parameters()]
        m.double()
        assert all(p.grad is g for p, g in zip(m.parameters(), grads))
        assert all(str(p.grad.dtype).endswith("float64") for p in m.parameters())
    for a, b in zip(sm.parameters(), tm.parameters()):
        close(a.grad, b.grad, rtol=1e-5, atol=1e-5)


def test_buffers_are_replaced_and_int_buffers_keep_dtype() -> None:
    sm, tm = _pair()
    for m in (sm, tm):
        old = {n: id(b) for n, b in m.named_buffers()}
        m.double()
        new = {n: id(b) for n, b in m.named_buffers()}
        assert old.keys() == new.keys()
        assert old["1.running_mean"] != new["1.running_mean"]
    assert sm[1].num_batches_tracked.dtype == ts.int64
    assert tm[1].num_batches_tracked.dtype == torch.int64
    assert sm[1].running_mean.dtype == ts.float64


def test_type_casts_int_buffers_too() -> None:
    sm, tm = _pair()
    sm.type(ts.float64)
    tm.type(torch.float64)
    assert sm[1].num_batches_tracked.dtype == ts.float64
    assert tm[1].num_batches_tracked.dtype == torch.float64


@pytest.mark.parametrize("bad", ["int64", "int32", "bool"])
def test_to_rejects_non_float_dtype(bad: str) -> None:
    sm, tm = _pair()
    with pytest.raises(TypeError):
        tm.to(getattr(torch, bad))
    with pytest.raises(TypeError):
        sm.to(getattr(ts, bad))


def test_apply_fn_order_and_return() -> None:
    sm, tm = _pair()
    names = {}
    for m in (sm, tm):
        seen: list = []
        assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
        names[m is sm] = seen
    assert names[True] == names[False] == ["Linear", "BatchNorm1d", "Linear", "Sequential"]


def test_apply_init_keeps_parameters() -> None:
    sm, _ = _pair()
    before = [id(p) for p in sm.parameters()]

    def init(m: Any) -> None:
        if isinstance(m, ts.nn.Linear):
            ts.nn.init.constant_(m.weight, 0.5)
    sm.apply(init)
    assert [id(p) for p in sm.parameters()] == before
    assert float(sm[0].weight.sum()) == 0.5 * 12


def test_private_apply_with_custom_fn() -> None:
    sm, tm = _pair()
    for m, lib in ((sm, ts), (tm, torch)):
        ids = [id(p) for p in m.parameters()]
        m._apply(lambda t: t * 2 if t.dtype == lib.float32 else t)
        assert [id(p) for p in m.parameters()] == ids
    for a, b in zip(sm.parameters(), tm.parameters()):
        close(a, b)
    for a, b in zip(sm.buffers(), tm.buffers()):
        close(a, b)


def test_share_memory_and_requires_grad_() -> None:
    sm, tm = _pair()
    for m in (sm, tm):
        ids = [id(p) for p in m.parameters()]
        assert m.share_memory() is m
        assert [id(p) for p in m.parameters()] == ids
        assert m.requires_grad_(False) is m
        assert not any(p.requires_grad for p in m.parameters())
        m.requires_grad_()
        assert all(p.requires_grad for p in m.parameters())


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none: bool) -> None:
    sm, tm = _pair()
    x = np.ones((3, 4), np.float32)
    for m, lib in ((sm, ts), (tm, torch)):
        m(lib.asarray(x) if lib is ts else torch.tensor(x)).sum().backward()
        grads = [p.grad for p in m.parameters()]
        m.zero_grad(set_to_none=set_to_none)
        for p, g in zip(m.parameters(), grads):
            if set_to_none:
                assert p.grad is None
            else:
                assert p.grad is g and float(abs(p.grad).sum()) == 0.0


def test_zero_grad_detaches_graph_grad() -> None:
    sm = ts.nn.Linear(2, 1)
    tm = torch.nn.Linear(2, 1)
    for m, lib in ((sm, ts), (tm, torch)):
        x = lib.ones((1, 2)) if lib is ts else torch.ones(1, 2)
        g, = (lib.autograd.grad(m(x).sum(), [m.weight], create_graph=True))
        m.weight.grad = g * 1.0
        m.zero_grad(set_to_none=False)
        assert m.weight.grad.grad_fn is None and not m.weight.grad.requires_grad


def test_data_assignment_rebinds() -> None:
    for lib in (ts, torch):
        x = lib.ones(2, requires_grad=True) if lib is torch else ts.ones(2, requires_grad=True)
        x.data = lib.zeros(3, dtype=lib.float64)
        assert tuple(x.shape) == (3,) and x.dtype == lib.float64 and x.requires_grad
        (x * 2).sum().backward()
        assert x.grad.dtype == lib.float64 and tuple(x.grad.shape) == (3,)
        y = lib.ones(2)
        y.data = lib.arange(3)
        assert y.dtype == lib.int64 and y.tolist() == [0, 1, 2]
        with pytest.raises(TypeError):
            x.data = 5
        with pytest.raises(RuntimeError):
            x.data = lib.arange(3)


def test_data_assignment_shares_storage() -> None:
    for lib in (ts, torch):
        x = lib.ones(2)
        src = lib.zeros(3)
        x.data = src
        src[0] = 7
        assert float(x[0]) == 7.0


def test_module_to_then_train_step_matches_torch() -> None:
    sm, tm = _pair(3)
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((8, 4)), rng.standard_normal((8, 2))
    opts = (ts.optim.Adam(sm.parameters(), lr=1e-2), torch.optim.Adam(tm.parameters(), lr=1e-2))
    sm.double()
    tm.double()
    for _ in range(3):
        for m, opt, lib in ((sm, opts[0], ts), (tm, opts[1], torch)):
            opt.zero_grad()
            xx, yy = (ts.asarray(x), ts.asarray(y)) if lib is ts else (torch.tensor(x), torch.tensor(y))
            loss = ((m(xx) - yy) ** 2).mean()
            loss.backward()
            opt.step()
    # Adam's m / (sqrt(v) + eps) turns last-bit gradient differences (BLAS summation order)
    # of near-zero gradients into ~1e-10 parameter differences after three float64 steps.
    for a, b in zip(sm.parameters(), tm.parameters()):
        close(a, b, rtol=1e-9, atol=1e-8)
    for a, b in zip(sm.buffers(), tm.buffers()):
        close(a, b, rtol=1e-9, atol=1e-8)


def test_state_dict_after_double() -> None:
    sm, tm = _pair()
    sm.double()
    tm.double()
    sd_s, sd_t = sm.state_dict(), tm.state_dict()
    assert list(sd_s) == list(sd_t)
    for k in sd_s:
        assert str(sd_s[k].dtype).split(".")[-1] == str(sd_t[k].dtype).split(".")[-1]
        close(sd_s[k], sd_t[k])


def test_parameter_repr() -> None:
    for lib in (ts, torch):
        p = lib.nn.Parameter(lib.ones(2) if lib is ts else torch.ones(2))
        assert repr(p) == str(p) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"
        q = lib.nn.Parameter(lib.ones(2) if lib is ts else torch.ones(2), requires_grad=False)
        assert repr(q) == "Parameter containing:\ntensor([1., 1.])"
        assert repr(p * 2).startswith("tensor(")


def test_parameter_container_repr() -> None:
    def norm(s: str) -> str:
        return s.replace("torch.", "").replace("tessera.", "")
    for build in (lambda lib: lib.nn.ParameterList([lib.nn.Parameter(lib.ones((2, 3))),
                                                    lib.ones(1)]),
                  lambda lib: lib.nn.ParameterList([lib.nn.Parameter(lib.ones((2, 3)))]),
                  lambda lib: lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.ones((2, 3)))}),
                  lambda lib: lib.nn.ParameterDict({"a": lib.ones(2), "b": lib.ones(1)})):
        assert norm(repr(build(ts))) == norm(repr(build(torch)))


# ----------------------------------------------------------------------------- save / load
def _roundtrip(lib: Any, obj: Any, **load_kw: Any) -> Any:
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    return lib.load(buf, **load_kw)


def test_save_load_state_dict_to_file_object_and_path(tmp_path: Any) -> None:
    sm, tm = _pair()
    for m, lib in ((sm, ts), (tm, torch)):
        sd = _roundtrip(lib, m.state_dict())
        assert list(sd) == list(m.state_dict())
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save(m.state_dict(), path)
        assert list(lib.load(path)) == list(m.state_dict())
        m.load_state_dict(lib.load(path, map_location="cpu"))


def test_save_load_nested_and_optimizer_state() -> None:
    sm, tm = _pair()
    x = np.ones((3, 4), np.float32)
    for m, lib in ((sm, ts), (tm, torch)):
        opt = lib.optim.Adam(m.parameters(), lr=0.1)
        m(lib.asarray(x) if lib is ts else torch.tensor(x)).sum().backward()
        opt.step()
        state = _roundtrip(lib, {"model": m.state_dict(), "opt": opt.state_dict(), "epoch": 3,
                                 "names": ["a", "b"], "pair": (1, 2.5)})
        assert state["epoch"] == 3 and state["names"] == ["a", "b"] and state["pair"] == (1, 2.5)
        assert list(state["opt"]["state"]) == [0, 1, 2, 3, 4, 5]
        opt2 = lib.optim.Adam(m.parameters(), lr=0.1)
        opt2.load_state_dict(state["opt"])
        assert float(opt2.state_dict()["state"][0]["step"]) == 1.0
    got = _roundtrip(ts, [ts.ones(2, dtype=ts.bfloat16), ts.arange(3), {"k": ts.float64}])
    assert got[0].dtype == ts.bfloat16 and got[1].tolist() == [0, 1, 2] and got[2]["k"] == ts.float64


def test_load_weights_only_rejects_modules(tmp_path: Any) -> None:
    for lib in (ts, torch):
        path = tmp_path / f"m_{lib.__name__}.pt"
        lib.save(lib.nn.Linear(2, 3), path)
        with pytest.raises(pickle.UnpicklingError):
            lib.load(path)
        m = lib.load(path, weights_only=False)
        assert type(m).__name__ == "Linear" and tuple(m.weight.shape) == (3, 2)


def test_load_map_location_forms() -> None:
    sd = ts.nn.Linear(2, 1).state_dict()
    for where in ("cpu", ts.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage):
        out = _roundtrip(ts, dict(sd, extra=[sd["weight"]]), map_location=where)
        assert str(out["weight"].device) == "cpu"


def test_swap_tensors() -> None:
    for lib in (ts, torch):
        a = lib.ones(2, requires_grad=True) if lib is ts else torch.ones(2, requires_grad=True)
        b = lib.zeros(3) if lib is ts else torch.zeros(3)
        a.foo = 1
        (a * 2).sum().backward()
        ida, idb = id(a), id(b)
        lib.utils.swap_tensors(a, b)
        assert id(a) == ida and id(b) == idb
        assert a.tolist() == [0.0, 0.0, 0.0] and b.tolist() == [1.0, 1.0]
        assert b.requires_grad and not a.requires_grad
        assert b.grad.tolist() == [2.0, 2.0] and a.grad is None
        assert getattr(b, "foo", None) == 1 and getattr(a, "foo", None) is None
    p, q = ts.nn.Parameter(ts.ones(2)), ts.zeros(2)
    ts.utils.swap_tensors(p, q)
    assert isinstance(q, ts.nn.Parameter) and not isinstance(p, ts.nn.Parameter)
    with pytest.raises(RuntimeError):
        x = ts.ones(2, requires_grad=True)
        ts.utils.swap_tensors(x * 2, ts.ones(2))


def test_pickle_and_deepcopy_after_grad_access() -> None:
    import copy
    m = ts.nn.Linear(2, 1)
    m(ts.ones((1, 2))).sum().backward()
    g = m.weight.grad
    m.weight.size()  # caches a size object in the instance dict
    c = pickle.loads(pickle.dumps(m))
    d = copy.deepcopy(m)
    for other in (c, d):
        assert "_grad_ref" not in other.weight.__dict__
        assert isinstance(other.weight, ts.nn.Parameter)
        assert other.weight.grad.tolist() == g.tolist()  # the grad is copied too (torch)
    assert m.weight.grad is g

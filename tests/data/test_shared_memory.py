"""Shared-memory tensors and tessera.multiprocessing (torch.multiprocessing): share_memory_()
moves a storage into a memfd (Note [Shared memory] in csrc/core/storage.cpp); forked children
inherit it, Queues and spawned children receive the fd and map the same memory; Hogwild-style
training updates one model from several processes."""
import multiprocessing as std_mp
import os

import pytest
import torch

import tessera as ts
import tessera.multiprocessing as tmp
from tessera import nn


def _fds():
    return set(os.listdir("/proc/self/fd"))


def _shm_entries():
    return {n for n in os.listdir("/dev/shm") if "tessera" in n}


@pytest.fixture(autouse=True)
def _no_shm_leaks():
    before = _shm_entries()
    yield
    assert _shm_entries() <= before


def _child_env(monkeypatch):
    # Spawned children import the tessera under test (CI builds _C outside python/).
    root = os.path.dirname(os.path.dirname(ts.__file__))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


# ------------------------------------------------------------------ share_memory_ / is_shared

def test_is_shared_and_share_memory_like_torch():
    for lib in (ts, torch):
        x = lib.arange(12.0).reshape(3, 4)
        assert not x.is_shared()
        assert x.share_memory_() is x
        assert x.is_shared()
        assert x.share_memory_() is x and x.is_shared()  # twice: a no-op


def test_share_memory_moves_the_storage_for_every_view():
    x = ts.arange(100.0)
    v = x[10:20]
    x.add_(1)
    version = x._version
    x.share_memory_()
    assert v.is_shared() and x._version == version
    ptr = x.data_ptr()
    assert v.data_ptr() == ptr + 10 * 4
    v.fill_(-1.0)
    assert x[10].item() == -1.0 and x[9].item() == 10.0
    x.share_memory_()
    assert x.data_ptr() == ptr


def test_share_memory_keeps_autograd_state_and_numpy_exports():
    w = ts.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    w.share_memory_()
    assert w.requires_grad and w.is_leaf and w.grad.tolist() == [2.0, 2.0, 2.0]
    a = ts.arange(50.0)
    before = a.numpy()  # exported memory stays valid after the move
    a.share_memory_()
    assert before.tolist() == list(range(50)) and a.tolist() == list(range(50))
    e = ts.empty(0)
    assert e.share_memory_().is_shared() and e.shape == (0,)


def test_sharing_strategies():
    assert tmp.get_sharing_strategy() == "file_descriptor"
    assert tmp.get_all_sharing_strategies() == {"file_descriptor"}
    tmp.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError, match="file_descriptor"):
        tmp.set_sharing_strategy("no_such_strategy")
    assert tmp.Process is std_mp.Process and tmp.cpu_count() >= 1
    assert callable(tmp.get_context) and callable(tmp.set_start_method)


def test_non_leaf_requiring_grad_refuses_to_travel():
    x = ts.ones(2, requires_grad=True) * 2
    q = tmp.get_context("fork").SimpleQueue()
    with pytest.raises(RuntimeError, match="non-leaf"):
        q.put(x)


# ------------------------------------------------------------------ processes

def _fill(t, value):
    t.fill_(value)


def _check_and_fill(t, q):
    q.put((t.is_shared(), t.tolist()))
    t.mul_(10)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_child_writes_shared_tensor(method, monkeypatch):
    _child_env(monkeypatch)
    ctx = tmp.get_context(method)
    x = ts.zeros(4, 5)[1:3]  # a view: the child gets the same geometry over the same memory
    x.share_memory_()
    p = ctx.Process(target=_fill, args=(x, 7.0))
    p.start()
    p.join(20)
    assert p.exitcode == 0
    assert x.tolist() == [[7.0] * 5] * 2


def _echo(inq, outq):
    t = inq.get()
    outq.put((t.is_shared(), t.sum().item()))
    t.add_(1)
    made = ts.full((3,), 5.0)
    outq.put(made)
    outq.put("done")
    inq.get()  # stay alive until the parent has received `made`


def test_queue_send_shares_memory():
    fds = _fds()
    ctx = tmp.get_context("fork")
    inq, outq = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_echo, args=(inq, outq))
    p.start()
    x = ts.arange(6.0)
    assert not x.is_shared()
    inq.put(x)  # shared on send, as torch's file_descriptor strategy
    shared, total = outq.get(timeout=20)
    assert shared and total == 15.0
    made = outq.get(timeout=20)
    assert outq.get(timeout=20) == "done"
    assert x.is_shared() and x.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert made.is_shared() and made.tolist() == [5.0, 5.0, 5.0]
    inq.put("bye")
    p.join(20)
    assert p.exitcode == 0
    del x, made
    inq.close(), outq.close()
    inq.join_thread(), outq.join_thread()
    # the memfds of both tensors are closed once they are gone
    assert not [f for f in _fds() - fds if "memfd" in _link(f)]


def _link(fd):
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def _param_report(model, q):
    q.put([(type(p).__name__, isinstance(p, nn.Parameter), p.requires_grad, p.is_shared())
           for p in model.parameters()])


def test_spawned_child_gets_parameters(monkeypatch):
    _child_env(monkeypatch)
    ctx = tmp.get_context("spawn")
    model = nn.Linear(3, 2)
    model.share_memory()
    q = ctx.SimpleQueue()
    p = ctx.Process(target=_param_report, args=(model, q))
    p.start()
    report = q.get()
    p.join(20)
    assert p.exitcode == 0
    assert [r[1:] for r in report] == [(True, True, True)] * 2


# ------------------------------------------------------------------ Hogwild

def _hogwild_train(model, steps, seed):
    ts.manual_seed(seed)
    opt = ts.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        x = ts.randn(8, 4)
        y = x.sum(1, keepdim=True)
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_hogwild(method, monkeypatch):
    _child_env(monkeypatch)
    ctx = tmp.get_context(method)
    ts.manual_seed(0)
    model = nn.Linear(4, 1)
    model.share_memory()
    w0 = model.weight.detach().clone()
    loss0 = _loss(model)
    procs = [ctx.Process(target=_hogwild_train, args=(model, 20, rank)) for rank in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert not ts.allclose(model.weight.detach(), w0)
    assert _loss(model) < loss0 / 2


def _loss(model):
    g = ts.Generator().manual_seed(123)
    x = ts.randn(64, 4, generator=g)
    with ts.no_grad():
        return nn.functional.mse_loss(model(x), x.sum(1, keepdim=True)).item()


# ------------------------------------------------------------------ spawn()

def _ok(i, x):
    x[i] = i + 1


def _fails(i):
    if i == 1:
        raise ValueError("boom from child")


def test_spawn_runs_and_propagates_errors(monkeypatch):
    _child_env(monkeypatch)
    x = ts.zeros(2).share_memory_()
    assert tmp.spawn(_ok, args=(x,), nprocs=2) is None
    assert x.tolist() == [1.0, 2.0]
    # the error paths under fork (each spawned child costs an interpreter start)
    with pytest.raises(tmp.ProcessRaisedException, match="boom from child") as info:
        tmp.start_processes(_fails, nprocs=2, start_method="fork")
    assert info.value.error_index == 1 and "ValueError" in str(info.value)
    ctx = tmp.start_processes(_ok, args=(x,), nprocs=1, join=False, start_method="fork")
    assert isinstance(ctx, tmp.ProcessContext)
    while not ctx.join():
        pass

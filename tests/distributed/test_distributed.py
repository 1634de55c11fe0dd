"""tessera.distributed on the MPI (CPU) backend: the store in-process, then real multi-process
runs through the launcher (each worker script under tests/distributed/ checks itself against
NumPy or single-process references and exits non-zero on a mismatch)."""
import datetime
import os
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tessera as ts
import tessera.distributed as dist
from tessera.distributed import DistStoreError, FileStore, HashStore, TCPStore

HERE = os.path.dirname(os.path.abspath(__file__))
WORKERS = HERE
PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(ts.__file__)))


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def launch(nproc: int, script: str, *args: str, extra: tuple = (), timeout: float = 120,
           background: bool = False):
    cmd = [sys.executable, "-m", "tessera.distributed.run", "--nproc-per-node", str(nproc),
           *extra, os.path.join(WORKERS, script), *args]
    p = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if background:
        return p
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.terminate()                  # the launcher ends its workers
        out, _ = p.communicate(timeout=30)
        raise AssertionError(f"launcher timed out after {timeout} s:\n{out[-4000:]}")
    return subprocess.CompletedProcess(cmd, p.returncode, out)


# ------------------------------------------------------------------- the store, in-process
def test_tcp_store_set_get_add_wait_and_timeouts() -> None:
    master = TCPStore("127.0.0.1", 0, 2, is_master=True, timeout=datetime.timedelta(seconds=5))
    client = TCPStore("127.0.0.1", master.port, 2, timeout=2)
    threading.Timer(0.2, lambda: master.set("late", b"v")).start()
    assert client.get("late") == b"v"                       # get blocks until set
    assert client.add("n", 2) == 2 and master.add("n", 3) == 5
    assert client.check(["late", "n"]) and not client.check(["missing"])
    client.wait(["late"])
    t0 = time.monotonic()
    with pytest.raises(DistStoreError, match="missing"):
        client.get("missing")
    assert 1.5 < time.monotonic() - t0 < 10
    with pytest.raises(DistStoreError):
        client.wait(["missing"], datetime.timedelta(seconds=0.3))
    assert client.delete_key("late") and not client.check(["late"])
    client.close()
    master.close()
    with pytest.raises(DistStoreError, match="could not reach"):
        TCPStore("127.0.0.1", _free_port(), timeout=0.5)


@pytest.mark.parametrize("make", [lambda p: FileStore(str(p / "store"), 2, timeout=0.3),
                                  lambda p: HashStore(timeout=0.3)])
def test_file_and_hash_store(tmp_path, make) -> None:
    s = make(tmp_path)
    s.set("a", "1")
    assert s.get("a") == b"1" and s.add("c", 4) == 4 and s.add("c", -1) == 3
    assert s.check(["a", "c"]) and s.num_keys() == 2
    assert s.delete_key("a") and not s.check(["a"])
    with pytest.raises(DistStoreError):
        s.get("nothing")


# ------------------------------------------------------------------- one rank, in-process
def test_api_errors_without_a_group() -> None:
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.all_reduce(ts.ones(2))
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("smoke", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    env = _env()
    old = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(env)
        with pytest.raises(ValueError, match="RANK"):
            dist.init_process_group("gloo")
    finally:
        os.environ.clear()
        os.environ.update(old)
    with pytest.raises(ValueError, match="init_method"):
        dist.init_process_group("gloo", init_method="udp://x:1", rank=0, world_size=1)


@pytest.mark.parametrize("method", ["tcp", "file"])
def test_world_of_one(tmp_path, method) -> None:
    url = (f"tcp://127.0.0.1:{_free_port()}" if method == "tcp"
           else f"file://{tmp_path / 'rdzv'}")
    dist.init_process_group("gloo", init_method=url, rank=0, world_size=1, timeout=10)
    try:
        assert dist.get_rank() == 0 and dist.get_world_size() == 1
        assert dist.get_backend() == "gloo"
        x = ts.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
        dist.all_reduce(x, dist.ReduceOp.AVG)
        np.testing.assert_array_equal(np.asarray(x), np.arange(6).reshape(2, 3))
        out = ts.zeros((2, 3))
        dist.all_gather_into_tensor(out, x)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(x))
        objs = [None]
        dist.all_gather_object(objs, {"k": 1})
        assert objs == [{"k": 1}]
        with pytest.raises(RuntimeError, match="twice"):
            dist.init_process_group("gloo", init_method=url, rank=0, world_size=1)
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()


# ------------------------------------------------------------------- several processes
def _ok(r: subprocess.CompletedProcess, n: int, marker: str) -> None:
    assert r.returncode == 0, r.stdout[-4000:]
    assert r.stdout.count(marker) == n, r.stdout[-4000:]


def test_collectives_three_ranks_match_numpy() -> None:
    _ok(launch(3, "collectives_worker.py"), 3, "collectives ok")


def test_ddp_no_sync_unused_zero_four_ranks() -> None:
    _ok(launch(4, "ddp_worker.py"), 4, "ddp ok")


@pytest.mark.parametrize("nproc", [2, 4])
def test_fsdp_matches_single_process_training(nproc) -> None:
    """tests/distributed/fsdp_worker.py: FULL_SHARD/SHARD_GRAD_OP/NO_SHARD, nested and flat,
    against one process on the concatenated batch (float64, 1e-10), state dicts at another
    world size, memory per rank 1/world."""
    r = launch(nproc, "fsdp_worker.py", timeout=240)
    _ok(r, nproc, "fsdp ok")
    assert "optimizer state" in r.stdout and f"1/world = {1 / nproc:.3f}" in r.stdout


def _losses(text: str) -> list:
    return [line for line in text.splitlines() if line.startswith("LOSS")]


def test_two_nodes_on_one_host_give_the_losses_of_one_node() -> None:
    port = _free_port()
    nodes = [launch(1, "train_worker.py", background=True,
                    extra=("--nnodes", "2", "--node-rank", str(k), "--master-port", str(port)))
             for k in (0, 1)]
    outs = [p.communicate(timeout=120)[0] for p in nodes]
    assert [p.returncode for p in nodes] == [0, 0], outs
    one = launch(2, "train_worker.py")
    assert one.returncode == 0, one.stdout
    assert len(_losses(one.stdout)) == 4
    assert _losses(outs[0]) == _losses(one.stdout)
    # each rank checked DDP's parameters against single-process training on the global batch
    assert "DDP matches single-process training over 4 steps" in one.stdout, one.stdout
    assert "DDP matches single-process training over 4 steps" in outs[0], outs[0]


def test_launcher_sets_torchrun_env(tmp_path) -> None:
    r = launch(2, "launcher_worker.py", str(tmp_path), "ok", "--flag", timeout=60)
    assert r.returncode == 0, r.stdout
    import json
    envs = [json.loads((tmp_path / f"env.{k}").read_text()) for k in range(2)]
    assert [e["RANK"] for e in envs] == ["0", "1"] and [e["LOCAL_RANK"] for e in envs] == ["0", "1"]
    assert {e["WORLD_SIZE"] for e in envs} == {"2"} and {e["LOCAL_WORLD_SIZE"] for e in envs} == {"2"}
    assert len({e["MASTER_PORT"] for e in envs}) == 1 and envs[0]["MASTER_ADDR"] == "127.0.0.1"
    assert envs[0]["TORCHELASTIC_RUN_ID"] == envs[1]["TORCHELASTIC_RUN_ID"]
    assert envs[0]["argv"] == ["--flag"]


def test_launcher_ends_all_workers_when_one_fails(tmp_path) -> None:
    t0 = time.monotonic()
    r = launch(3, "launcher_worker.py", str(tmp_path), "fail", timeout=60)
    assert r.returncode == 3, r.stdout
    assert "local_rank 1 (rank 1" in r.stdout and "exit code 3" in r.stdout
    assert time.monotonic() - t0 < 30                     # the others were ended, not waited
    assert not list(tmp_path.glob("finished.*"))


def test_launcher_bad_arguments() -> None:
    r = subprocess.run([sys.executable, "-m", "tessera.distributed.run", "--nnodes", "2",
                        "--node-rank", "2", "x.py"], env=_env(), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "--node-rank" in r.stderr


def test_dead_rank_makes_the_others_raise() -> None:
    t0 = time.monotonic()
    r = launch(2, "dead_rank_worker.py", "exit0", timeout=90)
    assert "RAISED" in r.stdout and "DistBackendError" in r.stdout, r.stdout
    assert "timed out after 3.0 s" in r.stdout, r.stdout
    assert time.monotonic() - t0 < 60


@pytest.mark.parametrize("mode,after", [("hang", "timed out after 3.0 s"),
                                       ("block", "timed out after 2.0 s")])
def test_a_rank_that_never_joins_makes_the_waiting_one_raise(mode, after) -> None:
    """Rank 1 stays alive but skips the all_reduce: rank 0 raises after timeout= (3 s), or
    after Work.wait's own timeout (a timedelta of 2 s)."""
    r = launch(2, "dead_rank_worker.py", mode, timeout=90)
    assert r.returncode == 0, r.stdout
    assert "RAISED" in r.stdout and after in r.stdout, r.stdout


@pytest.mark.parametrize("mode,codes", [("crash", {7: "exit code 7"}),
                                       ("kill", {137: "SIGKILL", 9: "exit code 9"})])
def test_a_rank_that_dies_ends_the_one_waiting_in_a_collective(mode, codes) -> None:
    """Rank 0 waits in an all_reduce with a 60 s timeout; rank 1 dies (exit code 7, or
    SIGKILL): the launcher ends rank 0 within seconds and exits with rank 1's status. (A
    worker under mpiexec that dies by a signal is reported by MPICH's Hydra as exit code =
    the signal's number, 9; a plain worker as SIGKILL, 128 + 9.)"""
    t0 = time.monotonic()
    r = launch(2, "dead_rank_worker.py", mode, timeout=90)
    took = time.monotonic() - t0
    assert r.returncode in codes, (r.returncode, r.stdout)
    assert "local_rank 1 (rank 1" in r.stdout and codes[r.returncode] in r.stdout, r.stdout
    assert "NO ERROR" not in r.stdout and "RAISED" not in r.stdout, r.stdout
    assert took < 40, took


def test_mpi_backend_without_a_process_manager_says_how_to_launch() -> None:
    """A bare process (no launcher, no mpiexec) asking for world_size 2 gets a clear error."""
    env = _env()
    env.update(RANK="0", WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
    for k in list(env):
        if k.startswith("PMI") or k.startswith("OMPI_"):
            env.pop(k)
    code = ("import tessera.distributed as d\n"
            "try:\n    d.init_process_group('gloo', timeout=20)\n"
            "except RuntimeError as e:\n    print('ERR', e)\n")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert "ERR" in r.stdout and "tessera.distributed.run" in r.stdout, r.stdout + r.stderr

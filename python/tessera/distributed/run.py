"""The launcher: ``python -m tessera.distributed.run --nproc-per-node N [--nnodes M
--node-rank R --master-addr A --master-port P] script.py args...`` (torchrun's interface).

It starts N workers on this node with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, ROLE_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID), so
scripts written for torchrun run unchanged, and watches them: when one fails, it ends the
others (SIGTERM to each worker's process group, SIGKILL after a grace period), prints which
rank failed and how, and exits with that worker's exit code (128 + signal for a signal).

Each worker runs under the ``mpich`` wheel's ``mpiexec -n 1`` when it is installed (so the
MPI backend can join the workers into one world, Note [MPI world from a store] in
docs/design.md); ``--no-mpiexec`` starts plain Python processes (the NCCL backend needs no
MPI). Rank 0 of the job hosts the rendezvous store inside ``init_process_group``.
"""
from __future__ import annotations

import argparse as _argparse
import os as _os
import shutil as _shutil
import signal as _signal
import socket as _socket
import subprocess as _subprocess
import sys as _sys
import sysconfig as _sysconfig
import time as _time
import typing as _t
import uuid as _uuid

if _t.TYPE_CHECKING:
    from typing import List, Optional

__all__ = ["main", "parse_args"]


def parse_args(argv: Optional[List[str]] = None) -> _argparse.Namespace:
    p = _argparse.ArgumentParser(prog="python -m tessera.distributed.run",
                                description="Start N training processes per node, torchrun "
                                            "style.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc_per_node", default="1",
                   help="workers on this node: a number, 'cpu' or 'gpu'")
    p.add_argument("--nnodes", type=int, default=1, help="number of nodes (fixed size)")
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int, default=None)
    p.add_argument("--standalone", action="store_true",
                   help="single node on a free port (torchrun's --standalone)")
    p.add_argument("--no-mpiexec", dest="no_mpiexec", action="store_true",
                   help="start plain Python workers, not under mpiexec -n 1")
    p.add_argument("--grace", type=float, default=5.0,
                   help="seconds between SIGTERM and SIGKILL when ending workers")
    p.add_argument("-m", "--module", dest="module", action="store_true",
                   help="run training_script as a module (python -m)")
    p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true",
                   help="run training_script as an executable, not through Python")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=_argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.nnodes < 1 or not 0 <= args.node_rank < args.nnodes:
        p.error(f"--node-rank {args.node_rank} must be in [0, --nnodes {args.nnodes})")
    return args


def _nproc(spec: str) -> int:
    if spec == "gpu":
        from .. import cuda
        return max(cuda.device_count(), 1)
    if spec in ("cpu", "auto"):
        return _os.cpu_count() or 1
    n = int(spec)
    if n < 1:
        raise SystemExit(f"--nproc-per-node must be at least 1, got {n}")
    return n


def _free_port() -> int:
    with _socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def find_mpiexec() -> Optional[str]:
    """The mpich wheel's mpiexec (beside this Python's scripts), else one on PATH."""
    for d in (_sysconfig.get_path("scripts"), _os.path.dirname(_sys.executable)):
        c = _os.path.join(d, "mpiexec")
        if _os.path.exists(c):
            return c
    return _shutil.which("mpiexec")


def _mpiexec_prefix(mpiexec: str) -> List[str]:
    """`mpiexec -n 1`; MPICH's Hydra is told to start locally by fork over loopback, so it needs
    neither ssh nor a resolvable host name (containers, CI)."""
    if _os.path.exists(_os.path.join(_os.path.dirname(mpiexec), "hydra_pmi_proxy")):
        return [mpiexec, "-launcher", "fork", "-localhost", "127.0.0.1", "-hosts", "127.0.0.1",
                "-n", "1"]
    return [mpiexec, "-n", "1"]


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the launcher dies, even by SIGKILL (Linux)."""
    if _sys.platform.startswith("linux"):
        import ctypes
        try:
            ctypes.CDLL(None).prctl(1, _signal.SIGTERM)     # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _describe(code: int) -> str:
    if code < 0:
        try:
            return f"signal {_signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    nproc = _nproc(args.nproc_per_node)
    world = nproc * args.nnodes
    port = args.master_port
    if port is None:
        port = _free_port() if (args.standalone or args.nnodes == 1) else 29500
    mpiexec = None if args.no_mpiexec else find_mpiexec()
    if args.no_python:
        cmd = [args.training_script]
    elif args.module:
        cmd = [_sys.executable, "-u", "-m", args.training_script]
    else:
        cmd = [_sys.executable, "-u", args.training_script]
    cmd += args.training_script_args
    run_id = _os.environ.get("TORCHELASTIC_RUN_ID", _uuid.uuid4().hex[:12])
    procs: List[_subprocess.Popen] = []
    for local in range(nproc):
        rank = args.node_rank * nproc + local
        env = dict(_os.environ, RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(world),
                   LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(args.node_rank),
                   ROLE_RANK=str(rank), ROLE_WORLD_SIZE=str(world), ROLE_NAME="default",
                   GROUP_WORLD_SIZE=str(args.nnodes), MASTER_ADDR=args.master_addr,
                   MASTER_PORT=str(port), TORCHELASTIC_RUN_ID=run_id,
                   TORCHELASTIC_RESTART_COUNT="0", TORCHELASTIC_MAX_RESTARTS="0")
        if nproc > 1 and "OMP_NUM_THREADS" not in _os.environ:
            env["OMP_NUM_THREADS"] = "1"      # torchrun's default, so workers don't oversubscribe
        full = (_mpiexec_prefix(mpiexec) + cmd) if mpiexec else cmd
        procs.append(_subprocess.Popen(full, env=env, start_new_session=True,
                                      preexec_fn=_die_with_parent))

    def end_all(sig: int = _signal.SIGTERM) -> None:
        for p in procs:
            if p.poll() is None:
                try:
                    _os.killpg(p.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        deadline = _time.monotonic() + args.grace
        while any(p.poll() is None for p in procs) and _time.monotonic() < deadline:
            _time.sleep(0.02)
        for p in procs:
            if p.poll() is None:
                try:
                    _os.killpg(p.pid, _signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                p.wait()

    def on_signal(signum: int, frame: object) -> None:
        end_all()
        raise SystemExit(128 + signum)
    old = {s: _signal.signal(s, on_signal) for s in (_signal.SIGINT, _signal.SIGTERM)}
    try:
        while True:
            codes = [p.poll() for p in procs]
            failed = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                local, code = failed[0]
                rank = args.node_rank * nproc + local
                print(f"tessera.distributed.run: worker local_rank {local} (rank {rank}, "
                      f"pid {procs[local].pid}) failed with {_describe(code)}; ending the "
                      f"other workers", file=_sys.stderr, flush=True)
                end_all()
                return 128 - code if code < 0 else code
            if all(c == 0 for c in codes):
                return 0
            _time.sleep(0.05)
    finally:
        for s, h in old.items():
            _signal.signal(s, h)


if __name__ == "__main__":
    _sys.exit(main())

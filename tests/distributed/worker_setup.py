"""The start every test worker of this folder shares: DEVICE=cuda (the NCCL backend, one GPU
per rank, that GPU the default device) or cpu (the MPI backend, answering to "gloo")."""
import os

import tessera as ts
import tessera.distributed as dist

DEVICE = os.environ.get("DEVICE", "cpu")


def join(timeout: float) -> tuple:
    """init_process_group for DEVICE; returns (rank, world size)."""
    if DEVICE == "cuda":
        ts.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        ts.set_default_device(f"cuda:{os.environ['LOCAL_RANK']}")
    dist.init_process_group("nccl" if DEVICE == "cuda" else "gloo", timeout=timeout)
    return dist.get_rank(), dist.get_world_size()

"""Runs several worker scripts of this folder one after the other in one process per rank (one
interpreter start and CUDA initialization instead of one per script), as
``python -m tessera.distributed.run --nproc-per-node N suite_worker.py collectives ddp ...``
(benchmarks/distributed_device.sh uses it for the NCCL runs). Each script initializes and
destroys its own process group; script k meets the others on MASTER_PORT + k, so a rank that
finished script k-1 early cannot reach rank 0's store of the previous script."""
import os
import runpy
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
base = int(os.environ["MASTER_PORT"])
for k, name in enumerate(sys.argv[1:], start=1):
    os.environ["MASTER_PORT"] = str(base + k)
    sys.argv = [os.path.join(HERE, f"{name}_worker.py")]
    t0 = time.monotonic()
    runpy.run_path(sys.argv[0], run_name="__main__")
    print(f"suite: rank {os.environ['RANK']}: {name} passed in {time.monotonic() - t0:.1f} s",
          flush=True)

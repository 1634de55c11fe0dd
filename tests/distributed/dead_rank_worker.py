"""Worker of tests/distributed/test_distributed.py: rank 1 dies right after joining; rank 0's next
collective must raise (timeout) rather than hang. Prints `RAISED <seconds>` on rank 0."""
import os
import time

import tessera as ts
import tessera.distributed as dist

dist.init_process_group("gloo", timeout=3)
dist.barrier()
if dist.get_rank() == 1:
    os._exit(0)                      # dies without a word (no MPI finalize)
time.sleep(0.5)
t0 = time.monotonic()
try:
    dist.all_reduce(ts.ones(4))
    print("NO ERROR", flush=True)
except dist.DistError as e:
    print(f"RAISED {time.monotonic() - t0:.1f} {type(e).__name__}: {e}", flush=True)

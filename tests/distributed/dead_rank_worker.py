"""Worker of tests/distributed/test_distributed.py (and, with DEVICE=cuda, of the NCCL run in
benchmarks/distributed_device.sh): a rank dies or stops answering; the others must not hang.
argv[1], the mode:
  exit0  rank 1 exits quietly (code 0) after a barrier: rank 0's next collective raises
         DistBackendError within timeout= (3 s); prints `RAISED <seconds> ...` on rank 0.
  crash  rank 1 exits with code 7 while rank 0 waits in an all_reduce with timeout= 60 s:
         the launcher ends rank 0 long before that.
  kill   as crash, but rank 1 dies by SIGKILL.
  hang   rank 1 stays alive but never joins the all_reduce: under NCCL rank 0's watchdog
         aborts the communicator after timeout= (3 s) and the error reaches rank 0's main
         thread while it waits in ts.cuda.synchronize() (MPI: the all_reduce's wait raises).
  block  as hang, but rank 0 waits with Work.wait(timeout=timedelta(seconds=2)): the error is
         raised by wait() itself.
  hold   (NCCL) as hang, but rank 0 waits in x.cpu(), a device-to-host copy that keeps the
         GIL, so the watchdog thread cannot run: the abort timer (Note [Abort without the
         GIL]) calls ncclCommAbort from C after timeout + slack (5 s), the copy returns, and
         the error reaches the main thread soon after (the sleep that follows)."""
import datetime
import os
import signal
import sys
import time

import tessera as ts
import tessera.distributed as dist

mode = sys.argv[1] if len(sys.argv) > 1 else "exit0"
DEVICE = os.environ.get("DEVICE", "cpu")
if DEVICE == "cuda":
    ts.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl" if DEVICE == "cuda" else "gloo",
                        timeout=60 if mode in ("crash", "kill") else 3)
dev = f"cuda:{os.environ['LOCAL_RANK']}" if DEVICE == "cuda" else "cpu"
dist.barrier()
R = dist.get_rank()
if R == 1:
    if mode == "exit0":
        os._exit(0)                  # dies without a word (no MPI finalize)
    if mode == "crash":
        time.sleep(0.5)
        os._exit(7)
    if mode == "kill":
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(8)                    # hang, block: alive but absent
    os._exit(0)
if mode == "exit0":
    time.sleep(0.5)
t0 = time.monotonic()
try:
    x = ts.ones(4, device=dev)
    if mode == "block":
        dist.all_reduce(x, async_op=True).wait(timeout=datetime.timedelta(seconds=2))
    else:
        dist.all_reduce(x)
        if DEVICE == "cuda" and mode == "hold":
            x.cpu()
            time.sleep(1.0)
        elif DEVICE == "cuda":
            ts.cuda.synchronize()
    print("NO ERROR", flush=True)
except dist.DistError as e:
    print(f"RAISED {time.monotonic() - t0:.1f} {type(e).__name__}: {e}", flush=True)
    if DEVICE == "cuda":
        try:
            dist.all_reduce(x)
            print("NO ERROR after the abort", flush=True)
        except dist.DistError as e2:
            print(f"REFUSED {type(e2).__name__}: {e2}", flush=True)
    dist.destroy_process_group()
    sys.exit(0)

"""Worker of tests/distributed/test_distributed.py's launcher tests (no tessera import: fast).
argv: out_dir mode. Writes its torchrun environment to out_dir/env.<rank>."""
import json
import os
import sys
import time

out, mode = sys.argv[1], sys.argv[2]
rank = int(os.environ["RANK"])
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
        "GROUP_RANK", "TORCHELASTIC_RUN_ID"]
with open(os.path.join(out, f"env.{rank}"), "w") as f:
    json.dump({k: os.environ.get(k) for k in keys} | {"argv": sys.argv[3:]}, f)
if mode == "fail" and rank == 1:
    time.sleep(0.5)
    sys.exit(3)
if mode == "fail":
    time.sleep(60)                    # must be ended by the launcher long before this
    open(os.path.join(out, f"finished.{rank}"), "w").close()

#!/usr/bin/env bash
# One batched run on a 2-GPU machine (device tool, kind nvidia-h100-x2 / nvidia-h200-x2):
#   1. builds tessera with CUDA (benchmarks/run_cuda_device.sh build, ~3 min on 32 cores);
#   2. NCCL tests through the launcher, one process per GPU: every collective against NumPy
#      (tests/distributed/collectives_worker.py: all_reduce with every op, broadcast, reduce,
#      all_gather, reduce_scatter, all_to_all_single, send/recv, async Work, subgroups),
#      DDP/no_sync/unused parameters/ZeRO (ddp_worker.py) and a DDP training run checked step
#      by step against single-process training on the global batch (train_worker.py);
#   3. benchmarks/bench_distributed.py for tessera and PyTorch: all_reduce of 1 GiB float32
#      (bus bandwidth) and the DDP GPT-2-small step (bf16 autocast, batch 8 x 1024 per GPU) on
#      1 and N GPUs, with the scaling efficiency.
# $OUT gets three files (the device tool returns at most 8): dist_summary.txt (read this
# first; also printed), dist_bench.jsonl and dist_logs.tgz (every log, the build's included).
# NCCL comes from the image's nvidia-nccl-cu13 (PyTorch's dependency); a carried .whl/ is
# installed to /tmp/site first and wins if it holds one. Multicast stays off (KINDS.md).
# Usage: bash benchmarks/distributed_device.sh   (N=2 GPUs; SKIP_BUILD=1 on a warm machine;
#        REPS=8 timed GPT steps; STAGES="tests bench" to pick)
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
S=$OUT/dist_summary.txt
LOG=/tmp/dist_logs
rm -rf "$LOG" && mkdir -p "$LOG"
trap 'tar czf "$OUT/dist_logs.tgz" -C "$LOG" . 2>/dev/null' EXIT
N=${N:-2}
REPS=${REPS:-8}
STAGES=${STAGES:-tests bench}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$S"; }

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  OUT=$LOG ARCHS=${ARCHS:-90} bash benchmarks/run_cuda_device.sh build > "$LOG/build_round.txt" 2>&1
  rc=$?
  tail -4 "$LOG/build_round.txt" | tee -a "$S"
  [[ $rc == 0 ]] || { stamp "build failed"; exit 1; }
fi
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD/python
SO=_C.cpython-312-x86_64-linux-gnu.so
[[ -e python/tessera/$SO ]] || ln -sf ../../build/cuda/$SO python/tessera/
stamp "built"
python3 - <<'EOF' 2>&1 | tee -a "$S"
import tessera as ts, tessera.distributed as d
from tessera.distributed import nccl_backend as nb
try:
    v = nb.version()
except Exception as e:
    v = f"NCCL not loadable: {e}"
print("tessera", ts.__version__, "| CUDA devices", ts.cuda.device_count(),
      "| NCCL available", d.is_nccl_available(), "|", v)
EOF
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader | tee -a "$S"
nvidia-smi topo -m > "$LOG/topo.txt" 2>&1

L="python3 -m tessera.distributed.run --no-mpiexec --nproc-per-node"
if [[ $STAGES == *tests* ]]; then
  for w in collectives ddp train; do
    DEVICE=cuda timeout -k 5 150 $L "$N" tests/distributed/${w}_worker.py > "$LOG/nccl_$w.log" 2>&1
    rc=$?
    stamp "NCCL $w on $N GPUs: rc=$rc, $(grep -cE ': (collectives|ddp) ok$|^DDP matches' "$LOG/nccl_$w.log") ranks ok"
    grep -E "^DDP matches|LOSS 3 " "$LOG/nccl_$w.log" | tee -a "$S"
    [[ $rc == 0 ]] || grep -E "Error|error|assert|failed|NCCL" "$LOG/nccl_$w.log" | head -12 | tee -a "$S"
    if [[ $rc != 0 && $w == collectives ]]; then   # the smallest NCCL job, with NCCL's own log
      cat > /tmp/nccl_smoke.py <<'EOF2'
import os, tessera as ts, tessera.distributed as dist
ts.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl", timeout=30)
x = ts.ones((4,), device=f"cuda:{os.environ['LOCAL_RANK']}")
dist.all_reduce(x)
print("rank", dist.get_rank(), "smoke all_reduce", x.cpu().tolist(), flush=True)
dist.destroy_process_group()
EOF2
      NCCL_DEBUG=INFO timeout -k 5 60 $L "$N" /tmp/nccl_smoke.py > "$LOG/nccl_smoke.log" 2>&1
      stamp "NCCL smoke (NCCL_DEBUG=INFO) rc=$?"
      grep -E "smoke|WARN|Error|error|failed" "$LOG/nccl_smoke.log" | head -20 | tee -a "$S"
    fi
  done
fi

if [[ $STAGES == *bench* ]]; then
  B="benchmarks/bench_distributed.py --out $OUT/dist_bench.jsonl"
  for lib in torch tessera; do
    timeout -k 5 90 $L "$N" $B --lib $lib --what allreduce > "$LOG/allreduce_$lib.log" 2>&1 ||
      tail -5 "$LOG/allreduce_$lib.log" | tee -a "$S"
  done
  stamp "all_reduce done"
  # One GPU: PyTorch on GPU 0 and tessera on GPU 1 at once (separate GPUs and host cores).
  CUDA_VISIBLE_DEVICES=0 timeout -k 5 150 $L 1 --master-port 29511 $B --lib torch --what gpt --reps "$REPS" \
    > "$LOG/gpt1_torch.log" 2>&1 &
  CUDA_VISIBLE_DEVICES=1 timeout -k 5 150 $L 1 --master-port 29512 $B --lib tessera --what gpt --reps "$REPS" \
    > "$LOG/gpt1_tessera.log" 2>&1
  wait
  stamp "GPT step on 1 GPU done"
  for lib in torch tessera; do
    timeout -k 5 150 $L "$N" $B --lib $lib --what gpt --reps "$REPS" > "$LOG/gpt${N}_$lib.log" 2>&1 ||
      tail -8 "$LOG/gpt${N}_$lib.log" | tee -a "$S"
  done
  stamp "GPT step on $N GPUs done"
  for f in "$LOG"/gpt1_*.log; do grep -qE '"what": "gpt"' "$f" || tail -8 "$f" | tee -a "$S"; done
  python3 - "$OUT/dist_bench.jsonl" <<'EOF' 2>&1 | tee -a "$S"
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
for r in rows:
    if r["what"] == "allreduce":
        print(f"all_reduce {r['mib']} MiB float32, {r['world']} GPUs, {r['lib']}: "
              f"{r['ms']:.2f} ms, bus bandwidth {r['busbw_gbs']:.1f} GB/s")
gpt = {(r["lib"], r["world"]): r for r in rows if r["what"] == "gpt"}
for lib in ("torch", "tessera"):
    one = gpt.get((lib, 1))
    for (l, w), r in sorted(gpt.items()):
        if l != lib:
            continue
        eff = (f", scaling efficiency {r['tokens_per_s_per_gpu'] / one['tokens_per_s_per_gpu']:.1%}"
               if one and w > 1 else "")
        print(f"GPT-2-small DDP step, {lib}, {w} GPU(s): {r['ms']:.1f} ms, "
              f"{r['tokens_per_s_per_gpu']:.0f} tokens/s per GPU{eff}")
EOF
fi
stamp "done"

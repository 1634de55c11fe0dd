#!/usr/bin/env bash
# One batched run on a 4-GPU machine (device tool, kind nvidia-h100-x4 / nvidia-h200-x4; a
# 2-GPU machine runs the 2-GPU half), time-boxed to about 8 minutes with the build:
#   1. builds tessera with CUDA (benchmarks/run_cuda_device.sh build, ~3 min);
#   2. tests: the NCCL test suite on 2 GPUs (0,1) and on 4, each in one process per rank
#      (tests/distributed/suite_worker.py: collectives against NumPy, DDP/no_sync/unused/ZeRO,
#      DDP training against single-process training, FSDP against single-process training);
#      meanwhile on GPUs 2,3 the dead-rank checks of the NCCL watchdog
#      (tests/distributed/dead_rank_worker.py: a rank that never joins -> the other's
#      watchdog aborts and raises after timeout=3 s; Work.wait(timeout=2) raises; waiting in
#      .cpu() (the GIL held) -> the abort timer aborts from C at 5 s and the error follows; a
#      rank that exits -> the other raises). rc=0 of a suite run also means no crash at exit;
#   3. bench: benchmarks/bench_distributed.py for tessera and PyTorch 2.11 on the same machine:
#      GPT-2-small step on 1 GPU (PyTorch on GPU 0 and tessera on GPU 1 at once), then on 2
#      and 4 GPUs the all_reduce of 1 GiB float32 (bus bandwidth) and the DDP step; on 4 GPUs
#      also ZeRO (optimizer-state bytes per GPU against unsharded, step against DDP) and FSDP.
# $OUT gets three files (the device tool returns at most 8): dist_summary.txt (read this first;
# also printed), dist_bench.jsonl and dist_logs.tgz (every log, the build's included).
# NCCL comes from the image's nvidia-nccl-cu13 (PyTorch's dependency); a carried .whl/ is
# installed to /tmp/site first. NVLink multicast stays off (KINDS.md): NCCL_NVLS_ENABLE=0 etc.
# Usage: bash benchmarks/distributed_device.sh
#   env: STAGES="tests bench" (pick), NS="2 4" (GPU counts), REPS=8 (timed GPT steps),
#        BUDGET=450 (seconds from the start after which the remaining steps are skipped and
#        said so), SKIP_BUILD=1 (warm machine), PAR2=1 (2-GPU benchmarks of both libraries at
#        once on GPUs 0,1 and 2,3 instead of one after the other), DRY=1 (a rehearsal on a
#        machine without GPUs: MPI backend, CPU tensors, a tiny GPT; checks the script itself).
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
S=$OUT/dist_summary.txt
LOG=/tmp/dist_logs
rm -rf "$LOG" && mkdir -p "$LOG"
: > "$S"
trap 'tar czf "$OUT/dist_logs.tgz" -C "$LOG" . 2>/dev/null' EXIT
NS=${NS:-2 4}
REPS=${REPS:-8}
STAGES=${STAGES:-tests bench}
BUDGET=${BUDGET:-450}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
T0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$S"; }
# time_left NEED: true when NEED more seconds fit in the budget; else says what is skipped
time_left() {
  local used=$(( $(date +%s) - T0 ))
  if (( used + $1 > BUDGET )); then stamp "SKIPPED (budget $BUDGET s, used $used s): $2"; return 1; fi
}

DRY=${DRY:-0}
WDEV=cuda
BX=""
if [[ $DRY == 1 ]]; then
  SKIP_BUILD=1 WDEV=cpu BX="--device cpu --layers 1 --batch 1 --block 64 --vocab 512 --mib 4"
  nvidia-smi() { case "$1" in -L) for i in 0 1 2 3; do echo "GPU $i: (rehearsal)"; done;; *) echo "(rehearsal: no nvidia-smi)";; esac; }
fi
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  OUT=$LOG ARCHS=${ARCHS:-90} bash benchmarks/run_cuda_device.sh build > "$LOG/build_round.txt" 2>&1
  rc=$?
  tail -4 "$LOG/build_round.txt" | tee -a "$S"
  [[ $rc == 0 ]] || { stamp "build failed"; exit 1; }
fi
if [[ $DRY != 1 ]]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
  SO=_C.cpython-312-x86_64-linux-gnu.so
  [[ -e python/tessera/$SO ]] || ln -sf ../../build/cuda/$SO python/tessera/
fi
export PYTHONPATH=/tmp/site:$PWD/python
stamp "built"
python3 - <<'EOF' 2>&1 | tee -a "$S"
import tessera as ts, tessera.distributed as d, torch
from tessera.distributed import nccl_backend as nb
try:
    v = nb.version()
except Exception as e:
    v = f"NCCL not loadable: {e}"
print("tessera", ts.__version__, "| torch", torch.__version__, "| CUDA devices",
      ts.cuda.device_count(), "| NCCL available", d.is_nccl_available(), "|", v)
EOF
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader | tee -a "$S"
nvidia-smi topo -m > "$LOG/topo.txt" 2>&1
NGPU=$(nvidia-smi -L | wc -l)
NS_OK=""
for n in $NS; do (( n <= NGPU )) && NS_OK="$NS_OK $n"; done
GPUS() { seq -s, 0 $(( $1 - 1 )); }
L="python3 -m tessera.distributed.run --no-mpiexec"
[[ $DRY == 1 ]] && L="python3 -m tessera.distributed.run"

suite() {  # n gpus port: the NCCL test suite on `gpus`
  local n=$1 gpus=$2 port=$3 f=$LOG/nccl_suite_$1.log
  CUDA_VISIBLE_DEVICES=$gpus DEVICE=$WDEV timeout -k 5 150 $L --nproc-per-node "$n" --master-port "$port" \
    tests/distributed/suite_worker.py collectives ddp train fsdp > "$f" 2>&1
  local rc=$?
  stamp "NCCL suite on $n GPUs ($gpus): rc=$rc (0 also means a clean exit); $(grep -c '^suite: .* passed' "$f") of $(( 4 * n )) rank-scripts passed"
  grep -E "^suite: rank 0|^DDP matches|^FSDP memory|failed with" "$f" | tee -a "$S"
  if [[ $rc != 0 ]]; then
    grep -E "Error|error|assert|Assert|SIG|NCCL WARN" "$f" | head -15 | tee -a "$S"
    cat > /tmp/nccl_smoke.py <<'EOF2'
import os, tessera as ts, tessera.distributed as dist
ts.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl", timeout=30)
x = ts.ones((4,), device=f"cuda:{os.environ['LOCAL_RANK']}")
dist.all_reduce(x)
print("rank", dist.get_rank(), "smoke all_reduce", x.cpu().tolist(), flush=True)
dist.destroy_process_group()
EOF2
    CUDA_VISIBLE_DEVICES=$gpus NCCL_DEBUG=INFO timeout -k 5 60 $L --nproc-per-node "$n" --master-port $(( port + 50 )) \
      /tmp/nccl_smoke.py > "$LOG/nccl_smoke_$n.log" 2>&1
    stamp "NCCL smoke on $n GPUs (NCCL_DEBUG=INFO): rc=$?"
    grep -E "smoke|WARN|Error|error|failed" "$LOG/nccl_smoke_$n.log" | head -12 | tee -a "$S"
  fi
}

dead() {  # gpus port: the watchdog checks, 2 ranks
  local gpus=$1 port=$2
  for mode in hang block hold exit0; do
    local f=$LOG/nccl_dead_$mode.log t=$(date +%s)
    CUDA_VISIBLE_DEVICES=$gpus DEVICE=$WDEV timeout -k 5 60 $L --nproc-per-node 2 --master-port "$port" \
      tests/distributed/dead_rank_worker.py "$mode" > "$f" 2>&1
    local rc=$?
    stamp "NCCL dead rank '$mode' ($gpus): rc=$rc in $(( $(date +%s) - t )) s: $(grep -E '^(RAISED|NO ERROR)' "$f" | cut -c1-300)"
    grep -E "^REFUSED" "$f" | cut -c1-160 | tee -a "$S"
    [[ $rc == 0 ]] || grep -E "Error|SIG|failed with" "$f" | head -6 | tee -a "$S"
    port=$(( port + 1 ))
  done
}

if [[ $STAGES == *tests* ]]; then
  if [[ " $NS_OK " == *" 2 "* ]] && time_left 60 "NCCL tests on 2 GPUs"; then
    if (( NGPU >= 4 )); then
      suite 2 0,1 29610 &
      dead 2,3 29620
      wait
    else
      suite 2 0,1 29610
      time_left 60 "dead-rank checks" && dead 0,1 29620
    fi
  fi
  if [[ " $NS_OK " == *" 4 "* ]] && time_left 45 "NCCL tests on 4 GPUs"; then
    suite 4 0,1,2,3 29650
  fi
fi

if [[ $STAGES == *bench* ]]; then
  B="benchmarks/bench_distributed.py --out $OUT/dist_bench.jsonl --reps $REPS $BX"
  if time_left 40 "GPT step on 1 GPU"; then
    # One GPU: PyTorch on GPU 0 and tessera on GPU 1 at once (separate GPUs and host cores).
    CUDA_VISIBLE_DEVICES=0 timeout -k 5 150 $L --nproc-per-node 1 --master-port 29710 $B --lib torch --what gpt \
      > "$LOG/gpt1_torch.log" 2>&1 &
    CUDA_VISIBLE_DEVICES=1 timeout -k 5 150 $L --nproc-per-node 1 --master-port 29711 $B --lib tessera --what gpt \
      > "$LOG/gpt1_tessera.log" 2>&1
    wait
    stamp "GPT step on 1 GPU done"
  fi
  for n in $NS_OK; do
    what=allreduce,gpt
    (( n >= 4 )) && what=allreduce,gpt,zero,fsdp
    if [[ $n == 2 && ${PAR2:-0} == 1 && $NGPU -ge 4 ]] && time_left 60 "2-GPU benchmarks"; then
      CUDA_VISIBLE_DEVICES=0,1 timeout -k 5 200 $L --nproc-per-node 2 --master-port 29720 $B --lib torch --what $what \
        > "$LOG/bench2_torch.log" 2>&1 &
      CUDA_VISIBLE_DEVICES=2,3 timeout -k 5 200 $L --nproc-per-node 2 --master-port 29721 $B --lib tessera --what $what \
        > "$LOG/bench2_tessera.log" 2>&1
      wait
    else
      for lib in tessera torch; do     # tessera first: if the budget ends, ours are measured
        time_left $(( 25 + 10 * n )) "$lib $what on $n GPUs" || continue
        CUDA_VISIBLE_DEVICES=$(GPUS "$n") timeout -k 5 180 $L --nproc-per-node "$n" --master-port $(( 29730 + n )) \
          $B --lib $lib --what $what > "$LOG/bench${n}_$lib.log" 2>&1
      done
    fi
    stamp "benchmarks on $n GPUs done"
  done
  for f in "$LOG"/gpt1_*.log "$LOG"/bench*_*.log; do
    [[ -e $f ]] && { grep -qE 'Error|Traceback' "$f" && { echo "--- $(basename "$f")"; grep -E 'Error' "$f" | head -4; } | tee -a "$S"; }
  done
  python3 - "$OUT/dist_bench.jsonl" <<'EOF' 2>&1 | tee -a "$S"
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
by = {(r["lib"], r["what"], r["world"]): r for r in rows}
for r in rows:
    if "error" in r:
        print(f"ERROR {r['lib']} {r['what']} on {r['world']} GPUs: {r['error']}")
for w in sorted({r["world"] for r in rows if r["what"] == "allreduce"}):
    t, p = by.get(("tessera", "allreduce", w)), by.get(("torch", "allreduce", w))
    for lib, r in (("torch", p), ("tessera", t)):
        if r and "busbw_gbs" in r:
            print(f"all_reduce {r['mib']} MiB float32, {w} GPUs, {lib}: {r['ms']:.2f} ms, "
                  f"bus bandwidth {r['busbw_gbs']:.1f} GB/s")
    if t and p and "busbw_gbs" in t and "busbw_gbs" in p:
        print(f"  tessera/PyTorch bus bandwidth on {w} GPUs: {t['busbw_gbs'] / p['busbw_gbs']:.3f} (target >= 0.95)")
for lib in ("torch", "tessera"):
    one = by.get((lib, "gpt", 1))
    for w in (1, 2, 4, 8):
        r = by.get((lib, "gpt", w))
        if not r or "ms" not in r:
            continue
        eff = (f", scaling efficiency {r['tokens_per_s_per_gpu'] / one['tokens_per_s_per_gpu']:.1%}"
               if one and "ms" in one and w > 1 else "")
        print(f"GPT-2-small step, {lib}, {w} GPU(s){' DDP' if w > 1 else ''}: {r['ms']:.1f} ms, "
              f"{r['tokens_per_s_per_gpu']:.0f} tokens/s per GPU, peak {r['peak_mib_per_gpu']:.0f} MiB{eff}")
for w in (2, 4, 8):
    t, p = by.get(("tessera", "gpt", w)), by.get(("torch", "gpt", w))
    if t and p and "ms" in t and "ms" in p:
        print(f"  tessera/PyTorch DDP step on {w} GPUs: {t['ms'] / p['ms']:.3f} (target <= 1)")
for lib in ("torch", "tessera"):
    for kind in ("zero", "fsdp"):
        for w in (2, 4, 8):
            r, ddp = by.get((lib, kind, w)), by.get((lib, "gpt", w))
            if not r or "ms" not in r:
                continue
            rel = f", {r['ms'] / ddp['ms']:.3f}x the DDP step" if ddp and "ms" in ddp else ""
            frac = (f", optimizer state {r['optimizer_state_bytes_per_gpu'] / 2**20:.0f} MiB per GPU = "
                    f"{r['state_fraction']:.3f} of unsharded {r['unsharded_state_bytes_per_gpu'] / 2**20:.0f} MiB"
                    if "state_fraction" in r else "")
            print(f"{kind.upper()} GPT-2-small step, {lib}, {w} GPUs: {r['ms']:.1f} ms{rel}, "
                  f"peak {r['peak_mib_per_gpu']:.0f} MiB{frac}")
EOF
fi
stamp "done"

#!/usr/bin/env bash
# Runs the test suite in device mode (tests/conftest.py: --device) one module at a time, so
# a crash in one module does not hide the others; per-module summaries go to $OUT/suite/.
set -uo pipefail
OUT=${OUT:-/tmp/out}
DEV=${DEV:-cuda}
mkdir -p "$OUT/suite"
export PYTHONPATH=/tmp/site:$PWD/python
for f in ${MODULES:-$(find tests -name 'test_*.py' | sort)}; do
  # Host-only behaviour, and nn/test_attention_fused.py: the CPU reference attention kernel
  # (forced on by its fixture; tests/cuda/test_cuda_attention.py checks the CUDA kernels against it).
  case $f in *tooling/test_notebooks.py|*tooling/test_demo.py|*cuda/test_cuda.py|*hardening/test_leaks.py|*interop/test_interop.py|*amp/test_amp.py|*nn/test_attention_fused.py) continue;; esac
  [[ -n ${DEADLINE:-} && $(date +%s) -ge $DEADLINE ]] && { echo "deadline: stopped before $f"; break; }
  name=$(basename "$f" .py)
  timeout ${MOD_TIMEOUT:-120} python3 -X faulthandler -m pytest "$f" -q -p no:cacheprovider --device "$DEV" \
    --timeout 60 -rfE > "$OUT/suite/$name.log" 2>&1
  rc=$?
  echo "$name rc=$rc $(tail -1 "$OUT/suite/$name.log")"
done
# One summary (the device tool returns a limited number of files): failures by first error line.
for f in "$OUT"/suite/*.log; do
  echo "=== $(basename "$f")"; grep -E "^(FAILED|ERROR)" "$f" | cut -c1-220 | head -25
  grep -E "^E   " "$f" | sort | uniq -c | sort -rn | head -8 | cut -c1-250
done > "$OUT/suite_summary.txt"
rm -rf "$OUT/suite"

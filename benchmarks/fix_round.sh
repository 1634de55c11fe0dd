#!/usr/bin/env bash
# H100 round after fixes: build, the import-order probe, then the given test files with their
# failures summarized. Only summary.txt and the build logs land in $OUT (the tool returns few
# files). Usage (device tool, .whl carried): bash benchmarks/fix_round.sh TESTFILE...
set -uo pipefail
OUT=${OUT:-/tmp/out}
S=$OUT/summary.txt
bash benchmarks/run_cuda_device.sh build > /tmp/build_round.txt 2>&1
tail -4 /tmp/build_round.txt | tee -a "$S"
export PYTHONPATH=/tmp/site:$PWD/python PYTHONUNBUFFERED=1
timeout 60 python3 -X faulthandler -c "import tessera; import torch; print(torch.ones(2, device='cuda') + 1)" \
  > /tmp/probe.txt 2>&1; echo "import tessera then torch: rc $?" | tee -a "$S"; tail -4 /tmp/probe.txt | tee -a "$S"
for f in "$@"; do
  timeout ${TEST_TIMEOUT:-200} python3 -X faulthandler -m pytest $f -q -p no:cacheprovider --tb=line \
    ${PYTEST_ARGS:-} > /tmp/t.txt 2>&1
  echo "== $f: $(tail -1 /tmp/t.txt)" | tee -a "$S"
  grep -E "^(E  |/.*:[0-9]+: |FAILED|ERROR)|Fatal|Error" /tmp/t.txt | grep -v "^FAILED" | head -${LINES_PER_FILE:-25} | cut -c1-300 | tee -a "$S"
done
if [[ -n ${GPT:-} ]]; then (cd benchmarks && for a in "" --amp; do timeout 100 python3 bench_cuda_gpt.py $a 2>&1 | tail -1 | tee -a "$S"; done); fi

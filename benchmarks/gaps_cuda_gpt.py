"""Usage: gaps_cuda_gpt.py [tessera|torch] [--amp]. Where the GPU idles during one char-GPT
step: the kernels' start/end times from torch.profiler (CUPTI sees tessera's kernels too),
the total idle time between the first and last kernel, and the largest gaps with the kernel
that ended each gap. A step whose time exceeds its kernel time by much has host-bound phases."""
from __future__ import annotations

import sys

from bench_cuda_gpt import profiled_step


def main() -> None:
    lib = sys.argv[1] if len(sys.argv) > 1 else "tessera"
    prof = profiled_step(lib, amp="--amp" in sys.argv, warmup=3)
    ks = sorted(((e.time_range.start, e.time_range.end, e.name) for e in prof.events()
                 if e.device_type.name == "CUDA"), key=lambda k: k[0])
    busy = sum(e - s for s, e, _ in ks)
    span = ks[-1][1] - ks[0][0]
    gaps, end = [], ks[0][1]
    for i, (s, e, name) in enumerate(ks[1:], 1):
        if s > end:
            gaps.append((s - end, i, name))
        end = max(end, e)
    idle = sum(g for g, _, _ in gaps)
    print(f"--- {lib}: {len(ks)} kernels, span {span / 1e3:.2f} ms, busy {busy / 1e3:.2f} ms, "
          f"idle {idle / 1e3:.2f} ms in {len(gaps)} gaps (>= 20 us: "
          f"{sum(g for g, _, _ in gaps if g >= 20) / 1e3:.2f} ms)")
    # Idle time by step position (tenths of the kernel sequence).
    tenth = [0.0] * 10
    for g, i, _ in gaps:
        tenth[min(9, i * 10 // len(ks))] += g
    print("idle by tenth of the kernel sequence (ms):", " ".join(f"{t / 1e3:.2f}" for t in tenth))
    for g, i, name in sorted(gaps, reverse=True)[:12]:
        print(f"  {g:8.1f} us before kernel {i:4d}: {name[:90]}")


if __name__ == "__main__":
    main()

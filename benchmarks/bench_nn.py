"""nn/optim benchmarks, tessera vs PyTorch CPU with the same recipe and thread count:
a fused optimizer step over a 100-parameter model, an MNIST MLP epoch, an MNIST CNN epoch
and a char-GPT training step. Ratios > 1 mean tessera is faster.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH=python \\
        python benchmarks/bench_nn.py --threads 1 [--quick] [--markdown FILE]

Epochs run on the first --train-size MNIST training images (default 10,000, a sixth of an
epoch; both libraries see the same batches) and are reported per full 60,000-image epoch
(time x 60000/train-size). Times are process CPU times (equal to wall time single-threaded
on an idle machine); the libraries take turns and each keeps its best round, which keeps
the ratios meaningful on a shared, loaded machine. Batches come from slicing preloaded
tensors in both libraries (the loaders are not what is measured). MNIST is read from
$TESSERA_MNIST or ../shared/data/mnist; without it random images of the same shape are used.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import torch

import tessera as ts
from common import emit, fmt_time, machine

HERE = os.path.dirname(os.path.abspath(__file__))


# ----------------------------------------------------------------- data
def mnist_arrays(n: int) -> Tuple[np.ndarray, np.ndarray, str]:
    """(n, 1, 28, 28) float32 images in [0, 1], (n,) int64 labels, and where they came from."""
    roots = [os.environ.get("TESSERA_MNIST", ""), os.path.join(HERE, "..", "..", "shared", "data", "mnist"),
             os.path.join(HERE, "..", "..", "..", "shared", "data", "mnist")]
    for root in roots:
        if root and os.path.isdir(root):
            ds = ts.datasets.MNIST(root, train=True)
            x = np.asarray(ds.data[:n]).astype(np.float32)[:, None] / 255.0
            y = np.asarray(ds.targets[:n]).astype(np.int64)
            return x, y, "MNIST"
    rng = np.random.default_rng(0)
    return (rng.random((n, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, n), "random")


def batches(n: int, bs: int, seed: int = 0) -> List[np.ndarray]:
    perm = np.random.default_rng(seed).permutation(n)
    return [perm[i:i + bs] for i in range(0, n - bs + 1, bs)]


# ----------------------------------------------------------------- models (same code, two libs)
def mlp(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def cnn(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def gpt(lib: Any, vocab: int = 65, n_layer: int = 4, n_head: int = 4, n_embd: int = 128,
        block: int = 64) -> Any:
    """nanoGPT's model in either library (pre-norm blocks, causal SDPA, tied nothing)."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            self.qkv, self.proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
            self.fc, self.out = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

        def forward(self, x: Any) -> Any:
            b, t, c = x.shape
            qkv = self.qkv(self.ln1(x)).reshape(b, t, 3, n_head, c // n_head).permute(2, 0, 3, 1, 4)
            y = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, n_embd), nn.Embedding(block, n_embd)
            self.blocks = nn.Sequential(*[Block() for _ in range(n_layer)])
            self.ln, self.head = nn.LayerNorm(n_embd), nn.Linear(n_embd, vocab)

        def forward(self, idx: Any, targets: Any) -> Any:
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(lib.arange(t))
            logits = self.head(self.ln(self.blocks(x)))
            return F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))

    return GPT()


def twin(make: Callable[[Any], Any]) -> Tuple[Any, Any]:
    """The model in both libraries with identical weights."""
    torch.manual_seed(0)
    tm = make(torch)
    sm = make(ts)
    sm.load_state_dict(tm.state_dict())
    return sm, tm


# ----------------------------------------------------------------- timed work
def epoch_fn(lib: Any, model: Any, x: np.ndarray, y: np.ndarray, bs: int) -> Callable[[], None]:
    """One pass over (x, y) in batches of `bs` with Adam(lr=1e-3) and cross entropy."""
    F = lib.nn.functional
    X = lib.asarray(x) if lib is ts else torch.from_numpy(x)
    Y = lib.asarray(y) if lib is ts else torch.from_numpy(y)
    idx = [lib.asarray(b) if lib is ts else torch.from_numpy(b) for b in batches(len(x), bs)]
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)

    def run() -> None:
        for b in idx:
            loss = F.cross_entropy(model(X[b]), Y[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
        float(loss.item())
    return run


def gpt_step_fn(lib: Any, model: Any, bs: int, block: int, vocab: int = 65) -> Callable[[], None]:
    rng = np.random.default_rng(0)
    data = rng.integers(0, vocab, (bs, block + 1))
    conv = (lambda a: ts.asarray(a)) if lib is ts else torch.from_numpy
    xb, yb = conv(np.ascontiguousarray(data[:, :-1])), conv(np.ascontiguousarray(data[:, 1:]))
    opt = lib.optim.AdamW(model.parameters(), lr=3e-4)

    def run() -> None:
        loss = model(xb, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        float(loss.item())
    return run


def optim_step_fns(n_params: int = 100) -> Dict[str, Callable[[], None]]:
    """Adam over 100 parameters (a mix of (256, 256) matrices and (256,) vectors, ~3.3M
    values) with their gradients set: tessera's fused step vs torch's default
    (single-tensor on CPU), foreach and fused implementations."""
    rng = np.random.default_rng(0)
    shapes = [(256, 256) if i % 2 == 0 else (256,) for i in range(n_params)]
    arrs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ps = [ts.nn.Parameter(ts.asarray(a.copy())) for a in arrs]
    pt = [torch.nn.Parameter(torch.tensor(a)) for a in arrs]
    for p, q, a in zip(ps, pt, arrs):
        p.grad = ts.asarray(a * 0.01)
        q.grad = torch.tensor(a * 0.01)
    out = {"ts": ts.optim.Adam(ps, lr=1e-3).step,
           "torch": torch.optim.Adam(pt, lr=1e-3).step,
           "torch foreach": torch.optim.Adam(pt, lr=1e-3, foreach=True).step,
           "torch fused": torch.optim.Adam(pt, lr=1e-3, fused=True).step}
    return out


# ----------------------------------------------------------------- driver
def interleaved_best(fns: Dict[str, Callable[[], None]], reps: int, inner: int) -> Dict[str, float]:
    """CPU seconds per call of each fn: the libraries take turns (so a load spike on a shared
    machine hits both alike) and each reports its best of `reps` rounds of `inner` calls.
    Process CPU time equals wall time for these single-threaded runs on an idle machine and
    does not count time spent descheduled on a busy one."""
    for fn in fns.values():  # warm-up: allocator caches, lazily built state
        fn()
    best = {k: float("inf") for k in fns}
    for _ in range(reps):
        for k, fn in fns.items():
            t0 = time.process_time()
            for _ in range(inner):
                fn()
            best[k] = min(best[k], (time.process_time() - t0) / inner)
    return best


def run_cases(quick: bool, train_size: int, reps: int,
              only: Optional[str] = None) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []

    def row(case: str, fns: Dict[str, Callable[[], None]], factor: float = 1.0,
            inner: int = 1, rounds: int = reps) -> None:
        if only is not None and only.lower() not in case.lower():
            return
        r: Dict[str, Any] = {"case": case}
        r.update({k: v * factor for k, v in interleaved_best(fns, rounds, inner).items()})
        print(f"{case}: " + ", ".join(f"{k}={fmt_time(v)}" for k, v in r.items() if k != "case"),
              file=sys.stderr, flush=True)
        rows.append(r)

    row("Adam step, 100 params (3.3M values)", optim_step_fns(), inner=5)
    x, y, src = mnist_arrays(train_size)
    sm, tm = twin(mlp)
    row(f"MNIST MLP 784-256-10 epoch (batch 128, Adam; {src})",
        {"ts": epoch_fn(ts, sm, x, y, 128), "torch": epoch_fn(torch, tm, x, y, 128)},
        60000 / train_size)
    sm, tm = twin(cnn)
    n_cnn = train_size // (4 if quick else 1)
    row(f"MNIST CNN epoch (2 conv 3x3 16/32 + pool + linear, batch 64, Adam; {src})",
        {"ts": epoch_fn(ts, sm, x[:n_cnn], y[:n_cnn], 64),
         "torch": epoch_fn(torch, tm, x[:n_cnn], y[:n_cnn], 64)}, 60000 / n_cnn)
    sm, tm = twin(gpt)
    row("char-GPT train step (4 layers, 4 heads, n_embd 128, block 64, batch 32, AdamW)",
        {"ts": gpt_step_fn(ts, sm, 32, 64), "torch": gpt_step_fn(torch, tm, 32, 64)},
        rounds=max(reps, 5))
    return rows


def table(rows: List[Dict[str, Any]]) -> str:
    out = ["| case | tessera | PyTorch | PyTorch/tessera | notes |", "|---|---:|---:|---:|---|"]
    for r in rows:
        t, p = r["ts"], r["torch"]
        notes = "; ".join(f"PyTorch {k[6:]}: {fmt_time(v)} ({v / t:.2f}×)"
                          for k, v in r.items() if k.startswith("torch ") and v)
        out.append(f"| {r['case']} | {fmt_time(t)} | {fmt_time(p)} | {p / t:.2f}× | {notes} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=3, help="rounds per case (best is kept)")
    ap.add_argument("--train-size", type=int, default=10000)
    ap.add_argument("--markdown", default=None, help="write the table to this file")
    ap.add_argument("--only", default=None,
                    help="run only the cases whose name contains this text (e.g. CNN)")
    args = ap.parse_args()
    threads = args.threads or ts.get_num_threads()
    ts.set_num_threads(threads)
    torch.set_num_threads(threads)
    size = min(args.train_size, 2000) if args.quick else args.train_size
    rows = run_cases(args.quick, size, args.reps, args.only)
    head = (f"Machine: {machine()}; threads: {threads}; tessera {ts.__version__}, "
            f"PyTorch {torch.__version__}. Epoch times are per 60,000 images, measured on the "
            f"first {size}; each number is the process CPU time of the best of {args.reps}+ rounds "
            f"with the two libraries taking turns. Ratios > 1 mean tessera is faster.")
    md = head + "\n\n" + table(rows)
    return emit(md, args.markdown)


if __name__ == "__main__":
    sys.exit(main())

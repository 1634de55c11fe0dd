"""GPT training steps on CUDA, tessera vs PyTorch eager, same model code, one process.

`--config char` (the default): the original char-GPT of this file (nanoGPT's shakespeare-char
shape, no dropout, biases, untied head, plain AdamW). `--config nanogpt-char` and
`--config gpt2-small`: nanoGPT's model.py as people train it (its training configuration with
every feature on: dropout 0.2 in attention, residual and embedding paths for shakespeare-char,
no biases, the output head tied to the token embedding, its weight init, AdamW with nanoGPT's
decay groups and fused=True, gradient clipping at 1.0; GPT-2 small: 12 layers, 12 heads, 768
channels, context 1024, vocabulary 50304, batch 8, dropout 0; `--dropout P` overrides a
config's dropout, e.g. issue 19's GPT-2-small rows with dropout). Timed with CUDA events, median
of `--steps` steps after warm-up, and the peak GPU memory of a step. `--check-losses` trains
both libraries from the same initial weights with dropout 0 in float32 (TF32 off) and compares
the first 20 losses. `--cuda-graph` (nanoGPT configs) captures the whole training step in
one CUDA graph (static input/target buffers the next batch is copied into, AdamW
capturable=True) and times it against PyTorch eager and PyTorch's own captured step.

Run on a GPU machine: PYTHONPATH=python python benchmarks/bench_cuda_gpt.py --config nanogpt-char
"""
from __future__ import annotations

import argparse
from typing import Optional

import numpy as np


def build(nn, F, vocab: int, n_layer: int, n_head: int, n_embd: int, block: int):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            self.qkv, self.proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
            self.fc, self.out = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = _split3(self.qkv(self.ln1(x)), n_embd)
            q = q.reshape(b, t, n_head, c // n_head).transpose(1, 2)
            k = k.reshape(b, t, n_head, c // n_head).transpose(1, 2)
            v = v.reshape(b, t, n_head, c // n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, n_embd), nn.Embedding(block, n_embd)
            self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln = nn.LayerNorm(n_embd)
            self.head = nn.Linear(n_embd, vocab, bias=False)

        def forward(self, idx, pos):
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return GPT()


CONFIGS = {
    # nanoGPT config/train_shakespeare_char.py
    "nanogpt-char": dict(n_layer=6, n_head=6, n_embd=384, block=256, batch=64, vocab=65,
                         dropout=0.2, bias=False, lr=1e-3, betas=(0.9, 0.99)),
    # nanoGPT's GPT-2 (124M) shape, config/train_gpt2.py's per-GPU micro-batch
    "gpt2-small": dict(n_layer=12, n_head=12, n_embd=768, block=1024, batch=8, vocab=50304,
                       dropout=0.0, bias=False, lr=6e-4, betas=(0.9, 0.95)),
}


def build_nanogpt(M, n_layer: int, n_head: int, n_embd: int, block: int, vocab: int,
                  dropout: float, bias: bool, capturable: bool = False, **_):
    """nanoGPT's model.py (karpathy/nanoGPT), unchanged but for the library handle M."""
    import math
    nn, F = M.nn, M.nn.functional

    class LayerNorm(nn.Module):
        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(M.ones(ndim))
            self.bias = nn.Parameter(M.zeros(ndim)) if bias else None

        def forward(self, input):
            return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=bias)
            self.c_proj = nn.Linear(n_embd, n_embd, bias=bias)
            self.attn_dropout = nn.Dropout(dropout)
            self.resid_dropout = nn.Dropout(dropout)
            self.dropout = dropout

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None,
                                               dropout_p=self.dropout if self.training else 0,
                                               is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=bias)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=bias)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = LayerNorm(n_embd, bias=bias)
            self.attn = CausalSelfAttention()
            self.ln_2 = LayerNorm(n_embd, bias=bias)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, n_embd), wpe=nn.Embedding(block, n_embd),
                drop=nn.Dropout(dropout), h=nn.ModuleList([Block() for _ in range(n_layer)]),
                ln_f=LayerNorm(n_embd, bias=bias)))
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith('c_proj.weight'):
                    M.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                M.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    M.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                M.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets):
            b, t = idx.size()
            pos = M.arange(0, t, dtype=M.long, device=idx.device)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for blk in self.transformer.h:
                x = blk(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)

        def configure_optimizers(self, weight_decay, learning_rate, betas):
            param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
            decay = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay = [p for n, p in param_dict.items() if p.dim() < 2]
            groups = [{'params': decay, 'weight_decay': weight_decay},
                      {'params': nodecay, 'weight_decay': 0.0}]
            return M.optim.AdamW(groups, lr=learning_rate, betas=betas, fused=True,
                                 capturable=capturable)

    return GPT()


def make_nanogpt_step(M, cfg: dict, amp: bool, dropout=None, seed: int = 0,
                      cuda_graph: bool = False):
    """One nanoGPT training step (train.py's inner loop at gradient_accumulation_steps 1):
    forward under autocast, backward, clip_grad_norm_(1.0), fused AdamW step, zero_grad.

    cuda_graph: the whole step captured in one CUDA graph (AdamW capturable=True, gradients
    kept with zero_grad(set_to_none=False), static input/target buffers): three warm-up steps
    on a side stream, the capture, then each step copies the next batch into the static
    buffers and replays."""
    cfg = dict(cfg)
    if dropout is not None:
        cfg["dropout"] = dropout
    M.manual_seed(seed)
    model = build_nanogpt(M, capturable=cuda_graph, **cfg).to("cuda")
    model.train()
    opt = model.configure_optimizers(0.1, cfg["lr"], cfg["betas"])
    rng = np.random.default_rng(0)
    B, T, V = cfg["batch"], cfg["block"], cfg["vocab"]
    x = M.asarray(rng.integers(0, V, (B, T)), device="cuda")
    y = M.asarray(rng.integers(0, V, (B, T)), device="cuda")
    autocast = M.autocast("cuda", dtype=M.bfloat16, enabled=amp)

    def step():
        with autocast:
            loss = model(x, y)
        loss.backward()
        M.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=not cuda_graph)
        return loss

    if not cuda_graph:
        return model, step
    # Batches to copy in (as a data loader's pinned, prefetched batch would arrive).
    xs = [M.asarray(rng.integers(0, V, (B, T)), device="cuda") for _ in range(2)]
    ys = [M.asarray(rng.integers(0, V, (B, T)), device="cuda") for _ in range(2)]
    side = M.cuda.Stream()
    side.wait_stream(M.cuda.current_stream())
    with M.cuda.stream(side):
        for _ in range(3):
            step()
    M.cuda.current_stream().wait_stream(side)
    M.cuda.synchronize()
    graph = M.cuda.CUDAGraph()
    with M.cuda.graph(graph):
        static_loss = step()
    k = [0]

    def graphed_step():
        i = k[0] = (k[0] + 1) % 2
        x.copy_(xs[i])
        y.copy_(ys[i])
        graph.replay()
        return static_loss

    graphed_step.graph = graph  # keeps the graph (and its pool) alive with the step
    return model, graphed_step


def run_nanogpt(lib: str, cfg: dict, amp: bool, steps: int, cuda_graph: bool = False):
    """(median ms per step, peak GPU bytes during a step) of lib's nanoGPT step."""
    if lib == "torch":
        import torch as M
    else:
        import tessera as M
    model, step = make_nanogpt_step(M, cfg, amp, cuda_graph=cuda_graph)
    from bench_cuda import cuda_time
    for _ in range(3):
        step()
    M.cuda.synchronize()
    M.cuda.reset_peak_memory_stats()
    step()
    M.cuda.synchronize()
    # A graph's intermediates live in its private pool, freed but reserved: count reserved.
    peak = M.cuda.max_memory_reserved() if cuda_graph else M.cuda.max_memory_allocated()
    ms = cuda_time(step, M.cuda.synchronize, lambda: M.cuda.Event(enable_timing=True),
                   reps=steps)
    del model, step
    return ms, peak


def check_losses(cfg: dict, n: int = 20) -> float:
    """Largest relative difference between tessera's and PyTorch's first n float32 losses from
    the same initial weights, dropout 0 (TF32 off on both)."""
    import tessera as ts
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tm, tstep = make_nanogpt_step(torch, cfg, False, dropout=0.0)
    sm, sstep = make_nanogpt_step(ts, cfg, False, dropout=0.0)
    sd = {k: ts.asarray(v.detach().cpu().numpy(), device="cuda")
          for k, v in tm.state_dict().items()}
    sm.load_state_dict(sd)
    worst = 0.0
    for i in range(n):
        a = float(tstep().item())
        b = float(sstep().item())
        worst = max(worst, abs(a - b) / abs(a))
        print(f"  step {i}: torch {a:.6f} tessera {b:.6f}")
    return worst


def _split3(t, n):
    return t[..., :n], t[..., n:2 * n], t[..., 2 * n:]


def make_step(M, layers: int = 6, heads: int = 6, embd: int = 384, block: int = 256,
              batch: int = 64, amp: bool = False):
    """One training step of the char-GPT in library M (tessera or torch) on CUDA: zero_grad,
    forward + cross-entropy (under bf16 autocast when `amp`), backward, AdamW step."""
    nn, F = M.nn, M.nn.functional
    M.manual_seed(0)
    model = build(nn, F, 65, layers, heads, embd, block).to("cuda")
    opt = M.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    idx = M.asarray(rng.integers(0, 65, (batch, block)), device="cuda")
    tgt = M.asarray(rng.integers(0, 65, (batch * block,)), device="cuda")
    pos = M.asarray(np.arange(block), device="cuda")
    autocast = M.autocast("cuda", dtype=M.bfloat16, enabled=amp)

    def step():
        opt.zero_grad()
        with autocast:
            loss = F.cross_entropy(model(idx, pos).reshape(-1, 65), tgt)
        loss.backward()
        opt.step()
        return loss

    return step


def profiled_step(lib: str, amp: bool, warmup: int, config: Optional[str] = None):
    """One char-GPT step (or one step of the nanoGPT `config`) of `lib` ("tessera" or "torch")
    under torch.profiler's CUDA activity (CUPTI sees tessera's kernels too), after `warmup`
    steps; returns the profile."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    if lib == "torch":
        M = torch
    else:
        import tessera as M
    if config is None:
        step = make_step(M, amp=amp)
    else:
        _, step = make_nanogpt_step(M, CONFIGS[config], amp)
    for _ in range(warmup):
        step()
    M.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        M.cuda.synchronize()
    return prof


def run(lib: str, args) -> float:
    if lib == "torch":
        import torch as M
    else:
        import tessera as M
    step = make_step(M, args.layers, args.heads, args.embd, args.block, args.batch, args.amp)
    from bench_cuda import cuda_time
    return cuda_time(step, M.cuda.synchronize, lambda: M.cuda.Event(enable_timing=True),
                     reps=args.steps)


def _report_graphs(name: str, cfg: dict, amp: bool, steps: int) -> None:
    """tessera's captured step against PyTorch eager and PyTorch's own captured step."""
    res = {}
    for lib, graph in [("torch", False), ("torch", True), ("tessera", True)]:
        try:
            res[(lib, graph)] = run_nanogpt(lib, cfg, amp, steps, cuda_graph=graph)
        except Exception as e:  # report the others' numbers even if one fails
            print(f"{lib} {'graph' if graph else 'eager'} failed: {type(e).__name__}: {e}")
    kind = "bf16 autocast" if amp else "float32"
    base = res.get(("torch", False))
    for (lib, graph), (ms, peak) in res.items():
        speed = f", speed vs torch eager {base[0] / ms:.2f}x" if base else ""
        print(f"{name} {kind} {lib} {'CUDA graph' if graph else 'eager'}: {ms:.1f} ms{speed}; "
              f"peak memory {peak / 2**30:.2f} GiB ({'reserved' if graph else 'allocated'})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--config", default="char", choices=["char"] + list(CONFIGS))
    p.add_argument("--check-losses", action="store_true")
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=6)
    p.add_argument("--embd", type=int, default=384)
    p.add_argument("--block", type=int, default=256)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--amp", action="store_true", help="bfloat16 autocast (else float32)")
    p.add_argument("--dropout", type=float, default=None,
                   help="nanoGPT configs: override the config's dropout (e.g. --config "
                        "gpt2-small --dropout 0.1 for issue 19's GPT-2-small rows with dropout)")
    p.add_argument("--cuda-graph", action="store_true",
                   help="nanoGPT configs: capture the whole training step in a CUDA graph and "
                        "compare with PyTorch eager and PyTorch's own CUDA graph")
    args = p.parse_args()
    if args.config != "char":
        cfg = dict(CONFIGS[args.config])
        if args.dropout is not None:
            cfg["dropout"] = args.dropout
        if args.check_losses:
            print(f"{args.config}: largest relative loss difference over 20 float32 steps "
                  f"(dropout 0): {check_losses(cfg):.2e}")
            return
        steps = max(args.steps, 30)
        if args.cuda_graph:
            _report_graphs(args.config, cfg, args.amp, steps)
            return
        t_torch, m_torch = run_nanogpt("torch", cfg, args.amp, steps)
        t_ts, m_ts = run_nanogpt("tessera", cfg, args.amp, steps)
        print(f"{args.config} dropout {cfg['dropout']} {'bf16 autocast' if args.amp else 'float32'}: tessera "
              f"{t_ts:.1f} ms, torch {t_torch:.1f} ms, speed vs torch {t_torch / t_ts:.2f}x; "
              f"peak memory tessera {m_ts / 2**30:.2f} GiB, torch {m_torch / 2**30:.2f} GiB "
              f"({m_ts / m_torch:.2f}x)")
        return
    t_torch = run("torch", args)
    t_ts = run("tessera", args)
    print(f"char-GPT step {args.layers}x{args.heads}x{args.embd}, block {args.block}, batch "
          f"{args.batch}, {'bf16 autocast' if args.amp else 'float32'}: tessera {t_ts:.1f} ms, torch {t_torch:.1f} ms, "
          f"speed vs torch {t_torch / t_ts:.2f}x")


if __name__ == "__main__":
    main()

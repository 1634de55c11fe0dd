"""Worker of tests/distributed/test_distributed.py: a few DDP steps over a DistributedSampler; rank 0
prints the global mean loss of each step as `LOSS <step> <value>` (world size from the env).

Every rank also trains a plain single-process replica on the global batch (all ranks'
micro-batches gathered, in rank order) and checks after each step that DDP's parameters equal
the replica's: DDP training is single-process training on the concatenated batch. DEVICE=cuda
runs it on the NCCL backend, one GPU per rank (benchmarks/distributed_device.sh)."""


import numpy as np

import tessera as ts
import tessera.distributed as dist
from tessera import nn
from tessera.nn.parallel import DistributedDataParallel as DDP
from tessera.utils.data import DataLoader, DistributedSampler, TensorDataset

from worker_setup import join

R, W = join(timeout=60)
rng = np.random.default_rng(0)
X = ts.asarray(rng.standard_normal((64, 5)).astype(np.float32))
Y = ts.asarray(rng.standard_normal((64, 1)).astype(np.float32))
ds = TensorDataset(X, Y)
sampler = DistributedSampler(ds, shuffle=True, seed=1)
loader = DataLoader(ds, batch_size=64 // W // 2, sampler=sampler)


def net() -> nn.Module:
    return nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))


ts.manual_seed(R)     # differs per rank: DDP's broadcast makes the models equal
model = DDP(net())
opt = ts.optim.SGD(model.parameters(), lr=0.05)
ts.manual_seed(0)     # rank 0's initial weights
replica = net()
ref_opt = ts.optim.SGD(replica.parameters(), lr=0.05)


def gathered(t):
    out = ts.zeros((W * t.shape[0],) + tuple(t.shape[1:]), dtype=t.dtype)
    dist.all_gather_into_tensor(out, t.contiguous())
    return out


worst = 0.0
step = 0
for epoch in range(2):
    sampler.set_epoch(epoch)
    for x, y in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        ref_opt.zero_grad()
        ref_loss = nn.functional.mse_loss(replica(gathered(x)), gathered(y))
        ref_loss.backward()
        ref_opt.step()
        for p, q in zip(model.module.parameters(), replica.parameters()):
            d = float(np.abs(np.asarray(p.detach().cpu()) - np.asarray(q.detach().cpu())).max())
            worst = max(worst, d)
            assert d < 1e-5, f"rank {R} step {step}: DDP and single-process differ by {d}"
        total = loss.detach().clone()
        dist.all_reduce(total, dist.ReduceOp.AVG)
        if R == 0:
            print(f"LOSS {step} {float(total.item()):.6f}", flush=True)
        step += 1
if R == 0:
    print(f"DDP matches single-process training over {step} steps (max parameter "
          f"difference {worst:.2e})", flush=True)
dist.destroy_process_group()

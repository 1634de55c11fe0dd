"""Worker of tests/test_distributed.py: a few DDP steps over a DistributedSampler; rank 0
prints the global mean loss of each step as `LOSS <step> <value>` (world size from the env)."""

import numpy as np

import tessera as ts
import tessera.distributed as dist
from tessera import nn
from tessera.nn.parallel import DistributedDataParallel as DDP
from tessera.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo", timeout=60)
R, W = dist.get_rank(), dist.get_world_size()
rng = np.random.default_rng(0)
X = ts.asarray(rng.standard_normal((64, 5)).astype(np.float32))
Y = ts.asarray(rng.standard_normal((64, 1)).astype(np.float32))
ds = TensorDataset(X, Y)
sampler = DistributedSampler(ds, shuffle=True, seed=1)
loader = DataLoader(ds, batch_size=64 // W // 2, sampler=sampler)
ts.manual_seed(R)     # differs per rank: DDP's broadcast makes the models equal
model = DDP(nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1)))
opt = ts.optim.SGD(model.parameters(), lr=0.05)
step = 0
for epoch in range(2):
    sampler.set_epoch(epoch)
    for x, y in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total, dist.ReduceOp.AVG)
        if R == 0:
            print(f"LOSS {step} {float(total.item()):.6f}", flush=True)
        step += 1
dist.destroy_process_group()

"""Worker of tests/distributed/test_distributed.py: DDP gradients equal single-process gradients on the
concatenated batch; no_sync; unused parameters; gradient_as_bucket_view; several buckets;
state_dict prefix; ZeRO against the unsharded optimizer; DistributedSampler defaults."""
import numpy as np

import tessera as ts
import tessera.distributed as dist
from tessera import nn
from tessera.distributed.optim import ZeroRedundancyOptimizer
from tessera.nn.parallel import DistributedDataParallel as DDP

import os

DEVICE = os.environ.get("DEVICE", "cpu")      # cuda: the NCCL backend, one GPU per rank
if DEVICE == "cuda":
    ts.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    ts.set_default_device(f"cuda:{os.environ['LOCAL_RANK']}")
dist.init_process_group("nccl" if DEVICE == "cuda" else "gloo", timeout=60)
R, W = dist.get_rank(), dist.get_world_size()
PER = 4


def model(seed):
    ts.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 3))


def batch(step):
    rng = np.random.default_rng(step)
    x = rng.standard_normal((PER * W, 6)).astype(np.float32)
    y = rng.standard_normal((PER * W, 3)).astype(np.float32)
    return ts.asarray(x), ts.asarray(y)


def local(t):
    return t[R * PER:(R + 1) * PER]


def close(a, b, what, tol=1e-5):
    a = np.asarray(a.cpu() if hasattr(a, "cpu") else a)
    b = np.asarray(b.cpu() if hasattr(b, "cpu") else b)
    assert np.allclose(a, b, rtol=tol, atol=tol), f"{what} rank {R}: max diff " \
        f"{np.abs(a - b).max()}"


# Parameters are broadcast from rank 0: every rank seeds differently here.
for kw in [dict(), dict(bucket_cap_mb=0.0005), dict(gradient_as_bucket_view=True,
                                                     bucket_cap_mb=0.0005)]:
    m = model(100 + R)
    ddp = DDP(m, **kw)
    ref = model(100)                     # rank 0's initial weights, on every rank
    for p, q in zip(m.parameters(), ref.parameters()):
        close(p.detach(), q.detach(), "broadcast from rank 0", 0)
    launched_with = []
    if "bucket_cap_mb" in kw:
        assert ddp._get_ddp_logging_data()["num_buckets"] > 1
        # overlap: the first bucket's all-reduce starts while backward still has gradients
        # to compute (counted as parameters whose hook has fired at that moment)
        orig = ddp._launch_ready

        def spy(orig=orig, ddp=ddp):
            launched_with.append(sum(ddp._used))
            orig()
        ddp._launch_ready = spy
    for step in range(2):
        x, y = batch(step)
        ddp.zero_grad()
        ref.zero_grad()
        nn.functional.mse_loss(ddp(local(x)), local(y)).backward()
        nn.functional.mse_loss(ref(x), y).backward()
        for (n, p), q in zip(m.named_parameters(), ref.parameters()):
            close(p.grad, q.grad, f"DDP grad {n} {kw} step {step}")
        if "bucket_cap_mb" in kw:
            n_params = len(list(m.parameters()))
            assert launched_with and launched_with[0] < n_params, launched_with
            launched_with.clear()
        with ts.no_grad():
            for p, q in zip(m.parameters(), ref.parameters()):
                p -= 0.1 * p.grad
                q -= 0.1 * q.grad
    assert all(k.startswith("module.") for k in ddp.state_dict()), list(ddp.state_dict())[:2]
    assert list(ddp.state_dict()) == ["module." + k for k in m.state_dict()]

# no_sync: two accumulated micro-batches (one without communication) equal the full batch
m = model(7)
ddp = DDP(m)
ref = model(7)
x, y = batch(5)
x2, y2 = batch(6)
with ddp.no_sync():
    nn.functional.mse_loss(ddp(local(x)), local(y)).backward()
    g_local = [p.grad.clone() for p in m.parameters()]
nn.functional.mse_loss(ddp(local(x2)), local(y2)).backward()
(nn.functional.mse_loss(ref(x), y) + nn.functional.mse_loss(ref(x2), y2)).backward()
for p, q in zip(m.parameters(), ref.parameters()):
    close(p.grad, q.grad, "no_sync accumulation")
# inside no_sync the gradient was this rank's own (no communication happened)
ref_local = model(7)
nn.functional.mse_loss(ref_local(local(x)), local(y)).backward()
for g, q in zip(g_local, ref_local.parameters()):
    close(g, q.grad, "no_sync local gradient")


# unused parameters
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)        # used only by rank 0
        self.c = nn.Linear(4, 4)        # used by nobody

    def forward(self, x, use_b):
        h = self.a(x)
        return self.b(h) if use_b else h


ts.manual_seed(3)
net = Branchy()
ddp = DDP(net, find_unused_parameters=True)
ts.manual_seed(3)
ref = Branchy()
xb = ts.asarray(np.random.default_rng(1).standard_normal((W, 4)).astype(np.float32))
ddp(xb[R:R + 1], R == 0).sum().backward()
tot = sum(ref(xb[r:r + 1], r == 0).sum() for r in range(W)) / W
tot.backward()
close(net.a.weight.grad, ref.a.weight.grad, "used by all")
close(net.b.weight.grad, ref.b.weight.grad, "used by rank 0 only")
assert net.c.weight.grad is None, "a parameter no rank used keeps grad None"
# without find_unused_parameters the next forward raises instead of hanging
ts.manual_seed(3)
net2 = Branchy()
ddp2 = DDP(net2)
ddp2(xb[R:R + 1], True).sum().backward()
try:
    ddp2(xb[R:R + 1], True)
    raise AssertionError("expected the unfinished-reduction error")
except RuntimeError as e:
    assert "find_unused_parameters" in str(e), e

# ZeRO: DDP + ZeroRedundancyOptimizer(AdamW) against one process's AdamW on the full batch
m = model(11)
ddp = DDP(m)
zero = ZeroRedundancyOptimizer(m.parameters(), optimizer_class=ts.optim.AdamW, lr=0.01,
                               weight_decay=0.1)
ref = model(11)
opt = ts.optim.AdamW(ref.parameters(), lr=0.01, weight_decay=0.1)
owned = sum(len(g["params"]) for g in zero.optim.param_groups)
assert 0 < owned < len(list(m.parameters())), "state must be sharded"
for step in range(3):
    x, y = batch(20 + step)
    zero.zero_grad()
    opt.zero_grad()
    nn.functional.mse_loss(ddp(local(x)), local(y)).backward()
    nn.functional.mse_loss(ref(x), y).backward()
    zero.step()
    opt.step()
    for p, q in zip(m.parameters(), ref.parameters()):
        close(p.detach(), q.detach(), f"ZeRO params step {step}", 1e-5)
assert len(zero.optim.state) == owned
zero.consolidate_state_dict(to=0)
if R == 0:
    full, want = zero.state_dict(), opt.state_dict()
    assert sorted(full["state"]) == sorted(want["state"]), (list(full["state"]), list(want["state"]))
    for i in want["state"]:
        for k, v in want["state"][i].items():
            close(full["state"][i][k], v, f"ZeRO state {i} {k}", 1e-6)
    assert [g["params"] for g in full["param_groups"]] == [g["params"] for g in want["param_groups"]]
else:
    try:
        zero.state_dict()
        raise AssertionError("state_dict without consolidation should raise")
    except RuntimeError:
        pass
# loading the full state back shards it again
zero2 = ZeroRedundancyOptimizer(m.parameters(), optimizer_class=ts.optim.AdamW, lr=0.01)
full = [zero.state_dict() if R == 0 else None]
dist.broadcast_object_list(full, src=0)
zero2.load_state_dict(full[0])
assert len(zero2.optim.state) == owned

# a checkpoint written by rank 0 loads into a plain (unwrapped) module on every rank
import tempfile
path = [os.path.join(tempfile.mkdtemp(), "ckpt.safetensors") if R == 0 else None]
dist.broadcast_object_list(path, src=0)
if R == 0:
    ts.save(ddp.module.state_dict(), path[0])
dist.barrier()
plain = model(99)
plain.load_state_dict(ts.load(path[0]))
for p, q in zip(plain.parameters(), m.parameters()):
    close(p.detach(), q.detach(), "checkpoint from rank 0", 0)
for k, v in ddp.state_dict().items():
    close(v, plain.state_dict()[k[len("module."):]], "module. prefix keys", 0)

# DistributedSampler reads the process group
from tessera.utils.data import DistributedSampler
s = DistributedSampler(list(range(10)), shuffle=False)
padded = list(range(10)) + list(range(10))[:(-10) % W]      # torch pads with the start
assert s.num_replicas == W and s.rank == R and list(s) == padded[R::W], (list(s), padded)

# DataParallel on several devices points to DDP
try:
    nn.DataParallel(nn.Linear(2, 2), device_ids=[0, 1])
    raise AssertionError("DataParallel over two devices should raise")
except RuntimeError as e:
    assert "DistributedDataParallel" in str(e)

dist.destroy_process_group()
print(f"rank {R}: ddp ok", flush=True)

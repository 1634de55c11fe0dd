"""Worker of tests/distributed/test_distributed.py (2 and 4 ranks on MPI; DEVICE=cuda: NCCL, one GPU per
rank): FullyShardedDataParallel against single-process training on the concatenated batch
(float64 on CPU: losses and parameters within 1e-10 after every step), for FULL_SHARD,
SHARD_GRAD_OP and NO_SHARD, nested (auto-wrapped blocks) and flat, tied weights, no_sync
accumulation, mixed precision, clip_grad_norm_, memory per rank, full state dicts (original
keys, rank0_only, loaded at another world size and by a plain model), optimizer state dicts
(by parameter name, equal to the unsharded optimizer's, loaded at the same and at another
world size), and error paths."""
import math

import numpy as np

import tessera as ts
import tessera.distributed as dist
from tessera import nn
from tessera.distributed.fsdp import (FullStateDictConfig, FullyShardedDataParallel as FSDP,
                                      MixedPrecision, ModuleWrapPolicy, ShardingStrategy,
                                      StateDictType)
from tessera.distributed.fsdp import fully_sharded_data_parallel as fsdp_impl

from worker_setup import join

R, W = join(timeout=120)
DT = ts.float64
TOL = 1e-10
PER = 3


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(16)
        self.fc1 = nn.Linear(16, 24)
        self.fc2 = nn.Linear(24, 16)

    def forward(self, x):
        return x + self.fc2(ts.tanh(self.fc1(self.ln(x))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 16)
        self.blocks = nn.Sequential(Block(), Block())
        self.mix = nn.Linear(16, 16, bias=False)
        self.mix2 = nn.Linear(16, 16, bias=False)
        self.mix2.weight = self.mix.weight                 # tied
        self.out = nn.Linear(16, 3)
        self.register_buffer("scale", ts.full((3,), 0.5, dtype=DT))

    def forward(self, x):
        return self.out(self.mix2(ts.tanh(self.mix(self.blocks(self.inp(x)))))) * self.scale


def make(seed):
    ts.manual_seed(seed)
    return Net().to(DT)


def batch(step):
    rng = np.random.default_rng(100 + step)
    x = rng.standard_normal((PER * W, 6))
    y = rng.standard_normal((PER * W, 3))
    return ts.asarray(x, dtype=DT), ts.asarray(y, dtype=DT)


def local(t):
    return t[R * PER:(R + 1) * PER]


def host(t):
    return np.asarray(t.detach().cpu()) if hasattr(t, "detach") else np.asarray(t)


def close(a, b, what, tol=TOL):
    a, b = host(a), host(b)
    assert a.shape == b.shape, f"{what} rank {R}: shapes {a.shape} vs {b.shape}"
    err = np.abs(a - b).max() if a.size else 0.0
    assert err <= tol * max(1.0, np.abs(b).max() if b.size else 1.0), \
        f"{what} rank {R}: max diff {err}"


def mean_loss(loss):
    v = loss.detach().reshape(1).clone()
    dist.all_reduce(v, dist.ReduceOp.AVG)
    return v[0]


def check_state(sd, ref, what, tol=TOL):
    rsd = ref.state_dict()
    assert list(sd.keys()) == list(rsd.keys()), f"{what}: keys {list(sd)} != {list(rsd)}"
    for k in rsd:
        close(sd[k], rsd[k], f"{what} {k}", tol)


def train(strategy, wrap, steps=3, accum=False, mp=None, clip=None, tol=TOL):
    what = f"{strategy.name} wrap={wrap} accum={accum} mp={mp is not None} clip={clip}"
    ref = make(0)
    policy = ModuleWrapPolicy({Block}) if wrap else None
    m = FSDP(make(0), sharding_strategy=strategy, auto_wrap_policy=policy,
             mixed_precision=MixedPrecision(param_dtype=mp) if mp else None)
    assert isinstance(m.module.blocks[0], FSDP) == wrap
    opt = ts.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)
    ropt = ts.optim.AdamW(ref.parameters(), lr=1e-2, weight_decay=0.1)
    lossf = nn.functional.mse_loss
    gathers = []
    orig = fsdp_impl.FullyShardedDataParallel._regather

    def spy(self):
        if self._bwd_full is None:
            gathers.append(id(self))
        return orig(self)
    fsdp_impl.FullyShardedDataParallel._regather = spy
    try:
        for step in range(steps):
            x, y = batch(step)
            opt.zero_grad()
            ropt.zero_grad()
            if accum:
                x2, y2 = batch(50 + step)
                with m.no_sync():
                    lossf(m(local(x2)), local(y2)).backward()
                assert all(p.grad is None for p in m.parameters()), "no_sync reduced"
                lossf(ref(x2), y2).backward()
            loss = lossf(m(local(x)), local(y))
            loss.backward()
            rloss = lossf(ref(x), y)
            rloss.backward()
            close(mean_loss(loss), rloss.detach(), f"{what} loss step {step}", tol)
            if clip:
                n = m.clip_grad_norm_(clip)
                rn = nn.utils.clip_grad_norm_(ref.parameters(), clip)
                close(n, rn, f"{what} grad norm step {step}", tol)
            opt.step()
            ropt.step()
            check_state(m.state_dict(), ref, f"{what} step {step}", tol)
    finally:
        fsdp_impl.FullyShardedDataParallel._regather = orig
    n_inst = 3 if wrap else 1
    if strategy == ShardingStrategy.FULL_SHARD:   # gathered again in every backward
        assert len(gathers) == steps * n_inst * (2 if accum else 1), (what, len(gathers))
    else:
        assert not gathers, (what, len(gathers))
    return m, opt, ref, ropt


# --- training equals single-process training on the concatenated batch ---------------------
for strategy in (ShardingStrategy.FULL_SHARD, ShardingStrategy.SHARD_GRAD_OP,
                 ShardingStrategy.NO_SHARD):
    for wrap in (True, False):
        m, opt, ref, ropt = train(strategy, wrap)
train(ShardingStrategy.FULL_SHARD, True, steps=2, accum=True)
train(ShardingStrategy.FULL_SHARD, True, steps=2, clip=0.05)
train(ShardingStrategy.FULL_SHARD, True, steps=2, mp=ts.float32, tol=1e-5)

# --- memory per rank: parameters and optimizer state ~ 1/world -------------------------------
m, opt, ref, ropt = train(ShardingStrategy.FULL_SHARD, True, steps=1)
full_n = sum(p.numel() for p in ref.parameters())
shard_n = sum(p.numel() for p in m.parameters())
assert shard_n <= math.ceil(full_n / W) + 3 * W, (shard_n, full_n)


def state_numel(o):
    return sum(t.numel() for s in o.state_dict()["state"].values() for t in s.values()
               if hasattr(t, "numel") and t.ndim > 0)


ratio_p, ratio_s = shard_n / full_n, state_numel(opt) / state_numel(ropt)
assert ratio_s <= 1 / W + 3 * W / full_n + 1e-9, ratio_s
if R == 0:
    print(f"FSDP memory per rank, {W} ranks: parameters {shard_n} of {full_n} elements "
          f"({ratio_p:.3f}), optimizer state {state_numel(opt)} of {state_numel(ropt)} "
          f"({ratio_s:.3f}; 1/world = {1 / W:.3f})", flush=True)

# --- optimizer state dicts: by parameter name, unsharded; loaded, training goes on alike -----
osd = FSDP.optim_state_dict(m, opt)
rsd = ropt.state_dict()
names = [n for n, _ in ref.named_parameters()]
assert sorted(osd["state"]) == sorted(names), (sorted(osd["state"]), names)
for i, n in enumerate(names):
    for k, v in rsd["state"][i].items():
        close(osd["state"][n][k], v, f"optim_state_dict {n} {k}")
assert sorted(osd["param_groups"][0]["params"]) == sorted(names)
again = FSDP(make(3), auto_wrap_policy=ModuleWrapPolicy({Block}))
again.load_state_dict(ref.state_dict())
opt2 = ts.optim.AdamW(again.parameters(), lr=1e-2, weight_decay=0.1)
opt2.load_state_dict(FSDP.optim_state_dict_to_load(again, opt2, osd))
for step in (7, 8):
    x, y = batch(step)
    for model, o, xs, ys in ((again, opt2, local(x), local(y)), (ref, ropt, x, y)):
        o.zero_grad()
        nn.functional.mse_loss(model(xs), ys).backward()
        o.step()
    check_state(again.state_dict(), ref, f"training after loading the optimizer state {step}")
m, opt = again, opt2

# --- state dicts ----------------------------------------------------------------------------
with FSDP.state_dict_type(m, StateDictType.FULL_STATE_DICT,
                          FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):
    sd0 = m.state_dict()
assert (len(sd0) > 0) == (R == 0), (R, len(sd0))
if R == 0:
    check_state(sd0, ref, "rank0_only state dict")
    assert all(v.device.type == "cpu" for v in sd0.values())
box = [sd0 if R == 0 else None]
dist.broadcast_object_list(box, src=0)
sd = box[0]
# a plain model loads it
plain = make(9)
plain.load_state_dict(sd)
check_state(plain.state_dict(), ref, "plain model loading FSDP's state dict")
# FSDP over the whole world loads it into a fresh model
fresh = FSDP(make(7), auto_wrap_policy=ModuleWrapPolicy({Block}))
fresh.load_state_dict(sd)
check_state(fresh.state_dict(), ref, "FSDP loading a full state dict")
# ... and at another world size: a group of half the ranks
half = list(range(max(W // 2, 1)))
sub = dist.new_group(half)
if R in half:
    small = FSDP(make(8), process_group=sub, auto_wrap_policy=ModuleWrapPolicy({Block}))
    small.load_state_dict(sd)
    check_state(small.state_dict(), ref, f"FSDP on {len(half)} ranks loading it")
    x, _ = batch(0)
    close(small(x), plain(x), "forward at another world size")
    small_opt = ts.optim.AdamW(small.parameters(), lr=1e-2)
    small_opt.load_state_dict(FSDP.optim_state_dict_to_load(small, small_opt, osd))
    back = FSDP.optim_state_dict(small, small_opt)
    assert sorted(back["state"]) == sorted(osd["state"])
    for n in osd["state"]:
        for k, v in osd["state"][n].items():
            close(back["state"][n][k], v, f"optimizer state at another world size {n} {k}")
    with FSDP.summon_full_params(small):
        close(small.module.inp.weight, ref.inp.weight, "summon_full_params")
        with ts.no_grad():
            small.module.inp.weight.fill_(0.25)
    with FSDP.summon_full_params(small):
        assert float(small.module.inp.weight.max()) == 0.25 and \
            float(small.module.inp.weight.min()) == 0.25, "writeback"

# --- errors ----------------------------------------------------------------------------------
for bad, exc, text in [
        (lambda: FSDP(nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2).to(ts.float64))),
         ValueError, "one dtype"),
        (lambda: FSDP(make(0), sharding_strategy=ShardingStrategy.HYBRID_SHARD),
         NotImplementedError, "HYBRID_SHARD"),
        (lambda: FSDP.state_dict_type(m, StateDictType.SHARDED_STATE_DICT).__enter__(),
         NotImplementedError, "FULL_STATE_DICT"),
        (lambda: FSDP(object()), TypeError, "nn.Module"),
        (lambda: fresh.load_state_dict({**sd, "inp.weight": ts.zeros((3, 3), dtype=DT)}),
         RuntimeError, "size mismatch for inp.weight"),
        (lambda: fresh.load_state_dict({k: v for k, v in sd.items() if k != "out.bias"}),
         RuntimeError, "out.bias")]:
    try:
        bad()
        raise AssertionError(f"expected {exc.__name__}")
    except exc as e:
        assert text in str(e), str(e)

dist.barrier()
dist.destroy_process_group()
print(f"rank {R}: fsdp ok", flush=True)

"""Worker of tests/distributed/test_distributed.py: every collective against a NumPy reference.

Run by the launcher with 2-4 ranks; exits non-zero (an AssertionError's traceback) on the
first mismatch. Each rank can compute every rank's input, so the reference is local."""

import numpy as np

import tessera as ts
import tessera.distributed as dist

import os

# DEVICE=cuda runs the same checks on the NCCL backend (the GPU machine), one GPU per rank.
DEVICE = os.environ.get("DEVICE", "cpu")
BACKEND = "nccl" if DEVICE == "cuda" else "gloo"
NCCL = BACKEND == "nccl"
if NCCL:
    ts.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    ts.set_default_device(f"cuda:{os.environ['LOCAL_RANK']}")
dist.init_process_group(BACKEND, timeout=60)
R, W = dist.get_rank(), dist.get_world_size()
assert dist.is_initialized() and dist.get_backend() == BACKEND
assert R == int(os.environ["RANK"]) and W == int(os.environ["WORLD_SIZE"])

DTYPES = ["float32", "float64", "int32", "int64", "uint8", "int8", "float16", "bfloat16",
          "bool", "complex64"]
SHAPES = [(), (7,), (3, 4), (2, 3, 5)]


def data(rank, shape, dtype, salt=0):
    rng = np.random.default_rng(1000 * rank + 17 * salt + len(shape))
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("complex"):
        return (rng.integers(-4, 5, shape) + 1j * rng.integers(-4, 5, shape)).astype(dtype)
    if dtype in ("uint8",):
        return rng.integers(0, 4, shape).astype(dtype)
    if dtype in ("int8", "int32", "int64"):
        return rng.integers(-3, 4, shape).astype(dtype)
    import ml_dtypes
    npd = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    return rng.integers(-4, 5, shape).astype(np.float32).astype(npd)


def t_of(a, dtype):
    return ts.asarray(np.array(a), dtype=getattr(ts, dtype))


def host(t):
    return t.cpu() if hasattr(t, "cpu") else t


def check(got, want, what):
    g = np.asarray(host(got)).astype(np.complex128 if np.iscomplexobj(want) else np.float64)
    w = np.asarray(want).astype(np.complex128 if np.iscomplexobj(want) else np.float64)
    assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
    assert np.allclose(g, w, rtol=1e-2, atol=1e-2), f"{what}: rank {R}\n{g}\n!=\n{w}"


def reduce_ref(arrs, op, dtype):
    stack = np.stack([np.asarray(a, dtype=np.complex128 if dtype.startswith("complex")
                                 else np.float64) for a in arrs])
    if dtype == "bool":
        stack = stack.astype(bool)
        return {"SUM": stack.any(0), "MAX": stack.any(0), "MIN": stack.all(0),
                "PRODUCT": stack.all(0)}[op]
    r = {"SUM": stack.sum(0), "PRODUCT": stack.prod(0), "MIN": stack.min(0) if
         not dtype.startswith("complex") else None, "MAX": stack.max(0) if
         not dtype.startswith("complex") else None, "AVG": stack.mean(0)}[op]
    return r


OPS = ["SUM", "PRODUCT", "MIN", "MAX", "AVG"]
for dtype in DTYPES:
    for shape in SHAPES:
        alls = [data(r, shape, dtype) for r in range(W)]
        for op in OPS:
            if dtype.startswith("complex") and op in ("MIN", "MAX"):
                continue
            if NCCL and dtype.startswith("complex") and op == "PRODUCT":
                continue
            if op == "AVG" and dtype in ("int32", "int64", "uint8", "int8", "bool"):
                x = t_of(alls[R], dtype)
                try:
                    dist.all_reduce(x, dist.ReduceOp.AVG)
                    raise AssertionError("integer AVG should raise")
                except ValueError:
                    pass
                continue
            x = t_of(alls[R], dtype)
            dist.all_reduce(x, getattr(dist.ReduceOp, op))
            want = reduce_ref(alls, op, dtype)
            if dtype in ("int8", "uint8", "int32", "int64"):
                want = np.asarray(want).astype(dtype)
            check(x, want, f"all_reduce {op} {dtype} {shape}")
        # broadcast from the last rank
        x = t_of(alls[R], dtype)
        dist.broadcast(x, src=W - 1)
        check(x, alls[W - 1], f"broadcast {dtype} {shape}")
        # reduce to rank 1 (sum)
        x = t_of(alls[R], dtype)
        dist.reduce(x, dst=1 % W, op=dist.ReduceOp.MAX if dtype.startswith("complex") is False
                    else dist.ReduceOp.SUM)
        if R == 1 % W:
            op = "MAX" if not dtype.startswith("complex") else "SUM"
            want = reduce_ref(alls, op, dtype)
            check(x, want, f"reduce {dtype} {shape}")
        # all_gather / all_gather_into_tensor
        outs = [t_of(np.zeros_like(alls[0]), dtype) for _ in range(W)]
        dist.all_gather(outs, t_of(alls[R], dtype))
        for r in range(W):
            check(outs[r], alls[r], f"all_gather {dtype} {shape} from {r}")
        if shape:
            big = t_of(np.zeros((W * shape[0],) + shape[1:], dtype=alls[0].dtype), dtype)
            dist.all_gather_into_tensor(big, t_of(alls[R], dtype))
            check(big, np.concatenate(alls), f"all_gather_into_tensor {dtype} {shape}")
            stacked = t_of(np.zeros((W,) + shape, dtype=alls[0].dtype), dtype)
            dist.all_gather_into_tensor(stacked, t_of(alls[R], dtype))
            check(stacked, np.stack(alls), f"all_gather_into_tensor stacked {dtype}")
        # reduce_scatter (list form) and reduce_scatter_tensor, SUM
        if dtype != "bool":
            lists = [[data(r, shape, dtype, salt=k + 1) for k in range(W)] for r in range(W)]
            out = t_of(np.zeros_like(alls[0]), dtype)
            dist.reduce_scatter(out, [t_of(a, dtype) for a in lists[R]])
            want = reduce_ref([lists[r][R] for r in range(W)], "SUM", dtype)
            check(out, want, f"reduce_scatter {dtype} {shape}")
            if shape:
                inp = np.concatenate(lists[R])
                out = t_of(np.zeros_like(alls[0]), dtype)
                dist.reduce_scatter_tensor(out, t_of(inp, dtype))
                check(out, want, f"reduce_scatter_tensor {dtype} {shape}")

# non-contiguous tensors go through a staging copy and come back
base = ts.asarray(np.arange(24, dtype=np.float32).reshape(4, 6) * (R + 1))
view = base[:, ::2]
dist.all_reduce(view)
ref = np.arange(24, dtype=np.float32).reshape(4, 6)
expect = ref * (R + 1)
expect[:, ::2] = ref[:, ::2] * sum(range(1, W + 1))
check(base, expect, "all_reduce of a strided view")

# all_to_all_single: even and uneven splits
inp = ts.asarray(np.arange(W * 2, dtype=np.float64) + 100 * R)
out = ts.zeros((W * 2,), dtype=ts.float64)
dist.all_to_all_single(out, inp)
check(out, np.concatenate([np.arange(2 * R, 2 * R + 2) + 100 * r for r in range(W)]),
      "all_to_all_single")
# rank r sends (d + 1) rows of 3 to rank d
insz = [d + 1 for d in range(W)]
outsz = [R + 1] * W
rows = sum(insz)
inp = ts.asarray((np.arange(rows * 3, dtype=np.int64).reshape(rows, 3) + 1000 * R))
out = ts.zeros((sum(outsz), 3), dtype=ts.int64)
dist.all_to_all_single(out, inp, outsz, insz)
start = sum(insz[:R])
want = np.concatenate([(np.arange(rows * 3).reshape(rows, 3) + 1000 * r)[start:start + R + 1]
                       for r in range(W)])
check(out, want, "all_to_all_single uneven")
try:
    dist.all_to_all_single(out, inp, [1] * W, [1] * W)
    raise AssertionError("bad split sizes should raise")
except ValueError:
    pass

# all_to_all (lists)
ins = [ts.full((2,), float(10 * R + d)) for d in range(W)]
outs = [ts.zeros((2,)) for _ in range(W)]
dist.all_to_all(outs, ins)
for r in range(W):
    check(outs[r], np.full(2, 10 * r + R), "all_to_all")

# gather / scatter
g = [ts.zeros((3,)) for _ in range(W)] if R == 0 else None
dist.gather(ts.full((3,), float(R)), g, dst=0)
if R == 0:
    for r in range(W):
        check(g[r], np.full(3, r), "gather")
out = ts.zeros((2,))
dist.scatter(out, [ts.full((2,), float(r * 7)) for r in range(W)] if R == 0 else None, src=0)
check(out, np.full(2, R * 7), "scatter")

# async ops: several in flight, then wait; is_completed is True after wait
works, xs = [], []
for k in range(4):
    x = ts.full((1000,), float(R + k))
    xs.append(x)
    works.append(dist.all_reduce(x, async_op=True))
    assert isinstance(works[-1], dist.Work)
for k, (w, x) in enumerate(zip(works, xs)):
    w.wait()
    assert w.is_completed()
    check(x, np.full(1000, sum(r + k for r in range(W))), f"async all_reduce {k}")
w = dist.broadcast(ts.zeros(3), src=0, async_op=True)
w.wait()
assert dist.barrier(async_op=True).wait()

# point to point: a ring with isend/irecv, then send/recv with a tag and from any source
nxt, prv = (R + 1) % W, (R - 1) % W
buf = ts.zeros((5,), dtype=ts.int32)
if NCCL and R % 2:      # NCCL runs each p2p call in stream order: even ranks send first
    rq = dist.irecv(buf, src=prv)
    sq = dist.isend(ts.full((5,), R, dtype=ts.int32), dst=nxt)
else:
    sq = dist.isend(ts.full((5,), R, dtype=ts.int32), dst=nxt)
    rq = dist.irecv(buf, src=prv)
sq.wait()
rq.wait()
check(buf, np.full(5, prv), "isend/irecv ring")
# the same ring both ways at once through batch_isend_irecv (one NCCL group: no ordering)
left, right = ts.zeros((3,), dtype=ts.float64), ts.zeros((2, 4))[:, ::2]     # a strided one
ops = [dist.P2POp(dist.irecv, left, prv), dist.P2POp(dist.irecv, right, nxt),
       dist.P2POp(dist.isend, ts.full((3,), float(R), dtype=ts.float64), nxt),
       dist.P2POp(dist.isend, ts.full((2, 2), -float(R)), prv)]
reqs = dist.batch_isend_irecv(ops)
assert reqs and all(isinstance(q, dist.Work) for q in reqs)
for q in reqs:
    q.wait()
check(left, np.full(3, prv), "batch_isend_irecv from the left")
check(right, np.full((2, 2), -nxt), "batch_isend_irecv from the right (strided)")
for bad in (lambda: dist.P2POp(dist.send, left, nxt), lambda: dist.batch_isend_irecv([]),
            lambda: dist.batch_isend_irecv([ops[0], "x"]), lambda: dist.P2POp(dist.isend, left)):
    try:
        bad()
        raise AssertionError("expected a ValueError")
    except ValueError:
        pass
if R == 0:
    for k in range(W - 1):
        got = ts.zeros((2,))
        sender = dist.recv(got, src=k + 1 if NCCL else None, tag=7)
        check(got, np.full(2, sender * 3.0), "recv from any source")
else:
    dist.send(ts.full((2,), R * 3.0), dst=0, tag=7)

# objects
objs = [{"rank": R, "s": "x" * R}, None] if R == 0 else [None, None]
dist.broadcast_object_list(objs, src=0)
assert objs == [{"rank": 0, "s": ""}, None], objs
gathered = [None] * W
dist.all_gather_object(gathered, ("r", R, list(range(R))))
assert gathered == [("r", r, list(range(r))) for r in range(W)], gathered

# Large messages (MPI's rendezvous protocol, where the peer reads this rank's buffer after the
# call returned: a staging copy freed before completion crashed the peer, "Bad address"),
# several collectives in flight at once, the input dropped right after the call.
n = 1 << 21
big = [np.arange(n * W, dtype=np.float32) % 97 + r for r in range(W)]
outs, works = [], []
for k in range(3):
    out = ts.zeros((n,))
    works.append(dist.reduce_scatter_tensor(out, t_of(big[R] + k, "float32"), async_op=True))
    outs.append(out)
gathered = ts.zeros((n * W,))
works.append(dist.all_gather_into_tensor(gathered, t_of(big[R][:n] * 2, "float32"),
                                         async_op=True))
for w in works:
    w.wait()
total = sum(big)
for k, out in enumerate(outs):
    check(out, total[R * n:(R + 1) * n] + W * k, f"large reduce_scatter_tensor {k}")
check(gathered, np.concatenate([b[:n] * 2 for b in big]), "large all_gather_into_tensor")
del outs, works, gathered

# subgroups: ranks {0, W-1}
sub = dist.new_group([0, W - 1])
if R in (0, W - 1):
    x = ts.full((3,), float(R + 1))
    dist.all_reduce(x, group=sub)
    check(x, np.full(3, 1 + W), "all_reduce on a subgroup")
    assert dist.get_world_size(sub) == 2 and dist.get_rank(sub) == (0 if R == 0 else 1)
    y = ts.full((2,), float(R))
    dist.broadcast(y, src=W - 1, group=sub)
    check(y, np.full(2, W - 1), "broadcast on a subgroup with a global src")
else:
    assert sub is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(sub) == -1

# errors
for bad, exc in [(lambda: dist.all_reduce(np.zeros(3)), TypeError),
                 (lambda: dist.all_gather([ts.zeros(2)], ts.zeros(2)), ValueError),
                 (lambda: dist.all_gather_into_tensor(ts.zeros(5), ts.zeros(2)), ValueError),
                 (lambda: dist.broadcast(ts.zeros(2), src=W), ValueError),
                 (lambda: dist.all_reduce(ts.zeros(2, dtype=ts.complex64),
                                          dist.ReduceOp.MAX), ValueError)]:
    try:
        bad()
        raise AssertionError("expected an error")
    except exc:
        pass

dist.barrier()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"rank {R}: collectives ok", flush=True)

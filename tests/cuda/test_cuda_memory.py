"""ts.cuda's memory statistics, summary and snapshot (Note [Allocator statistics] in
csrc/cuda/caching_allocator.h), checked against PyTorch's key names and against themselves.

Without a GPU (CI) only the API surface and its errors run; the lead runs the rest on the GPU
machine (benchmarks/cuda_graphs_device.sh)."""
import warnings

import pytest

import tessera as ts

HAS_CUDA = ts.cuda.is_available()
gpu = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
nogpu = pytest.mark.skipif(HAS_CUDA, reason="checks the CPU-only behaviour")

STATS = ["allocation", "segment", "active", "inactive_split", "allocated_bytes",
         "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes"]
POOLS = ["all", "small_pool", "large_pool"]
KINDS = ["current", "peak", "allocated", "freed"]
API = ["memory_stats", "memory_stats_as_nested_dict", "memory_allocated",
       "max_memory_allocated", "memory_reserved", "max_memory_reserved",
       "reset_peak_memory_stats", "reset_accumulated_memory_stats", "memory_snapshot",
       "memory_summary", "empty_cache"]


def test_api_exists_and_matches_torch_names():
    torch = pytest.importorskip("torch")
    for name in API:
        assert callable(getattr(ts.cuda, name)), name
        assert hasattr(torch.cuda, name), name  # the same public name as PyTorch
        assert name in ts.cuda.__all__


# ---------------------------------------------------------------- without a GPU
@nogpu
@pytest.mark.parametrize("call", [
    lambda: ts.cuda.reset_peak_memory_stats(),
    lambda: ts.cuda.reset_accumulated_memory_stats(),
    lambda: ts.cuda.memory_summary(),
])
def test_memory_api_without_cuda_raises(call):
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        call()


@nogpu
@pytest.mark.parametrize("name", ["memory_stats", "memory_stats_as_nested_dict",
                                  "memory_allocated", "max_memory_allocated", "memory_reserved",
                                  "max_memory_reserved", "memory_cached", "max_memory_cached"])
def test_memory_statistics_without_cuda_are_torchs(name):
    # torch has no counters before CUDA is initialized: empty statistics, 0 bytes
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("torch sees a GPU")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # memory_cached and max_memory_cached
        got, want = getattr(ts.cuda, name)(), getattr(torch.cuda, name)()
    assert got == want and type(got) is type(want)


@nogpu
def test_snapshot_and_empty_cache_without_cuda():
    assert ts.cuda.memory_snapshot() == []
    ts.cuda.empty_cache()


# ---------------------------------------------------------------- on the GPU
@gpu
def test_memory_stats_keys_are_torchs():
    s = ts.cuda.memory_stats()
    for st in STATS:
        for pool in POOLS:
            for kind in KINDS:
                assert f"{st}.{pool}.{kind}" in s
    for k in ["num_alloc_retries", "num_ooms"]:
        assert k in s
    assert list(s) == sorted(s)
    nested = ts.cuda.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == s["allocated_bytes.all.current"]


@gpu
def test_allocated_follows_alloc_and_free():
    ts.cuda.synchronize()
    before = ts.cuda.memory_stats()
    x = ts.empty(1000, dtype=ts.float32, device="cuda")  # 4000 bytes -> one 4096-byte block
    s = ts.cuda.memory_stats()
    # (a reused free block keeps a tail under 512 bytes it is not split off)
    small = s["allocated_bytes.all.current"] - before["allocated_bytes.all.current"]
    assert 4096 <= small < 4096 + 512
    assert s["requested_bytes.all.current"] - before["requested_bytes.all.current"] == 4000
    assert s["allocation.all.current"] - before["allocation.all.current"] == 1
    assert s["allocated_bytes.small_pool.current"] - before["allocated_bytes.small_pool.current"] == small
    assert s["allocated_bytes.all.allocated"] - before["allocated_bytes.all.allocated"] == small
    assert ts.cuda.memory_allocated() == s["allocated_bytes.all.current"]
    assert ts.cuda.max_memory_allocated() >= ts.cuda.memory_allocated()
    assert ts.cuda.memory_reserved() >= ts.cuda.memory_allocated()
    big = ts.empty(3 << 20, dtype=ts.uint8, device="cuda")  # a large-pool block
    s2 = ts.cuda.memory_stats()
    grown = s2["allocated_bytes.large_pool.current"] - s["allocated_bytes.large_pool.current"]
    # 3 MiB, plus at most the 1 MiB tail a large block keeps when it is not split further
    assert 3 << 20 <= grown <= 4 << 20
    assert s2["requested_bytes.large_pool.current"] - s["requested_bytes.large_pool.current"] == 3 << 20
    del x, big
    after = ts.cuda.memory_stats()
    assert after["allocated_bytes.all.current"] == before["allocated_bytes.all.current"]
    assert after["requested_bytes.all.current"] == before["requested_bytes.all.current"]
    assert after["allocated_bytes.all.freed"] - before["allocated_bytes.all.freed"] == small + grown
    for st in STATS:
        for kind in KINDS:
            a = after[f"{st}.all.{kind}"]
            assert a == after[f"{st}.small_pool.{kind}"] + after[f"{st}.large_pool.{kind}"] or kind == "peak"


@gpu
def test_peak_and_accumulated_resets():
    x = ts.empty(1 << 20, dtype=ts.float32, device="cuda")
    del x
    ts.cuda.reset_peak_memory_stats()
    s = ts.cuda.memory_stats()
    assert s["allocated_bytes.all.peak"] == s["allocated_bytes.all.current"]
    assert ts.cuda.max_memory_reserved() == ts.cuda.memory_reserved()
    ts.cuda.reset_accumulated_memory_stats()
    s = ts.cuda.memory_stats()
    assert s["allocated_bytes.all.allocated"] == 0 and s["allocated_bytes.all.freed"] == 0
    assert s["num_alloc_retries"] == 0 and s["num_ooms"] == 0
    y = ts.empty(256, dtype=ts.float32, device="cuda")
    assert 1024 <= ts.cuda.memory_stats()["allocated_bytes.all.allocated"] < 1024 + 512
    del y


@gpu
def test_split_fragmentation_is_counted():
    a = ts.empty(1024, dtype=ts.uint8, device="cuda")  # a small block split off a segment
    b = ts.empty(5 << 20, dtype=ts.uint8, device="cuda")  # a large one split off 20 MiB
    s = ts.cuda.memory_stats()
    snap = ts.cuda.memory_snapshot()
    assert s["inactive_split.small_pool.current"] >= 1
    assert s["inactive_split.large_pool.current"] >= 1
    for pool, kind in [("small_pool", "small"), ("large_pool", "large")]:
        free_in_split = [blk for seg in snap if seg["segment_type"] == kind and len(seg["blocks"]) > 1
                         for blk in seg["blocks"] if blk["state"] == "inactive"]
        assert s[f"inactive_split.{pool}.current"] == len(free_in_split)
        assert s[f"inactive_split_bytes.{pool}.current"] == sum(blk["size"] for blk in free_in_split)
    del a, b


@gpu
def test_summary_names_allocated_and_reserved():
    x = ts.ones(1000, device="cuda")
    text = ts.cuda.memory_summary()
    assert isinstance(text, str)
    for word in ["Allocated memory", "GPU reserved memory", "Active memory", "Non-releasable",
                 "from large pool", "from small pool", "Cur Usage", "Peak Usage"]:
        assert word in text
    short = ts.cuda.memory_summary(abbreviated=True)
    assert "from small pool" not in short and "Allocated memory" in short
    del x


@gpu
def test_snapshot_matches_stats():
    x = ts.ones(1000, device="cuda")
    y = ts.ones(3 << 20, dtype=ts.uint8, device="cuda")
    snap = ts.cuda.memory_snapshot()
    s = ts.cuda.memory_stats()
    assert sum(seg["total_size"] for seg in snap) == s["reserved_bytes.all.current"]
    assert sum(seg["allocated_size"] for seg in snap) == s["allocated_bytes.all.current"]
    assert len(snap) == s["segment.all.current"]
    addrs = {b["address"]: b for seg in snap for b in seg["blocks"]}
    assert addrs[x.data_ptr()]["state"] == "active_allocated"
    assert addrs[x.data_ptr()]["requested_size"] == 4000
    for seg in snap:
        assert seg["segment_type"] in ("small", "large")
        assert sum(b["size"] for b in seg["blocks"]) == seg["total_size"]
        assert seg["blocks"][0]["address"] == seg["address"]
        for a, b in zip(seg["blocks"], seg["blocks"][1:]):
            assert a["address"] + a["size"] == b["address"]
    del x, y


@gpu
def test_matches_torch_accounting_for_one_tensor():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    t0 = torch.cuda.memory_allocated()
    xt = torch.empty(12345, dtype=torch.float32, device="cuda")
    t1 = torch.cuda.memory_allocated()
    a0 = ts.cuda.memory_allocated()
    xs = ts.empty(12345, dtype=ts.float32, device="cuda")
    a1 = ts.cuda.memory_allocated()
    assert t1 - t0 <= a1 - a0 < t1 - t0 + 512  # the same 512-byte rounding
    del xt, xs


def test_summary_layout_from_counters(monkeypatch):
    """memory_summary's table from a known set of counters (runs without a GPU too)."""
    import tessera.cuda as tc
    import tessera.cuda.memory as mem
    stats = {f"{st}.{p}.{k}": (5 << 20) if "bytes" in st else 7
             for st in STATS for p in POOLS for k in KINDS}
    stats.update(num_ooms=2, num_alloc_retries=3)

    class Fake:
        @staticmethod
        def memory_stats(device):
            return stats

        @staticmethod
        def is_available():
            return True

    monkeypatch.setattr(mem, "_c", Fake)
    monkeypatch.setattr(tc, "_index", lambda d: 0)
    text = ts.cuda.memory_summary()
    lines = text.splitlines()
    assert len({len(line) for line in lines}) == 1  # a rectangular table
    assert "CUDA OOMs: 2" in text and "cudaMalloc retries: 3" in text
    row = next(line for line in lines if line.startswith("| Allocated memory"))
    assert row.count("5120 KiB") == 4
    assert any(line.startswith("| Allocations") and "7" in line for line in lines)
    assert ts.cuda.memory_stats_as_nested_dict()["reserved_bytes"]["large_pool"]["peak"] == 5 << 20
    assert ts.cuda.memory_allocated() == 5 << 20


@gpu
def test_tensor_recorded_on_a_destroyed_stream_frees_cleanly():
    # Note [Destroyed streams]: a process group's stream dies before the tensors it touched.
    import gc
    import subprocess
    import sys
    import os
    code = (
        "import gc, tessera as ts\n"
        "s = ts.cuda.Stream()\n"
        "keep = []\n"
        "for i in range(8):\n"
        "    x = ts.ones((1024 + i,), device='cuda')\n"
        "    with ts.cuda.stream(s):\n"
        "        y = x * 2\n"
        "    x.record_stream(s)\n"
        "    keep.append(x)\n"
        "del s; gc.collect()\n"
        "keep.clear(); gc.collect()\n"
        "z = ts.ones((1024,), device='cuda') + 1\n"
        "ts.cuda.synchronize()\n"
        "print('ok', float(z.sum()))\n")
    root = os.path.dirname(os.path.dirname(ts.__file__))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "ok 2048.0"
    gc.collect()

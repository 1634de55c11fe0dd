"""ts.cuda against torch.cuda for the names scripts use: both exist, take the same parameters,
and without a GPU answer alike (values, or the exception class torch raises). Runs on the CPU
(torch 2.13's CPU build here); on a GPU machine the CPU-only comparisons skip and the rest
checks the values' types and ranges.
"""
from __future__ import annotations

import inspect
import warnings

import pytest

import tessera as ts

torch = pytest.importorskip("torch")

HAS_CUDA = ts.cuda.is_available()
nogpu = pytest.mark.skipif(HAS_CUDA or torch.cuda.is_available(),
                           reason="compares the behaviour without a GPU")
gpu = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
# a build of tessera without the CUDA backend answers as torch's build without CUDA
cpu_build = pytest.mark.skipif(ts.cuda.is_built() or torch.backends.cuda.is_built(),
                               reason="compares the builds without CUDA")

NAMES = ["is_available", "is_initialized", "init", "device_count", "current_device",
         "set_device", "synchronize", "get_device_name", "get_device_properties",
         "get_device_capability", "get_arch_list", "get_gencode_flags", "mem_get_info",
         "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
         "memory_cached", "max_memory_cached", "memory_stats", "memory_summary",
         "memory_snapshot", "reset_peak_memory_stats", "reset_max_memory_allocated",
         "reset_max_memory_cached", "reset_accumulated_memory_stats", "empty_cache",
         "ipc_collect", "set_per_process_memory_fraction", "get_per_process_memory_fraction",
         "Stream", "Event", "StreamContext", "stream", "set_stream", "current_stream",
         "default_stream", "device", "device_of", "is_current_stream_capturing", "manual_seed",
         "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state",
         "set_rng_state", "get_rng_state_all", "set_rng_state_all", "default_generators",
         "is_bf16_supported", "is_tf32_supported", "OutOfMemoryError", "CUDAGraph", "graph",
         "graph_pool_handle", "make_graphed_callables", "amp", "nvtx"]

# parameters named as torch's (torch's own signatures, where it has them)
SAME_PARAMETERS = ["mem_get_info", "get_arch_list", "get_gencode_flags", "is_initialized",
                   "init", "ipc_collect", "set_per_process_memory_fraction",
                   "get_per_process_memory_fraction", "StreamContext", "stream", "set_stream",
                   "device_of", "memory_cached", "max_memory_cached",
                   "reset_max_memory_allocated", "reset_max_memory_cached", "synchronize",
                   "memory_allocated", "max_memory_reserved", "reset_peak_memory_stats",
                   "empty_cache", "manual_seed_all", "device_count", "get_device_name"]


@pytest.mark.parametrize("name", NAMES)
def test_torchs_names_exist(name):
    assert hasattr(torch.cuda, name), name  # the list is torch's
    assert hasattr(ts.cuda, name), name
    assert name in ts.cuda.__all__


@pytest.mark.parametrize("name", SAME_PARAMETERS)
def test_parameters_are_torchs(name):
    def params(f):
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]
    assert params(getattr(ts.cuda, name)) == params(getattr(torch.cuda, name))


@pytest.mark.parametrize("name", ["range_push", "range_pop", "mark", "range"])
def test_nvtx_parameters_are_torchs(name):
    def names(f):
        return [p.name for p in inspect.signature(f).parameters.values()]
    assert names(getattr(ts.cuda.nvtx, name)) == names(getattr(torch.cuda.nvtx, name))


# ---------------------------------------------------------------- without a GPU
@nogpu
@pytest.mark.parametrize("name", ["is_available", "is_initialized", "device_count",
                                  "get_arch_list", "get_gencode_flags", "memory_allocated",
                                  "max_memory_allocated", "memory_reserved",
                                  "max_memory_reserved", "memory_stats",
                                  "get_rng_state_all", "is_bf16_supported",
                                  "is_tf32_supported", "empty_cache"])
def test_queries_answer_as_torchs(name):
    got, want = getattr(ts.cuda, name)(), getattr(torch.cuda, name)()
    assert got == want and type(got) is type(want), (got, want)


@nogpu
def test_default_generators_is_an_empty_tuple():
    assert ts.cuda.default_generators == () == torch.cuda.default_generators


@nogpu
@cpu_build
@pytest.mark.parametrize("call", [
    lambda m: m.cuda.mem_get_info(),
    lambda m: m.cuda.mem_get_info(0),
    lambda m: m.cuda.init(),
    lambda m: m.cuda.ipc_collect(),
    lambda m: m.cuda.set_per_process_memory_fraction(0.5),
    lambda m: m.cuda.set_per_process_memory_fraction(2.0),  # torch checks CUDA first
    lambda m: m.cuda.get_per_process_memory_fraction(),
])
def test_without_cuda_raises_torchs_assertion_error(call):
    with pytest.raises(AssertionError) as want:
        call(torch)
    with pytest.raises(AssertionError, match="not compiled with CUDA enabled") as got:
        call(ts)
    assert type(got.value) is type(want.value)


@nogpu
def test_mem_get_info_of_a_cpu_device_is_a_value_error():
    for lib in (torch, ts):
        with pytest.raises(ValueError):
            lib.cuda.mem_get_info("cpu")


@nogpu
@pytest.mark.parametrize("call", [lambda m: m.cuda.nvtx.range_push("a"),
                                  lambda m: m.cuda.nvtx.range_pop(),
                                  lambda m: m.cuda.nvtx.mark("a"),
                                  lambda m: m.cuda.nvtx.range("a").__enter__()])
def test_nvtx_without_cuda_raises_runtime_error(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        call(ts)


@nogpu
def test_stream_and_device_contexts_of_none_change_nothing():
    for lib in (torch, ts):
        with lib.cuda.StreamContext(None):
            pass
        with lib.cuda.stream(None):
            pass
        assert lib.cuda.set_stream(None) is None
        with lib.cuda.device_of(lib.ones(2)):  # a CPU tensor
            pass
        with lib.cuda.device(-1):
            pass
    assert isinstance(ts.cuda.stream(None), ts.cuda.StreamContext)


@nogpu
@pytest.mark.parametrize("name", ["memory_cached", "max_memory_cached"])
def test_deprecated_aliases_warn_as_torchs(name):
    with pytest.warns(FutureWarning) as want:
        w = getattr(torch.cuda, name)()
    with pytest.warns(FutureWarning) as got:
        g = getattr(ts.cuda, name)()
    assert g == w == 0
    assert str(got[0].message) == str(want[0].message)


@nogpu
@pytest.mark.parametrize("name", ["reset_max_memory_allocated", "reset_max_memory_cached"])
def test_deprecated_resets_warn_then_raise_without_cuda(name):
    # torch's CPU build fails with an AttributeError of its own making; tessera with the
    # RuntimeError of reset_peak_memory_stats
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        with pytest.raises(FutureWarning, match="reset_peak_memory_stats"):
            getattr(ts.cuda, name)()
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="CUDA is not available"):
        getattr(ts.cuda, name)()


# ---------------------------------------------------------------- on the GPU
@gpu
def test_gpu_values():
    free, total = ts.cuda.mem_get_info()
    assert 0 < free <= total and total > 0
    if torch.cuda.is_available():  # the driver's numbers, as torch reads them
        assert total == torch.cuda.mem_get_info()[1]
    archs = ts.cuda.get_arch_list()
    assert archs and all(a.startswith("sm_") for a in archs)
    assert ts.cuda.get_gencode_flags().count("-gencode") == len(archs)
    assert ts.cuda.is_initialized() is True
    ts.cuda.init()
    ts.cuda.ipc_collect()
    assert len(ts.cuda.default_generators) == ts.cuda.device_count()
    with ts.cuda.device_of(ts.ones(1, device="cuda")):
        assert ts.cuda.current_device() == 0


@gpu
def test_gpu_memory_fraction_caps_the_cache():
    assert ts.cuda.get_per_process_memory_fraction() == 1.0
    with pytest.raises(TypeError):
        ts.cuda.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError):
        ts.cuda.set_per_process_memory_fraction(1.5)
    total = ts.cuda.get_device_properties().total_memory
    ts.cuda.set_per_process_memory_fraction(0.05)
    try:
        assert ts.cuda.get_per_process_memory_fraction() == 0.05
        with pytest.raises(ts.cuda.OutOfMemoryError):
            ts.empty(int(total * 0.1), dtype=ts.uint8, device="cuda")
        x = ts.empty(1024, device="cuda")  # small allocations still fit
        del x
    finally:
        ts.cuda.set_per_process_memory_fraction(1.0)
    y = ts.empty(int(total * 0.1), dtype=ts.uint8, device="cuda")
    del y


@gpu
def test_gpu_nvtx_ranges_nest():
    try:
        depth = ts.cuda.nvtx.range_push("outer")
    except RuntimeError as e:  # a build without the NVTX header
        assert "NVTX" in str(e)
        return
    if depth < 0:
        # No profiler attached: NVTX's calls are no-ops that return a negative code
        # (NVTX_NO_PUSH_POP_TRACKING), and so do torch's, which return NVTX's value.
        assert ts.cuda.nvtx.range_push("inner") < 0
        assert ts.cuda.nvtx.range_pop() < 0
        ts.cuda.nvtx.mark("here")
        assert ts.cuda.nvtx.range_pop() < 0
    else:
        assert ts.cuda.nvtx.range_push("inner") == depth + 1
        assert ts.cuda.nvtx.range_pop() == depth + 1
        ts.cuda.nvtx.mark("here")
        assert ts.cuda.nvtx.range_pop() == depth
    with ts.cuda.nvtx.range("block {}", 1):
        pass


@gpu
def test_gpu_stream_context_sets_and_restores():
    s = ts.cuda.Stream()
    before = ts.cuda.current_stream()
    with ts.cuda.StreamContext(s) as entered:
        assert entered is s and ts.cuda.current_stream() == s
    assert ts.cuda.current_stream() == before
    ts.cuda.set_stream(s)
    try:
        assert ts.cuda.current_stream() == s
    finally:
        ts.cuda.set_stream(before)

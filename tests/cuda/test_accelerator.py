"""ts.accelerator against torch.accelerator.

Without a GPU (CI) both libraries must answer the same way: no accelerator, 0 devices, and the
same exception classes for every call that needs a device. With a GPU, the CUDA answers are
checked against ts.cuda.
"""
import inspect
import warnings

import pytest
import torch

import tessera as ts

HAS_CUDA = ts.cuda.is_available()
TORCH_HAS_ACC = torch.accelerator.is_available()

# torch.accelerator's names, less the two tessera leaves out (docs/design.md says why)
NOT_BOUND = {"Graph", "get_memory_info"}
PUBLIC = sorted(set(torch.accelerator.__all__) - NOT_BOUND)


def test_names_match_torch():
    for name in PUBLIC:
        assert hasattr(torch.accelerator, name), name
        assert hasattr(ts.accelerator, name), name
    assert set(PUBLIC) <= set(ts.accelerator.__all__)
    if torch.__version__.startswith("2.13"):  # the pinned PyTorch: the same names exactly
        assert set(ts.accelerator.__all__) == set(PUBLIC)


def test_signatures_match_torch():
    for name in PUBLIC:
        if name == "device_index":
            continue
        ours = inspect.signature(getattr(ts.accelerator, name))
        theirs = inspect.signature(getattr(torch.accelerator, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in theirs.parameters.values()], name


def _outcome(f):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f()
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e))
    return ("ok", r)


@pytest.mark.skipif(HAS_CUDA or TORCH_HAS_ACC, reason="checks the no-accelerator behaviour")
@pytest.mark.parametrize("call", [
    lambda a: a.is_available(),
    lambda a: a.current_accelerator(),
    lambda a: a.current_accelerator(check_available=True),
    lambda a: a.device_count(),
    lambda a: a.current_device_index(),
    lambda a: a.current_device_idx(),
    lambda a: a.set_device_index(0),
    lambda a: a.set_device_index("cuda:0"),
    lambda a: a.set_device_idx(0),
    lambda a: a.synchronize(),
    lambda a: a.synchronize(0),
    lambda a: a.current_stream(),
    lambda a: a.get_device_capability(),
    lambda a: a.empty_cache(),
    lambda a: a.empty_host_cache(),
    lambda a: a.memory_stats(),
    lambda a: a.memory_allocated(),
    lambda a: a.max_memory_allocated(),
    lambda a: a.memory_reserved(),
    lambda a: a.max_memory_reserved(),
    lambda a: a.reset_peak_memory_stats(),
    lambda a: a.reset_accumulated_memory_stats(),
])
def test_without_accelerator_same_as_torch(call):
    ours, theirs = _outcome(lambda: call(ts.accelerator)), _outcome(lambda: call(torch.accelerator))
    assert ours[0] == theirs[0]
    if ours[0] == "raise":
        assert ours[1] is theirs[1]
    else:
        assert ours[1] == theirs[1]


@pytest.mark.skipif(HAS_CUDA or TORCH_HAS_ACC, reason="checks the no-accelerator behaviour")
def test_messages_and_context_without_accelerator():
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        ts.accelerator.current_device_index()
    with ts.accelerator.device_index(None) as x:   # a no-op, as torch's
        assert x is None
    with pytest.raises(RuntimeError):
        with ts.accelerator.device_index(0):
            pass
    assert ts.accelerator.current_accelerator() is None


def test_deprecated_aliases_warn():
    for f, args in [(ts.accelerator.current_device_idx, ()), (ts.accelerator.set_device_idx, (0,))]:
        with pytest.warns(FutureWarning):
            try:
                f(*args)
            except RuntimeError:
                assert not HAS_CUDA


def test_bad_device_argument():
    with pytest.raises(TypeError, match="accelerator"):
        ts.accelerator.synchronize(1.5)
    with pytest.raises(TypeError, match="set_stream"):
        ts.accelerator.set_stream("not a stream")


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")
def test_with_cuda():
    a = ts.accelerator
    assert a.is_available() and a.current_accelerator().type == "cuda"
    assert a.current_accelerator(check_available=True).type == "cuda"
    assert a.device_count() == ts.cuda.device_count()
    assert a.current_device_index() == ts.cuda.current_device()
    a.set_device_index("cuda:0")
    a.set_device_index(ts.Device("cuda:0"))
    with pytest.raises(ValueError, match="doesn't match the current accelerator"):
        a.set_device_index("cpu")
    a.synchronize()
    x = ts.ones(1024, device="cuda")
    assert a.memory_allocated() >= 4096
    assert a.max_memory_allocated() >= a.memory_allocated()
    assert a.memory_reserved() >= a.memory_allocated()
    s = ts.cuda.Stream()
    a.set_stream(s)
    assert a.current_stream() == s
    a.set_stream(ts.cuda.default_stream())
    with a.device_index(0):
        assert a.current_device_index() == 0
    assert ts.float32 in a.get_device_capability()["supported_dtypes"]
    del x
    a.empty_cache()

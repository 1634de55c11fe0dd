import os

import pytest

from hypothesis import HealthCheck, settings

# CI is derandomized: each test draws the same examples every run, so a submission's result does
# not depend on luck; the dev profile keeps exploring new examples.
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=100, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# ---------------------------------------------------------------- device mode
# `pytest --device cuda` (or TESSERA_TEST_DEVICE=cuda) runs the whole suite with its tensors on
# that device: creation functions default to it (ts.set_default_device), NumPy inputs given to
# ts.asarray go to it, and tensors read back into NumPy are copied to the host first (test
# mode only: the library itself refuses numpy() on device tensors, like PyTorch). Modules that
# test host-only behaviour (buffer protocol, zero-copy NumPy sharing, leaks, notebooks) are
# skipped in device mode; everything else must give the CPU's answers.
HOST_ONLY_MODULES = {"test_interop.py", "test_leaks.py", "test_notebooks.py", "test_demo.py",
                     "test_amp.py",  # autocast("cpu") leaves device tensors alone
                     "test_cuda.py",
                     "test_shared_memory.py"}  # shared memory is for host tensors


def pytest_addoption(parser):
    parser.addoption("--device", default=os.environ.get("TESSERA_TEST_DEVICE", "cpu"),
                     help="device the suite's tensors live on (cpu, cuda, cuda:N)")


def pytest_configure(config):
    config.addinivalue_line("markers", "cpu_only: tests host-only behaviour; skipped with --device")
    config.addinivalue_line("markers", "not_sanitized: measures memory (RSS, RLIMIT_AS) in ways "
                            "ASan's shadow memory and quarantine defeat; skipped by "
                            "tests/sanitize/run.sh (TESSERA_SANITIZED=1)")
    device = config.getoption("--device")
    if device != "cpu":
        _enable_device_mode(device)


def pytest_collectstart(collector):
    """Module-level draws from harness.rng / randn see the same stream whatever was imported
    before (the module is imported right after this hook)."""
    if isinstance(collector, pytest.Module):
        import harness
        harness.reseed(0)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Every test starts harness.rng / randn from seed 0: a test draws the same data alone or
    in the whole suite, in any order."""
    import harness
    harness.reseed(0)


def pytest_collection_modifyitems(config, items):
    import pytest
    if os.environ.get("TESSERA_SANITIZED"):
        skip_san = pytest.mark.skip(reason="memory measurement, meaningless under ASan")
        for item in items:
            if item.get_closest_marker("not_sanitized"):
                item.add_marker(skip_san)
    if config.getoption("--device") == "cpu":
        return
    skip = pytest.mark.skip(reason="host-only behaviour (device mode)")
    for item in items:
        if item.fspath.basename in HOST_ONLY_MODULES or item.get_closest_marker("cpu_only"):
            item.add_marker(skip)


def _enable_device_mode(device):
    import numpy as np

    import tessera as ts

    if not ts.cuda.is_available():
        raise RuntimeError(f"--device {device}: this tessera build has no usable CUDA device")
    ts.set_default_device(device)
    asarray, numpy, array = ts.asarray, ts.Tensor.numpy, ts.Tensor.__array__

    def device_asarray(obj, /, *, device=None, **kw):
        if device is None and isinstance(obj, (np.ndarray, np.generic)):
            device = ts.get_default_device()
        return asarray(obj, device=device, **kw)

    ts.asarray = device_asarray
    ts.Tensor.numpy = lambda self, *a, **kw: numpy(self.cpu(), *a, **kw)
    ts.Tensor.__array__ = lambda self, *a, **kw: array(self.cpu(), *a, **kw)

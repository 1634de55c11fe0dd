"""`python -m tessera` (the README's demo command) reports the build and passes its self-check."""
import os
import subprocess
import sys

import tessera as ts


def test_demo_runs():
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(ts.__file__))
    env["PYTHONPATH"] = pkg_parent + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "tessera"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    for word in ("tessera", "BLAS", "OpenMP", "CUDA backend", "self-check", "ok"):
        assert word in r.stdout


def test_build_config():
    cfg = ts.build_config()
    assert cfg["version"] == ts.__version__ != ""
    assert cfg["blas"] and cfg["openmp"] in (True, False) and cfg["cuda"] in (True, False)
    assert cfg["num_threads"] == ts.get_num_threads() >= 1


def test_threads_roundtrip():
    n = ts.get_num_threads()
    try:
        ts.set_num_threads(1)
        assert ts.get_num_threads() == 1
    finally:
        ts.set_num_threads(n)
    import pytest
    with pytest.raises(ValueError, match="set_num_threads"):
        ts.set_num_threads(0)
